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

// Issue 18: Kueue's Workload object, per-pod-set minCount (Kueue's partial admission).
TEST(WorkloadsTest, KueueWorkloadWithPerPodSetMinCount) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  queueName: main
  priorityClassName: urgent
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  podSets:
  - name: one
    count: 20
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - name: two
    count: 30
    minCount: 10
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}}}]}}
  - count: 15
    minCount: 16
    template: {spec: {containers: [{name: c}]}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.Key(), "ns/w");
  EXPECT_EQ(w.kind, "Workload");
  EXPECT_EQ(w.queue_name, "main");
  EXPECT_EQ(w.workload_priority_class, "urgent");
  EXPECT_EQ(w.priority_class, "");
  ASSERT_EQ(w.pod_sets.size(), 3u);
  EXPECT_EQ(w.pod_sets[0].name, "one");
  EXPECT_EQ(w.pod_sets[2].name, "ps2");
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 2);
  EXPECT_EQ(w.pod_sets[0].min_count, -1);
  EXPECT_EQ(w.pod_sets[1].min_count, 10);
  EXPECT_EQ(w.pod_sets[2].min_count, -1);  // above count: ignored with a warning
  EXPECT_NE(Find(r, Sev::kWarning, "spec.podSets[2].minCount: larger than count"), nullptr)
      << AllDiagnostics(r);
  // Per-pod-set minimums: each pod set its own (its count where it has none).
  EXPECT_TRUE(w.PerSetMinimums());
  EXPECT_EQ(w.MinOfSet(0), 20);
  EXPECT_EQ(w.MinOfSet(1), 10);
  EXPECT_EQ(w.MinOfSet(2), 15);
  EXPECT_EQ(w.MinPods(), 45);
}

TEST(WorkloadsTest, KueueWorkloadOwnedByAJobIsSkipped) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: job-train-1a2b3
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: x}]
spec:
  queueName: main
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: bad}
spec:
  queueName: main
  podSets: [{name: main, count: 1}]
)");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:5: notice: metadata.ownerReferences: skipped"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.podSets[0].template: required field is missing"), nullptr)
      << AllDiagnostics(r);
}

// The workload's one minCount (a Volcano Job's minAvailable, a Job's min-parallelism) is filled
// pod set by pod set in order.
TEST(WorkloadsTest, WorkloadMinCountFillsPodSetsInOrder) {
  Workload w;
  w.pod_sets.resize(3);
  w.pod_sets[0].count = 2;
  w.pod_sets[1].count = 4;
  w.pod_sets[2].count = 3;
  w.min_count = 5;
  EXPECT_FALSE(w.PerSetMinimums());
  EXPECT_EQ(w.MinOfSet(0), 2);
  EXPECT_EQ(w.MinOfSet(1), 3);
  EXPECT_EQ(w.MinOfSet(2), 0);
  EXPECT_EQ(w.MinPods(), 5);
  w.min_count = -1;
  EXPECT_EQ(w.MinOfSet(2), 3);
  EXPECT_EQ(w.MinPods(), 9);
}

// Issue 15: fields users write that Tessera dropped without a word. Volcano's job controller
// fields are noticed, one notice each, naming the line.
TEST(WorkloadsTest, VolcanoControllerFieldsAreNoticed) {
  LoadResult r = Load(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  maxRetry: 3
  policies:
  - {event: PodEvicted, action: RestartJob}
  plugins:
    ssh: []
    svc: []
  tasks:
  - name: w
    replicas: 2
    maxRetry: 1
    policies:
    - {event: TaskCompleted, action: CompleteJob}
    template:
      spec:
        containers: [{name: c, image: x}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  for (const char* want :
       {"t.yaml:5: notice: spec.maxRetry: retrying a failed Volcano Job is its job controller's",
        "t.yaml:7: notice: spec.policies: restarting, aborting or completing a Volcano Job",
        "t.yaml:9: notice: spec.plugins: Volcano's job plugins",
        "t.yaml:14: notice: spec.tasks[0].maxRetry:", "t.yaml:16: notice: spec.tasks[0].policies:"})
    EXPECT_NE(Find(r, Sev::kNotice, want), nullptr) << want << "\n" << AllDiagnostics(r);
}

// elasticPolicy: min 4 / max 8 is a gang of the Master and 4 Workers, up to 8 Workers; it was
// a gang of all 9 pods.
TEST(WorkloadsTest, PyTorchElasticPolicyIsTheGangsMinimum) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: elastic}
spec:
  elasticPolicy: {rdzvBackend: c10d, minReplicas: 4, maxReplicas: 8, maxRestarts: 10}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {containers: [{name: c, image: x}]}}
    Worker:
      replicas: 10
      template: {spec: {containers: [{name: c, image: x}]}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bad}
