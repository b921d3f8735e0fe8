#include "fgd/scorer.h"

#include "gtest/gtest.h"

namespace tessera::fgd {
namespace {

NodeGpuState Node(int64_t cpu, std::initializer_list<int32_t> gpus, int32_t model = 0,
                  int64_t mem = 1 << 20) {
  NodeGpuState n;
  n.cpu_free_milli = cpu;
  n.mem_free_mib = mem;
  n.gpu_model = model;
  for (int32_t g : gpus) n.gpu_free_milli[static_cast<size_t>(n.num_gpus++)] = g;
  return n;
}

PodRequest Pod(int64_t cpu, int32_t num_gpu, int32_t milli, ModelMask models = 0) {
  return PodRequest{cpu, 1024, num_gpu, milli, models};
}

int64_t ScoreOf(Policy p, const NodeGpuState& n, const PodRequest& pod, AffinityTags tags = 0) {
  return Scorer(p, nullptr).Score(NodeView{&n, tags, 0}, pod).score;
}

TEST(Policies, NamesRoundTrip) {
  for (Policy p : PaperPolicies()) EXPECT_EQ(ParsePolicy(PolicyName(p)), p);
  EXPECT_EQ(ParsePolicy("TesseraFGD"), Policy::kTesseraFgd);
  EXPECT_FALSE(ParsePolicy("fgd").has_value());
  EXPECT_EQ(PaperPolicies().size(), 6u);
}

TEST(Filter, CpuMemoryModelAndGpus) {
  const NodeGpuState n = Node(8000, {1000, 400}, /*model=*/1, /*mem=*/4096);
  EXPECT_TRUE(Fits(n, Pod(8000, 1, 1000)));
  EXPECT_FALSE(Fits(n, Pod(8001, 0, 0)));
  EXPECT_FALSE(Fits(n, PodRequest{1000, 5000, 0, 0, 0}));  // memory
  EXPECT_TRUE(Fits(n, Pod(1000, 1, 400)));
  EXPECT_FALSE(Fits(n, Pod(1000, 2, 1000)));  // one whole GPU free only
  EXPECT_FALSE(Fits(n, Pod(1000, 1, 500, /*models=*/0b01)));
  EXPECT_TRUE(Fits(n, Pod(1000, 1, 500, /*models=*/0b10)));
  EXPECT_TRUE(Fits(Node(1000, {}), Pod(1000, 0, 0)));  // CPU pods fit GPU-less nodes
}

TEST(Policies, DotProdPrefersTheSmallerDotProduct) {
  // 1 - (cpu_free/128000 * cpu/128000 + gpu_free/8000 * gpu/8000) / 2, in percent.
  const PodRequest pod = Pod(64000, 1, 1000);
  EXPECT_EQ(ScoreOf(Policy::kDotProd,
                    Node(128000, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}), pod),
            static_cast<int64_t>(100 * (1 - (0.5 + 0.125) / 2)));
  EXPECT_GT(ScoreOf(Policy::kDotProd, Node(64000, {1000}), pod),
            ScoreOf(Policy::kDotProd, Node(128000, {1000, 1000}), pod));
}

TEST(Policies, GpuPackingPrefersSharedThenUsedThenEmpty) {
  const PodRequest share = Pod(1000, 1, 300);
  const int64_t on_shared = ScoreOf(Policy::kGpuPacking, Node(64000, {500, 1000}), share);
  const int64_t on_used = ScoreOf(Policy::kGpuPacking, Node(64000, {0, 1000}), share);
  const int64_t on_empty = ScoreOf(Policy::kGpuPacking, Node(64000, {1000, 1000}), share);
  EXPECT_EQ(on_shared, 100 - 50 / 10);  // 500 milli free on the GPU used: 50%
  EXPECT_EQ(on_used, 50 - 1);
  EXPECT_EQ(on_empty, 33 - 2);
  EXPECT_EQ(ScoreOf(Policy::kGpuPacking, Node(64000, {1000, 1000}), Pod(1000, 0, 0)), 0);
}

TEST(Policies, GpuClusteringGroupsPodsOfTheSameKind) {
  const PodRequest whole = Pod(1000, 1, 1000);
  const NodeGpuState half = Node(64000, {1000, 1000, 1000, 1000, 0, 0, 0, 0});  // 4000 left
  const AffinityTags one_gpu = AffinityTagOf(whole);
  const AffinityTags share = AffinityTagOf(Pod(1, 1, 10));
  EXPECT_EQ(ScoreOf(Policy::kGpuClustering, half, whole, one_gpu), 25 * 4000 / 8000 + 75);
  EXPECT_EQ(ScoreOf(Policy::kGpuClustering, half, whole, one_gpu | share), 12 + 50);
  EXPECT_EQ(ScoreOf(Policy::kGpuClustering, half, whole, 0), 12 + 25);
  EXPECT_EQ(ScoreOf(Policy::kGpuClustering, half, whole, share), 12);
}

TEST(Policies, BestFitNormalizesOverTheCandidates) {
  const PodRequest pod = Pod(8000, 1, 1000);
  const Scorer scorer(Policy::kBestFit, nullptr);
  const NodeGpuState tight = Node(8000, {1000});
  const NodeGpuState loose = Node(96000, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000});
  std::vector<int64_t> scores = {scorer.Score(NodeView{&tight, 0, 0}, pod).score,
                                 scorer.Score(NodeView{&loose, 0, 0}, pod).score};
  EXPECT_EQ(scores[0], 100);
  scorer.Normalize(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{100, 0}));
}

