// KubeRay's RayCluster, RayJob and RayService into workloads: Kueue's pod sets (head, worker
// groups of replicas x numOfHosts, a RayJob's submitter), queue and priority, what is noticed,
// and errors that name the field.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

constexpr std::string_view kCluster = R"(apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: rc
  namespace: ml
  labels:
    kueue.x-k8s.io/queue-name: research
    kueue.x-k8s.io/priority-class: urgent
spec:
  rayVersion: "2.9.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        priorityClassName: high
        containers:
        - name: ray-head
          resources:
            requests: {cpu: "2", memory: 8Gi}
  workerGroupSpecs:
  - groupName: GPU-Group
    replicas: 2
    numOfHosts: 4
    minReplicas: 1
    maxReplicas: 3
    template:
      spec:
        containers:
        - name: ray-worker
          resources:
            limits: {nvidia.com/gpu: 8}
  - groupName: cpu
    template:
      spec:
        containers:
        - name: ray-worker
          resources:
            requests: {cpu: "4"}
)";

TEST(RayTest, ClusterPodSets) {
  LoadResult r = Load(kCluster);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.Key(), "ml/rc");
  EXPECT_EQ(w.kind, "RayCluster");
  EXPECT_EQ(w.queue_name, "research");
  EXPECT_EQ(w.workload_priority_class, "urgent");
  EXPECT_EQ(w.priority_class, "high");
  EXPECT_EQ(w.min_count, -1);  // a whole gang, as in Kueue
  ASSERT_EQ(w.pod_sets.size(), 3u);
  EXPECT_EQ(w.pod_sets[0].name, "head");
  EXPECT_EQ(w.pod_sets[0].count, 1);
  EXPECT_EQ(w.pod_sets[0].requests[kCpu], 2000);
  EXPECT_EQ(w.pod_sets[1].name, "gpu-group");
  EXPECT_EQ(w.pod_sets[1].count, 8);  // replicas 2 x numOfHosts 4
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);
  EXPECT_EQ(w.pod_sets[1].min_count, -1);
  EXPECT_EQ(w.pod_sets[2].name, "cpu");
  EXPECT_EQ(w.pod_sets[2].count, 1);  // replicas defaults to 1
  EXPECT_EQ(Find(r, Sev::kNotice, "enableInTreeAutoscaling"), nullptr);
}

TEST(RayTest, AutoscalingIsNoticedAndAdmittedAtReplicas) {
  std::string text(kCluster);
  text.replace(text.find("  rayVersion"), 0, "  enableInTreeAutoscaling: true\n");
  LoadResult r = Load(text);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads[0].pod_sets[1].count, 8);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:10: notice: spec.enableInTreeAutoscaling: the Ray autoscaler is not "
                 "simulated"),
            nullptr)
      << AllDiagnostics(r);
}

constexpr std::string_view kJob = R"(apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rj
  labels: {kueue.x-k8s.io/queue-name: research}
spec:
  entrypoint: python train.py
  shutdownAfterJobFinishes: true
  activeDeadlineSeconds: 600
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers: [{name: h, resources: {requests: {cpu: "1"}}}]
    workerGroupSpecs:
    - groupName: w
      replicas: 3
      template:
        spec:
          containers: [{name: w, resources: {requests: {nvidia.com/gpu: 1}}}]
)";

TEST(RayTest, JobAddsTheDefaultSubmitter) {
  LoadResult r = Load(kJob);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.kind, "RayJob");
  EXPECT_EQ(w.queue_name, "research");
  ASSERT_EQ(w.pod_sets.size(), 3u);
  EXPECT_EQ(w.pod_sets[1].count, 3);
  EXPECT_EQ(w.pod_sets[2].name, "submitter");
  EXPECT_EQ(w.pod_sets[2].count, 1);
  EXPECT_EQ(w.pod_sets[2].requests[kCpu], 500);
  EXPECT_EQ(w.pod_sets[2].requests[kMemory], 200LL << 20);
  ASSERT_TRUE(w.active_deadline.has_value());
  EXPECT_EQ(*w.active_deadline, 600);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
}

