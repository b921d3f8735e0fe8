#include "dra/allocator.h"

#include <gtest/gtest.h>

namespace tessera::dra {
namespace {

// A node of `n` devices "gpu-0".. with attribute pcieRoot = i / per_root; filter 0 selects every
// device, filter 1 those with model "big", filter 2 none.
struct Fixture {
  NodeDevices node;
  std::vector<bool> in_use;
  explicit Fixture(int n, int per_root = 4) {
    for (int i = 0; i < n; ++i) {
      NodeDevice d;
      d.device.driver = "gpu.example.com";
      d.device.name = "gpu-" + std::to_string(i);
      d.device.attributes["resource.kubernetes.io/pcieRoot"] =
          std::string("root-") + std::to_string(i / per_root);
      d.device.attributes["gpu.example.com/model"] = std::string(i % 2 ? "big" : "small");
      node.devices.push_back(d);
    }
    in_use.assign(n, false);
  }
  AllocateOutcome Run(const std::vector<ClaimInput>& claims) {
    NodeView v{&node, &in_use, nullptr};
    return Allocate(claims, v, [&](int32_t f, int32_t d) {
      if (f == 0) return Match::kYes;
      if (f == 1)
        return std::get<std::string>(node.devices[d].device.attributes["gpu.example.com/model"]) ==
                       "big"
                   ? Match::kYes
                   : Match::kNo;
      if (f == 3) return Match::kError;
      return Match::kNo;
    });
  }
};

ClaimInput Exact(int64_t count, int32_t filter = 0) {
  ClaimInput c;
  c.name = "ns/claim";
  c.requests.push_back({"gpu", {{"gpu", filter, false, count, nullptr}}});
  return c;
}

TEST(DraAllocator, ExactCountTakesTheFirstFreeDevices) {
  Fixture f(8);
  f.in_use[0] = true;
  auto out = f.Run({Exact(2)});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 2}));
}

TEST(DraAllocator, NotEnoughFreeDevicesSaysSo) {
  Fixture f(2);
  f.in_use[1] = true;
  auto out = f.Run({Exact(2)});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("has 2 that its device class and selectors select (1 of them free)"),
            std::string::npos)
      << out.reason;
}

TEST(DraAllocator, ASelectorThatMatchesNothingSaysSo) {
  Fixture f(4);
  auto out = f.Run({Exact(1, /*filter=*/2)});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("has 0 that its device class and selectors select"), std::string::npos)
      << out.reason;
}

TEST(DraAllocator, ACelRuntimeErrorFailsTheAllocation) {
  Fixture f(4);
  auto out = f.Run({Exact(1, /*filter=*/3)});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("CEL runtime error"), std::string::npos) << out.reason;
}

TEST(DraAllocator, FirstAvailableFallsBackInOrder) {
  Fixture f(4);
  ClaimInput c;
  c.name = "ns/c";
  c.requests.push_back({"gpu",
                        {{"bleeding-edge", 2, false, 1, nullptr},
                         {"big", 1, false, 3, nullptr},
                         {"any", 0, false, 2, nullptr}}});
  auto out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].alternative, 2);  // only 2 "big" devices: not 3
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{0, 1}));
  c.requests[0].alternatives[1].count = 2;
  out = f.Run({c});
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.claims[0].requests[0].alternative, 1);
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 3}));
}

TEST(DraAllocator, MatchAttributeKeepsAClaimOnOnePcieRoot) {
  Fixture f(8);  // roots: 0-3, 4-7
  f.in_use[1] = true;
  f.in_use[2] = true;  // root-0 has two free devices
  ClaimInput c = Exact(3);
  c.constraints.push_back({{}, "resource.kubernetes.io/pcieRoot"});
  auto out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{4, 5, 6}));
  f.in_use[5] = true;
  f.in_use[6] = true;
  out = f.Run({c});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("matchAttribute"), std::string::npos) << out.reason;
}

