// ParseDuration: plain seconds and Go's duration syntax, and what it refuses.
#include "config/duration.h"

#include <string>

#include "gtest/gtest.h"

namespace tessera {
namespace {

double Seconds(std::string_view text) {
  absl::StatusOr<double> d = ParseDuration(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().message();
  return d.ok() ? *d : -1;
}

std::string ErrorOf(std::string_view text) {
  absl::StatusOr<double> d = ParseDuration(text);
  EXPECT_FALSE(d.ok()) << text << " parsed as " << (d.ok() ? *d : 0);
  return d.ok() ? "" : std::string(d.status().message());
}

TEST(DurationTest, PlainSeconds) {
  EXPECT_EQ(Seconds("0"), 0);
  EXPECT_EQ(Seconds("90"), 90);
  EXPECT_EQ(Seconds("1.5"), 1.5);
  EXPECT_EQ(Seconds(".5"), 0.5);
  EXPECT_EQ(Seconds("2e3"), 2000);
  EXPECT_EQ(Seconds("+5"), 5);
  EXPECT_EQ(Seconds("  42\t"), 42);  // surrounding whitespace, as annotations may carry
  EXPECT_EQ(Seconds("-0"), 0);
  EXPECT_EQ(Seconds("1e-400"), 0);  // underflows to zero; harmless
}

TEST(DurationTest, GoForm) {
  EXPECT_EQ(Seconds("90s"), 90);
  EXPECT_EQ(Seconds("30m"), 1800);
  EXPECT_EQ(Seconds("2h"), 7200);
  EXPECT_EQ(Seconds("1h30m"), 5400);
  EXPECT_EQ(Seconds("1.5h"), 5400);
  EXPECT_EQ(Seconds("500ms"), 0.5);
  EXPECT_EQ(Seconds("1h2m3s"), 3723);  // Volcano's sla-waiting-time example
  EXPECT_EQ(Seconds("3s1h"), 3603);    // Go allows any order and repetition
  EXPECT_EQ(Seconds(".5s"), 0.5);
  EXPECT_EQ(Seconds("5.s"), 5);
  EXPECT_EQ(Seconds("0s"), 0);
  EXPECT_EQ(Seconds("+1m"), 60);
  EXPECT_EQ(Seconds("-0s"), 0);
  EXPECT_DOUBLE_EQ(Seconds("1500us"), 0.0015);
  EXPECT_DOUBLE_EQ(Seconds("1\xC2\xB5s"), 1e-6);  // µs (micro sign)
  EXPECT_DOUBLE_EQ(Seconds("1\xCE\xBCs"), 1e-6);  // μs (Greek mu)
  EXPECT_DOUBLE_EQ(Seconds("10ns"), 1e-8);
  EXPECT_EQ(Seconds("1h0.5m"), 3630);
}

TEST(DurationTest, TenYearsIsTheLimit) {
  EXPECT_EQ(Seconds("315360000"), kMaxDurationSeconds);
  EXPECT_EQ(Seconds("87600h"), kMaxDurationSeconds);
  for (std::string_view text :
       {"315360001", "87601h", "1e999", "99999999999999999999999999999999999h"}) {
    EXPECT_NE(ErrorOf(text).find("is longer than 10 years (315360000 seconds)"), std::string::npos)
        << text;
  }
}

TEST(DurationTest, NegativeIsAnError) {
  for (std::string_view text : {"-5", "-1h", "-0.5s", "-1e3"}) {
    EXPECT_EQ(ErrorOf(text), "expected a non-negative duration, got \"" + std::string(text) + "\"");
  }
}

TEST(DurationTest, MalformedTextIsAnError) {
  const std::string forms =
      "expected a duration: seconds (90, 1.5) or Go's form (90s, 30m, 1h30m, 1.5h, 500ms), got ";
  for (std::string_view text : {"", "   ", "abc", "nan", "NaN", "inf", "-inf", "Infinity", "h", ".",
                                ".s", "--5", "+-5", "s5"}) {
    EXPECT_EQ(ErrorOf(text), forms + "\"" + std::string(text) + "\"") << text;
  }
  EXPECT_EQ(ErrorOf("2d"), forms + "\"2d\": unknown unit \"d\"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("1h 30m"),
            forms + "\"1h 30m\": unknown unit \"h \"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("1H"), forms + "\"1H\": unknown unit \"H\"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("1e"), forms + "\"1e\": unknown unit \"e\"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("0x10"), forms + "\"0x10\": unknown unit \"x\"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("1_000s"),
            forms + "\"1_000s\": unknown unit \"_\"; allowed: ns, us, ms, s, m, h");
  EXPECT_EQ(ErrorOf("1h30"), forms + "\"1h30\": missing unit after 30 (ns, us, ms, s, m, h)");
  EXPECT_EQ(ErrorOf("1.2.3s"), forms + "\"1.2.3s\": missing unit after 1.2 (ns, us, ms, s, m, h)");
}

}  // namespace
}  // namespace tessera
