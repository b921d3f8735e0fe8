// The real job controllers (JobSet, LeaderWorkerSet, KubeRay, Kubeflow Trainer v2, MPI operator;
// scripts/k8s/build-controllers.sh) on the 1.37 test API server with kube-controller-manager:
// each creates the pods of its object exactly as in production, and each test prints what a pod
// carries (labels, annotations, ownerReferences, schedulerName, the owner chain) and when the
// pods appeared, since Tessera maps pods to their owner object from exactly these. Nothing
// schedules the pods: they stay Pending.
#include <chrono>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing {
namespace {

constexpr char kNs[] = "jobs";

class JobControllers : public ::testing::Test {
 protected:
  // A cluster with kube-controller-manager and the controller `name`; ready_ stays false (with
  // the test skipped or failed) when there is none.
  void Start(const std::string& name) {
    std::string why;
    bool not_built = false;
    cluster_ = TestCluster::Start(&why, &not_built);
    if (!cluster_) {
      if (not_built) GTEST_SKIP() << why;
      ADD_FAILURE() << why;
      return;
    }
    if (!cluster_->StartControllerManager(&why)) {
      ADD_FAILURE() << why;
      return;
    }
    if (!cluster_->StartJobController(name, &why, &not_built)) {
      if (not_built) GTEST_SKIP() << why;
      ADD_FAILURE() << why;
      return;
    }
    cluster_->CreateNamespace(kNs);
    ready_ = true;
  }

  // Waits until `n` pods exist in kNs; returns them, and writes to `*timeline` how many existed
  // at which second (to tell "all at once" from "progressively").
  std::vector<json> WaitPods(size_t n, double timeout_s, std::string* timeline) {
    const auto t0 = std::chrono::steady_clock::now();
    size_t last = 0;
    std::vector<json> pods;
    TestCluster::WaitFor(
        [&] {
          pods = cluster_->Pods(kNs);
          if (pods.size() != last) {
            last = pods.size();
            const double s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            *timeline += std::to_string(last) + " pods at " + std::to_string(s).substr(0, 4) +
                         " s; ";
          }
          return pods.size() >= n;
        },
        timeout_s);
    return pods;
  }

  // Prints one pod's metadata and the owner chain above it (each owner's ownerReferences).
  void Print(const std::string& kind, const json& pod, const std::string& timeline) {
    const json& md = pod["metadata"];
    std::cout << "==== " << kind << ": pod " << md.value("name", "") << "\n"
              << "labels: " << md.value("labels", json::object()).dump(1) << "\n"
              << "annotations: " << md.value("annotations", json::object()).dump(1) << "\n"
              << "ownerReferences: " << md.value("ownerReferences", json::array()).dump(1)
              << "\n"
              << "schedulerName: " << pod["spec"].value("schedulerName", "") << "\n"
              << "creation: " << timeline << "\n";
    json owners = md.value("ownerReferences", json::array());
    for (int depth = 0; depth < 3 && !owners.empty(); ++depth) {
      const json o = owners[0];
      json obj = {{"apiVersion", o["apiVersion"]},
                  {"kind", o["kind"]},
                  {"metadata", {{"namespace", kNs}}}};
      json got = cluster_->Get(TestCluster::CollectionPath(obj) + "/" + o.value("name", ""));
      if (!got.is_object()) break;
      owners = got["metadata"].value("ownerReferences", json::array());
      std::cout << "owner " << o.value("kind", "") << "/" << o.value("name", "")
                << " labels: " << got["metadata"].value("labels", json::object()).dump()
                << " ownerReferences: " << owners.dump() << "\n";
    }
    std::cout << std::flush;
  }

  static std::string Label(const json& pod, const std::string& key) {
    return pod["metadata"].value("labels", json::object()).value(key, "");
  }
  static std::string Owner(const json& pod) {
    const json refs = pod["metadata"].value("ownerReferences", json::array());
    return refs.empty() ? "" : refs[0].value("kind", "");
  }

