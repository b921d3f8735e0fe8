// Tessera with the real job controllers (scripts/k8s/build-controllers.sh: KubeRay, JobSet,
// LeaderWorkerSet, Kubeflow Trainer) on the 1.37 test API server with kube-controller-manager: the controllers
// create the pods exactly as in production, and Tessera binds each gang whole or not at all,
// sized by the object (k8s/controller/owner_kinds.h), never by the pods seen so far.
#include <chrono>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing_queues {
namespace {

constexpr double kTimeout = 90;

// One GPU, tessera's: the template every object below uses for its pods.
json GpuTemplate(const std::string& container = "main") {
  return {{"spec",
           {{"schedulerName", "tessera"},
            {"terminationGracePeriodSeconds", 0},
            {"containers",
             {{{"name", container},
               {"image", "x"},
               {"resources",
                {{"requests", {{"cpu", "100m"}, {"nvidia.com/gpu", "1"}}},
                 {"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
}

class K8sJobControllers : public QueueClusterTest {
 protected:
  // kube-controller-manager and the job controller `name`; the test is skipped (not built,
  // outside CI) or failed when they do not start: check IsSkipped() || HasFailure().
  void StartControllers(const std::string& name) {
    std::string why;
    bool not_built = false;
    if (!cluster_->StartControllerManager(&why)) {
      ADD_FAILURE() << why;
      return;
    }
    if (!cluster_->StartJobController(name, &why, &not_built)) {
      if (not_built) GTEST_SKIP() << why;
      ADD_FAILURE() << why;
    }
  }

  // Pods of "default" that exist and whose name starts with `prefix`.
  int Existing(const std::string& prefix) {
    int n = 0;
    for (const json& p : cluster_->Pods("default"))
      if (p["metadata"].value("name", "").rfind(prefix, 0) == 0) ++n;
    return n;
  }

  // A RayCluster: a head and `workers` workers of one group, one GPU each.
  json RayCluster(const std::string& name, int workers) {
    return {{"apiVersion", "ray.io/v1"},
            {"kind", "RayCluster"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec",
             {{"headGroupSpec",
               {{"rayStartParams", json::object()}, {"template", GpuTemplate("ray-head")}}},
              {"workerGroupSpecs",
               {{{"groupName", "gpu"},
                 {"replicas", workers},
                 {"minReplicas", workers},
                 {"maxReplicas", workers},
                 {"rayStartParams", json::object()},
                 {"template", GpuTemplate("ray-worker")}}}}}}};
  }
};

TEST_F(K8sJobControllers, RayClusterIsBoundWholeAndOneTooBigIsNotBoundAtAll) {
  StartControllers("kuberay");
  if (IsSkipped() || HasFailure()) return;
  cluster_->CreateNodes(1, 8, "gpu");
  StartTessera();
  // Nine GPUs on a node of eight: KubeRay creates all nine pods; none may be bound.
  cluster_->Create(RayCluster("big", 8));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Existing("big-") == 9; }, kTimeout))
      << Existing("big-") << " pods of RayCluster big";
  // Three that fit: bound, all of them.
  cluster_->Create(RayCluster("small", 2));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "small-") == 3; }, kTimeout))
      << Bound("default", "small-") << " of 3 bound";
  EXPECT_EQ(Bound("default", "big-"), 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "small", "Admitted").empty(); }, kTimeout));
  EXPECT_EQ(EventsOf("default", "small", "Admitted").front()["involvedObject"]["kind"],
            "RayCluster");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "big", "Pending").empty(); }, kTimeout));
  ExpectNoDoubleBooking({"default"}, 8);
}

// A JobSet of `jobs` Jobs of `parallelism` one-GPU pods each.
json JobSet(const std::string& name, int jobs, int parallelism) {
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"replicatedJobs",
             {{{"name", "w"},
               {"replicas", jobs},
               {"template",
                {{"spec",
                  {{"parallelism", parallelism},
                   {"completions", parallelism},
                   {"backoffLimit", 0},
                   {"template", [] {
                      json t = GpuTemplate();
                      t["spec"]["restartPolicy"] = "Never";
                      return t;
                    }()}}}}}}}}}}};
}

