// dra/cel's own tests: what a user writing a selector would notice (the corpus test covers the
// agreement with upstream pair by pair).
#include "absl/strings/str_cat.h"
#include "dra/cel/selector.h"

#include "dra/filters.h"
#include "gtest/gtest.h"

namespace tessera::dra::cel {
namespace {

Device Gpu() {
  Device d;
  d.driver = "gpu.nvidia.com";
  d.attributes["gpu.nvidia.com/type"] = std::string("gpu");
  d.attributes["gpu.nvidia.com/index"] = int64_t{3};
  d.attributes["gpu.nvidia.com/driverVersion"] = Version{"550.54.15"};
  d.capacity["gpu.nvidia.com/memory"] = Capacity{80LL * 1024 * 1024 * 1024 * 1000, "80Gi"};
  return d;
}

absl::StatusOr<bool> Eval(std::string_view expr, const Device& d = Gpu()) {
  auto s = Selector::Compile(expr);
  if (!s.ok()) return s.status();
  return s->Evaluate(d);
}

TEST(CelSelector, NvidiaClassSelectorMatchesItsGpus) {
  EXPECT_EQ(*Eval("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"), true);
  EXPECT_EQ(*Eval("device.attributes['gpu.nvidia.com'].type == 'mig'"), false);
}

TEST(CelSelector, CapacityAndVersionsCompareAsUpstream) {
  EXPECT_TRUE(*Eval("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"));
  EXPECT_FALSE(*Eval("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('80Gi'))"));
  EXPECT_TRUE(*Eval("device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))"));
  EXPECT_TRUE(*Eval("cel.bind(g, device.attributes['gpu.nvidia.com'], g.index + 1 == 4)"));
}

TEST(CelSelector, CompileErrorsNameThePlace) {
  auto s = Selector::Compile("device.driver == 1");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("1:15"), std::string::npos) << s.status();
}

TEST(CelSelector, LogicAbsorbsErrorsBothWays) {
  // A missing attribute is a runtime error; CEL's && and || are commutative about errors.
  EXPECT_FALSE(*Eval("device.attributes['gpu.nvidia.com'].missing == 1 && false"));
  EXPECT_TRUE(*Eval("device.attributes['gpu.nvidia.com'].missing == 1 || true"));
  EXPECT_FALSE(Eval("device.attributes['gpu.nvidia.com'].missing == 1 || false").ok());
  EXPECT_FALSE(Eval("device.attributes['nothing.example.com'].x == 1").ok());
  EXPECT_FALSE(*Eval("has(device.attributes['nothing.example.com'].x)"));
}

TEST(CelSelector, IntegerOverflowIsAnError) {
  auto r = Eval("device.attributes['gpu.nvidia.com'].index * 9223372036854775807 > 0");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("overflow"), std::string::npos) << r.status();
}

TEST(CelSelector, NonBoolResultIsARuntimeError) {
  // dyn passes the checker (upstream's "bool or the unknown type"); a string at runtime fails.
  EXPECT_FALSE(Eval("device.attributes['gpu.nvidia.com'].type").ok());
  auto s = Selector::Compile("device.driver");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("must evaluate to bool"), std::string::npos) << s.status();
}

TEST(CelSelector, UnsupportedFunctionsFailCompileNamingThem) {
  for (const char* expr : {"device.driver.split('.').size() == 3", "optional.of(1).hasValue()",
                           "[1].all(i, v, v > 0)", "type(1) == int"}) {
    auto s = Selector::Compile(expr);
    ASSERT_FALSE(s.ok()) << expr;
    EXPECT_NE(s.status().message().find("not supported"), std::string::npos) << s.status();
  }
  auto s = Selector::Compile("device.driver.split('.').size() == 3");
  EXPECT_NE(s.status().message().find("'split'"), std::string::npos) << s.status();
}

TEST(CelSelector, SyntaxErrorsSayWhere) {
  auto s = Selector::Compile("device.driver == 'gpu'\n  && (device.attributes");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("2:"), std::string::npos) << s.status();
  EXPECT_FALSE(Selector::Compile("'unterminated").ok());
  EXPECT_FALSE(Selector::Compile("9223372036854775808 > 0").ok());
}

TEST(CelSelector, LengthNestingAndCostAreBounded) {
  std::string long_expr(kMaxExpressionLength + 1, ' ');
  long_expr.replace(0, 4, "true");
  auto s = Selector::Compile(long_expr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("10240"), std::string::npos) << s.status();

  std::string deep = std::string(500, '(') + "true" + std::string(500, ')');
  EXPECT_FALSE(Selector::Compile(deep).ok());

  std::string list = "[";
  for (int i = 0; i < 200; ++i) absl::StrAppend(&list, i ? "," : "", i);
  list += "]";
  auto r = Eval(list + ".all(x, " + list + ".all(y, " + list + ".all(z, true)))");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cost limit"), std::string::npos) << r.status();
}

TEST(CelSelector, InvalidVersionAttributeFailsEverySelectorOnTheDevice) {
  Device d = Gpu();
  d.attributes["gpu.nvidia.com/firmware"] = Version{"1.2"};
  auto r = Eval("device.driver == 'gpu.nvidia.com'", d);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("firmware"), std::string::npos) << r.status();
}

TEST(CelSelector, DefaultSelectorCompilerIsThisEvaluator) {
  auto compiled = DefaultSelectorCompiler()("device.attributes['gpu.nvidia.com'].index == 3");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(*(*compiled)(Gpu()));
  EXPECT_FALSE(DefaultSelectorCompiler()("device.nonsense").ok());
}

}  // namespace
}  // namespace tessera::dra::cel