  std::unique_ptr<TestCluster> cluster_;
  bool ready_ = false;
};

constexpr char kContainer[] = R"(
            containers:
            - name: main
              image: registry.invalid/pause
              resources: {limits: {nvidia.com/gpu: "1"}})";

TEST_F(JobControllers, JobSetMakesJobsAndTheJobsMakePods) {
  Start("jobset");
  if (!ready_) return;
  cluster_->Apply(std::string(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: jobs}
spec:
  replicatedJobs:
  - name: driver
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            schedulerName: tessera
            restartPolicy: Never)") + kContainer + R"(
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            schedulerName: tessera
            restartPolicy: Never)" + kContainer + "\n");
  std::string timeline;
  auto pods = WaitPods(4, 60, &timeline);
  ASSERT_EQ(pods.size(), 4u) << timeline;
  std::map<std::string, int> per_rjob;
  for (const auto& p : pods) {
    EXPECT_EQ(Label(p, "jobset.sigs.k8s.io/jobset-name"), "js");
    EXPECT_EQ(Owner(p), "Job");
    EXPECT_EQ(p["spec"].value("schedulerName", ""), "tessera");
    ++per_rjob[Label(p, "jobset.sigs.k8s.io/replicatedjob-name")];
  }
  EXPECT_EQ(per_rjob["driver"], 2);
  EXPECT_EQ(per_rjob["workers"], 2);
  Print("JobSet", pods[0], timeline);
}

TEST_F(JobControllers, LeaderWorkerSetMakesLeadersThenWorkerStatefulSets) {
  Start("lws");
  if (!ready_) return;
  cluster_->Apply(std::string(R"(
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws, namespace: jobs}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    workerTemplate:
      spec:
            schedulerName: tessera)") + kContainer + "\n");
  std::string timeline;
  auto pods = WaitPods(6, 60, &timeline);
  ASSERT_EQ(pods.size(), 6u) << timeline;
  int leaders = 0;
  for (const auto& p : pods) {
    EXPECT_EQ(Label(p, "leaderworkerset.sigs.k8s.io/name"), "lws");
    EXPECT_FALSE(Label(p, "leaderworkerset.sigs.k8s.io/group-index").empty());
    EXPECT_FALSE(Label(p, "leaderworkerset.sigs.k8s.io/worker-index").empty())
        << "no worker-index: is the LWS pod webhook registered?";
    EXPECT_EQ(Owner(p), "StatefulSet");
    EXPECT_EQ(p["spec"].value("schedulerName", ""), "tessera");
    if (Label(p, "leaderworkerset.sigs.k8s.io/worker-index") == "0") {
      ++leaders;
      Print("LeaderWorkerSet (leader)", p, timeline);
    }
  }
  EXPECT_EQ(leaders, 2);
  for (const auto& p : pods)
    if (Label(p, "leaderworkerset.sigs.k8s.io/worker-index") == "1") {
      Print("LeaderWorkerSet (worker)", p, timeline);
      break;
    }
}

TEST_F(JobControllers, RayClusterMakesTheHeadAndItsWorkers) {
  Start("kuberay");
  if (!ready_) return;
  cluster_->Apply(R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: jobs}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        schedulerName: tessera
        containers:
        - name: ray-head
          image: registry.invalid/ray
          resources: {limits: {cpu: "1", memory: 2Gi}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    minReplicas: 2
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        schedulerName: tessera
        containers:
        - name: ray-worker
          image: registry.invalid/ray
          resources: {limits: {cpu: "1", memory: 2Gi, nvidia.com/gpu: "1"}}
)");
  std::string timeline;
  auto pods = WaitPods(3, 60, &timeline);
  ASSERT_EQ(pods.size(), 3u) << timeline;
  int heads = 0;
  for (const auto& p : pods) {
    EXPECT_EQ(Label(p, "ray.io/cluster"), "rc");
    EXPECT_EQ(Owner(p), "RayCluster");
    EXPECT_EQ(p["spec"].value("schedulerName", ""), "tessera");
    const bool head = Label(p, "ray.io/node-type") == "head";
    heads += head;
    if (!head) {
      EXPECT_EQ(Label(p, "ray.io/group"), "gpu");
    }
  }
  EXPECT_EQ(heads, 1);
  for (const auto& p : pods)
    if (Label(p, "ray.io/node-type") == "head") Print("RayCluster (head)", p, timeline);
  for (const auto& p : pods)
    if (Label(p, "ray.io/node-type") == "worker") {
      Print("RayCluster (worker)", p, timeline);
      break;
    }
}