TEST_F(K8sJobControllers, JobSetIsBoundWholeAndOneTooBigIsNotBoundAtAll) {
  StartControllers("jobset");
  if (IsSkipped() || HasFailure()) return;
  cluster_->CreateNodes(1, 8, "gpu");
  StartTessera();
  // Ten pods (two Jobs of five) on eight GPUs: none bound, though eight would fit.
  cluster_->Create(JobSet("big", 2, 5));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Existing("big-") == 10; }, kTimeout))
      << Existing("big-") << " pods of JobSet big";
  // Four (two Jobs of two): all bound.
  cluster_->Create(JobSet("small", 2, 2));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "small-") == 4; }, kTimeout))
      << Bound("default", "small-") << " of 4 bound";
  EXPECT_EQ(Bound("default", "big-"), 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "small", "Admitted").empty(); }, kTimeout));
  EXPECT_EQ(EventsOf("default", "small", "Admitted").front()["involvedObject"]["kind"], "JobSet");
  ExpectNoDoubleBooking({"default"}, 8);
}

// Each group of a LeaderWorkerSet is its own gang: with room for one group and a bit, one group
// is bound whole and the other not at all, though its leader alone would fit. The controller
// creates the leaders first and each group's workers after (a StatefulSet per group).
TEST_F(K8sJobControllers, LeaderWorkerSetGroupsAreGangsOfTheirOwn) {
  StartControllers("lws");
  if (IsSkipped() || HasFailure()) return;
  cluster_->CreateNodes(1, 5, "gpu");
  StartTessera();
  cluster_->Create({{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
                    {"kind", "LeaderWorkerSet"},
                    {"metadata", {{"name", "serve"}, {"namespace", "default"}}},
                    {"spec",
                     {{"replicas", 2},
                      {"leaderWorkerTemplate",
                       {{"size", 3}, {"workerTemplate", GpuTemplate()}}}}}});
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Existing("serve-") == 6; }, kTimeout))
      << Existing("serve-") << " pods of LeaderWorkerSet serve";
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "serve-") == 3; }, kTimeout))
      << Bound("default", "serve-") << " bound";
  // Some seconds more: the other group stays whole, unbound (2 GPUs left, 3 needed).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(Bound("default", "serve-"), 3);
  int bound_groups = 0;
  for (const char* g : {"0", "1"}) {
    int bound = 0, pods = 0;
    for (const json& p : cluster_->Pods("default")) {
      if (p["metadata"]["labels"].value("leaderworkerset.sigs.k8s.io/group-index", "") != g)
        continue;
      ++pods;
      if (!p["spec"].value("nodeName", "").empty()) ++bound;
    }
    EXPECT_EQ(pods, 3) << "group " << g;
    EXPECT_TRUE(bound == 0 || bound == 3) << "group " << g << ": " << bound << " of 3 bound";
    if (bound == 3) ++bound_groups;
  }
  EXPECT_EQ(bound_groups, 1);
  ExpectNoDoubleBooking({"default"}, 5);
}

// Kubeflow Trainer v2 (with the JobSet controller it builds on): a TrainJob becomes a JobSet of
// its name, whose pods Tessera gangs as the JobSet's. numNodes 5 on four GPUs: none bound;
// numNodes 3: all three.
TEST_F(K8sJobControllers, TrainJobIsBoundWholeThroughTheJobSetTheTrainerMakes) {
  StartControllers("jobset");
  if (IsSkipped() || HasFailure()) return;
  std::string why;
  bool not_built = false;
  if (!cluster_->StartJobController("trainer", &why, &not_built)) {
    if (not_built) GTEST_SKIP() << why;
    FAIL() << why;
  }
  cluster_->CreateNodes(1, 4, "gpu");
  StartTessera();
  cluster_->Apply(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-gpu}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
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
                terminationGracePeriodSeconds: 0
                containers: [{name: node, image: registry.invalid/torch}]
)");
  auto train_job = [](const std::string& name, int nodes) {
    return fmt::format(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {}, namespace: default}}
spec:
  runtimeRef: {{name: torch-gpu}}
  trainer:
    numNodes: {}
    resourcesPerNode: {{limits: {{nvidia.com/gpu: "1"}}}}
)",
                       name, nodes);
  };
  cluster_->Apply(train_job("big", 5));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Existing("big-") == 5; }, kTimeout))
      << Existing("big-") << " pods of TrainJob big";
  cluster_->Apply(train_job("small", 3));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "small-") == 3; }, kTimeout))
      << Bound("default", "small-") << " of 3 bound";
  EXPECT_EQ(Bound("default", "big-"), 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "small", "Admitted").empty(); }, kTimeout));
  EXPECT_EQ(EventsOf("default", "small", "Admitted").front()["involvedObject"]["kind"], "JobSet");
  ExpectNoDoubleBooking({"default"}, 4);
}

}  // namespace
}  // namespace tessera::k8s::testing_queues
