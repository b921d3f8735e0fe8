// Consumable capacity (dra/consumable_capacity.h) and the allocator sharing devices that allow
// multiple allocations by it (dra/allocator.h), with upstream's rules: requests round up to the
// device's requestPolicy, an unrequested capacity consumes the default (or all of it), and the
// shares of a device never consume more than it has.
#include "dra/consumable_capacity.h"

#include <gtest/gtest.h>

#include "dra/allocator.h"

namespace tessera::dra {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kGiMilli = kGi * 1000;

// A node of `n` GPUs with 80Gi of "memory" each, shared (allowMultipleAllocations) or not.
struct Node {
  NodeDevices devices;
  std::vector<bool> in_use;
  std::vector<DeviceShares> shares;
  Node(int n, bool shared, std::optional<CapacityRequestPolicy> policy = std::nullopt) {
    for (int i = 0; i < n; ++i) {
      NodeDevice d;
      d.device.driver = "gpu.example.com";
      d.device.name = "gpu-" + std::to_string(i);
      d.device.allow_multiple_allocations = shared;
      d.capacities["memory"] = {80 * kGiMilli, policy};
      devices.devices.push_back(d);
    }
    in_use.assign(n, false);
    shares.assign(n, {});
  }
  AllocateOutcome Run(const std::vector<ClaimInput>& claims) {
    NodeView v{&devices, &in_use, nullptr, &shares};
    return Allocate(claims, v, [](int32_t, int32_t) { return Match::kYes; });
  }
};

// A claim of one request for `count` device(s) asking `requests` of capacity.
struct Claim {
  std::map<std::string, int64_t> requests;
  ClaimInput in;
  explicit Claim(std::map<std::string, int64_t> r, int64_t count = 1, int requests_in_claim = 1)
      : requests(std::move(r)) {
    in.name = "ns/claim";
    for (int i = 0; i < requests_in_claim; ++i) {
      const std::string name = "gpu" + std::to_string(i);
      in.requests.push_back(
          {name, {{name, 0, false, count, nullptr, requests.empty() ? nullptr : &requests}}});
    }
  }
};

int64_t Consumed(const AllocateOutcome& out, size_t claim, size_t device = 0) {
  return out.claims[claim].requests[0].consumed[device].at("memory");
}

TEST(DraConsumableCapacity, TwoClaimsOf40GiShareAn80GiGpuAndAThirdIsRefused) {
  Node node(1, /*shared=*/true);
  Claim a({{"memory", 40 * kGiMilli}}), b({{"memory", 40 * kGiMilli}}),
      c({{"memory", 40 * kGiMilli}});
  auto two = node.Run({a.in, b.in});
  ASSERT_TRUE(two.ok) << two.reason;
  EXPECT_EQ(two.claims[0].requests[0].devices, (std::vector<int32_t>{0}));
  EXPECT_EQ(two.claims[1].requests[0].devices, (std::vector<int32_t>{0}));
  EXPECT_EQ(Consumed(two, 0), 40 * kGiMilli);
  EXPECT_EQ(Consumed(two, 1), 40 * kGiMilli);
  auto three = node.Run({a.in, b.in, c.in});
  EXPECT_FALSE(three.ok);
  EXPECT_NE(three.reason.find("too little of it left"), std::string::npos) << three.reason;

  // The same with the first two already allocated (the node's shares): the third waits.
  node.shares[0] = {2, {{"memory", 80 * kGiMilli}}};
  EXPECT_FALSE(node.Run({c.in}).ok);
  node.shares[0] = {1, {{"memory", 40 * kGiMilli}}};
  EXPECT_TRUE(node.Run({c.in}).ok);
}

TEST(DraConsumableCapacity, AnExclusiveDeviceStillGoesToOneClaim) {
  Node node(1, /*shared=*/false);
  Claim a({{"memory", 40 * kGiMilli}}), b({{"memory", 40 * kGiMilli}});
  auto one = node.Run({a.in});
  ASSERT_TRUE(one.ok) << one.reason;
  EXPECT_TRUE(one.claims[0].requests[0].consumed[0].empty());  // no share: the whole device
  EXPECT_FALSE(node.Run({a.in, b.in}).ok);
  // A request still has to fit in it, as upstream checks every device.
  Claim big({{"memory", 100 * kGiMilli}});
  EXPECT_FALSE(node.Run({big.in}).ok);
}

TEST(DraConsumableCapacity, ARequestRoundsUpToTheStepOfTheValidRange) {
  CapacityRequestPolicy p;
  p.default_milli = 10 * kGiMilli;
  p.valid_range = CapacityRequestPolicy::Range{10 * kGiMilli, 60 * kGiMilli, 10 * kGiMilli};
  Node node(1, true, p);
  Claim a({{"memory", 15 * kGiMilli}}), small({{"memory", 1 * kGiMilli}});
  auto out = node.Run({a.in, small.in});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(Consumed(out, 0), 20 * kGiMilli);
  EXPECT_EQ(Consumed(out, 1), 10 * kGiMilli);  // below min: min
  Claim above({{"memory", 61 * kGiMilli}});    // rounds to 70Gi, above max
  auto refused = node.Run({above.in});
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.reason.find("requestPolicy refuses"), std::string::npos) << refused.reason;
  // 20 + 60 = 80: fits exactly; one more 10 does not.
  Claim sixty({{"memory", 60 * kGiMilli}});
  EXPECT_TRUE(node.Run({a.in, sixty.in}).ok);
  EXPECT_FALSE(node.Run({a.in, sixty.in, small.in}).ok);
}

