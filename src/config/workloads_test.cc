// Job kinds into Workloads: counts, requests with Kubernetes defaulting, gangs, queues, errors.
#include <algorithm>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using testing::SourceDir;
using Sev = Diagnostic::Severity;

const Workload* ByKey(const Model& m, const std::string& key) {
  for (const auto& w : m.workloads)
    if (w.Key() == key) return &w;
  return nullptr;
}

class WorkloadsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r_ = LoadManifestFiles({SourceDir() + "/tests/manifests/workloads.yaml"});
    ASSERT_TRUE(r_.ok()) << AllDiagnostics(r_);
  }
  LoadResult r_;
};

TEST_F(WorkloadsFileTest, BatchJob) {
  const Workload* w = ByKey(r_.model, "team-a/train");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, "Job");
  EXPECT_EQ(w->queue_name, "training");
  EXPECT_EQ(w->workload_priority_class, "urgent");
  EXPECT_EQ(w->priority_class, "high");
  EXPECT_EQ(w->arrival, 30);
  ASSERT_TRUE(w->runtime.has_value());
  EXPECT_EQ(*w->runtime, 3600.5);
  EXPECT_EQ(w->min_count, 2);
  EXPECT_NE(w->source.find("workloads.yaml:2"), std::string::npos) << w->source;
  ASSERT_EQ(w->pod_sets.size(), 1u);
  const PodSet& ps = w->pod_sets[0];
  EXPECT_EQ(ps.count, 4);              // min(parallelism 4, completions 8)
  EXPECT_EQ(ps.requests[kCpu], 8000);  // the init container's 8 cpus beat 2 + 0.5
  EXPECT_EQ(ps.requests[kMemory], (16LL << 30) + (512LL << 20));  // limit-only sidecar counts
  EXPECT_EQ(ps.requests[kGpu], 4);  // limit only: the limit is the request
  EXPECT_EQ(ps.requests[kPods], 1);
  EXPECT_EQ(ps.node_selector.at("accelerator"), "nvidia-a100-80gb");
  ASSERT_EQ(ps.tolerations.size(), 1u);
  EXPECT_EQ(ps.tolerations[0].op, TolerationOp::kExists);
  ASSERT_EQ(ps.affinity.required_terms.size(), 1u);
  EXPECT_EQ(ps.affinity.required_terms[0].match_expressions[0].op, SelectorOp::kGt);
  EXPECT_EQ(ps.annotations.at("tessera.dev/note"), "hello");
}

TEST_F(WorkloadsFileTest, VolcanoJob) {
  const Workload* w = ByKey(r_.model, "team-a/mpi");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, "Volcano Job");
  EXPECT_EQ(w->queue_name, "training");
  EXPECT_EQ(w->priority_class, "low");
  EXPECT_EQ(w->min_count, 3);
  ASSERT_EQ(w->pod_sets.size(), 2u);
  EXPECT_EQ(w->pod_sets[0].name, "launcher");
  EXPECT_EQ(w->pod_sets[1].name, "worker");
  EXPECT_EQ(w->pod_sets[1].count, 4);
  EXPECT_EQ(w->pod_sets[1].requests[kGpu], 8);
  EXPECT_EQ(w->TotalPods(), 5);
}

TEST_F(WorkloadsFileTest, PodGroupCollectsPodsBeforeAndAfterIt) {
  const Workload* w = ByKey(r_.model, "default/gang");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, "PodGroup");
  EXPECT_EQ(w->min_count, 3);  // more than its pods: the engine keeps it pending
  EXPECT_EQ(w->queue_name, "serving");
  ASSERT_EQ(w->pod_sets.size(), 2u);
  EXPECT_EQ(w->pod_sets[0].name, "gang-0");
  EXPECT_EQ(w->pod_sets[1].name, "gang-1");
  EXPECT_EQ(ByKey(r_.model, "default/gang-0"), nullptr);  // not also a plain pod
}

TEST_F(WorkloadsFileTest, KubeflowJobsOnePodSetPerReplicaType) {
  const Workload* ptj = ByKey(r_.model, "team-a/ptj");
  ASSERT_NE(ptj, nullptr);
  ASSERT_EQ(ptj->pod_sets.size(), 2u);
  EXPECT_EQ(ptj->pod_sets[0].name, "master");
  EXPECT_EQ(ptj->pod_sets[1].name, "worker");
  EXPECT_EQ(ptj->pod_sets[1].count, 3);
  EXPECT_EQ(ptj->min_count, 2);
  EXPECT_EQ(ptj->priority_class, "high");
  EXPECT_EQ(ptj->queue_name, "training");
  const Workload* tfj = ByKey(r_.model, "default/tfj");
  ASSERT_NE(tfj, nullptr);
  ASSERT_EQ(tfj->pod_sets.size(), 3u);
  EXPECT_EQ(tfj->pod_sets[0].name, "chief");
  EXPECT_EQ(tfj->pod_sets[1].name, "ps");
  EXPECT_EQ(tfj->pod_sets[1].requests[kCpu], 4000);
  EXPECT_EQ(tfj->pod_sets[2].name, "worker");
  EXPECT_EQ(tfj->pod_sets[2].count, 2);
  EXPECT_EQ(tfj->min_count, -1);
}

