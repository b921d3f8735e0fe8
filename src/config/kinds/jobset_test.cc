// JobSet, LeaderWorkerSet and StatefulSet into workloads: Kueue's pod sets for each, what is not
// honoured said in notices, and errors that name the field.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(JobSetTest, EveryReplicatedJobIsAPodSetOfReplicasTimesParallelism) {
  LoadResult r = Load(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: ml, labels: {kueue.x-k8s.io/queue-name: research}}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
  - name: driver
    template:
      spec:
        template:
          spec:
            priorityClassName: high
            containers: [{name: d, image: x, resources: {requests: {cpu: "2"}}}]
  - name: workers
    replicas: 3
    dependsOn: [{name: driver, status: Ready}]
    template:
      spec:
        parallelism: 4
        completions: 2
        template:
          spec:
            containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.kind, "JobSet");
  EXPECT_EQ(w.Key(), "ml/train");
  EXPECT_EQ(w.queue_name, "research");
  EXPECT_EQ(w.priority_class, "high");
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[0].name, "driver");
  EXPECT_EQ(w.pod_sets[0].count, 1);
  EXPECT_EQ(w.pod_sets[1].name, "workers");
  EXPECT_EQ(w.pod_sets[1].count, 6);  // 3 Jobs of min(parallelism 4, completions 2)
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);
  EXPECT_EQ(w.MinPods(), 7);  // one gang
  EXPECT_NE(Find(r, Sev::kNotice, "spec.startupPolicy.startupPolicyOrder: JobSet creates"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "spec.replicatedJobs[1].dependsOn:"), nullptr)
      << AllDiagnostics(r);
}

TEST(JobSetTest, BadReplicatedJobsAreErrorsNamingTheField) {
  LoadResult r = Load(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a}
spec:
  replicatedJobs:
  - name: w
    replicas: -1
    template: {spec: {template: {spec: {containers: [{name: c}]}}}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: b}
spec:
  replicatedJobs:
  - name: w
    template: {spec: {parallelism: 2}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: c}
spec:
  replicatedJobs:
  - {name: w, replicas: 1000000, template: {spec: {parallelism: 1000000, template: {spec: {containers: [{name: c}]}}}}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: d}
spec: {}
)");
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:7: error: spec.replicatedJobs[0].replicas:"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.replicatedJobs[0].template.spec.template: required"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "at most 1000000 per workload"), nullptr) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.replicatedJobs: required field is missing"), nullptr)
      << AllDiagnostics(r);
}

TEST(LeaderWorkerSetTest, EveryGroupIsAGangOfALeaderAndItsWorkers) {
  LoadResult r = Load(R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
  annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: rack}
spec:
  replicas: 2
  startupPolicy: LeaderReady
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      metadata: {labels: {kueue.x-k8s.io/queue-name: serving}}
      spec:
        containers: [{name: l, image: x, resources: {requests: {cpu: "4"}}}]
    workerTemplate:
      metadata: {labels: {kueue.x-k8s.io/queue-name: serving}}
      spec:
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const Workload& w = r.model.workloads[i];
    EXPECT_EQ(w.name, "vllm-" + std::to_string(i));
    EXPECT_EQ(w.kind, "LeaderWorkerSet");
    EXPECT_EQ(w.queue_name, "serving");
    ASSERT_EQ(w.pod_sets.size(), 2u);
    EXPECT_EQ(w.pod_sets[0].name, "leader");
    EXPECT_EQ(w.pod_sets[0].count, 1);
    EXPECT_EQ(w.pod_sets[0].requests[kGpu], 0);
    EXPECT_EQ(w.pod_sets[1].name, "worker");
    EXPECT_EQ(w.pod_sets[1].count, 3);
    EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);
    EXPECT_EQ(w.MinPods(), 4);
  }
  EXPECT_NE(Find(r, Sev::kNotice, "spec.startupPolicy: LeaderWorkerSet creates the workers"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "exclusive placement"), nullptr) << AllDiagnostics(r);
}

TEST(LeaderWorkerSetTest, NoLeaderTemplateMeansTheWorkersAndSizeOneHasNoWorkers) {
  LoadResult r = Load(R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: one}
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: bad}
spec:
  leaderWorkerTemplate: {size: 0}
)");
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.name, "one-0");
  ASSERT_EQ(w.pod_sets.size(), 1u);
  EXPECT_EQ(w.pod_sets[0].requests[kGpu], 2);
  EXPECT_NE(Find(r, Sev::kError, "spec.leaderWorkerTemplate.size:"), nullptr)
      << AllDiagnostics(r);
}

TEST(StatefulSetTest, ParallelIsAGangAndOrderedReadyStartsFromOnePod) {
  LoadResult r = Load(R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  template:
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
  volumeClaimTemplates: [{metadata: {name: data}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: o}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: bad}
spec:
  podManagementPolicy: Random
  template: {spec: {containers: [{name: c}]}}
)");
  ASSERT_EQ(r.model.workloads.size(), 2u) << AllDiagnostics(r);
  const Workload& p = r.model.workloads[0];
  EXPECT_EQ(p.kind, "StatefulSet");
  EXPECT_EQ(p.queue_name, "q");
  ASSERT_EQ(p.pod_sets.size(), 1u);
  EXPECT_EQ(p.pod_sets[0].count, 3);
  EXPECT_EQ(p.MinPods(), 3);
  EXPECT_EQ(r.model.workloads[1].MinPods(), 1);
  EXPECT_NE(Find(r, Sev::kNotice, "spec.volumeClaimTemplates: storage is not scheduled"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "spec.podManagementPolicy: OrderedReady (the default)"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "unknown value \"Random\"; allowed: OrderedReady, Parallel"),
            nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