TEST(DraAllocator, ConstraintAcrossTwoRequestsOfOneClaim) {
  Fixture f(10, 5);  // roots: 0-4, 5-9
  f.in_use[4] = true;
  ClaimInput c;
  c.name = "ns/c";
  c.requests.push_back({"a", {{"a", 0, false, 3, nullptr}}});
  c.requests.push_back({"b", {{"b", 0, false, 2, nullptr}}});
  c.constraints.push_back({{0, 1}, "resource.kubernetes.io/pcieRoot"});
  auto out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  // a takes 0,1,2 of root-0; b finds one more there, so the search backtracks to root-1.
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(out.claims[0].requests[1].devices, (std::vector<int32_t>{8, 9}));
}

TEST(DraAllocator, AllocationModeAllNeedsEveryMatchingDeviceFree) {
  Fixture f(4);
  ClaimInput c;
  c.name = "ns/c";
  c.requests.push_back({"gpu", {{"gpu", 1, true, 0, nullptr}}});
  auto out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 3}));
  f.in_use[3] = true;
  EXPECT_FALSE(f.Run({c}).ok);
}

TEST(DraAllocator, TwoClaimsOfOnePodNeverShareADevice) {
  Fixture f(3);
  auto out = f.Run({Exact(2), Exact(1)});
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.claims[1].requests[0].devices, (std::vector<int32_t>{2}));
  EXPECT_FALSE(f.Run({Exact(2), Exact(2)}).ok);
}

TEST(DraAllocator, CountersOfPartitionableDevicesAreNeverOverdrawn) {
  // One GPU of 8 memory slices published as a whole device (8) and two 4-slice partitions.
  NodeDevices node;
  node.counter_sets["pool/gpu-0"] = {"gpu-0", {{"memory", 8000}}};
  auto dev = [&](std::string name, int64_t slices) {
    NodeDevice d;
    d.device.name = std::move(name);
    d.consumes.push_back({"pool/gpu-0", {{"memory", slices * 1000}}});
    node.devices.push_back(d);
  };
  dev("gpu-0", 8);
  dev("gpu-0-mig-a", 4);
  dev("gpu-0-mig-b", 4);
  std::vector<bool> in_use(3, false);
  auto all = [](int32_t, int32_t) { return Match::kYes; };
  NodeView v{&node, &in_use, nullptr};
  auto out = Allocate({Exact(2)}, v, all);
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 2}));
  std::map<std::string, std::map<std::string, int64_t>> used{{"pool/gpu-0", {{"memory", 4000}}}};
  NodeView half{&node, &in_use, &used};
  EXPECT_FALSE(Allocate({Exact(2)}, half, all).ok);
  EXPECT_TRUE(Allocate({Exact(1)}, half, all).ok);
}

TEST(DraAllocator, TaintedDevicesOnlyForTolerations) {
  Fixture f(2);
  f.node.devices[0].taints.push_back(
      {Taint{"gpu.example.com/unhealthy", "", TaintEffect::kNoSchedule}});
  auto out = f.Run({Exact(2)});
  EXPECT_FALSE(out.ok);
  std::vector<Toleration> tol{{"gpu.example.com/unhealthy", TolerationOp::kExists, "", {}}};
  ClaimInput c = Exact(2);
  c.requests[0].alternatives[0].tolerations = &tol;
  EXPECT_TRUE(f.Run({c}).ok);
}

// As upstream's structured allocator: a device that allocationMode All selects is one of "all"
// even when tainted, so an untolerated taint fails the request rather than leaving the device
// out (found by the side by side with kube-scheduler, docs/dra.md).
TEST(DraAllocator, AllocationModeAllFailsOnAMatchingDeviceWithAnUntoleratedTaint) {
  Fixture f(4);
  f.node.devices[1].taints.push_back(
      {Taint{"gpu.example.com/unhealthy", "", TaintEffect::kNoSchedule}});
  ClaimInput c;
  c.name = "ns/c";
  c.requests.push_back({"gpu", {{"gpu", 1, true, 0, nullptr}}});
  auto out = f.Run({c});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("taint"), std::string::npos) << out.reason;
  std::vector<Toleration> tol{{"gpu.example.com/unhealthy", TolerationOp::kExists, "", {}}};
  c.requests[0].alternatives[0].tolerations = &tol;
  out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 3}));
  // A tainted device the request does not select does not matter.
  f.node.devices[1].taints.clear();
  f.node.devices[0].taints.push_back(
      {Taint{"gpu.example.com/unhealthy", "", TaintEffect::kNoSchedule}});
  c.requests[0].alternatives[0].tolerations = nullptr;
  EXPECT_TRUE(f.Run({c}).ok);
}