spec:
  elasticPolicy: {minReplicas: 5, maxReplicas: 2}
  pytorchReplicaSpecs:
    Worker:
      template: {spec: {containers: [{name: c, image: x}]}}
)");
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[1].name, "worker");
  EXPECT_EQ(w.pod_sets[1].count, 8);  // 10 replicas, capped by maxReplicas
  EXPECT_EQ(w.MinPods(), 5);          // the Master and minReplicas Workers
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:5: warning: spec.elasticPolicy.maxReplicas: the Worker has 10 replicas, "
                 "more than maxReplicas; Tessera admits at most 8"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:5: notice: spec.elasticPolicy.maxRestarts:"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:18: error: spec.elasticPolicy.minReplicas: minReplicas (5) is larger "
                 "than maxReplicas (2)"),
            nullptr)
      << AllDiagnostics(r);
}

// topologySpreadConstraints and preferred node affinity were read nowhere.
TEST(WorkloadsTest, TopologySpreadAndPreferredAffinity) {
  LoadResult r = Load(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: web}}
        minDomains: 3
      - maxSkew: 2
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {matchLabels: {app: web}}
      - maxSkew: 1
        topologyKey: rack
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: other}}
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 80
            preference:
              matchExpressions: [{key: zone, operator: In, values: [a]}]
          - weight: 20
            preference:
              matchExpressions: [{key: gpu, operator: Exists}]
      containers: [{name: c, image: x}]
)");
  ASSERT_EQ(r.model.workloads.size(), 2u) << AllDiagnostics(r);
  const PodSet& ps = r.model.workloads[0].pod_sets[0];
  ASSERT_EQ(ps.spread.size(), 2u);
  EXPECT_EQ(ps.spread[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_TRUE(ps.spread[0].required);
  EXPECT_EQ(ps.spread[0].max_skew, 1);
  EXPECT_FALSE(ps.spread[1].required);
  EXPECT_EQ(ps.spread[1].max_skew, 2);
  ASSERT_EQ(ps.affinity.preferred_terms.size(), 2u);
  EXPECT_EQ(ps.affinity.preferred_terms[0].weight, 80);
  EXPECT_EQ(PreferredAffinityScore(ps.affinity, {{"zone", "a"}, {"gpu", "h100"}}), 100);
  EXPECT_EQ(PreferredAffinityScore(ps.affinity, {{"zone", "b"}}), 0);
  EXPECT_EQ(ps.spread[0].min_domains, 3);
  EXPECT_EQ(ps.spread[1].min_domains, 0);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "spec.template.spec.topologySpreadConstraints[2].labelSelector: a topology "
                 "spread constraint whose labelSelector does not select the pod's own labels is "
                 "ignored"),
            nullptr)
      << AllDiagnostics(r);

  LoadResult bad = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  topologySpreadConstraints:
  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}
  containers: [{name: c, image: x}]
)");
  EXPECT_TRUE(bad.model.workloads.empty());
  EXPECT_NE(Find(bad, Sev::kError, "t.yaml:6: error: spec.topologySpreadConstraints[0].maxSkew:"),
            nullptr)
      << AllDiagnostics(bad);

  // minDomains: a positive integer, and only with DoNotSchedule (Kubernetes' validation).
  for (const auto& [item, message] : std::vector<std::pair<std::string, std::string>>{
           {"{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}",
            "minDomains: can only be set with whenUnsatisfiable: DoNotSchedule"},
           {"{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}",
            "minDomains:"}}) {
    LoadResult r2 = Load(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  topologySpreadConstraints:\n  - " +
        item + "\n  containers: [{name: c, image: x}]\n");
    EXPECT_TRUE(r2.model.workloads.empty()) << item;
    EXPECT_NE(
        Find(r2, Sev::kError, "t.yaml:6: error: spec.topologySpreadConstraints[0]." + message),
        nullptr)
        << AllDiagnostics(r2);
  }
}

}  // namespace
}  // namespace tessera
