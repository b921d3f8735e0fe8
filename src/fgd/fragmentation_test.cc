#include "fgd/fragmentation.h"

#include <random>

#include "gtest/gtest.h"

namespace tessera::fgd {
namespace {

NodeGpuState Node(int64_t cpu, int32_t model, std::initializer_list<int32_t> gpus) {
  NodeGpuState n;
  n.cpu_free_milli = cpu;
  n.gpu_model = model;
  for (int32_t g : gpus) n.gpu_free_milli[static_cast<size_t>(n.num_gpus++)] = g;
  return n;
}

TypicalPod Typical(int64_t cpu, int32_t num_gpu, int32_t milli, double weight,
                   ModelMask models = 0) {
  TypicalPod t;
  t.cpu_milli = cpu;
  t.num_gpu = num_gpu;
  t.gpu_milli = milli;
  t.weight = weight;
  t.models = models;
  return t;
}

TEST(Fragmentation, QuadrantsOfOneNode) {
  const NodeGpuState node = Node(8000, 0, {1000, 300});
  const std::vector<TypicalPod> typical = {
      Typical(4000, 1, 500, 0.5),     // fits: the 300-milli GPU is fragmented for it
      Typical(16000, 1, 1000, 0.25),  // CPU lacks: all 1300 idle milli
      Typical(1000, 0, 0, 0.25),      // CPU-only: all idle milli, as in the simulator
  };
  const FragBreakdown b = NodeFragBreakdown(node, typical);
  EXPECT_DOUBLE_EQ(b.q2_lack_gpu, 150);
  EXPECT_DOUBLE_EQ(b.q3_satisfied, 500);
  EXPECT_DOUBLE_EQ(b.q4_lack_cpu, 325);
  EXPECT_DOUBLE_EQ(b.xl_satisfied, 325);
  EXPECT_DOUBLE_EQ(b.Fragmented(), 800);
  EXPECT_DOUBLE_EQ(b.Idle(), 1300);
  EXPECT_DOUBLE_EQ(NodeFragmentedGpuMilli(node, typical), 800);
  EXPECT_DOUBLE_EQ(FragmentationMeasure(typical).Evaluate(node), 800);
}

TEST(Fragmentation, ModelConstraintMakesEverythingFragmented) {
  const NodeGpuState node = Node(64000, /*model=*/1, {1000, 1000});
  const std::vector<TypicalPod> typical = {Typical(1000, 1, 1000, 1.0, /*models=*/0b01)};
  EXPECT_DOUBLE_EQ(NodeFragBreakdown(node, typical).no_access, 2000);
  EXPECT_DOUBLE_EQ(FragmentationMeasure(typical).Evaluate(node), 2000);
  const std::vector<TypicalPod> allowed = {Typical(1000, 1, 1000, 1.0, /*models=*/0b10)};
  EXPECT_DOUBLE_EQ(FragmentationMeasure(allowed).Evaluate(node), 0);
}

TEST(Fragmentation, MultiGpuShapeNeedsEnoughWholeGpus) {
  const NodeGpuState node = Node(64000, 0, {1000, 1000, 999, 0});
  const std::vector<TypicalPod> typical = {Typical(1000, 2, 1000, 0.5),
                                           Typical(1000, 4, 1000, 0.5)};
  // Two whole GPUs fit the 2-GPU shape (999 is fragmented for it); nothing fits the 4-GPU one.
  EXPECT_DOUBLE_EQ(FragmentationMeasure(typical).Evaluate(node), 0.5 * 999 + 0.5 * 2999);
}

TEST(Fragmentation, FastMeasureEqualsDefinitionOnRandomNodes) {
  std::mt19937_64 rng(7);
  std::vector<TypicalPod> typical;
  for (int i = 0; i < 40; ++i) {
    const int32_t num_gpu = static_cast<int32_t>(rng() % 4);
    const int32_t milli =
        num_gpu == 0 ? 0 : (rng() % 2 ? 1000 : static_cast<int32_t>(rng() % 999 + 1));
    typical.push_back(Typical(static_cast<int64_t>(rng() % 32) * 1000, num_gpu, milli, 1.0 / 40,
                              rng() % 3 == 0 ? ModelMask{1} << (rng() % 3) : 0));
  }
  const FragmentationMeasure measure(typical);
  for (int i = 0; i < 500; ++i) {
    NodeGpuState node;
    node.cpu_free_milli = static_cast<int64_t>(rng() % 64) * 1000;
    node.gpu_model = static_cast<int32_t>(rng() % 3);
    node.num_gpus = static_cast<int32_t>(rng() % 9);
    for (int g = 0; g < node.num_gpus; ++g) {
      node.gpu_free_milli[static_cast<size_t>(g)] = static_cast<int32_t>(rng() % 1001);
    }
    EXPECT_NEAR(measure.Evaluate(node), NodeFragmentedGpuMilli(node, typical), 1e-6);
  }
}

// Random typical pods: one-GPU shapes of any milli, multi-GPU shapes (mostly whole GPUs, as in
// the traces), CPU-only shapes, model constraints over models 0..2, CPU requests that repeat.
std::vector<TypicalPod> RandomTypical(std::mt19937_64& rng, int count) {
  std::vector<TypicalPod> typical;
  for (int i = 0; i < count; ++i) {
    const int kind = static_cast<int>(rng() % 6);
    const int32_t num_gpu = kind == 0 ? 0 : kind <= 3 ? 1 : static_cast<int32_t>(rng() % 8 + 2);
    int32_t milli = num_gpu == 0     ? 0
                    : rng() % 3 == 0 ? 1000
                                     : static_cast<int32_t>(rng() % 999 + 1);
    if (num_gpu > 1 && rng() % 4 != 0) milli = 1000;
    if (num_gpu > 1 && milli != 1000) milli = 500;  // at most two multi-GPU requests
    typical.push_back(Typical(static_cast<int64_t>(rng() % 16 + 1) * 2000, num_gpu, milli,
                              static_cast<double>(rng() % 1000 + 1) / (1000.0 * count),
                              rng() % 4 == 0 ? ModelMask{1} << (rng() % 3) : 0));
  }
  return typical;
}

NodeGpuState RandomNode(std::mt19937_64& rng) {
  NodeGpuState node;
  node.cpu_free_milli = static_cast<int64_t>(rng() % 72) * 500 - 1000;  // negative: after a pod
  node.gpu_model = static_cast<int32_t>(rng() % 5) - 1;                 // -1: no GPU model
  node.num_gpus = static_cast<int32_t>(rng() % (kMaxGpusPerNode + 1));
  for (int g = 0; g < node.num_gpus; ++g) {
    const int kind = static_cast<int>(rng() % 3);
    node.gpu_free_milli[static_cast<size_t>(g)] = kind == 0   ? 0
                                                  : kind == 1 ? kMilliPerGpu
                                                              : static_cast<int32_t>(rng() % 1001);
  }
  return node;
}

// The estimate behind FGD's scoring agrees with Evaluate within its stated tolerance, for the
// node as it is and with any one GPU's free milli changed.
TEST(Fragmentation, EstimateAgreesWithEvaluate) {
  std::mt19937_64 rng(11);
  int covered = 0;
  for (int round = 0; round < 30; ++round) {
    const std::vector<TypicalPod> typical = RandomTypical(rng, static_cast<int>(rng() % 60 + 1));
    const FragmentationMeasure measure(typical);
    ASSERT_LT(measure.estimate_tolerance(), 1e-6);
    for (int i = 0; i < 100; ++i) {
      const NodeGpuState node = RandomNode(rng);
      FragmentationMeasure::NodeSums sums;
      ASSERT_TRUE(measure.Prepare(node, node.cpu_free_milli, &sums));
      const double tolerance = measure.estimate_tolerance();
      EXPECT_NEAR(measure.Estimate(sums), measure.Evaluate(node), tolerance);
      for (int g = 0; g < node.num_gpus; ++g) {
        const int32_t from = node.gpu_free_milli[static_cast<size_t>(g)];
        const int32_t to = static_cast<int32_t>(rng() % (kMilliPerGpu + 1));
        NodeGpuState changed = node;
        changed.gpu_free_milli[static_cast<size_t>(g)] = to;
        EXPECT_NEAR(measure.EstimateWithGpu(sums, from, to), measure.Evaluate(changed), tolerance)
            << "round " << round << " node " << i << " gpu " << g;
        ++covered;
      }
    }
  }
  EXPECT_GT(covered, 10000);
}

TEST(Fragmentation, EstimateDeclinesWhatItDoesNotCover) {
  const std::vector<TypicalPod> typical = {Typical(1000, 1, 500, 0.5), Typical(1000, 2, 1000, 0.5)};
  const FragmentationMeasure measure(typical);
  FragmentationMeasure::NodeSums sums;
  EXPECT_TRUE(measure.Prepare(Node(8000, 0, {1000, 300}), 8000, &sums));
  EXPECT_DOUBLE_EQ(measure.Estimate(sums), 0.5 * 300 + 0.5 * 1300);
  EXPECT_FALSE(measure.Prepare(Node(8000, 0, {1200, 300}), 8000, &sums));  // beyond one GPU
  EXPECT_FALSE(measure.Prepare(Node(8000, 0, {-1}), 8000, &sums));

  // More distinct multi-GPU requests than the tables hold: Evaluate only.
  std::vector<TypicalPod> many;
  for (int32_t milli : {200, 400, 600, 800, 1000}) many.push_back(Typical(1000, 2, milli, 0.2));
  EXPECT_FALSE(FragmentationMeasure(many).Prepare(Node(8000, 0, {1000}), 8000, &sums));
}

TEST(TypicalPods, MostPopularShapesUpToTheThreshold) {
  std::vector<PodShape> pods;
  auto add = [&](int n, int64_t cpu, int32_t num_gpu, int32_t milli) {
    for (int i = 0; i < n; ++i) pods.push_back(PodShape{cpu, 1024, num_gpu, milli, 0, ""});
  };
  add(60, 4000, 1, 1000);
  add(30, 2000, 1, 500);
  add(6, 0, 0, 0);  // no CPU request: counted as 100 millicores
  add(4, 8000, 8, 1000);
  const std::vector<TypicalPod> typical = BuildTypicalPods(pods);
  // 60 + 30 + 6 = 96 >= 95: the 8-GPU shape is cut and the rest renormalized.
  ASSERT_EQ(typical.size(), 3u);
  EXPECT_EQ(typical[0].cpu_milli, 4000);
  EXPECT_NEAR(typical[0].weight, 60.0 / 96, 1e-12);
  EXPECT_EQ(typical[1].gpu_milli, 500);
  EXPECT_EQ(typical[2].cpu_milli, 100);
  EXPECT_NEAR(typical[0].weight + typical[1].weight + typical[2].weight, 1.0, 1e-12);

  TypicalPodOptions all;
  all.popularity_threshold_percent = 100;
  EXPECT_EQ(BuildTypicalPods(pods, all).size(), 4u);
  EXPECT_TRUE(BuildTypicalPods({}).empty());
}

// A shape with a count weighs as that many pods: the replay used to push one PodShape per pod,
// 1.3 GB for 20 jobs of 1,048,576 pods.
TEST(TypicalPods, ACountWeighsAsThatManyPods) {
  std::vector<PodShape> copies;
  for (int i = 0; i < 3; ++i) copies.push_back(PodShape{4000, 1024, 1, 1000, 0, ""});
  copies.push_back(PodShape{2000, 1024, 1, 500, 0, ""});
  PodShape three{4000, 1024, 1, 1000, 0, ""};
  three.count = 3;
  const std::vector<PodShape> counted = {three, PodShape{2000, 1024, 1, 500, 0, ""}};
  TypicalPodOptions all;
  all.popularity_threshold_percent = 100;
  const std::vector<TypicalPod> a = BuildTypicalPods(copies, all);
  const std::vector<TypicalPod> b = BuildTypicalPods(counted, all);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a[i].cpu_milli, b[i].cpu_milli);
    EXPECT_DOUBLE_EQ(a[i].weight, b[i].weight);
  }
  EXPECT_DOUBLE_EQ(b[0].weight, 0.75);
}

