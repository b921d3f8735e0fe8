#include "k8s/controller/gpu_health.h"

#include "gtest/gtest.h"
#include "k8s/controller/objects.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

TEST(K8sGpuHealth, ReadsTheKubeletsUnhealthyResourcesOfContainersAndInitContainers) {
  const json status = json::parse(R"({
    "containerStatuses": [
      {"name": "main", "allocatedResourcesStatus": [
        {"name": "nvidia.com/gpu", "resources": [
          {"resourceID": "GPU-aaa", "health": "Healthy"},
          {"resourceID": "GPU-bbb", "health": "Unhealthy", "message": "XID 79"}]}]},
      {"name": "side", "allocatedResourcesStatus": "not a list"}],
    "initContainerStatuses": [
      {"name": "init", "allocatedResourcesStatus": [
        {"name": "claim:gpu/req-0", "resources": [
          {"resourceID": "gpu.nvidia.com/pool/gpu-1", "health": "Unhealthy"},
          {"resourceID": 7, "health": "Unhealthy"}]}]}]
  })");
  const auto u = ParseUnhealthyResources(status);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (UnhealthyResource{"nvidia.com/gpu", "GPU-bbb", "XID 79"}));
  EXPECT_EQ(u[1].name, "claim:gpu/req-0");
  EXPECT_EQ(u[1].id, "gpu.nvidia.com/pool/gpu-1");
  EXPECT_EQ(u[2].id, "");  // a resourceID that is not a string is read as none
  EXPECT_TRUE(ParseUnhealthyResources(json::array()).empty());
  EXPECT_TRUE(ParseUnhealthyResources(json::parse(R"({"containerStatuses": 3})")).empty());
}

TEST(K8sGpuHealth, ReadsABoundedNumberOfUnhealthyResources) {
  json res = json::array();
  for (int i = 0; i < 1000; ++i)
    res.push_back({{"resourceID", "GPU-" + std::to_string(i)}, {"health", "Unhealthy"}});
  json status = {
      {"containerStatuses",
       {{{"allocatedResourcesStatus", {{{"name", "nvidia.com/gpu"}, {"resources", res}}}}}}}};
  EXPECT_EQ(ParseUnhealthyResources(status).size(), 64u);
}

TEST(K8sGpuHealth, HardwareXidsFailAGpuApplicationXidsDoNot) {
  EXPECT_TRUE(HardwareXid(79));
  EXPECT_TRUE(HardwareXid(48));
  EXPECT_TRUE(HardwareXid(95));
  EXPECT_FALSE(HardwareXid(13));  // graphics engine exception: the program's fault
  EXPECT_FALSE(HardwareXid(31));  // MMU fault
  EXPECT_FALSE(HardwareXid(43));  // a context stopped
  EXPECT_FALSE(HardwareXid(0));   // no error
}

Node ParsedNode(const std::string& capacity, const std::string& allocatable,
                json annotations = json::object()) {
  json node = {{"metadata", {{"name", "gpu-0"}, {"annotations", annotations}}},
               {"status",
                {{"capacity", {{"cpu", "64"}, {"nvidia.com/gpu", capacity}}},
                 {"allocatable", {{"cpu", "64"}, {"nvidia.com/gpu", allocatable}}}}}};
  auto n = ParseNode(node, nullptr);
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : Node{};
}

TEST(K8sGpuHealth, ANodeKeepsItsUnhealthyDevicesAndCountsThem) {
  Node n = ParsedNode("8", "7");
  EXPECT_EQ(n.gpu_count(), 8);
  EXPECT_EQ(n.unhealthy_gpus, 1);
  n = ParsedNode("8", "8");
  EXPECT_EQ(n.gpu_count(), 8);
  EXPECT_EQ(n.unhealthy_gpus, 0);
  n = ParsedNode("eight", "7");  // not a count: the allocatable stands
  EXPECT_EQ(n.gpu_count(), 7);
  EXPECT_EQ(n.unhealthy_gpus, 0);
  n = ParsedNode("99999999", "7");
  EXPECT_EQ(n.gpu_count(), 7);
  // Time-sliced (4 replicas of 8 GPUs): replicas are not devices; the allocatable stands.
  n = ParsedNode("32", "28", {{"tessera.dev/gpu-replicas", "4"}});
  EXPECT_EQ(n.gpu_replicas, 4);
  EXPECT_EQ(n.gpu_count(), 28);
  EXPECT_EQ(n.unhealthy_gpus, 0);
}