TEST(Policies, FgdPicksTheGpuThatFragmentsLeast) {
  // Typical pods: half want 600 milli, half a whole GPU. Putting a 400-milli pod on the GPU
  // that has 400 left uses it up; on a whole GPU it would leave 600, still usable, but breaks a
  // whole GPU; on the 400 GPU the fragment disappears.
  std::vector<TypicalPod> typical(2);
  typical[0].cpu_milli = 1000;
  typical[0].num_gpu = 1;
  typical[0].gpu_milli = 600;
  typical[0].weight = 0.5;
  typical[1] = typical[0];
  typical[1].gpu_milli = 1000;
  const FragmentationMeasure measure(typical);
  const NodeGpuState n = Node(64000, {1000, 400, 1000});
  const Scored s = Scorer::FgdScore(measure, n, measure.Evaluate(n), Pod(1000, 1, 400));
  EXPECT_EQ(s.gpus, GpuSet{1} << 1);
  EXPECT_GT(s.score, 50);  // fragmentation went down: sigmoid > 0.5
  // Whole-GPU pods take the lowest-numbered free GPUs.
  const Scored w = Scorer::FgdScore(measure, n, measure.Evaluate(n), Pod(1000, 2, 1000));
  EXPECT_EQ(w.gpus, GpuSet{0b101});
}

TEST(Policies, GpuPickForSharingPods) {
  const NodeGpuState n = Node(64000, {1000, 300, 600, 300});
  Rng rng(1);
  const Scorer best(Policy::kGpuPacking, nullptr);
  EXPECT_EQ(best.PickGpus(n, Pod(1000, 1, 300), rng), GpuSet{1} << 1);  // tightest, lowest index
  EXPECT_EQ(best.PickGpus(n, Pod(1000, 1, 500), rng), GpuSet{1} << 2);
  EXPECT_EQ(best.PickGpus(n, Pod(1000, 1, 1000), rng), GpuSet{1});
  const Scorer random(Policy::kRandom, nullptr);
  for (int i = 0; i < 20; ++i) {
    const GpuSet g = random.PickGpus(n, Pod(1000, 1, 300), rng);
    EXPECT_EQ(__builtin_popcount(g), 1);
  }
  NodeGpuState placed = n;
  Place(placed, Pod(1000, 1, 300), GpuSet{1} << 2);
  EXPECT_EQ(placed.gpu_free_milli[2], 300);
  EXPECT_EQ(placed.cpu_free_milli, 63000);
}

TEST(Rng, SameSeedSameDraws) {
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) {
    const uint64_t n = static_cast<uint64_t>(i % 7 + 1);
    const uint64_t x = a.Below(n);
    EXPECT_EQ(x, b.Below(n));
    EXPECT_LT(x, n);
  }
}

}  // namespace
}  // namespace tessera::fgd
