#include "trace/csv.h"

#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"
#include "model/limits.h"

namespace tessera::trace {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(CsvReader, ReadsHeaderFieldsAndLineNumbers) {
  auto path =
      WriteTemp("a.csv", "# comment\n a , b ,c\r\n1,\"x,y\",\"say \"\"hi\"\"\"\n\n2,,\n3\n");
  CsvReader r;
  ASSERT_TRUE(r.Open(path).ok());
  EXPECT_EQ(r.header(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.Column("b"), 1);
  EXPECT_EQ(r.Column({"zz", "c"}), 2);
  EXPECT_EQ(r.Column("zz"), -1);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.line(), 3);
  EXPECT_EQ(r.Field(1), "x,y");
  EXPECT_EQ(r.Field(2), "say \"hi\"");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.line(), 5);  // the blank line is skipped, its number is not
  EXPECT_EQ(r.Field(1), "");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Field(2), "");  // a short record reads as empty fields
  EXPECT_EQ(r.Where(), path + ":6");
  EXPECT_FALSE(r.Next());
}

TEST(CsvReader, UnterminatedQuoteIsAnErrorOfThatRecord) {
  auto path = WriteTemp("b.csv", "a,b\n\"open,1\n2,3\n");
  CsvReader r;
  ASSERT_TRUE(r.Open(path).ok());
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.error(), "unterminated quoted field");
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.error().empty());
  EXPECT_EQ(r.Field(0), "2");
}

TEST(CsvReader, MissingAndEmptyFilesFailWithTheirName) {
  CsvReader r;
  auto s = r.Open("/nonexistent/x.csv");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("/nonexistent/x.csv"), std::string::npos);
  CsvReader e;
  auto empty = WriteTemp("empty.csv", "# only a comment\n");
  EXPECT_FALSE(e.Open(empty).ok());
}

// A line is held up to kMaxCsvLineBytes: /dev/zero (no newline ever) used to be read for 4.2 GB
// and then called an empty file.
TEST(CsvReader, ALineBeyondTheLimitEndsTheReadWithFileAndLine) {
  CsvReader zero;
  auto s = zero.Open("/dev/zero");
  EXPECT_EQ(s.message(), "/dev/zero:1: row longer than 1048576 bytes");
  auto path =
      WriteTemp("long.csv", "a,b\n1,2\n" + std::string(kMaxCsvLineBytes + 1, '7') + "\n3,4\n");
  CsvReader r;
  ASSERT_TRUE(r.Open(path).ok());
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.error().empty());
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.too_long());
  EXPECT_EQ(r.Where() + ": " + r.error(), path + ":3: row longer than 1048576 bytes");
  EXPECT_FALSE(r.Next());  // the rest is not read
  // Exactly at the limit is a line like any other.
  path = WriteTemp("limit.csv", "a\n" + std::string(kMaxCsvLineBytes, '7') + "\n");
  CsvReader at;
  ASSERT_TRUE(at.Open(path).ok());
  ASSERT_TRUE(at.Next());
  EXPECT_TRUE(at.error().empty());
  EXPECT_EQ(at.Field(0).size(), static_cast<size_t>(kMaxCsvLineBytes));
}

TEST(ParseNumbers, AreStrict) {
  EXPECT_EQ(ParseInt("42"), 42);
  EXPECT_EQ(ParseInt(" -7 "), -7);
  EXPECT_EQ(ParseInt("12.0"), 12);
  EXPECT_FALSE(ParseInt("12.5"));
  EXPECT_FALSE(ParseInt("12x"));
  EXPECT_FALSE(ParseInt(""));
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("1e3"), 1000);
  EXPECT_FALSE(ParseDouble("nan"));
  EXPECT_FALSE(ParseDouble("1.5s"));
}

TEST(Split, TrimsPieces) {
  auto v = SplitTrimmed(" A100 | V100|", '|');
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "A100");
  EXPECT_EQ(v[1], "V100");
  EXPECT_EQ(v[2], "");
}

}  // namespace
}  // namespace tessera::trace
