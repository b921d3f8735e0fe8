// TrainJob (trainer.kubeflow.org/v1alpha1) with the (Cluster)TrainingRuntime it names: the
// runtime's replicated jobs as pod sets, numNodes and resourcesPerNode, runtimes that come later
// or in another file, a missing runtime, errors and notices.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

// A runtime like upstream's torchtune ones: two initializers and the trainer's "node" job.
constexpr const char* kTorchRuntime = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-tune}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
            spec:
              template:
                spec:
                  containers: [{name: dataset-initializer, image: x, resources: {requests: {cpu: "1"}}}]
        - name: node
          dependsOn: [{name: dataset-initializer, status: Complete}]
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  priorityClassName: train-prio
                  containers:
                    - name: node
                      image: x
                      resources: {requests: {cpu: "4", nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}
                    - name: sidecar
                      image: y
                      resources: {requests: {cpu: "1"}}
)";

TEST(TrainJobTest, RuntimeAfterTheTrainJobGivesThePodSets) {
  LoadResult r = Load(std::string(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: training}
spec:
  runtimeRef: {name: torch-tune}
  trainer:
    numNodes: 4
    resourcesPerNode: {requests: {nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}
  runtimePatches: [{manager: me}]
---
)") + kTorchRuntime);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.kind, "TrainJob");
  EXPECT_EQ(w.Key(), "ml/tune");
  EXPECT_EQ(w.queue_name, "training");
  EXPECT_EQ(w.priority_class, "train-prio");
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[0].name, "dataset-initializer");
  EXPECT_EQ(w.pod_sets[0].count, 1);
  EXPECT_EQ(w.pod_sets[0].requests[kCpu], 1000);
  EXPECT_EQ(w.pod_sets[1].name, "node");
  EXPECT_EQ(w.pod_sets[1].count, 4);              // trainer.numNodes beats mlPolicy's 2
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);     // resourcesPerNode's gpu
  EXPECT_EQ(w.pod_sets[1].requests[kCpu], 5000);  // the node's own cpu stays, plus the sidecar's
  EXPECT_EQ(w.MinPods(), 5);
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:12: notice: spec.runtimePatches: not applied"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:30: notice: spec.template.spec.replicatedJobs[1].dependsOn: not "
                 "honoured"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(TrainJobTest, MlPolicyNumNodesWhenTheTrainJobSaysNone) {
  LoadResult r = Load(std::string(kTorchRuntime) + R"(---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: small}
spec:
  runtimeRef: {name: torch-tune, kind: ClusterTrainingRuntime, apiGroup: trainer.kubeflow.org}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].pod_sets[1].count, 2);
  EXPECT_EQ(r.model.workloads[0].pod_sets[1].requests[kGpu], 1);
}

TEST(TrainJobTest, MpiRuntimeSizesTheNodeJobAndTheLauncherRunsOnce) {
  LoadResult r = Load(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: mpi, namespace: ml}
spec:
  mlPolicy: {numNodes: 1, mpi: {runLauncherAsNode: true}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template: {spec: {template: {spec: {containers: [{name: node, image: x}]}}}}
        - name: launcher
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec: {template: {spec: {containers: [{name: node, image: x}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: ds, namespace: ml}
spec:
  runtimeRef: {name: mpi, kind: TrainingRuntime}
  trainer: {numNodes: 4, resourcesPerNode: {limits: {nvidia.com/gpu: 2}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: elsewhere, namespace: other}
spec:
  runtimeRef: {name: mpi, kind: TrainingRuntime}
)");
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[0].name, "node");
  EXPECT_EQ(w.pod_sets[0].count, 3);  // numNodes less the launcher
  EXPECT_EQ(w.pod_sets[0].requests[kGpu], 2);
  EXPECT_EQ(w.pod_sets[1].name, "launcher");
  EXPECT_EQ(w.pod_sets[1].count, 1);
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 2);
  // A TrainingRuntime is looked up in the TrainJob's namespace only.
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:23: warning: TrainJob other/elsewhere: its TrainingRuntime mpi is not in "
                 "the input; skipped"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(TrainJobTest, RuntimeInAnotherFile) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-trainjob-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a-job.yaml") << R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tune}
spec:
  runtimeRef: {name: torch-tune}
  trainer: {numNodes: 3}
)";
  std::ofstream(dir / "b-runtime.yaml") << kTorchRuntime;
  LoadResult r = LoadManifestFiles({dir.string()});
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].TotalPods(), 4);
}

TEST(TrainJobTest, MissingRuntimeFallsBackToTheTrainersNodesOrIsSkipped) {
  LoadResult r = Load(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sized}
spec:
  runtimeRef: {name: absent}
  trainer: {numNodes: 3, resourcesPerNode: {limits: {nvidia.com/gpu: 4, cpu: "8"}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: unsized}
spec:
  runtimeRef: {name: absent}
  trainer: {numNodes: 3}
)");
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.name, "sized");
  ASSERT_EQ(w.pod_sets.size(), 1u);
  EXPECT_EQ(w.pod_sets[0].name, "node");
  EXPECT_EQ(w.pod_sets[0].count, 3);
  EXPECT_EQ(w.pod_sets[0].requests[kGpu], 4);
  EXPECT_EQ(w.pod_sets[0].requests[kCpu], 8000);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:1: warning: TrainJob default/sized: its ClusterTrainingRuntime absent "
                 "is not in the input; Tessera schedules the trainer's 3 nodes"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:8: warning: TrainJob default/unsized: its ClusterTrainingRuntime absent "
                 "is not in the input; skipped"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(TrainJobTest, MalformedInputIsAnErrorWithItsPlace) {
  LoadResult r = Load(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: no-ref}
spec: {trainer: {numNodes: 2}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: bad-kind}
spec:
  runtimeRef: {name: r, kind: Runtime}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: negative}
spec:
  runtimeRef: {name: r}
  trainer: {numNodes: -2}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: bad-quantity}
spec:
  runtimeRef: {name: r}
  trainer: {numNodes: 2, resourcesPerNode: {requests: {cpu: lots}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: empty}
spec: {mlPolicy: {numNodes: 1}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: no-template}
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: huge}
spec:
  template:
    spec:
      replicatedJobs:
        - name: init
          replicas: 100000
          template: {spec: {parallelism: 100000, template: {spec: {containers: [{name: c, image: x}]}}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: too-big}
spec:
  runtimeRef: {name: huge}
)");
  EXPECT_TRUE(r.model.workloads.empty()) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:4: error: spec.runtimeRef: required field is missing"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:10: error: spec.runtimeRef.kind: unknown runtime kind \"Runtime\""),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:17: error: spec.trainer.numNodes"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:24: error: spec.trainer.resourcesPerNode: invalid quantity \"lots\""), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:29: error: spec.template.spec.replicatedJobs: required field is "
                 "missing"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:38: error: spec.template.spec.replicatedJobs[0].template: required"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:51: error: TrainJob default/too-big has more than"),
            nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