TEST(TypicalPods, EqualCountsPutTheLargerShapeFirst) {
  std::vector<PodShape> pods = {PodShape{1000, 0, 1, 1000, 0, ""},
                                PodShape{2000, 0, 1, 1000, 0, ""}};
  const std::vector<TypicalPod> typical = BuildTypicalPods(pods);
  ASSERT_EQ(typical.size(), 2u);
  EXPECT_EQ(typical[0].cpu_milli, 2000);
}

TEST(GpuModels, SpecMaskAndAccess) {
  GpuModelTable table;
  ASSERT_EQ(*table.Intern("T4"), 0);
  ASSERT_EQ(*table.Intern("P100"), 1);
  EXPECT_EQ(*table.MaskOfSpec(""), 0u);
  EXPECT_EQ(*table.MaskOfSpec("|P100||T4"), 0b11u);
  EXPECT_EQ(*table.MaskOfSpec("V100"), 0b100u);  // interned: no node has it yet
  EXPECT_TRUE(ModelAllowed(0, kNoGpuModel));
  EXPECT_FALSE(ModelAllowed(0b1, kNoGpuModel));
  EXPECT_FALSE(ModelAllowed(0b1, 1));
  EXPECT_TRUE(ModelAllowed(0b11, 1));
}

}  // namespace
}  // namespace tessera::fgd
