#include "model/bounded_json.h"

#include <string>

#include "gtest/gtest.h"

namespace tessera {
namespace {

std::string Nested(int depth, char open = '[', char close = ']') {
  return std::string(static_cast<size_t>(depth), open) + std::string(static_cast<size_t>(depth), close);
}

TEST(BoundedJson, ParsesOrdinaryDocuments) {
  auto j = ParseJsonBounded(R"({"a": [1, 2.5, "x", null, true, {"b": {}}]})", "test");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["a"][1], 2.5);
  EXPECT_EQ((*j)["a"][5]["b"], nlohmann::json::object());
}

TEST(BoundedJson, NestingUpToTheLimitParses) {
  auto j = ParseJsonBounded(Nested(kMaxJsonDepth), "test");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_FALSE(j->dump().empty());
}

// 300,000 nested arrays (or objects) parse with nlohmann alone, and the first dump() or copy of
// the result overflows the stack. Refused while parsing, with the input named.
TEST(BoundedJson, DeepNestingIsRefusedNotACrash) {
  for (auto [open, close] : {std::pair{'[', ']'}, std::pair{'{', '}'}}) {
    std::string doc = open == '[' ? Nested(300'000) : "";
    if (open == '{') {
      for (int i = 0; i < 300'000; ++i) doc += "{\"a\":";
      doc += "1" + std::string(300'000, '}');
    }
    auto j = ParseJsonBounded(doc, "watch event");
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.status().message(), "watch event: JSON nested deeper than 512 levels");
    EXPECT_TRUE(ParseJsonOrDiscarded(doc).is_discarded());
  }
  EXPECT_FALSE(ParseJsonBounded(Nested(kMaxJsonDepth + 1), "x").ok());
}

TEST(BoundedJson, NotJsonSaysWhere) {
  auto j = ParseJsonBounded(R"({"a": )", "http://h/api");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("http://h/api: not JSON: "), std::string::npos)
      << j.status();
  EXPECT_TRUE(ParseJsonOrDiscarded("").is_discarded());
  EXPECT_TRUE(ParseJsonOrDiscarded("[1] x").is_discarded());
}

}  // namespace
}  // namespace tessera
