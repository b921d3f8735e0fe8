// Today's PodSpec on a real kube-apiserver (1.37; the fields exist since 1.30 and 1.34):
// spec.schedulingGates hold a pod, and a gang that needs it, whole, until the gates go; pod-level
// spec.resources count as the pod's request. Skipped, with the reason printed, when the API
// server is not built.
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "k8s/client/proto.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/objects.h"
#include "k8s/integration/queue_cluster_test.h"
#include "model/resources.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

class K8sPodSpec : public testing_queues::QueueClusterTest {
 protected:
  // The PodScheduled=False condition of the pod (null when it has none).
  json PendingCondition(const std::string& ns, const std::string& pod) {
    json p = cluster_->Get(fmt::format("/api/v1/namespaces/{}/pods/{}", ns, pod));
    for (const auto& c : p["status"].value("conditions", json::array()))
      if (c["type"] == "PodScheduled" && c["status"] == "False") return c;
    return nullptr;
  }

  // A Ready node with `cpus` cores and `gpus` GPUs.
  void CreateNode(const std::string& name, int cpus, int gpus) {
    json labels = {{"kubernetes.io/hostname", name}};
    cluster_->Create({{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", labels}}}});
    json cap = {{"cpu", std::to_string(cpus)},
                {"memory", "1024Gi"},
                {"pods", "110"},
                {"nvidia.com/gpu", std::to_string(gpus)}};
    json status = {{"status",
                    {{"capacity", cap},
                     {"allocatable", cap},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    auto r = cluster_->client().Patch(fmt::format("/api/v1/nodes/{}/status", name), status.dump());
    ASSERT_TRUE(r.ok() && r->status == 200) << "node status " << name;
  }
};

TEST_F(K8sPodSpec, GangWithAGatedMemberIsBoundOnlyAfterTheGateGoesNeverPartly) {
  cluster_->CreateNodes(2, 8, "gpu");
  StartTessera();
  cluster_->Create(testing_queues::PodGroupObject("default", "train", 4));
  for (int i = 0; i < 4; ++i) {
    json pod = cluster_->PodSpec("default", fmt::format("train-{}", i), 1, "tessera",
                                 {{"scheduling.x-k8s.io/pod-group", "train"}});
    if (i == 3) pod["spec"]["schedulingGates"] = {{{"name", "example.com/data-ready"}}};
    cluster_->Create(pod);
  }
  // The gang waits whole; its pods say which pod and gate hold it, the gated pod its gate.
  const std::string gang_says =
      "held by scheduling gates: default/train-3 (example.com/data-ready)";
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        for (int i = 0; i < 3; ++i)
          if (WaitMessage("default", fmt::format("train-{}", i)).find(gang_says) ==
              std::string::npos)
            return false;
        json c = PendingCondition("default", "train-3");
        return c.is_object() && c["reason"] == "SchedulingGated" &&
               c["message"] == "held by scheduling gates: example.com/data-ready";
      },
      kTimeout))
      << "train-0 says: " << WaitMessage("default", "train-0")
      << "\ntrain-3: " << PendingCondition("default", "train-3").dump();
  std::cout << "[ tessera ] gang with a gated pod says: " << WaitMessage("default", "train-0")
            << "\n";
  bool event_names_gate = false;
  for (const json& e : EventsOf("default", "train-3", "FailedScheduling"))
    event_names_gate |= e.value("message", "").find("example.com/data-ready") != std::string::npos;
  EXPECT_TRUE(event_names_gate);
  // No pod of the gang is bound while the gate is there (GPUs are free for all four).
  int bound_while_gated = 0;
  TestCluster::WaitFor(
      [&] {
        bound_while_gated = std::max(bound_while_gated, Bound("default", "train-"));
        return bound_while_gated > 0;
      },
      5);
  EXPECT_EQ(bound_while_gated, 0);

  // The gate goes (its owner's merge patch): the whole gang is bound.
  auto r = cluster_->client().Patch("/api/v1/namespaces/default/pods/train-3",
                                    R"({"spec":{"schedulingGates":null}})");
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 4; }, kTimeout))
      << "bound: " << Bound("default", "train-");
  ExpectNoDoubleBooking({"default"}, 8);
}

