// Dynamic Resource Allocation on a real kube-apiserver 1.37 with kube-controller-manager (its
// ResourceClaim controller makes each pod's claim from its template and clears allocations of
// pods that are gone): serve allocates the claims, writes status.allocation and reservedFor
// before it binds, reads them back after a restart, and never gives a device twice.
// Skipped, with the reason printed, when the API server is not built (a failure under CI=true).
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/integration/queue_cluster_test.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine
constexpr const char* kDriver = "gpu.example.com";

class K8sDra : public testing_queues::QueueClusterTest {
 protected:
  void SetUp() override {
    QueueClusterTest::SetUp();
    if (IsSkipped() || HasFailure()) return;
    std::string why;
    ASSERT_TRUE(cluster_->StartControllerManager(&why)) << why;
  }

  // Node `name` (no device-plugin GPUs) and its ResourceSlice of `n` GPUs gpu-0 ...
  void CreateDraNode(const std::string& name, int n) {
    cluster_->CreateNodes(1, 0, name);
    json devices = json::array();
    for (int i = 0; i < n; ++i)
      devices.push_back(
          {{"name", fmt::format("gpu-{}", i)},
           {"attributes",
            {{"index", {{"int", i}}}, {"pcieRoot", {{"string", i < n / 2 ? "pci0" : "pci1"}}}}}});
    cluster_->Create(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceSlice"},
         {"metadata", {{"name", name + "-0-gpus"}}},
         {"spec",
          {{"driver", kDriver},
           {"nodeName", name + "-0"},
           {"pool", {{"name", name + "-0"}, {"generation", 1}, {"resourceSliceCount", 1}}},
           {"devices", devices}}}});
  }

  void CreateClassAndTemplate(int count) {
    cluster_->Create(json::parse(fmt::format(R"({{
      "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
      "metadata": {{"name": "gpu.example.com"}},
      "spec": {{"selectors": [{{"cel": {{"expression": "device.driver == '{}'"}}}}]}}}})",
                                             kDriver)));
    cluster_->Create(json::parse(fmt::format(R"({{
      "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {{"name": "gpus", "namespace": "default"}},
      "spec": {{"spec": {{"devices": {{"requests": [{{"name": "gpu",
        "exactly": {{"deviceClassName": "gpu.example.com", "count": {}}}}}]}}}}}}}})",
                                             count)));
  }

  // A pod of scheduler tessera whose claim "gpu" comes from template "gpus".
  void CreateClaimPod(const std::string& name, const json& labels = json::object()) {
    json pod = cluster_->PodSpec("default", name, 0, "tessera", labels);
    pod["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimTemplateName", "gpus"}}};
    pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
    cluster_->Create(pod);
  }

  // Claim name -> its allocated devices ("pool/device"), of every allocated claim.
  std::map<std::string, std::vector<std::string>> Allocations() {
    std::map<std::string, std::vector<std::string>> out;
    json list = cluster_->Get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims");
    for (const json& c : list.value("items", json::array())) {
      const json& a = c["status"].value("allocation", json());
      if (a.is_null()) continue;
      auto& devs = out[c["metadata"].value("name", "")];
      for (const json& r : a["devices"].value("results", json::array()))
        devs.push_back(r.value("pool", "") + "/" + r.value("device", ""));
    }
    return out;
  }

  // The claim ResourceClaim controller made for pod `name`'s entry "gpu" ("" until it has).
  std::string ClaimOf(const std::string& name) {
    json p = cluster_->Get("/api/v1/namespaces/default/pods/" + name);
    for (const json& s : p["status"].value("resourceClaimStatuses", json::array()))
      if (s.value("name", "") == "gpu") return s.value("resourceClaimName", "");
    return "";
  }

  std::string PendingMessage(const std::string& name) {
    json p = cluster_->Get("/api/v1/namespaces/default/pods/" + name);
    for (const json& c : p["status"].value("conditions", json::array()))
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
        return c.value("message", "");
    return "";
  }
};

// Every device in at most one claim, and each claim of `want` devices.
void ExpectDisjoint(const std::map<std::string, std::vector<std::string>>& alloc, size_t want) {
  std::set<std::string> seen;
  for (const auto& [claim, devs] : alloc) {
    EXPECT_EQ(devs.size(), want) << claim;
    for (const std::string& d : devs) EXPECT_TRUE(seen.insert(d).second) << d << " twice";
  }
}

