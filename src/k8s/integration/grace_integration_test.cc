// The notice before a preemption, against a real kube-apiserver and etcd (issue 14, docs/time.md
// "Grace period before the kill"): a victim pod is told first (the DisruptionTarget=True
// condition with reason PreemptionByScheduler, and a Preempted Event), then evicted through the
// Eviction API with its own terminationGracePeriodSeconds; the preemptor is bound only once the
// victim is gone. There is no kubelet here: a pod evicted with a grace period stays (with its
// deletionTimestamp) until the test deletes it, which is what a node does when the period ends.
// Skipped, with the reason printed, when the API server is not built.
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

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
constexpr int kVictimGrace = 30;

// Seconds since the epoch of an RFC 3339 time with whole seconds ("2026-11-24T04:05:06Z").
long long Epoch(const std::string& t) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (std::sscanf(t.c_str(), "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s) != 6) return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<long long>(timegm(&tm));
}

class K8sGrace : public testing_queues::QueueClusterTest {
 protected:
  void TearDown() override {
    controller_.reset();
    QueueClusterTest::TearDown();
  }

  json Pod(const std::string& name) {
    return cluster_->Get("/api/v1/namespaces/default/pods/" + name);
  }

  Metrics metrics_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(K8sGrace, VictimIsToldThenEvictedWithItsGracePeriodAndThePreemptorWaitsForIt) {
  cluster_->CreateNodes(1, 8, "gpu");
  for (auto [name, value] : {std::pair{"low", 100}, std::pair{"high", 1000}})
    cluster_->Create({{"apiVersion", "scheduling.k8s.io/v1"},
                      {"kind", "PriorityClass"},
                      {"metadata", {{"name", name}}},
                      {"value", value}});
  CreateFlavor();
  cluster_->Create(
      testing_queues::ClusterQueueObject("main", 8, "", {{"withinClusterQueue", "LowerPriority"}}));
  CreateLocalQueue("default", "lq", "main");
  ControllerOptions o;
  o.status_period_s = 0.2;
  controller_ = std::make_unique<Controller>(&cluster_->client(), o, &metrics_);
  controller_->Start();

  const json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  json victim = cluster_->PodSpec("default", "victim", 8, "tessera", queue);
  victim["spec"]["priorityClassName"] = "low";
  victim["spec"]["terminationGracePeriodSeconds"] = kVictimGrace;
  cluster_->Create(victim);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !Pod("victim")["spec"].value("nodeName", "").empty(); }, kTimeout));

  json urgent = cluster_->PodSpec("default", "urgent", 8, "tessera", queue);
  urgent["spec"]["priorityClassName"] = "high";
  cluster_->Create(urgent);
  // Evicted with its grace period: the server marks it for deletion and, with no kubelet to
  // stop it, keeps it until it is deleted.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return Pod("victim")["metadata"].contains("deletionTimestamp"); }, kTimeout))
      << "the victim was never evicted";
  const json p = Pod("victim");
  EXPECT_EQ(p["metadata"].value("deletionGracePeriodSeconds", -1), kVictimGrace)
      << "evicted with its own terminationGracePeriodSeconds";
  json notice;
  for (const auto& c : p["status"].value("conditions", json::array()))
    if (c["type"] == "DisruptionTarget") notice = c;
  ASSERT_TRUE(notice.is_object()) << p["status"].dump();
  EXPECT_EQ(notice["status"], "True");
  // Tessera writes reason PreemptionByScheduler; the Eviction API of every supported server
  // (1.26+) then sets its own (EvictionByEvictionAPI) on the same condition, keeping its
  // lastTransitionTime. The Event below keeps Tessera's words.
  EXPECT_TRUE(notice["reason"] == "PreemptionByScheduler" ||
              notice["reason"] == "EvictionByEvictionAPI")
      << notice.dump();
  // Told before the eviction: deletionTimestamp is the eviction's time plus the grace period.
  const long long told = Epoch(notice.value("lastTransitionTime", ""));
  const long long deleted = Epoch(p["metadata"].value("deletionTimestamp", ""));
  ASSERT_GT(told, 0);
  EXPECT_LE(told, deleted - kVictimGrace) << notice.dump() << " " << p["metadata"].dump();
  bool event = false;
  json events =
      cluster_->Get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dvictim");
  for (const auto& e : events.value("items", json::array()))
    event |= e["reason"] == "Preempted" && e.value("message", "").find("preempted") != std::string::npos;
  EXPECT_TRUE(event) << "a Preempted Event on the victim, saying why";

  // While the victim still holds the node's GPUs, the preemptor is not bound there.
  EXPECT_TRUE(Pod("urgent")["spec"].value("nodeName", "").empty());
  // The grace period ends (the node would delete it now): the preemptor is bound.
  cluster_->DeletePod("default", "victim");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return !Pod("urgent")["spec"].value("nodeName", "").empty(); }, kTimeout));
  EXPECT_GE(metrics_.evictions_ok.load(), 1);
}

}  // namespace
}  // namespace tessera::k8s
