// dra/cel's own tests: what a user writing a selector would notice (the corpus test covers the
// agreement with upstream pair by pair).
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

}  // namespace
}  // namespace tessera::dra::cel
