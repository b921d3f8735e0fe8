// Admission fair sharing usage survives a restart of serve (issue 14, docs/time.md "Fair share
// over time"), against a real kube-apiserver and etcd: serve writes each LocalQueue's decayed
// usage into its status (Kueue's status.fairSharing.admissionFairSharingStatus) and the next
// serve reads it back, so the team that used the GPUs goes after the one that did not, although
// its pods are older. Skipped, with the reason printed, when the API server is not built.
#include <fstream>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/metrics.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

class K8sFairUsage : public testing_queues::QueueClusterTest {
 protected:
  void TearDown() override {
    controller_.reset();
    QueueClusterTest::TearDown();
  }

  void StartTessera() {
    ControllerOptions o;
    o.status_period_s = 0.2;
    metrics_ = std::make_unique<Metrics>();
    controller_ = std::make_unique<Controller>(&cluster_->client(), o, metrics_.get());
    controller_->Start();
  }

  // Pods team-NAME-I of one GPU in LocalQueue lq-TEAM, for i in [from, to).
  void CreatePods(const std::string& team, int from, int to) {
    for (int i = from; i < to; ++i)
      cluster_->Create(cluster_->PodSpec("default", fmt::format("{}-{}", team, i), 1, "tessera",
                                         {{"kueue.x-k8s.io/queue-name", "lq-" + team}}));
  }

  int Bound(const std::string& team) {
    int n = 0;
    for (const auto& p : cluster_->Pods("default"))
      if (p["metadata"]["name"].get<std::string>().rfind(team + "-", 0) == 0 &&
          !p["spec"].value("nodeName", "").empty())
        ++n;
    return n;
  }

  // The GPUs LocalQueue lq-TEAM's status says it consumed; -1 when it says nothing.
  double Consumed(const std::string& team) {
    json lq = cluster_->Get("/apis/tessera.dev/v1alpha1/namespaces/default/localqueues/lq-" + team);
    const json status = lq.value("status", json::object());
    if (!status.contains("fairSharing")) return -1;
    const json& c = status["fairSharing"]["admissionFairSharingStatus"]["consumedResources"];
    if (!c.contains("nvidia.com/gpu")) return -1;
    return std::stod(c["nvidia.com/gpu"].get<std::string>());
  }

  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(K8sFairUsage, UsageKeptInTheLocalQueueStatusOrdersAdmissionsAfterARestart) {
  cluster_->CreateNodes(1, 4, "gpu");
  cluster_->Create({{"apiVersion", "tessera.dev/v1alpha1"},
                    {"kind", "SchedulerConfig"},
                    {"metadata", {{"name", "default"}}},
                    {"spec",
                     {{"admissionFairSharing",
                       {{"usageHalfLifeTime", "20s"}, {"usageSamplingInterval", "1s"}}}}}});
  CreateFlavor();
  json cq = testing_queues::ClusterQueueObject("shared", 4);
  cq["spec"]["admissionScope"] = {{"admissionMode", "UsageBasedAdmissionFairSharing"}};
  cluster_->Create(cq);
  for (const char* team : {"a", "b"})
    cluster_->Create(
        {{"apiVersion", "tessera.dev/v1alpha1"},
         {"kind", "LocalQueue"},
         {"metadata", {{"name", fmt::format("lq-{}", team)}, {"namespace", "default"}}},
         {"spec", {{"clusterQueue", "shared"}, {"fairSharing", {{"weight", "1"}}}}}});
  StartTessera();
  // Team a holds all 4 GPUs (a fifth pod waits, so the samples go on); team b uses nothing.
  CreatePods("a", 0, 5);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("a") == 4; }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Consumed("a") >= 1; }, kTimeout))
      << "lq-a's status never said what it used";
  EXPECT_LE(Consumed("b"), 0) << "lq-b used nothing";

  // serve stops; the work ends; new pods wait, team a's first (older), then team b's.
  controller_.reset();
  cluster_->DeleteAllPods("default");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->Pods("default").empty(); }, kTimeout));
  CreatePods("a", 10, 14);
  CreatePods("b", 10, 14);
  StartTessera();
  // Without the usage read back both teams would count 0 and FIFO would admit team a's.
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("a") + Bound("b") == 4; }, kTimeout));
  EXPECT_EQ(Bound("b"), 4) << "the team that used nothing goes first";
  EXPECT_EQ(Bound("a"), 0);
}

}  // namespace
}  // namespace tessera::k8s
