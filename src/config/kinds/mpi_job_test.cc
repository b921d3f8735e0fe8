// MPIJob (kubeflow.org/v2beta1 and v1) into a workload: Kueue's pod sets, the operators'
// defaults, runPolicy.schedulingPolicy, errors and notices.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(MPIJobTest, LauncherThenWorkersInOneGang) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: bench
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: training}
spec:
  slotsPerWorker: 8
  runLauncherAsWorker: true
  mpiReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          priorityClassName: worker-prio
          containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
    Launcher:
      replicas: 1
      template:
        spec:
          priorityClassName: launcher-prio
          containers: [{name: l, image: x, resources: {requests: {cpu: "1"}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.kind, "MPIJob");
  EXPECT_EQ(w.Key(), "ml/bench");
  EXPECT_EQ(w.queue_name, "training");
  EXPECT_EQ(w.priority_class, "launcher-prio");  // Kueue: the Launcher's before the Worker's
  ASSERT_EQ(w.pod_sets.size(), 2u);
  EXPECT_EQ(w.pod_sets[0].name, "launcher");
  EXPECT_EQ(w.pod_sets[0].count, 1);
  EXPECT_EQ(w.pod_sets[0].requests[kCpu], 1000);
  EXPECT_EQ(w.pod_sets[1].name, "worker");
  EXPECT_EQ(w.pod_sets[1].count, 4);  // runLauncherAsWorker adds no pod
  EXPECT_EQ(w.pod_sets[1].requests[kGpu], 8);
  EXPECT_EQ(w.MinPods(), 5);
}

TEST(MPIJobTest, V1DefaultsAndSchedulingPolicy) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: old}
spec:
  runPolicy:
    activeDeadlineSeconds: 600
    schedulingPolicy: {minAvailable: 2, queue: q1, priorityClass: high, scheduleTimeoutSeconds: 30}
  mpiReplicaSpecs:
    Launcher:
      template: {spec: {containers: [{name: l, image: x}]}}
    Worker:
      template: {spec: {containers: [{name: w, image: x}]}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_EQ(w.pod_sets[0].count, 1);  // Launcher: 1
  EXPECT_EQ(w.pod_sets[1].count, 0);  // Worker: the operators default a missing count to 0
  EXPECT_EQ(w.queue_name, "q1");
  EXPECT_EQ(w.priority_class, "high");
  // minAvailable 2 > 1 pod: all of them.
  EXPECT_EQ(w.min_count, -1);
  EXPECT_NE(Find(r, Sev::kWarning, "minAvailable is larger than the job's 1 pods"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:7: notice: spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(MPIJobTest, MinAvailableAndLauncherCreationPolicy) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: elastic}
spec:
  launcherCreationPolicy: WaitForWorkersReady
  runPolicy: {schedulingPolicy: {minAvailable: 3}}
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: x}]}}}
    Worker: {replicas: 4, template: {spec: {containers: [{name: w, image: x}]}}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads[0].MinPods(), 3);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:5: notice: spec.launcherCreationPolicy: WaitForWorkersReady is not "
                 "honoured"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(MPIJobTest, MalformedInputIsAnErrorWithItsPlace) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: no-specs}
spec: {slotsPerWorker: 1}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: no-launcher}
spec:
  mpiReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: w, image: x}]}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: two-launchers}
spec:
  mpiReplicaSpecs:
    Launcher: {replicas: 2, template: {spec: {containers: [{name: l, image: x}]}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: negative}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: x}]}}}
    Worker: {replicas: -1, template: {spec: {containers: [{name: w, image: x}]}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: huge}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: x}]}}}
    Worker: {replicas: 99999999999, template: {spec: {containers: [{name: w, image: x}]}}}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: no-template}
spec:
  mpiReplicaSpecs:
    Launcher: {replicas: 1}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: typo}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: l, image: x}]}}}
    Workers: {replicas: 2, template: {spec: {containers: [{name: w, image: x}]}}}
)");
  EXPECT_TRUE(r.model.workloads.empty()) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:4: error: spec.mpiReplicaSpecs: required field"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "error: spec.mpiReplicaSpecs.Launcher: required field"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:18: error: spec.mpiReplicaSpecs.Launcher.replicas: an MPIJob has "
                 "exactly one launcher, got 2"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:26: error: spec.mpiReplicaSpecs.Worker.replicas"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:34: error: spec.mpiReplicaSpecs.Worker.replicas"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "spec.mpiReplicaSpecs.Launcher.template"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:49: error: spec.mpiReplicaSpecs.Workers: unknown replica type "
                 "\"Workers\"; allowed: Launcher, Worker"),
            nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
