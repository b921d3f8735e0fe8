// Elastic NodePools and SchedulerConfig spec.autoscaler as the loader reads them
// (config/autoscaling_fields.h, docs/manifests.md, docs/autoscaling.md).
#include "config/autoscaling_fields.h"

#include <gtest/gtest.h>

#include "config/loader_test_util.h"

namespace tessera {
namespace {

using Sev = Diagnostic::Severity;
using testing::AllDiagnostics;
using testing::Find;
using testing::Load;

TEST(AutoscalingFieldsTest, ElasticPoolExpandsMaxNodesAndProvisionsCount) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata: {name: fixed}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: a100}
spec:
  count: 1
  capacity: {nvidia.com/gpu: 8}
  autoscaling: {minNodes: 1, maxNodes: 3, provisioningSeconds: 5m, scaleDownAfterSeconds: 90}
  pricePerNodeHour: 32.5
  spot: {discount: 0.7, interruptionsPerNodeHour: 0.05, noticeSeconds: 2m}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: zero}
spec:
  capacity: {nvidia.com/gpu: 4}
  autoscaling: {maxNodes: 2}
---
apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  autoscaler: {scaleUp: pod-by-pod, seed: 42, maxWorkloadsPerPlan: 10}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const Model& m = r.model;
  ASSERT_EQ(m.nodes.size(), 6u);
  ASSERT_EQ(m.node_pools.size(), 2u);
  const NodePoolSpec& a = m.node_pools[0];
  EXPECT_EQ(a.name, "a100");
  EXPECT_EQ(a.first_node, 1);
  EXPECT_EQ(a.num_nodes, 3);
  ASSERT_TRUE(a.autoscaling);
  EXPECT_EQ(a.autoscaling->min_nodes, 1);
  EXPECT_EQ(a.autoscaling->max_nodes, 3);
  EXPECT_EQ(a.autoscaling->provisioning_seconds, 300);
  EXPECT_EQ(a.autoscaling->scale_down_after_seconds, 90);
  EXPECT_EQ(a.price_per_node_hour, 32.5);
  ASSERT_TRUE(a.spot);
  EXPECT_DOUBLE_EQ(a.spot->discount, 0.7);
  EXPECT_DOUBLE_EQ(a.spot->interruptions_per_node_hour, 0.05);
  EXPECT_EQ(a.spot->notice_seconds, 120);
  EXPECT_EQ(m.nodes[0].pool, -1);
  EXPECT_TRUE(m.nodes[0].provisioned);
  EXPECT_EQ(m.nodes[1].pool, 0);
  EXPECT_TRUE(m.nodes[1].provisioned);  // count: 1
  EXPECT_FALSE(m.nodes[2].provisioned);
  EXPECT_FALSE(m.nodes[3].provisioned);
  const NodePoolSpec& z = m.node_pools[1];
  EXPECT_EQ(z.first_node, 4);
  EXPECT_EQ(z.autoscaling->min_nodes, 0);
  EXPECT_EQ(z.autoscaling->scale_down_after_seconds, 600);  // the default
  EXPECT_FALSE(m.nodes[4].provisioned);                     // count defaults to minNodes, 0
  EXPECT_EQ(m.nodes[5].pool, 1);
  EXPECT_EQ(m.config.autoscaler.scale_up, ScaleUpMode::kPodByPod);
  EXPECT_EQ(m.config.autoscaler.seed, 42u);
  EXPECT_EQ(m.config.autoscaler.max_workloads_per_plan, 10);
}

// Each bad value is an error naming its field; the pool is dropped.
TEST(AutoscalingFieldsTest, BadValuesAreErrorsNamingTheField) {
  struct Case {
    const char* spec;
    const char* error;
  };
  const Case cases[] = {
      {"autoscaling: {minNodes: 1}", "spec.autoscaling.maxNodes: required field is missing"},
      {"autoscaling: {minNodes: 5, maxNodes: 2}",
       "spec.autoscaling.minNodes: minNodes 5 is more than maxNodes 2"},
      {"autoscaling: {maxNodes: 0}", "spec.autoscaling.maxNodes"},
      {"autoscaling: {maxNodes: 600000}", "spec.autoscaling.maxNodes"},
      {"count: 5\n  autoscaling: {maxNodes: 2}", "spec.count"},
      {"autoscaling: {maxNodes: 2, provisioningSeconds: -3}",
       "spec.autoscaling.provisioningSeconds"},
      {"autoscaling: {maxNodes: 2, scaleDownAfterSeconds: soon}",
       "spec.autoscaling.scaleDownAfterSeconds"},
      {"autoscaling: {maxNodes: 2, maxnodes: 3}", "spec.autoscaling.maxnodes: unknown field"},
      {"autoscaling: 3", "spec.autoscaling"},
      {"count: 1\n  pricePerNodeHour: -1", "spec.pricePerNodeHour: expected dollars per node-hour"},
      {"count: 1\n  pricePerNodeHour: 2e9", "spec.pricePerNodeHour"},
      {"count: 1\n  spot: {discount: 1}", "spec.spot.discount: expected a fraction"},
      {"count: 1\n  spot: {interruptionsPerNodeHour: 5000}", "spec.spot.interruptionsPerNodeHour"},
      {"count: 1\n  spot: {interruptionsPerNodeHour: nan}", "spec.spot.interruptionsPerNodeHour"},
      {"count: 1\n  spot: {noticeSeconds: -1}", "spec.spot.noticeSeconds"},
      {"count: 1\n  spot: {rate: 1}", "spec.spot.rate: unknown field"},
      // maxNodes counts against the cluster's device slots as count does.
      {"autoscaling: {maxNodes: 500000}", "spec.autoscaling.maxNodes: 500000 nodes of 16 GPUs"},
  };
  for (const Case& c : cases) {
    LoadResult r = Load(std::string(R"(apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: p}
spec:
  capacity: {nvidia.com/gpu: 16}
  )") + c.spec + "\n");
    EXPECT_FALSE(r.ok()) << c.spec;
    EXPECT_NE(Find(r, Sev::kError, c.error), nullptr) << c.spec << "\n" << AllDiagnostics(r);
    EXPECT_TRUE(r.model.nodes.empty()) << c.spec;
    EXPECT_TRUE(r.model.node_pools.empty()) << c.spec;
  }
}

TEST(AutoscalingFieldsTest, BadAutoscalerConfigIsAnError) {
  LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  autoscaler: {scaleUp: karpenter, seed: -1, maxWorkloadsPerPlan: 0}
)");
  EXPECT_NE(Find(r, Sev::kError,
                 "spec.autoscaler.scaleUp: unknown value \"karpenter\"; allowed: "
                 "gang-aware, pod-by-pod"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.autoscaler.seed"), nullptr) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.autoscaler.maxWorkloadsPerPlan"), nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