TEST(DraConsumableCapacity, ARequestRoundsUpToTheNextValidValue) {
  CapacityRequestPolicy p;
  p.default_milli = 10 * kGiMilli;
  p.valid_values = {10 * kGiMilli, 20 * kGiMilli, 40 * kGiMilli};
  Node node(1, true, p);
  Claim a({{"memory", 21 * kGiMilli}});
  auto out = node.Run({a.in});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(Consumed(out, 0), 40 * kGiMilli);
  Claim above({{"memory", 41 * kGiMilli}});
  EXPECT_FALSE(node.Run({above.in}).ok);
}

TEST(DraConsumableCapacity, AnUnrequestedCapacityConsumesTheDefaultElseAllOfIt) {
  CapacityRequestPolicy p;
  p.default_milli = 10 * kGiMilli;
  p.valid_range = CapacityRequestPolicy::Range{0, std::nullopt, std::nullopt};
  Node with_default(1, true, p);
  std::vector<ClaimInput> eight(8, Claim({}).in);
  auto out = with_default.Run(eight);
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(Consumed(out, 7), 10 * kGiMilli);
  eight.push_back(Claim({}).in);
  EXPECT_FALSE(with_default.Run(eight).ok);

  Node no_policy(1, true);
  auto whole = no_policy.Run({Claim({}).in});
  ASSERT_TRUE(whole.ok) << whole.reason;
  EXPECT_EQ(Consumed(whole, 0), 80 * kGiMilli);
  EXPECT_FALSE(no_policy.Run({Claim({}).in, Claim({}).in}).ok);
}

TEST(DraConsumableCapacity, TwoRequestsOfOneClaimMayShareADevice) {
  Node node(1, true);
  Claim two_requests({{"memory", 40 * kGiMilli}}, /*count=*/1, /*requests_in_claim=*/2);
  auto out = node.Run({two_requests.in});
  ASSERT_TRUE(out.ok) << out.reason;
  EXPECT_EQ(out.claims[0].requests[1].devices, (std::vector<int32_t>{0}));
  // One request never takes the same device twice.
  Claim two_devices({{"memory", 10 * kGiMilli}}, /*count=*/2);
  EXPECT_FALSE(node.Run({two_devices.in}).ok);
}

TEST(DraConsumableCapacity, ACapacityTheDeviceLacksRefusesIt) {
  Node node(1, true);
  Claim a({{"cores", 1000}});
  auto out = node.Run({a.in});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("not theirs"), std::string::npos) << out.reason;
}

TEST(DraConsumableCapacity, ASharedDeviceDrawsItsCountersOnce) {
  Node node(2, true);
  node.devices.counter_sets["pool/gpu"] = {"gpu", {{"memory", 80 * kGiMilli}}};
  for (auto& d : node.devices.devices)
    d.consumes.push_back({"pool/gpu", {{"memory", 80 * kGiMilli}}});
  Claim a({{"memory", 40 * kGiMilli}}), b({{"memory", 40 * kGiMilli}}), c({{"memory", 1000}});
  auto out = node.Run({a.in, b.in, c.in});
  EXPECT_FALSE(out.ok);  // the second device would overdraw the counter; the first is full
  auto two = node.Run({a.in, b.in});
  ASSERT_TRUE(two.ok) << two.reason;
}

TEST(DraConsumableCapacity, AllDevicesAreDecidedBeforeThePodsOtherClaimsTakeTheirShares) {
  // Upstream decides which devices are "all" before it allocates any claim of the pod: a device
  // an earlier claim of the same pod fills is one of them, and the request fails on it.
  Node node(2, true);
  Claim first({{"memory", 40 * kGiMilli}});
  Claim all({{"memory", 50 * kGiMilli}});
  all.in.requests[0].alternatives[0].all = true;
  EXPECT_TRUE(node.Run({all.in}).ok);
  auto out = node.Run({first.in, all.in});
  EXPECT_FALSE(out.ok);
  // Shares allocated before (the node's) do leave a device out of "all".
  node.shares[0] = {1, {{"memory", 40 * kGiMilli}}};
  auto later = node.Run({all.in});
  ASSERT_TRUE(later.ok) << later.reason;
  EXPECT_EQ(later.claims[0].requests[0].devices, (std::vector<int32_t>{1}));
}

TEST(DraConsumableCapacity, PolicyArithmetic) {
  CapacityRequestPolicy range;
  range.default_milli = 1000;
  range.valid_range = CapacityRequestPolicy::Range{500, 4000, 500};
  ConsumableCapacity cap{8000, range};
  int64_t r = 1200;
  EXPECT_EQ(ConsumedAmount(&r, cap), 1500);
  EXPECT_EQ(ConsumedAmount(nullptr, cap), 1000);
  EXPECT_FALSE(ViolatesPolicy(1500, range));
  EXPECT_TRUE(ViolatesPolicy(4500, range));
  EXPECT_TRUE(ViolatesPolicy(1200, range));
  ConsumableCapacity plain{8000, std::nullopt};
  EXPECT_EQ(ConsumedAmount(&r, plain), 1200);
  EXPECT_EQ(ConsumedAmount(nullptr, plain), 8000);
  int64_t huge = INT64_MAX - 10;
  EXPECT_EQ(ConsumedAmount(&huge, cap), INT64_MAX);  // saturates, then refused
  EXPECT_TRUE(ViolatesPolicy(INT64_MAX, range));
}

}  // namespace
}  // namespace tessera::dra