NodeHealthInput EightGpus() {
  NodeHealthInput in;
  in.node = "gpu-0";
  in.capacity = in.allocatable = 8;
  in.held.assign(8, false);
  return in;
}

TEST(K8sGpuHealth, AHealthyNodeHasNoFailure) {
  const NodeHealth h = JudgeNode(EightGpus());
  EXPECT_TRUE(h.failed.empty());
  EXPECT_TRUE(h.hit_pods.empty());
  EXPECT_EQ(h.unplaced, 0);
}

TEST(K8sGpuHealth, TheCountTakesFreeDevicesHighestFirst) {
  NodeHealthInput in = EightGpus();
  in.allocatable = 6;
  in.held[7] = true;  // a pod holds 7: 6 and 5 are the free devices the count takes
  in.pods.push_back({"ns/a", {7}, {}});
  const NodeHealth h = JudgeNode(in);
  ASSERT_EQ(h.failed.size(), 2u);
  EXPECT_TRUE(h.failed.count(6));
  EXPECT_TRUE(h.failed.count(5));
  EXPECT_NE(h.failed.at(6).find("offers 6 of the node's 8"), std::string::npos);
  EXPECT_TRUE(h.hit_pods.empty());  // the count names no pod
  EXPECT_EQ(h.unplaced, 0);
}

TEST(K8sGpuHealth, ACountBeyondTheFreeDevicesIsSaidAsUnplaced) {
  NodeHealthInput in = EightGpus();
  in.allocatable = 6;
  in.held.assign(8, true);
  in.held[0] = false;
  const NodeHealth h = JudgeNode(in);
  EXPECT_EQ(h.failed.size(), 1u);
  EXPECT_TRUE(h.failed.count(0));
  EXPECT_EQ(h.unplaced, 1);
}

TEST(K8sGpuHealth, AHardwareXidFailsItsDeviceAndHitsThePodOnIt) {
  NodeHealthInput in = EightGpus();
  in.held[2] = in.held[3] = true;
  in.pods.push_back({"ns/a-0", {2, 3}, {}});
  in.pods.push_back({"ns/b-0", {4}, {}});
  in.xids = {{3, 79}, {4, 13}};  // 13 is the program's fault
  in.allocatable = 7;            // the device plugin also dropped it: counted once, not twice
  const NodeHealth h = JudgeNode(in);
  ASSERT_EQ(h.failed.size(), 1u);
  EXPECT_NE(h.failed.at(3).find("XID 79 (GPU has fallen off the bus)"), std::string::npos);
  ASSERT_EQ(h.hit_pods.size(), 1u);
  EXPECT_NE(h.hit_pods.at("ns/a-0").find("GPU 3: dcgm-exporter reports XID 79"), std::string::npos);
}

TEST(K8sGpuHealth, TheKubeletNamesThePodAndDcgmTheIndex) {
  NodeHealthInput in = EightGpus();
  in.allocatable = 7;
  in.held[0] = in.held[1] = true;
  in.pods.push_back({"ns/a-0", {0, 1}, {{"nvidia.com/gpu", "GPU-b", "XID 94"}}});
  in.uuid_index = {{"GPU-a", 0}, {"GPU-b", 1}};
  NodeHealth h = JudgeNode(in);
  ASSERT_EQ(h.failed.size(), 1u);
  EXPECT_TRUE(h.failed.count(1));
  EXPECT_NE(h.hit_pods.at("ns/a-0").find("GPU-b unhealthy: XID 94"), std::string::npos);
  // Without dcgm-exporter's UUIDs the pod is named, and the count takes a free device.
  in.uuid_index.clear();
  h = JudgeNode(in);
  ASSERT_EQ(h.failed.size(), 1u);
  EXPECT_TRUE(h.failed.count(7));
  EXPECT_EQ(h.hit_pods.size(), 1u);
}