TEST(RayTest, JobSubmitterTemplateAndModes) {
  std::string custom(kJob);
  custom += R"(  submitterPodTemplate:
    spec:
      containers: [{name: s, resources: {requests: {cpu: "3"}}}]
)";
  LoadResult r = Load(custom);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads[0].pod_sets.size(), 3u);
  EXPECT_EQ(r.model.workloads[0].pod_sets[2].requests[kCpu], 3000);

  std::string http(kJob);
  http += "  submissionMode: HTTPMode\n";
  r = Load(http);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads[0].pod_sets.size(), 2u);  // no submitter pod

  std::string bad(kJob);
  bad += "  submissionMode: Carrier\n";
  r = Load(bad);
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:21: error: spec.submissionMode: unknown value"), nullptr)
      << AllDiagnostics(r);
}

TEST(RayTest, JobNotices) {
  std::string keep(kJob);
  keep.replace(keep.find("shutdownAfterJobFinishes: true"), 30, "shutdownAfterJobFinishes: false");
  LoadResult r = Load(keep);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads.size(), 1u);
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:8: notice: spec.shutdownAfterJobFinishes"), nullptr)
      << AllDiagnostics(r);

  r = Load(R"(apiVersion: ray.io/v1
kind: RayJob
metadata: {name: existing}
spec:
  entrypoint: python x.py
  clusterSelector:
    ray.io/cluster: shared
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:7: notice: spec.clusterSelector: the job runs on an "
                                  "existing RayCluster"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(RayTest, ServiceIsOneLongRunningWorkload) {
  LoadResult r = Load(R"(apiVersion: ray.io/v1
kind: RayService
metadata: {name: serve}
spec:
  serveConfigV2: "applications: []"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: h}]
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      template:
        spec:
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.kind, "RayService");
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[1].count, 2);
  EXPECT_FALSE(w.runtime.has_value());
}

TEST(RayTest, ErrorsNameTheField) {
  struct Case {
    std::string_view yaml;
    std::string_view error;
  };
  const Case cases[] = {
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  workerGroupSpecs: []
)",
       "t.yaml:5: error: spec.headGroupSpec: required field is missing"},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {rayStartParams: {}}
)",
       "t.yaml:5: error: spec.headGroupSpec.template: required field is missing"},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
  - groupName: w
    replicas: -2
    template: {spec: {containers: [{name: w}]}}
)",
       "t.yaml:8: error: spec.workerGroupSpecs[0].replicas:"},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
  - groupName: w
    replicas: 1000000
    numOfHosts: 1000000
    template: {spec: {containers: [{name: w}]}}
)",
       "t.yaml:7: error: spec.workerGroupSpecs[0]: the cluster's pods (replicas x numOfHosts) "
       "exceed 1000000"},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
  - groupName: Head
    template: {spec: {containers: [{name: w}]}}
)",
       "t.yaml:7: error: spec.workerGroupSpecs[0].groupName: \"head\" is reserved"},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
  - groupName: w
    template: {spec: {containers: [{name: w}]}}
  - groupName: w
    template: {spec: {containers: [{name: w}]}}
)",
       "t.yaml:9: error: spec.workerGroupSpecs[1].groupName: duplicate worker group \"w\""},
      {R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: a}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
  - replicas: 1
    template: {spec: {containers: [{name: w}]}}
)",
       "t.yaml:7: error: spec.workerGroupSpecs[0].groupName: required field is missing"},
      {R"(apiVersion: ray.io/v1
kind: RayJob
metadata: {name: j}
spec:
  entrypoint: x
)",
       "t.yaml:5: error: spec.rayClusterSpec: required field is missing"},
      {R"(apiVersion: ray.io/v1
kind: RayService
metadata: {name: s}
spec:
  rayClusterConfig: [1, 2]
)",
       "t.yaml:5: error: spec.rayClusterConfig: expected a map, got a list"},
  };
  for (const Case& c : cases) {
    LoadResult r = Load(c.yaml);
    EXPECT_TRUE(r.model.workloads.empty()) << c.yaml;
    EXPECT_NE(Find(r, Sev::kError, c.error), nullptr) << c.error << "\n" << AllDiagnostics(r);
  }
}

}  // namespace
}  // namespace tessera