TEST_F(K8sPodSpec, PodLevelCpuRequestCountsAndDoesNotFitASmallerNode) {
  CreateNode("cpu48", 48, 8);
  StartTessera();
  // One GPU and 1 core per container, 60 cores at pod level: the pod asks for 60 cores.
  json big = cluster_->PodSpec("default", "big", 1);
  big["spec"]["resources"] = {{"requests", {{"cpu", "60"}}}};
  json created = cluster_->Create(big);
  ASSERT_EQ(created["spec"]["resources"]["requests"]["cpu"], "60")
      << "the API server dropped spec.resources (PodLevelResources off?)";
  // The server's JSON and its protobuf read the same, gates and pod-level resources included.
  json gated = cluster_->PodSpec("default", "gated", 1);
  gated["spec"]["resources"] = {{"requests", {{"cpu", "60"}}}, {"limits", {{"memory", "8Gi"}}}};
  gated["spec"]["schedulingGates"] = {{{"name", "example.com/a"}}, {{"name", "example.com/b"}}};
  cluster_->Create(gated);
  const std::string path = "/api/v1/namespaces/default/pods/gated";
  auto as_json = cluster_->client().Get(path);
  auto as_proto = cluster_->client().Get(path, proto::kAccept);
  ASSERT_TRUE(as_json.ok() && as_proto.ok());
  ASSERT_TRUE(proto::IsProtobuf(as_proto->content_type)) << as_proto->content_type;
  auto decoded = proto::DecodeObject(as_proto->body);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto from_json = ParsePod(json::parse(as_json->body));
  auto from_proto = ParsePod(*decoded);
  ASSERT_TRUE(from_json.ok() && from_proto.ok());
  EXPECT_EQ(Describe(*from_proto), Describe(*from_json));
  EXPECT_EQ(from_proto->scheduling_gates.size(), 2u);
  EXPECT_EQ(from_proto->set.requests.Get(kCpu), 60000);
  EXPECT_EQ(from_proto->set.requests.Get(kMemory), int64_t{8} << 30);  // defaulted from the limit
  cluster_->DeletePod("default", "gated");

  json small = cluster_->PodSpec("default", "small", 1);
  small["spec"]["resources"] = {{"requests", {{"cpu", "40"}}}};
  cluster_->Create(small);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "small") == 1; }, kTimeout));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "big").empty(); }, kTimeout));
  std::cout << "[ tessera ] a 60-core pod on a 48-core node says: " << WaitMessage("default", "big")
            << "\n";
  EXPECT_NE(WaitMessage("default", "big").find("cpu"), std::string::npos);
  EXPECT_EQ(Bound("default", "big"), 0);
}

// A pod Tessera cannot read (here KAI's gpu-fraction annotation with a value that is no
// fraction) is said on the pod as a Warning Event InvalidPod naming the field, once, and placed
// once it is corrected. Before, serve only logged it and the pod waited without a word.
TEST_F(K8sPodSpec, APodTesseraCannotReadIsSaidOnItOnce) {
  CreateNode("gpu8", 32, 8);
  StartTessera();
  json odd = cluster_->PodSpec("default", "odd", 1);
  odd["metadata"]["annotations"] = {{"gpu-fraction", "lots"}};
  cluster_->Create(odd);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "odd", "InvalidPod").empty(); }, kTimeout));
  const json ev = EventsOf("default", "odd", "InvalidPod")[0];
  EXPECT_NE(ev.value("message", "")
                .find("metadata.annotations.gpu-fraction: \"lots\" is not a "
                      "fraction of one GPU"),
            std::string::npos)
      << ev.dump();
  // A label change (the pod read again, the same problem) says nothing new.
  auto r = cluster_->client().Patch("/api/v1/namespaces/default/pods/odd",
                                    json{{"metadata", {{"labels", {{"touched", "1"}}}}}}.dump(),
                                    PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200);
  r = cluster_->client().Patch(
      "/api/v1/namespaces/default/pods/odd",
      json{{"metadata", {{"annotations", {{"gpu-fraction", "0.5"}}}}}}.dump(), PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "odd") == 1; }, kTimeout));
  const std::vector<json> said = EventsOf("default", "odd", "InvalidPod");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].value("count", 1), 1) << said[0].dump();
}

}  // namespace
}  // namespace tessera::k8s
