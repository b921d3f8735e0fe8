#include "fgd/placement.h"

#include <vector>

#include "gtest/gtest.h"

namespace tessera::fgd {
namespace {

NodeGpuState Node(std::initializer_list<int32_t> gpus) {
  NodeGpuState n;
  n.cpu_free_milli = 64000;
  n.mem_free_mib = 1 << 20;
  n.gpu_model = 0;
  for (int32_t g : gpus) n.gpu_free_milli[static_cast<size_t>(n.num_gpus++)] = g;
  return n;
}

TEST(Placement, OrderIsScoreThenGainThenUsedThenTie) {
  const NodeOrderKey high{50, 0, false, 9};
  const NodeOrderKey low{49, 7, true, 0};
  EXPECT_TRUE(PlacesBefore(high, low, true));
  EXPECT_FALSE(PlacesBefore(low, high, true));
  // Equal scores: the larger balance gain.
  EXPECT_TRUE(PlacesBefore({50, 2, false, 9}, {50, 1, true, 0}, true));
  // Equal scores and gains: TesseraFGD's node in use first, else the lower tie key.
  const NodeOrderKey used{50, 0, true, 9};
  const NodeOrderKey untouched{50, 0, false, 0};
  EXPECT_TRUE(PlacesBefore(used, untouched, UsedFirst(Policy::kTesseraFgd)));
  EXPECT_FALSE(PlacesBefore(used, untouched, UsedFirst(Policy::kFgd)));
  EXPECT_TRUE(PlacesBefore(untouched, used, UsedFirst(Policy::kFgd)));
  // A node is never before itself (a strict order).
  EXPECT_FALSE(PlacesBefore(used, used, true));
}

// A caller without ranks passes the candidate's position as the tie key: the first of the best
// wins, and under TesseraFGD the first used one among the best (the engine's FindNodeFgd rule).
TEST(Placement, PositionAsTieKeyKeepsTheFirstOfTheBest) {
  const std::vector<int64_t> scores = {40, 55, 55, 55, 12};
  const std::vector<bool> used = {true, false, true, true, true};
  for (const Policy p : {Policy::kFgd, Policy::kTesseraFgd}) {
    size_t best = 0;
    for (size_t k = 1; k < scores.size(); ++k) {
      const NodeOrderKey key{scores[k], 0, used[k], static_cast<int64_t>(k)};
      const NodeOrderKey best_key{scores[best], 0, used[best], static_cast<int64_t>(best)};
      if (PlacesBefore(key, best_key, UsedFirst(p))) best = k;
    }
    EXPECT_EQ(best, p == Policy::kTesseraFgd ? 2u : 1u) << PolicyName(p);
  }
}

TEST(Placement, GpusAreTheScoresElsePickGpus) {
  Rng rng(1);
  const NodeGpuState n = Node({1000, 300, 600, 1000});
  const PodRequest share{1000, 1024, 1, 250, 0};
  const Scorer best_fit(Policy::kBestFit, nullptr);
  EXPECT_EQ(ChooseGpus(best_fit, n, share, GpuSet{1} << 3, rng), GpuSet{1} << 3);
  EXPECT_EQ(ChooseGpus(best_fit, n, share, 0, rng), GpuSet{1} << 1);  // the tightest that fits
  const PodRequest two{1000, 1024, 2, 1000, 0};
  EXPECT_EQ(ChooseGpus(best_fit, n, two, 0, rng), GpuSet{0b1001});  // lowest fully free
}

TEST(Placement, RandomNodeIsOneDrawInRange) {
  Rng a(7), b(7);
  for (size_t n : {1u, 2u, 5u, 1213u}) {
    const size_t k = RandomNode(n, a);
    EXPECT_LT(k, n);
    EXPECT_EQ(k, static_cast<size_t>(b.Below(n)));
  }
}

}  // namespace
}  // namespace tessera::fgd