TEST(K8sGpuHealth, ADraTaintNamesThePodAndOtherResourcesAreNotGpus) {
  NodeHealthInput in = EightGpus();
  in.pods.push_back({"ns/a-0", {}, {{"example.com/nic", "nic-0", ""}}});
  in.tainted_pods.push_back({"ns/b-0", "device gpu-3 is tainted NoExecute"});
  const NodeHealth h = JudgeNode(in);
  EXPECT_TRUE(h.failed.empty());
  ASSERT_EQ(h.hit_pods.size(), 1u);
  EXPECT_EQ(h.hit_pods.begin()->first, "ns/b-0");
}

TEST(K8sGpuHealth, IndicesOutsideTheNodeAreIgnored) {
  NodeHealthInput in = EightGpus();
  in.xids = {{8, 79}, {-1, 79}};
  in.pods.push_back({"ns/a-0", {12}, {{"nvidia.com/gpu", "GPU-z", ""}}});
  in.uuid_index = {{"GPU-z", 12}};
  const NodeHealth h = JudgeNode(in);
  EXPECT_TRUE(h.failed.empty());
  EXPECT_EQ(h.hit_pods.size(), 1u);  // the kubelet's word on the pod stands
}

TEST(K8sGpuHealth, ANoExecuteDeviceTaintNamesThePodsOfTheClaimsThatHoldIt) {
  dra::DraModel m;
  auto device = [](const std::string& name, std::vector<dra::DeviceTaintSpec> taints) {
    dra::NodeDevice d;
    d.device.driver = "gpu.nvidia.com";
    d.device.pool = "node-a";
    d.device.name = name;
    d.taints = std::move(taints);
    return d;
  };
  const Taint broken{"gpu.nvidia.com/xid", "79", TaintEffect::kNoExecute};
  const Taint drain{"maintenance", "", TaintEffect::kNoSchedule};
  m.nodes["node-a"].devices = {device("gpu-0", {{broken}}), device("gpu-1", {{drain}}),
                               device("gpu-2", {{broken}})};
  auto claim = [](const std::string& name, const std::string& dev, const std::string& pod) {
    dra::Claim c;
    c.ns = "team";
    c.name = name;
    dra::DeviceRequest r;
    r.name = "gpu";
    dra::ExactRequest e;
    e.name = "gpu";
    r.alternatives.push_back(e);
    c.spec.requests.push_back(r);
    c.allocation =
        dra::ClaimAllocation{"node-a", {{"gpu", "gpu.nvidia.com", "node-a", dev, {}, ""}}};
    c.reserved_for = {pod};
    return c;
  };
  m.claims = {claim("a", "gpu-0", "a-0"), claim("b", "gpu-1", "b-0"), claim("c", "gpu-2", "c-0")};
  // c tolerates the taint: it stays.
  Toleration t;
  t.key = "gpu.nvidia.com/xid";
  t.op = TolerationOp::kExists;
  m.claims[2].spec.requests[0].alternatives[0].tolerations = {t};
  const DraTaints got = NoExecuteTaints(m);
  EXPECT_EQ(got.tainted.at("node-a"), 2);  // NoSchedule is not a failure
  ASSERT_EQ(got.pods.size(), 1u);
  EXPECT_EQ(got.pods[0].first, "team/a-0");
  EXPECT_NE(got.pods[0].second.find("tainted gpu.nvidia.com/xid=79:NoExecute"), std::string::npos);
}

}  // namespace
}  // namespace tessera::k8s
