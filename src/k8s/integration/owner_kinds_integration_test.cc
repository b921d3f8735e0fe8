// The job kinds whose controllers create the pods (k8s/controller/owner_kinds.h) on a real API
// server: the gang is sized by the object, so a controller that creates its pods one by one does
// not get part of a gang bound, and the object hears what happened to its gang.
//
// PyTorchJob (kubeflow.org/v1): Kubeflow's training-operator is deprecated in favour of Trainer
// v2 and is not among the controllers the tests build (tests/k8s/job_controllers_test.cc runs
// JobSet's, LeaderWorkerSet's and KubeRay's), so this test installs a PyTorchJob CRD and creates
// the pods as training-operator v1 does: named JOB-master-0, JOB-worker-i, labelled
// training.kubeflow.org/job-name and operator-name pytorchjob-controller.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing_queues {
namespace {

constexpr double kTimeout = 60;

// A CRD that serves `plural`.`group` at `version`, any content (the real CRD's schema does not
// matter to Tessera, which reads what the plugin reads).
json OpenCrd(const std::string& group, const std::string& version, const std::string& kind,
             const std::string& plural) {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + "." + group}}},
          {"spec",
           {{"group", group},
            {"scope", "Namespaced"},
            {"names", {{"kind", kind}, {"plural", plural}, {"singular", ""}}},
            {"versions",
             {{{"name", version},
               {"served", true},
               {"storage", true},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
}

class K8sOwnerKinds : public QueueClusterTest {
 protected:
  void SetUp() override {
    QueueClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cluster_->Create(OpenCrd("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"));
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          auto r = cluster_->client().Get("/apis/kubeflow.org/v1/pytorchjobs");
          return r.ok() && r->status == 200;
        },
        30))
        << "the PyTorchJob CRD is not served";
  }

  // PyTorchJob `name`: a Master and `workers` Workers of one GPU each.
  void CreatePyTorchJob(const std::string& name, int workers) {
    json tmpl = {{"spec",
                  {{"schedulerName", "tessera"},
                   {"containers",
                    {{{"name", "pytorch"},
                      {"image", "x"},
                      {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
    cluster_->Create({{"apiVersion", "kubeflow.org/v1"},
                      {"kind", "PyTorchJob"},
                      {"metadata", {{"name", name}, {"namespace", "default"}}},
                      {"spec",
                       {{"pytorchReplicaSpecs",
                         {{"Master", {{"replicas", 1}, {"template", tmpl}}},
                          {"Worker", {{"replicas", workers}, {"template", tmpl}}}}}}}});
  }

  // One pod of PyTorchJob `job` as training-operator v1 creates it.
  void CreateOperatorPod(const std::string& job, const std::string& name) {
    json labels = {{"training.kubeflow.org/job-name", job},
                   {"training.kubeflow.org/operator-name", "pytorchjob-controller"}};
    cluster_->Create(cluster_->PodSpec("default", name, 1, "tessera", labels));
  }
};

TEST_F(K8sOwnerKinds, PodsCreatedOneByOneAreBoundOnlyWhenTheWholeJobIsThere) {
  cluster_->CreateNodes(1, 8, "gpu");
  StartTessera();
  CreatePyTorchJob("train", 3);
  // Three of its four pods: the gang is the job's four, so none is bound.
  CreateOperatorPod("train", "train-master-0");
  CreateOperatorPod("train", "train-worker-0");
  CreateOperatorPod("train", "train-worker-1");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return WaitMessage("default", "train-worker-1").find("3 of 4 exist") != std::string::npos;
      },
      kTimeout))
      << WaitMessage("default", "train-worker-1");
  EXPECT_EQ(Bound("default", "train-"), 0);
  CreateOperatorPod("train", "train-worker-2");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 4; }, kTimeout));
  // The job itself hears that its gang was admitted.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "train", "Admitted").empty(); }, kTimeout));
  const json e = EventsOf("default", "train", "Admitted").front();
  EXPECT_EQ(e["involvedObject"]["kind"], "PyTorchJob");
  EXPECT_EQ(e["involvedObject"]["apiVersion"], "kubeflow.org/v1");
  EXPECT_NE(e.value("message", "").find("4 pods admitted"), std::string::npos) << e.dump();
}

TEST_F(K8sOwnerKinds, AJobTheControllerCannotUseHoldsItsPodsAndSaysWhy) {
  cluster_->CreateNodes(1, 8, "gpu");
  StartTessera();
  // No template for its Workers: the plugin refuses it, as `tessera validate` would.
  cluster_->Create({{"apiVersion", "kubeflow.org/v1"},
                    {"kind", "PyTorchJob"},
                    {"metadata", {{"name", "bad"}, {"namespace", "default"}}},
                    {"spec", {{"pytorchReplicaSpecs", {{"Worker", {{"replicas", 2}}}}}}}});
  CreateOperatorPod("bad", "bad-worker-0");
  CreateOperatorPod("bad", "bad-worker-1");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return WaitMessage("default", "bad-worker-0").find("which is not used") !=
               std::string::npos;
      },
      kTimeout))
      << WaitMessage("default", "bad-worker-0");
  EXPECT_NE(WaitMessage("default", "bad-worker-0").find("spec.pytorchReplicaSpecs.Worker.template"),
            std::string::npos)
      << WaitMessage("default", "bad-worker-0");
  EXPECT_EQ(Bound("default", "bad-"), 0);
}

}  // namespace
}  // namespace tessera::k8s::testing_queues
