// Tessera's and KAI's preemption fields: tessera.dev/victim-order, tessera.dev/queue-priority,
// kai.scheduler/preemptibility and tessera.dev/preemptibility (config/preemption_fields.h).
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(PreemptionFieldsTest, ClusterQueueVictimOrderAndQueuePriority) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: plain}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: classic
  annotations: {tessera.dev/victim-order: FewestVictims, tessera.dev/queue-priority: "10"}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: kueue
  annotations: {tessera.dev/victim-order: Kueue, tessera.dev/queue-priority: "-3"}
spec: {namespaceSelector: {}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.cluster_queues.size(), 3u);
  EXPECT_EQ(r.model.cluster_queues[0].preemption.victim_order, VictimOrder::kLeastLostWork);
  EXPECT_EQ(r.model.cluster_queues[0].queue_priority, 0);
  EXPECT_EQ(r.model.cluster_queues[1].preemption.victim_order, VictimOrder::kFewestVictims);
  EXPECT_EQ(r.model.cluster_queues[1].queue_priority, 10);
  EXPECT_EQ(r.model.cluster_queues[2].preemption.victim_order, VictimOrder::kKueue);
  EXPECT_EQ(r.model.cluster_queues[2].queue_priority, -3);
}

TEST(PreemptionFieldsTest, UnknownVictimOrderAndBadQueuePriorityAreErrorsNamingThem) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: a
  annotations: {tessera.dev/victim-order: SmallestFirst}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: b
  annotations: {tessera.dev/queue-priority: high}
spec: {namespaceSelector: {}}
)");
  const std::string all = AllDiagnostics(r);
  EXPECT_TRUE(r.model.cluster_queues.empty()) << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:5: error: metadata.annotations[\"tessera.dev/victim-order\"]: unknown "
                 "value \"SmallestFirst\"; allowed: LeastLostWork, FewestVictims, Kueue"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:12: error: metadata.annotations[\"tessera.dev/queue-priority\"]: "
                 "expected an integer, got \"high\""),
            nullptr)
      << all;
}

TEST(PreemptionFieldsTest, ClusterQueueGpuFailurePolicy) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: plain}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: left
  annotations: {tessera.dev/gpu-failure-policy: LeaveToController}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: bad
  annotations: {tessera.dev/gpu-failure-policy: Restart}
spec: {namespaceSelector: {}}
)");
  ASSERT_EQ(r.model.cluster_queues.size(), 2u) << AllDiagnostics(r);
  EXPECT_EQ(r.model.cluster_queues[0].gpu_failure_policy, GpuFailurePolicy::kRequeue);
  EXPECT_EQ(r.model.cluster_queues[1].gpu_failure_policy, GpuFailurePolicy::kLeaveToController);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:17: error: metadata.annotations[\"tessera.dev/gpu-failure-policy\"]: "
                 "unknown value \"Restart\"; allowed: Requeue, LeaveToController"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(PreemptionFieldsTest, WorkloadPreemptibilityFromKaiOrTesseraKeys) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata: {name: kai, labels: {kai.scheduler/preemptibility: non-preemptible}}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: tessera, annotations: {tessera.dev/preemptibility: preemptible}}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: unsaid}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 3u);
  EXPECT_EQ(r.model.workloads[0].non_preemptible, true);
  EXPECT_EQ(r.model.workloads[1].non_preemptible, false);
  EXPECT_FALSE(r.model.workloads[2].non_preemptible.has_value());
}

TEST(PreemptionFieldsTest, BadOrConflictingPreemptibilityIsAnError) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata: {name: typo, labels: {kai.scheduler/preemptibility: nonpreemptible}}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: both
  labels: {kai.scheduler/preemptibility: non-preemptible}
  annotations: {tessera.dev/preemptibility: preemptible}
spec: {template: {spec: {containers: [{name: c, image: x}]}}}
)");
  const std::string all = AllDiagnostics(r);
  EXPECT_TRUE(r.model.workloads.empty()) << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:3: error: metadata.labels[\"kai.scheduler/preemptibility\"]: unknown "
                 "value \"nonpreemptible\"; allowed: preemptible, non-preemptible"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:11: error: metadata.annotations[\"tessera.dev/preemptibility\"]: says "
                 "\"preemptible\" but metadata.labels[\"kai.scheduler/preemptibility\"] says "
                 "otherwise"),
            nullptr)
      << all;
}

TEST(PreemptionFieldsTest, PriorityClassesMayBeNonPreemptible) {
  LoadResult r = Load(R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: build, annotations: {tessera.dev/preemptibility: non-preemptible}}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: inference, labels: {kai.scheduler/preemptibility: non-preemptible}}
value: 125
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: train}
value: 50
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.priority_classes.size(), 2u);
  EXPECT_TRUE(r.model.priority_classes[0].non_preemptible);
  EXPECT_FALSE(r.model.priority_classes[1].non_preemptible);
  ASSERT_EQ(r.model.workload_priority_classes.size(), 1u);
  EXPECT_TRUE(r.model.workload_priority_classes[0].non_preemptible);
}

}  // namespace
}  // namespace tessera