TEST_F(WorkloadsFileTest, PodAndDeployment) {
  const Workload* pod = ByKey(r_.model, "default/notebook");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->arrival, 5);
  EXPECT_FALSE(pod->runtime.has_value());
  EXPECT_EQ(pod->pod_sets[0].requests[kCpu], 250);
  for (int i = 0; i < 3; ++i) {
    const Workload* w = ByKey(r_.model, "default/infer-" + std::to_string(i));
    ASSERT_NE(w, nullptr) << i;
    EXPECT_EQ(w->kind, "Deployment");
    EXPECT_EQ(w->queue_name, "serving");  // from the pod template's label
    EXPECT_EQ(w->TotalPods(), 1);
  }
  EXPECT_EQ(ByKey(r_.model, "default/infer-3"), nullptr);
}

TEST(WorkloadsTest, UndefinedPodGroupFormsAGangWithWarning) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata:
  name: a
  namespace: ns
  labels: {scheduling.x-k8s.io/pod-group: lonely}
spec:
  containers: [{name: c}]
---
apiVersion: v1
kind: Pod
metadata:
  name: b
  namespace: ns
  labels: {scheduling.x-k8s.io/pod-group: lonely}
spec:
  containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].Key(), "ns/lonely");
  EXPECT_EQ(r.model.workloads[0].MinPods(), 2);
  EXPECT_NE(Find(r, Sev::kWarning, "t.yaml:1: warning: pod group lonely has no PodGroup object"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(WorkloadsTest, PodGroupWithoutPodsStillLoads) {
  LoadResult r = Load(R"(apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: empty}
spec: {minMember: 4}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].MinPods(), 4);
  EXPECT_EQ(r.model.workloads[0].TotalPods(), 0);
}

TEST(WorkloadsTest, JobDefaultsAndQueueSources) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {kueue.x-k8s.io/queue-name: from-annotation}
spec:
  completions: 3
  template:
    spec:
      containers: [{name: c}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: k
  labels: {tessera.dev/queue: tq}
spec:
  parallelism: 5
  template:
    spec:
      containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 2u);
  EXPECT_EQ(r.model.workloads[0].TotalPods(), 1);  // parallelism defaults to 1
  EXPECT_EQ(r.model.workloads[0].queue_name, "from-annotation");
  EXPECT_EQ(r.model.workloads[0].ns, "default");
  EXPECT_EQ(r.model.workloads[1].TotalPods(), 5);
  EXPECT_EQ(r.model.workloads[1].queue_name, "tq");
  EXPECT_EQ(r.model.workloads[1].min_count, -1);
}

TEST(WorkloadsTest, ErrorsNameTheField) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: neg
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          requests:
            cpu: "-4"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: late
  annotations: {tessera.dev/arrival: soon}
spec:
  template:
    spec:
      containers: [{name: c}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: nocontainers
spec:
  template:
    spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 2
  template:
    spec:
      containers: {name: c}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: tolerations
spec:
  template:
    spec:
      containers: [{name: c}]
      tolerations:
      - key: a
        effect: Sometimes
)");
  EXPECT_TRUE(r.model.workloads.empty());
  std::string all = AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:12: error: spec.template.spec.containers[0].resources."
                 "requests.cpu: quantity must not be negative, got -4"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:18: error: metadata.annotations[\"tessera.dev/arrival\"]: "
                 "expected a non-negative number of seconds, got \"soon\""),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:30: error: spec.template.spec.containers: required field is missing"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:40: error: spec.template.spec.containers: expected a list, got a map"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:52: error: spec.template.spec.tolerations[0].effect: "
                 "unknown value \"Sometimes\"; allowed: NoSchedule, "
                 "PreferNoSchedule, NoExecute"),
            nullptr)
      << all;
}

TEST(WorkloadsTest, MinParallelismLargerThanJobIsIgnored) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {kueue.x-k8s.io/job-min-parallelism: "9"}
spec:
  parallelism: 2
  template:
    spec:
      containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads[0].min_count, -1);
  EXPECT_NE(Find(r, Sev::kWarning, "larger than the Job's 2 pods"), nullptr) << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