// Kubeflow Trainer v2 makes a JobSet (named as the TrainJob, owned by it) from the runtime's
// template; the jobset controller then makes the Jobs and the Jobs the pods.
TEST_F(JobControllers, TrainJobBecomesAJobSetWhoseJobsMakePods) {
  Start("jobset");
  if (!ready_) return;
  std::string why;
  bool not_built = false;
  if (!cluster_->StartJobController("trainer", &why, &not_built)) {
    if (not_built) GTEST_SKIP() << why;
    FAIL() << why;
  }
  cluster_->Apply(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-test}
spec:
  mlPolicy:
    numNodes: 1
    torch: {numProcPerNode: auto}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                schedulerName: tessera
                containers:
                - name: node
                  image: registry.invalid/torch
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: jobs}
spec:
  runtimeRef: {name: torch-test}
  trainer:
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: "1"}}
)");
  std::string timeline;
  auto pods = WaitPods(2, 60, &timeline);
  ASSERT_EQ(pods.size(), 2u) << timeline;
  for (const auto& p : pods) {
    EXPECT_EQ(Label(p, "jobset.sigs.k8s.io/jobset-name"), "tj");
    EXPECT_EQ(Owner(p), "Job");
    EXPECT_EQ(p["spec"].value("schedulerName", ""), "tessera");
  }
  json js = cluster_->Get("/apis/jobset.x-k8s.io/v1alpha2/namespaces/jobs/jobsets/tj");
  ASSERT_TRUE(js.is_object());
  EXPECT_EQ(js["metadata"]["ownerReferences"][0].value("kind", ""), "TrainJob");
  Print("TrainJob", pods[0], timeline);
}

// The MPI operator (MPIJob v2beta1) makes the worker pods itself and the launcher through a Job.
TEST_F(JobControllers, MPIJobMakesWorkersAndALauncherJob) {
  Start("mpi-operator");
  if (!ready_) return;
  cluster_->Apply(R"(
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi, namespace: jobs}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          schedulerName: tessera
          containers: [{name: launcher, image: registry.invalid/mpi}]
    Worker:
      replicas: 2
      template:
        spec:
          schedulerName: tessera
          containers:
          - name: worker
            image: registry.invalid/mpi
            resources: {limits: {nvidia.com/gpu: "1"}}
)");
  std::string timeline;
  auto pods = WaitPods(3, 60, &timeline);
  ASSERT_EQ(pods.size(), 3u) << timeline;
  int workers = 0;
  for (const auto& p : pods) {
    EXPECT_EQ(Label(p, "training.kubeflow.org/job-name"), "mpi");
    EXPECT_EQ(Label(p, "training.kubeflow.org/operator-name"), "mpi-operator");
    EXPECT_EQ(p["spec"].value("schedulerName", ""), "tessera");
    const std::string role = Label(p, "training.kubeflow.org/job-role");
    if (role == "worker") {
      ++workers;
      EXPECT_EQ(Owner(p), "MPIJob");
    } else {
      EXPECT_EQ(role, "launcher");
      EXPECT_EQ(Owner(p), "Job");
    }
  }
  EXPECT_EQ(workers, 2);
  for (const auto& role : {"launcher", "worker"})
    for (const auto& p : pods)
      if (Label(p, "training.kubeflow.org/job-role") == role) {
        Print(std::string("MPIJob (") + role + ")", p, timeline);
        break;
      }
}

}  // namespace
}  // namespace tessera::k8s::testing
