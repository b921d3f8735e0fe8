#include "config/gpu_fields.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

Node GpuNode(int gpus, Labels labels) {
  Node n;
  n.labels = std::move(labels);
  n.allocatable[kGpu] = gpus;
  return n;
}

TEST(GpuFieldsTest, NodeLabelsAndAnnotations) {
  Node n = GpuNode(4, {{"nvidia.com/gpu.memory", "40960"},
                       {"nvidia.com/gpu.product", "NVIDIA-A100-PCIE-40GB"},
                       {"nvidia.com/gpu.count", "8"}});
  auto problems = ApplyNodeGpuFields(
      {{"tessera.dev/gpu-layout", "nvlink=0,0,1,1;pcie=0,1,2,3"}, {"tessera.dev/mig", "dynamic"}},
      n);
  EXPECT_EQ(n.gpu_memory_mib, 40960);
  ASSERT_EQ(n.gpus.size(), 4u);
  EXPECT_EQ(n.gpus[2].nvlink, 1);
  EXPECT_EQ(n.gpus[3].pcie, 3);
  EXPECT_TRUE(n.mig_dynamic);
  ASSERT_EQ(problems.size(), 1u);  // the count label disagrees: a warning
  EXPECT_FALSE(problems[0].error);
  EXPECT_TRUE(problems[0].in_labels);
  EXPECT_EQ(problems[0].key, "nvidia.com/gpu.count");
}

TEST(GpuFieldsTest, BadNodeFieldsAreErrorsNamingTheKey) {
  Node n = GpuNode(4, {{"nvidia.com/gpu.memory", "lots"}});
  auto problems =
      ApplyNodeGpuFields({{"tessera.dev/gpu-layout", "nvlink=0,1"}, {"tessera.dev/mig", "yes"}}, n);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_FALSE(problems[0].error);  // memory: ignored
  EXPECT_EQ(problems[1].key, "tessera.dev/gpu-layout");
  EXPECT_EQ(problems[1].message, "nvlink lists 2 devices but the node has 4 GPUs");
  EXPECT_TRUE(problems[2].error);
  EXPECT_EQ(problems[2].key, "tessera.dev/mig");
  EXPECT_TRUE(n.gpus.empty());
  EXPECT_FALSE(n.mig_dynamic);
}

TEST(GpuFieldsTest, PodShareAndTopologyAnnotations) {
  Resources r;
  r[kGpu] = 1;
  EXPECT_TRUE(ApplyGpuShareAnnotations({{"gpu-fraction", "0.25"}}, r).empty());
  EXPECT_EQ(r[kGpu], 0);
  EXPECT_EQ(r[kGpuMilli], 250);
  EXPECT_TRUE(ApplyGpuShareAnnotations({{"gpu-memory", "2048"}}, r).empty());
  EXPECT_EQ(r[kGpuMilli], 0);
  EXPECT_EQ(r[kGpuMemory], 2048);
  auto bad = ApplyGpuShareAnnotations({{"gpu-fraction", "1.5"}}, r);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].key, "gpu-fraction");

  TopologyRequest t;
  EXPECT_TRUE(ApplyTopologyAnnotations({{"kueue.x-k8s.io/podset-preferred-topology", "block"},
                                        {"kueue.x-k8s.io/podset-required-topology", "rack"}},
                                       t)
                  .empty());
  EXPECT_EQ(t.level, "rack");
  EXPECT_TRUE(t.required);
  TopologyRequest empty;
  EXPECT_EQ(
      ApplyTopologyAnnotations({{"kueue.x-k8s.io/podset-required-topology", ""}}, empty).size(),
      1u);
  // Kueue's podset-group-name: kept with a topology level; without one, a warning.
  TopologyRequest grouped;
  EXPECT_TRUE(ApplyTopologyAnnotations({{"kueue.x-k8s.io/podset-required-topology", "rack"},
                                        {"kueue.x-k8s.io/podset-group-name", "train"}},
                                       grouped)
                  .empty());
  EXPECT_EQ(grouped.group, "train");
  TopologyRequest alone;
  auto warned = ApplyTopologyAnnotations({{"kueue.x-k8s.io/podset-group-name", "train"}}, alone);
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_FALSE(warned[0].error);
  EXPECT_TRUE(alone.group.empty());
}

}  // namespace
}  // namespace tessera
