// Pod-level spec.resources and scheduling gates in manifests: what `tessera sim` reads.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(PodResources, PodLevelRequestsOfAPodAndAJobTemplate) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  resources: {requests: {cpu: "60", memory: 64Gi}, limits: {memory: 128Gi}}
  overhead: {cpu: 250m}
  containers:
  - {name: c, resources: {requests: {cpu: "1", memory: 1Gi}, limits: {nvidia.com/gpu: "2"}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  parallelism: 2
  template:
    spec:
      resources: {limits: {cpu: "8"}}
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 2u);
  const Resources& pod = r.model.workloads[0].pod_sets.at(0).requests;
  EXPECT_EQ(pod.Get(kCpu), 60250);
  EXPECT_EQ(pod.Get(kMemory), int64_t{64} << 30);
  EXPECT_EQ(pod.Get(kGpu), 2);  // from the container: GPUs are not pod-level resources
  const Resources& job = r.model.workloads[1].pod_sets.at(0).requests;
  EXPECT_EQ(job.Get(kCpu), 8000);  // the pod-level limit defaults the request
  EXPECT_EQ(job.Get(kGpu), 1);
}

TEST(PodResources, AQuantityThatDoesNotParseNamesThePodLevelField) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources: {requests: {cpu: lots}}
  containers: [{name: c}]
)");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(AllDiagnostics(r).find("spec.resources.requests.cpu"), std::string::npos)
      << AllDiagnostics(r);
}

TEST(PodResources, AGpuAtPodLevelIsIgnoredWithAWarning) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources: {requests: {cpu: "4", nvidia.com/gpu: "8"}}
  containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].pod_sets.at(0).requests.Get(kGpu), 1);
  EXPECT_NE(Find(r, Sev::kWarning, "spec.resources.requests.nvidia.com/gpu: only cpu, memory"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(PodResources, SchedulingGatesAreSaidNotSimulated) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulingGates: [{name: example.com/hold}]
  containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning, "scheduling gates are not simulated"), nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
