#include "model/resources.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(ResourcesTest, ArithmeticAndFit) {
  Resources a, cap;
  a[kCpu] = 1500;
  a[kGpu] = 2;
  cap[kCpu] = 2000;
  cap[kGpu] = 2;
  EXPECT_TRUE(a.FitsIn(cap));
  EXPECT_FALSE(a.Times(2).FitsIn(cap));
  EXPECT_EQ((cap - a)[kCpu], 500);
  EXPECT_EQ(a.ToString(), "cpu=1500m, nvidia.com/gpu=2");
}

TEST(ResourcesTest, RegistryInternsOnce) {
  auto& reg = ResourceRegistry::Global();
  auto a = reg.Intern("example.com/foo");
  auto b = reg.Intern("example.com/foo");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(reg.Find("nvidia.com/gpu"), kGpu);
  EXPECT_EQ(reg.Name(*a), "example.com/foo");
}

TEST(ResourcesTest, FormatsMemory) {
  EXPECT_EQ(FormatQuantity(kMemory, 80LL << 30), "80Gi");
  EXPECT_EQ(FormatQuantity(kMemory, 1000), "1000");
  EXPECT_EQ(FormatQuantity(kCpu, 4000), "4");
}

}  // namespace
}  // namespace tessera
