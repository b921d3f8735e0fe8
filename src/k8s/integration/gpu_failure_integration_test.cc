// A GPU failing under a running gang, against a real kube-apiserver and etcd (issue 32, theme 6;
// docs/gpu-failures.md "Kubernetes mode"). The test plays the node: as the NVIDIA device plugin
// and the kubelet do when a GPU breaks, it lowers the node's status.allocatable by one GPU and
// writes the pod's containerStatuses[].allocatedResourcesStatus (ResourceHealthStatus, on by
// default since 1.36) with the device Unhealthy. Tessera must requeue the gang whole (both pods
// evicted, not only the one on the broken GPU), say it in Events on the pod and the node, count
// it, give the broken device to nobody, and give it back when the device plugin offers it again.
// Skipped, with the reason printed, when the API server is not built.
#include <set>
#include <string>
#include <vector>

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

class K8sGpuFailure : public testing_queues::QueueClusterTest {
 protected:
  json Pod(const std::string& name) {
    return cluster_->Get("/api/v1/namespaces/default/pods/" + name);
  }
  std::string NodeOf(const std::string& name) {
    const json p = Pod(name);
    return p.is_object() && p.contains("spec") ? p["spec"].value("nodeName", "") : "";
  }
  bool Gone(const std::string& name) {
    auto r = cluster_->client().Get("/api/v1/namespaces/default/pods/" + name);
    return r.ok() && r->status == 404;
  }
  // The device plugin: node `node` offers `gpus` of its 4 GPUs.
  void Offer(const std::string& node, int gpus) {
    json n = cluster_->Get("/api/v1/nodes/" + node);
    n["status"]["capacity"]["nvidia.com/gpu"] = "4";
    n["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
    auto r = cluster_->client().Put("/api/v1/nodes/" + node + "/status", n.dump());
    ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  }
  // The kubelet: pod `name`'s GPU `device` is unhealthy.
  void ReportUnhealthy(const std::string& name, const std::string& device) {
    json p = Pod(name);
    p["status"]["containerStatuses"] = {
        {{"name", "main"},
         {"image", "registry.invalid/pause"},
         {"imageID", ""},
         {"ready", true},
         {"restartCount", 0},
         {"state", {{"running", {{"startedAt", "2026-11-29T10:00:00Z"}}}}},
         {"allocatedResourcesStatus",
          {{{"name", "nvidia.com/gpu"},
            {"resources",
             {{{"resourceID", device}, {"health", "Unhealthy"}, {"message", "XID 79"}}}}}}}}};
    auto r =
        cluster_->client().Put("/api/v1/namespaces/default/pods/" + name + "/status", p.dump());
    ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    const json back = Pod(name);
    ASSERT_TRUE(back["status"]["containerStatuses"][0].contains("allocatedResourcesStatus"))
        << "the API server dropped allocatedResourcesStatus (ResourceHealthStatus off?)";
  }
  std::vector<json> NodeEvents(const std::string& node, const std::string& reason) {
    json list = cluster_->Get(
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D" + node);
    std::vector<json> out;
    for (const auto& e : list.value("items", json::array()))
      if (e["reason"] == reason && e["involvedObject"]["kind"] == "Node") out.push_back(e);
    return out;
  }
  // A GPUFailed Event on `node` whose message holds `text`.
  bool NodeEventSays(const std::string& node, const std::string& text) {
    for (const json& e : NodeEvents(node, "GPUFailed"))
      if (e.value("message", "").find(text) != std::string::npos) return true;
    return false;
  }
};

TEST_F(K8sGpuFailure, AGpuFailingUnderARunningGangRequeuesItWholeAndNoPodGetsTheDevice) {
  cluster_->CreateNodes(2, 4, "gpu");
  CreateFlavor();
  // Quota for more than the cluster holds: what waits, waits for a node.
  cluster_->Create(testing_queues::ClusterQueueObject("main", 16));
  CreateLocalQueue("default", "lq", "main");
  // No periodic look at the nodes' health during the test: each judgement must come from the
  // event that calls for it (a pod leaving a node whose missing GPU nothing named, here).
  status_period_s_ = 3600;
  StartTessera();
  Metrics& metrics = *metrics_list_.back();

  CreateGang("default", "train", 2, json::object(), 4);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 2; }, kTimeout));
  const std::string broken = NodeOf("train-0");
  const std::string healthy = broken == "gpu-0" ? "gpu-1" : "gpu-0";

  // A GPU of train-0's node breaks: the device plugin stops offering it. Under running pods
  // and with no dcgm-exporter, nothing says which device it is yet.
  Offer(broken, 3);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return NodeEventSays(broken, "not offered"); }, kTimeout));
  // The kubelet says which pod's device; its UUID names no index Tessera knows.
  ReportUnhealthy("train-0", "GPU-2f9e");
  // The gang leaves whole: train-1, on a healthy node, too (its peers cannot go on alone).
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Gone("train-0") && Gone("train-1"); }, kTimeout))
      << "the gang was not requeued whole";
  EXPECT_EQ(metrics.Value("tessera_gpu_failure_requeues_total", {"main"}), 1);
  // The gang's pods gone, the count places the missing device on the one no pod holds.
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return NodeEventSays(broken, "GPU 3 failed"); }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return metrics.Value("tessera_failed_gpus", {broken}) == 1; }, kTimeout));

  // A 4-GPU pod fits only on the healthy node now; smaller pods get the broken node's three
  // good devices, never the broken one; a second 4-GPU pod waits for a node.
  cluster_->Create(
      cluster_->PodSpec("default", "whole-a", 4, "tessera", {{"kueue.x-k8s.io/queue-name", "lq"}}));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return !NodeOf("whole-a").empty(); }, kTimeout));
  EXPECT_EQ(NodeOf("whole-a"), healthy);
  for (int i = 0; i < 3; ++i)
    cluster_->Create(cluster_->PodSpec("default", "one-" + std::to_string(i), 1, "tessera",
                                       {{"kueue.x-k8s.io/queue-name", "lq"}}));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "one-") == 3; }, kTimeout));
  std::set<std::string> devices;
  for (int i = 0; i < 3; ++i) {
    const json p = Pod("one-" + std::to_string(i));
    EXPECT_EQ(p["spec"]["nodeName"], broken);
    devices.insert(p["metadata"]["annotations"].value("tessera.dev/gpu-indices", ""));
  }
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1", "2"})) << "the failed device is 3";
  ExpectNoDoubleBooking({"default"}, 4);
  cluster_->Create(
      cluster_->PodSpec("default", "whole-b", 4, "tessera", {{"kueue.x-k8s.io/queue-name", "lq"}}));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "whole-b").empty(); }, kTimeout));
  EXPECT_EQ(NodeOf("whole-b"), "");

  // Repaired: the device plugin offers all four again; whole-b takes the node once the small
  // pods leave.
  Offer(broken, 4);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !NodeEvents(broken, "GPURepaired").empty(); }, kTimeout));
  EXPECT_EQ(metrics.Value("tessera_failed_gpus", {broken}), 0);
  for (int i = 0; i < 3; ++i) cluster_->DeletePod("default", "one-" + std::to_string(i));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return NodeOf("whole-b") == broken; }, kTimeout));
}

TEST_F(K8sGpuFailure, LeaveToControllerTellsTheGangAndKeepsItRunning) {
  cluster_->CreateNodes(1, 4, "gpu");
  CreateFlavor();
  json cq = testing_queues::ClusterQueueObject("main", 4);
  cq["metadata"]["annotations"] = {{"tessera.dev/gpu-failure-policy", "LeaveToController"}};
  cluster_->Create(cq);
  CreateLocalQueue("default", "lq", "main");
  StartTessera();
  Metrics& metrics = *metrics_list_.back();
  CreateGang("default", "train", 2, json::object(), 2);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 2; }, kTimeout));
  ReportUnhealthy("train-1", "GPU-77aa");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "train-1", "GPUFailed").empty(); }, kTimeout));
  const std::string msg = EventsOf("default", "train-1", "GPUFailed")[0].value("message", "");
  EXPECT_NE(msg.find("left to its controller"), std::string::npos) << msg;
  EXPECT_NE(msg.find("GPU-77aa"), std::string::npos) << msg;
  EXPECT_EQ(Bound("default", "train-"), 2);
  EXPECT_EQ(metrics.Value("tessera_gpu_failure_requeues_total", {"main"}), 0);
}

}  // namespace
}  // namespace tessera::k8s
