#include "fgd/plan.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "gtest/gtest.h"

namespace tessera::fgd {
namespace {

std::vector<ShareItem> Items(std::initializer_list<int32_t> milli, ModelMask models = 0) {
  std::vector<ShareItem> out;
  for (int32_t m : milli) out.push_back(ShareItem{out.size(), m, models});
  return out;
}

// Every item in exactly one bin; bins within a GPU, their milli the members' sum, members
// ascending and of one model mask.
void ExpectValidPacking(const std::vector<ShareItem>& items, const std::vector<ShareBin>& bins) {
  std::vector<int> seen(items.size(), 0);
  for (const ShareBin& b : bins) {
    ASSERT_FALSE(b.members.empty());
    EXPECT_TRUE(std::is_sorted(b.members.begin(), b.members.end()));
    int32_t sum = 0;
    for (size_t p : b.members) {
      ASSERT_LT(p, items.size());
      ++seen[p];
      sum += items[p].milli;
      EXPECT_EQ(items[p].models, b.models);
    }
    EXPECT_EQ(sum, b.milli);
    EXPECT_LE(b.milli, kMilliPerGpu);
  }
  for (size_t p = 0; p < items.size(); ++p) EXPECT_EQ(seen[p], 1) << "item " << p;
}

TEST(PackShares, MinimumBinSlackFillsBinsBestFitDecreasingDoesNot) {
  // BFD: 500+400, 300+300+300, 200 -> 3 GPUs. MBS': 500 with 300+200, 400 with 300+300 -> 2.
  const std::vector<ShareItem> items = Items({500, 400, 300, 300, 300, 200});
  const std::vector<ShareBin> mbs = PackShares(items, SharePacking::kMinimumBinSlack);
  const std::vector<ShareBin> bfd = PackShares(items, SharePacking::kBestFitDecreasing);
  ExpectValidPacking(items, mbs);
  ExpectValidPacking(items, bfd);
  EXPECT_EQ(mbs.size(), 2u);
  EXPECT_EQ(bfd.size(), 3u);
  // The largest item opens the first bin; the subset that fills it is taken.
  EXPECT_EQ(mbs[0].members, (std::vector<size_t>{0, 2, 5}));
  EXPECT_EQ(mbs[0].milli, 1000);
  EXPECT_EQ(mbs[1].members, (std::vector<size_t>{1, 3, 4}));
}

TEST(PackShares, OpenbSizesPairTheLargeWithWhatFillsThem) {
  // 810 leaves 190: only the 160 (or 110 + 50) can use it; 650 takes the 320; 470 + 470.
  const std::vector<ShareItem> items = Items({470, 810, 320, 160, 650, 470, 110, 50, 810});
  const std::vector<ShareBin> bins = PackShares(items, SharePacking::kMinimumBinSlack);
  ExpectValidPacking(items, bins);
  ASSERT_EQ(bins.size(), 4u);
  // Equal sizes: the earlier position first. The 810 at 1 gets the best fill of its 190: the 160
  // (110 + 50 fill as much; the larger item is found first); the 810 at 8 gets 110 + 50.
  EXPECT_EQ(bins[0].members, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(bins[1].members, (std::vector<size_t>{6, 7, 8}));
  EXPECT_EQ(bins[2].members, (std::vector<size_t>{2, 4}));
  EXPECT_EQ(bins[3].members, (std::vector<size_t>{0, 5}));
}

TEST(PackShares, ModelMasksNeverShare) {
  std::vector<ShareItem> items = Items({500, 500, 500, 500});
  items[1].models = 0b10;
  items[3].models = 0b10;
  for (SharePacking p : {SharePacking::kMinimumBinSlack, SharePacking::kBestFitDecreasing}) {
    const std::vector<ShareBin> bins = PackShares(items, p);
    ExpectValidPacking(items, bins);
    ASSERT_EQ(bins.size(), 2u);
    EXPECT_EQ(bins[0].members, (std::vector<size_t>{0, 2}));
    EXPECT_EQ(bins[1].members, (std::vector<size_t>{1, 3}));
  }
}

TEST(PackShares, RandomItemsPackValidlyAndDeterministically) {
  std::mt19937_64 rng(7);
  const int32_t sizes[] = {50, 110, 160, 220, 230, 320, 370, 460, 470, 550, 590, 650, 810};
  for (int round = 0; round < 20; ++round) {
    std::vector<ShareItem> items;
    for (size_t k = 0; k < 300; ++k) {
      const ModelMask models = rng() % 4 == 0 ? 1 : 0;
      items.push_back(ShareItem{k, sizes[rng() % std::size(sizes)], models});
    }
    for (SharePacking p : {SharePacking::kMinimumBinSlack, SharePacking::kBestFitDecreasing}) {
      const std::vector<ShareBin> bins = PackShares(items, p);
      ExpectValidPacking(items, bins);
      EXPECT_EQ(bins, PackShares(items, p));
    }
  }
}

NodeGpuState Node(int64_t cpu, int64_t mem, std::initializer_list<int32_t> gpus) {
  NodeGpuState n;
  n.cpu_free_milli = cpu;
  n.mem_free_mib = mem;
  n.gpu_model = 0;
  for (int32_t g : gpus) n.gpu_free_milli[static_cast<size_t>(n.num_gpus++)] = g;
  return n;
}

TEST(Balance, RatiosImbalanceAndGain) {
  // A CPU-poor node (8 GPUs, 64 cores) and a CPU-rich one (2 GPUs, 96 cores): 16 cores and
  // 64 GiB per GPU in all.
  const NodeGpuState poor =
      Node(64000, 8 * 65536, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000});
  const NodeGpuState rich = Node(96000, 2 * 65536, {1000, 1000});
  const std::vector<NodeGpuState> nodes = {poor, rich};
  const BalanceRatios r = ClusterRatios(nodes);
  EXPECT_DOUBLE_EQ(r.cpu_per_milli, 16.0);
  EXPECT_DOUBLE_EQ(r.mem_per_milli, 65.536);
  EXPECT_DOUBLE_EQ(Imbalance(16000, 65536, 1000, r), 0);
  EXPECT_DOUBLE_EQ(Imbalance(64000, 8 * 65536, 8000, r), 4000);  // 64 cores short of 128
  EXPECT_DOUBLE_EQ(Imbalance(96000, 2 * 65536, 2000, r), 4000);  // 64 cores over 32
  // Memory counts as much as CPU: the larger of the two.
  EXPECT_DOUBLE_EQ(Imbalance(16000, 0, 1000, r), 1000);

  // A CPU-heavy GPU pod (1 GPU, 32 cores) helps the rich node and hurts the poor one; a CPU-light
  // one (1 GPU, 4 cores) the other way round; a CPU-only pod belongs on the rich node.
  const PodRequest heavy{32000, 65536, 1, 1000, 0};
  const PodRequest light{4000, 65536, 1, 1000, 0};
  const PodRequest cpu_only{16000, 0, 0, 0, 0};
  EXPECT_GT(BalanceGain(rich, heavy, r), BalanceGain(poor, heavy, r));
  EXPECT_GT(BalanceGain(poor, light, r), BalanceGain(rich, light, r));
  EXPECT_GT(BalanceGain(rich, cpu_only, r), BalanceGain(poor, cpu_only, r));
  // In whole steps of kBalanceStepMilli: 16 cores off the rich node remove 1000 milli.
  EXPECT_EQ(BalanceGain(rich, cpu_only, r), 4);
  EXPECT_EQ(BalanceGain(poor, cpu_only, r), -4);
}

TEST(ModelPressure, DemandFromEachPositionSplitByGpus) {
  // Models 0 (6 GPUs) and 1 (2 GPUs); model 2 has no GPU.
  const std::vector<int64_t> gpus = {6, 2, 0};
  PodShape any{1000, 1, 1, 1000, 0, ""};
  PodShape only1{1000, 1, 1, 500, 0b10, ""};
  PodShape both{1000, 1, 2, 1000, 0b11, ""};
  PodShape only2{1000, 1, 1, 1000, 0b100, ""};
  const std::vector<const PodShape*> queue = {&only1, &any, &both, &only1, &only2};
  const ModelPressure p(queue, gpus);
  ASSERT_TRUE(p.any());
  EXPECT_EQ(p.models(), (std::vector<int32_t>{0, 1}));
  // `both` (2000 milli) counts 3/4 on model 0 and 1/4 on model 1.
  EXPECT_DOUBLE_EQ(p.Demand(0, 0), 1500);
  EXPECT_DOUBLE_EQ(p.Demand(0, 1), 500 + 500 + 500);
  EXPECT_DOUBLE_EQ(p.Demand(3, 1), 500);
  EXPECT_DOUBLE_EQ(p.Demand(5, 1), 0);
  EXPECT_DOUBLE_EQ(p.Demand(99, 1), 0);
  EXPECT_DOUBLE_EQ(p.Demand(0, 2), 0);
  EXPECT_TRUE(p.UnderPressure(0, 1, 1600, 0.9));   // 1500 >= 0.9 x 1600
  EXPECT_FALSE(p.UnderPressure(0, 1, 2000, 0.9));  // 1500 < 1800
  EXPECT_FALSE(p.UnderPressure(0, 1, 1400, 1.1));  // 1500 < 1540
  EXPECT_FALSE(p.UnderPressure(5, 1, 0, 0.9));     // nothing left to come

  // Nothing asks for more than its model has: not worth keeping flexible pods off models.
  EXPECT_DOUBLE_EQ(p.oversubscribed(), 0);
  EXPECT_FALSE(p.Worthwhile());

  // Model 1's pods ask for 2500 of its 2000 milli: 500 over, at least 1% of the 8000.
  std::vector<const PodShape*> crowded(5, &only1);
  crowded.push_back(&any);
  const ModelPressure c(crowded, gpus);
  EXPECT_DOUBLE_EQ(c.oversubscribed(), 500);
  EXPECT_TRUE(c.Worthwhile());

  const std::vector<const PodShape*> free_queue = {&any, &any};
  EXPECT_FALSE(ModelPressure(free_queue, gpus).any());
  EXPECT_FALSE(ModelPressure(free_queue, gpus).Worthwhile());
}

}  // namespace
}  // namespace tessera::fgd
