// AppWrapper into one workload: every component's podSets (declared, or inferred as AppWrapper's
// webhook does), named "<name>-<index>", with the templates their paths lead to; errors name
// the field.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(AppWrapperTest, DeclaredPodSets) {
  LoadResult r = Load(R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: aw
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: research}
spec:
  components:
  - podSets:
    - path: template.spec.leaderWorkerTemplate.leaderTemplate
      replicas: 2
    - path: "template.spec.leaderWorkerTemplate.workerTemplate"
      replicas: 6
    template:
      apiVersion: leaderworkerset.x-k8s.io/v1
      kind: LeaderWorkerSet
      metadata: {name: lws}
      spec:
        replicas: 2
        leaderWorkerTemplate:
          size: 4
          leaderTemplate:
            spec:
              priorityClassName: high
              containers: [{name: l, resources: {requests: {cpu: "1"}}}]
          workerTemplate:
            spec:
              containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]
  - podSets:
    - path: template.spec.containers[0]
      replicas: 0
    template:
      apiVersion: v1
      kind: ConfigMap
      spec:
        containers:
        - spec: {containers: [{name: odd}]}
  - template:
      apiVersion: v1
      kind: Service
      metadata: {name: svc}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.Key(), "ml/aw");
  EXPECT_EQ(w.kind, "AppWrapper");
  EXPECT_EQ(w.queue_name, "research");
  EXPECT_EQ(w.priority_class, "high");
  ASSERT_EQ(w.pod_sets.size(), 3u);
  EXPECT_EQ(w.pod_sets[0].name, "aw-0");
  EXPECT_EQ(w.pod_sets[0].count, 2);
  EXPECT_EQ(w.pod_sets[0].requests[kCpu], 1000);
  EXPECT_EQ(w.pod_sets[1].name, "aw-1");
  EXPECT_EQ(w.pod_sets[1].count, 6);
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);
  EXPECT_EQ(w.pod_sets[2].count, 0);  // an index step, and zero replicas
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:39: notice: spec.components[2].podSets: no podSets, and AppWrapper "
                 "infers none for Service"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(AppWrapperTest, InferredPodSets) {
  LoadResult r = Load(R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: inf}
spec:
  components:
  - template:
      apiVersion: batch/v1
      kind: Job
      spec:
        parallelism: 4
        completions: 3
        template:
          spec:
            containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
  - template:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            template: {spec: {containers: [{name: m}]}}
          Worker:
            replicas: 5
            template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 2}}}]}}
  - template:
      apiVersion: ray.io/v1
      kind: RayCluster
      spec:
        headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
        workerGroupSpecs:
        - groupName: g
          replicas: 2
          template: {spec: {containers: [{name: g}]}}
  - template:
      apiVersion: v1
      kind: Pod
      spec:
        containers: [{name: p, resources: {requests: {cpu: "7"}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  ASSERT_EQ(w.pod_sets.size(), 6u);
  EXPECT_EQ(w.pod_sets[0].count, 3);  // min(parallelism, completions)
  EXPECT_EQ(w.pod_sets[0].requests[kGpu], 1);
  EXPECT_EQ(w.pod_sets[1].count, 1);  // Master
  EXPECT_EQ(w.pod_sets[2].count, 5);  // Worker
  EXPECT_EQ(w.pod_sets[2].requests[kGpu], 2);
  EXPECT_EQ(w.pod_sets[3].count, 1);  // Ray head
  EXPECT_EQ(w.pod_sets[4].count, 2);  // Ray workers
  EXPECT_EQ(w.pod_sets[5].name, "inf-5");
  EXPECT_EQ(w.pod_sets[5].requests[kCpu], 7000);  // the Pod itself is the template
}

TEST(AppWrapperTest, ErrorsNameTheField) {
  struct Case {
    std::string_view yaml;
    std::string_view error;
  };
  const Case cases[] = {
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec: {suspend: true}
)",
       "t.yaml:4: error: spec.components: required field is missing"},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets: [{path: template.spec.template}]
)",
       "t.yaml:6: error: spec.components[0].template: required field is missing"},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - path: template.spec.tmpl
    template: {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: [{name: c}]}}}}
)",
       "t.yaml:7: error: spec.components[0].podSets[0].path: \"template.spec.tmpl\" does not "
       "lead to a pod template: no field \"tmpl\" at \"template.spec\""},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - path: spec.template
    template: {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: [{name: c}]}}}}
)",
       "t.yaml:7: error: spec.components[0].podSets[0].path: \"spec.template\" does not lead to "
       "a pod template: the path must start with \"template\""},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - path: template.spec.containers[x]
    template: {spec: {containers: []}}
)",
       "t.yaml:7: error: spec.components[0].podSets[0].path: \"template.spec.containers[x]\" "
       "does not lead to a pod template: invalid index"},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - path: template.spec.template
      replicas: -1
    template: {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: [{name: c}]}}}}
)",
       "t.yaml:8: error: spec.components[0].podSets[0].replicas:"},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - {path: template.spec.template, replicas: 900000}
    - {path: template.spec.template, replicas: 900000}
    template: {apiVersion: batch/v1, kind: Job, spec: {template: {spec: {containers: [{name: c}]}}}}
)",
       "t.yaml:8: error: spec.components[0].podSets[1].path: the AppWrapper's pods exceed"},
      {R"(apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: a}
spec:
  components:
  - podSets:
    - path: template.spec.template
    template:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec: {}
)",
       "t.yaml:13: error: spec.components[0].template.spec.template.spec.containers: required "
       "field is missing"},
  };
  for (const Case& c : cases) {
    LoadResult r = Load(c.yaml);
    EXPECT_TRUE(r.model.workloads.empty()) << c.yaml;
    EXPECT_NE(Find(r, Sev::kError, c.error), nullptr) << c.error << "\n" << AllDiagnostics(r);
  }
}

}  // namespace
}  // namespace tessera