TEST_F(K8sDra, FourPodsOfTwoDevicesFillAnEightDeviceNodeTheFifthWaitsAndARestartChangesNothing) {
  CreateDraNode("dra", 8);
  CreateClassAndTemplate(2);
  StartTessera();
  for (int i = 0; i < 5; ++i) CreateClaimPod(fmt::format("p-{}", i));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 4; }, kTimeout))
      << "bound: " << cluster_->BoundPods("default");
  // Each bound pod's claim is allocated (2 devices on its node) and reserved for it.
  std::string waiting;
  for (const json& p : cluster_->Pods("default")) {
    const std::string name = p["metadata"].value("name", "");
    if (p["spec"].value("nodeName", "").empty()) {
      waiting = name;
      continue;
    }
    const std::string claim = ClaimOf(name);
    ASSERT_FALSE(claim.empty()) << name;
    json c = cluster_->Get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + claim);
    const json& status = c["status"];
    ASSERT_TRUE(status.contains("allocation")) << c.dump();
    EXPECT_EQ(status["allocation"]["devices"]["results"].size(), 2u);
    EXPECT_EQ(
        status["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0],
        "dra-0");
    ASSERT_EQ(status.value("reservedFor", json::array()).size(), 1u);
    EXPECT_EQ(status["reservedFor"][0]["name"], name);
    EXPECT_EQ(status["reservedFor"][0]["uid"], p["metadata"]["uid"]);
  }
  auto before = Allocations();
  ASSERT_EQ(before.size(), 4u);
  ExpectDisjoint(before, 2);
  ASSERT_FALSE(waiting.empty());
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return PendingMessage(waiting).find("DRA claims") != std::string::npos; }, kTimeout))
      << PendingMessage(waiting);

  // A restart reads the allocations back: nothing moves, nothing is given twice.
  controllers_.clear();
  Controller* again = StartTessera();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return again->synced(); }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return again->snapshot().cycles >= 1; }, kTimeout));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // binds it would send, sent
  EXPECT_EQ(cluster_->BoundPods("default"), 4);
  EXPECT_EQ(Allocations(), before);

  // A bound pod goes: the ResourceClaim controller frees its claim, and the fifth gets its
  // devices.
  std::string gone;
  for (const json& p : cluster_->Pods("default"))
    if (!p["spec"].value("nodeName", "").empty()) gone = p["metadata"].value("name", "");
  const std::string gone_claim = ClaimOf(gone);
  cluster_->DeletePod("default", gone);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json p = cluster_->Get("/api/v1/namespaces/default/pods/" + waiting);
        return !p["spec"].value("nodeName", "").empty();
      },
      kTimeout))
      << "the fifth pod was not bound after a pod left";
  // The ResourceClaim controller deletes the gone pod's claim (docs/dra.md: serve may give its
  // devices a moment before that).
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Allocations().count(gone_claim) == 0; }, kTimeout));
  auto after = Allocations();
  EXPECT_EQ(after.size(), 4u);
  ExpectDisjoint(after, 2);
}

TEST_F(K8sDra, PodWhoseClaimCannotBeMetWaitsWithAReason) {
  CreateDraNode("small", 2);
  CreateClassAndTemplate(4);
  StartTessera();
  CreateClaimPod("big");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return PendingMessage("big").find("DRA claims") != std::string::npos; }, kTimeout))
      << PendingMessage("big");
  EXPECT_EQ(cluster_->BoundPods("default"), 0);
  EXPECT_TRUE(Allocations().empty());
}

// Kueue's deviceClassMappings (serve's --kueue-config): a ClusterQueue of 4 "example.com/gpu"
// admits two pods of 2 devices; the third waits for quota though the node has 8 devices.
TEST_F(K8sDra, MappedDevicesCountInClusterQueueQuota) {
  CreateDraNode("dra", 8);
  CreateClassAndTemplate(2);
  CreateFlavor();
  cluster_->Create(json::parse(R"({"apiVersion": "tessera.dev/v1alpha1", "kind": "ClusterQueue",
    "metadata": {"name": "team"}, "spec": {"namespaceSelector": {}, "resourceGroups": [
      {"coveredResources": ["example.com/gpu"], "flavors": [{"name": "default",
        "resources": [{"name": "example.com/gpu", "nominalQuota": 4}]}]}]}})"));
  CreateLocalQueue("default", "team", "team");
  ControllerOptions o;
  o.dra_mappings = {{"example.com/gpu", {"gpu.example.com"}}};
  StartTessera(o);
  for (int i = 0; i < 3; ++i)
    CreateClaimPod(fmt::format("q-{}", i), {{"kueue.x-k8s.io/queue-name", "team"}});
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 2; }, kTimeout));
  std::string waiting;
  for (const json& p : cluster_->Pods("default"))
    if (p["spec"].value("nodeName", "").empty()) waiting = p["metadata"].value("name", "");
  ASSERT_FALSE(waiting.empty());
  // Its claim may reach serve after the pod names it ("does not exist" for a moment): the
  // reason it settles on is quota.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return PendingMessage(waiting).find("example.com/gpu") != std::string::npos; },
      kTimeout))
      << PendingMessage(waiting);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(cluster_->BoundPods("default"), 2);
  EXPECT_EQ(Allocations().size(), 2u);
}