TEST(DraAllocator, AClaimHoldsAtMost32Devices) {
  Fixture f(40);
  EXPECT_TRUE(f.Run({Exact(32)}).ok);
  auto out = f.Run({Exact(33)});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("32"), std::string::npos) << out.reason;
}

// Topology from device attributes (dra/device_topology.h): without a constraint, a claim's
// devices still go to one PCIe root where one has room, the fullest such root first.
TEST(DraAllocator, DevicesGoToTheFullestPcieRootThatHoldsThem) {
  Fixture f(8);  // roots 0 (gpu-0..3) and 1 (gpu-4..7)
  f.in_use[0] = true;
  auto four = f.Run({Exact(4)});
  ASSERT_TRUE(four.ok) << four.reason;
  // The slice order would give gpu-1..4, across both roots.
  EXPECT_EQ(four.claims[0].requests[0].devices, (std::vector<int32_t>{4, 5, 6, 7}));
  auto two = f.Run({Exact(2)});
  ASSERT_TRUE(two.ok) << two.reason;
  EXPECT_EQ(two.claims[0].requests[0].devices, (std::vector<int32_t>{1, 2}));
  f.in_use[1] = true;
  auto one = f.Run({Exact(1)});  // root 0 has 2 free, root 1 has 4: best fit is root 0
  ASSERT_TRUE(one.ok) << one.reason;
  EXPECT_EQ(one.claims[0].requests[0].devices, (std::vector<int32_t>{2}));
}

TEST(DraAllocator, NumaNodeWhenNoPcieRootHoldsTheRequest) {
  Fixture f(8, 2);  // roots of 2; NUMA nodes of 4
  for (int i = 0; i < 8; ++i)
    f.node.devices[i].device.attributes["resource.kubernetes.io/numaNode"] = int64_t{i / 4};
  f.in_use[1] = f.in_use[2] = true;  // the slice order would give gpu-0, 3 and 4
  auto out = f.Run({Exact(3)});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{4, 5, 6}));
  // The driver's own attribute `numa` serves when the standard one is absent.
  for (int i = 0; i < 8; ++i) {
    auto& attrs = f.node.devices[i].device.attributes;
    attrs.erase("resource.kubernetes.io/numaNode");
    attrs["gpu.example.com/numa"] = int64_t{i / 4};
  }
  out = f.Run({Exact(3)});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{4, 5, 6}));
}

TEST(DraAllocator, ALaterRequestOfAClaimJoinsTheRootOfItsFirst) {
  Fixture f(8);
  f.in_use[5] = f.in_use[6] = f.in_use[7] = true;  // root 1 has only gpu-4 free
  ClaimInput c = Exact(2);
  c.requests.push_back({"nic", {{"nic", 0, false, 1, nullptr}}});
  auto out = f.Run({c});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{0, 1}));
  // Best fit alone would take gpu-4; the claim's first request is under root 0.
  EXPECT_EQ(out.claims[0].requests[1].devices, (std::vector<int32_t>{2}));
}

TEST(DraAllocator, WithoutTopologyAttributesTheSliceOrderStands) {
  Fixture f(8);
  for (auto& d : f.node.devices) d.device.attributes.erase("resource.kubernetes.io/pcieRoot");
  f.in_use[0] = true;
  auto out = f.Run({Exact(4)});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[0].devices, (std::vector<int32_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace tessera::dra
