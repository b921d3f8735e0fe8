#include "model/mig.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

const MigProfile& Profile(std::span<const MigProfile> family, std::string_view name) {
  for (const MigProfile& p : family)
    if (p.name == name) return p;
  ADD_FAILURE() << "no profile " << name;
  return family[0];
}

TEST(MigTest, FamiliesFromMemoryOrProduct) {
  std::string_view family;
  EXPECT_EQ(MigProfilesFor(40960, "NVIDIA-A100-SXM4-40GB", &family)[0].name, "1g.5gb");
  EXPECT_EQ(family, "A100-40GB");
  EXPECT_EQ(MigProfilesFor(81559, "NVIDIA-H100-80GB-HBM3")[0].name, "1g.10gb");
  EXPECT_EQ(MigProfilesFor(0, "NVIDIA-A100-SXM4-80GB")[0].name, "1g.10gb");
  EXPECT_EQ(MigProfilesFor(143771, "NVIDIA-H200")[5].name, "7g.141gb");
  EXPECT_TRUE(MigProfilesFor(24576, "NVIDIA-A10").empty());  // not MIG-capable
  EXPECT_TRUE(MigProfilesFor(0, "").empty());                // nothing to go by
  EXPECT_TRUE(MigProfilesFor(81920, "Tesla-V100").empty());  // a model without MIG
}

TEST(MigTest, NvidiaPlacementRules) {
  auto a100 = MigProfilesFor(40960, "");
  const MigProfile& g1 = Profile(a100, "1g.5gb");
  const MigProfile& g1x2 = Profile(a100, "1g.10gb");
  const MigProfile& g2 = Profile(a100, "2g.10gb");
  const MigProfile& g3 = Profile(a100, "3g.20gb");
  const MigProfile& g4 = Profile(a100, "4g.20gb");
  const MigProfile& g7 = Profile(a100, "7g.40gb");
  // An empty A100 holds 7 x 1g.5gb (not 8: seven compute slices), 4 x 1g.10gb, 3 x 2g.10gb,
  // 2 x 3g.20gb, 1 x 4g.20gb, 1 x 7g.40gb.
  EXPECT_EQ(MigCapacity(0, g1), 7);
  EXPECT_EQ(MigCapacity(0, g1x2), 4);
  EXPECT_EQ(MigCapacity(0, g2), 3);
  EXPECT_EQ(MigCapacity(0, g3), 2);
  EXPECT_EQ(MigCapacity(0, g4), 1);
  EXPECT_EQ(MigCapacity(0, g7), 1);
  // With 4g.20gb at 0-3 a 3g.20gb still fits at 4, a 2g.10gb at 4, not at 6.
  const uint8_t after4g = MigSlices(g4, 0);
  EXPECT_EQ(MigChooseStart(after4g, g3), 4);
  EXPECT_EQ(MigCapacity(after4g, g2), 1);
  EXPECT_EQ(MigCapacity(after4g | MigSlices(g2, 4), g2), 0);       // slices 6-7: not for 2g
  EXPECT_EQ(MigChooseStart(after4g | MigSlices(g2, 4), g1x2), 6);  // but for 1g.10gb
  EXPECT_EQ(MigChooseStart(0xFF, g1), -1);
  EXPECT_EQ(MigChooseStart(1, g7), -1);
  // Best fit: a 1g.5gb next to a 3g.20gb at 0-3 goes to slice 4, keeping 6-7 a pair.
  EXPECT_EQ(MigChooseStart(MigSlices(g3, 0), g1), 4);
  // On an empty device a small instance does not split the device in the middle.
  EXPECT_EQ(MigChooseStart(0, g1), 0);
}

}  // namespace
}  // namespace tessera