// NVIDIA's ComputeDomain: a gang whose pods claim a channel lands in one NVLink clique (node
// label nvidia.com/gpu.clique), though packing alone would start it on a-0, the first node.
TEST_F(K8sDra, AGangThatClaimsAComputeDomainChannelLandsInOneClique) {
  cluster_->CreateNodes(1, 8, "a", {{"nvidia.com/gpu.clique", "c.0"}});
  cluster_->CreateNodes(2, 8, "b", {{"nvidia.com/gpu.clique", "c.1"}});
  for (const char* node : {"a-0", "b-0", "b-1"})
    cluster_->Create(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceSlice"},
         {"metadata", {{"name", std::string(node) + "-channels"}}},
         {"spec",
          {{"driver", "compute-domain.nvidia.com"},
           {"nodeName", node},
           {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
           {"devices",
            {{{"name", "channel-0"},
              {"attributes", {{"type", {{"string", "channel"}}}, {"id", {{"int", 0}}}}}}}}}}});
  cluster_->Create(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "compute-domain-default-channel.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'compute-domain.nvidia.com'"}}]}})"));
  cluster_->Create(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "train-channel", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": [{"name": "channel",
      "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}}}})"));
  StartTessera();
  cluster_->Create(testing_queues::PodGroupObject("default", "train", 2));
  for (int i = 0; i < 2; ++i) {
    json pod = cluster_->PodSpec("default", fmt::format("train-{}", i), 8, "tessera",
                                 {{"scheduling.x-k8s.io/pod-group", "train"}});
    pod["spec"]["resourceClaims"] = {
        {{"name", "channel"}, {"resourceClaimTemplateName", "train-channel"}}};
    pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "channel"}}};
    cluster_->Create(pod);
  }
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 2; }, kTimeout))
      << "bound: " << cluster_->BoundPods("default");
  std::set<std::string> nodes;
  for (const json& p : cluster_->Pods("default")) nodes.insert(p["spec"].value("nodeName", ""));
  EXPECT_EQ(nodes, (std::set<std::string>{"b-0", "b-1"}));
  auto alloc = Allocations();
  EXPECT_EQ(alloc.size(), 2u);
  ExpectDisjoint(alloc, 1);
}

// Consumable capacity (KEP-5075): one GPU that allows multiple allocations, 80Gi of memory in
// steps of 10Gi; three pods claim 35Gi each (40Gi once rounded). Two share the GPU, each claim's
// result carrying its consumedCapacity and a shareID of its own, which the API server accepts;
// the third waits for memory.
TEST_F(K8sDra, TwoPodsShareAGpuByMemoryAndTheThirdWaits) {
  cluster_->CreateNodes(1, 0, "shared");
  cluster_->Create(json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "shared-0-gpus"},
    "spec": {"driver": "gpu.example.com", "nodeName": "shared-0",
      "pool": {"name": "shared-0", "generation": 1, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "allowMultipleAllocations": true,
        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "80Gi",
          "validRange": {"min": "10Gi", "step": "10Gi"}}}}}]}})"));
  cluster_->Create(json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"}})"));
  cluster_->Create(json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "gpus", "namespace": "default"},
    "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
      "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": "35Gi"}}}}]}}}})"));
  StartTessera();
  for (int i = 0; i < 3; ++i) CreateClaimPod(fmt::format("s-{}", i));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 2; }, kTimeout))
      << "bound: " << cluster_->BoundPods("default");
  std::set<std::string> share_ids;
  std::string waiting;
  for (const json& p : cluster_->Pods("default")) {
    const std::string name = p["metadata"].value("name", "");
    if (p["spec"].value("nodeName", "").empty()) {
      waiting = name;
      continue;
    }
    json c = cluster_->Get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" +
                           ClaimOf(name));
    const json& results = c["status"]["allocation"]["devices"]["results"];
    ASSERT_EQ(results.size(), 1u) << c.dump();
    EXPECT_EQ(results[0]["device"], "gpu-0");
    const std::string memory = results[0]["consumedCapacity"].value("memory", "");
    EXPECT_TRUE(memory == "40Gi" || memory == "42949672960") << c.dump();
    share_ids.insert(results[0].value("shareID", ""));
  }
  EXPECT_EQ(share_ids.size(), 2u);
  EXPECT_EQ(share_ids.count(""), 0u);
  ASSERT_FALSE(waiting.empty());
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return PendingMessage(waiting).find("too little of it left") != std::string::npos; },
      kTimeout))
      << PendingMessage(waiting);
}

}  // namespace
}  // namespace tessera::k8s
