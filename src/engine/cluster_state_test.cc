// ClusterState's booking of room for a workload not placed yet (BookFreePart, Unbook): what a
// preemptor that waits for its victims claims (whole GPUs, the free milli of a share's device,
// the free memory slices of MIG instances) is taken exactly, never beyond what is free or asked,
// and giving it back leaves the cluster state as it was: free counts, device owners and milli,
// MIG slices, share room, pools and their buckets.
#include "engine/cluster_state.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/test_builders.h"
#include "model/mig.h"

namespace tessera {
namespace {

using testing::MakeNode;

// The A100-40GB profiles' resource ids (interned before any ClusterState reads them).
ResourceId Mig(const std::string& profile) {
  auto id = ResourceRegistry::Global().Intern("nvidia.com/mig-" + profile);
  EXPECT_TRUE(id.ok());
  return *id;
}
const std::vector<std::string> kProfiles = {"1g.5gb",  "1g.10gb", "2g.10gb",
                                            "3g.20gb", "4g.20gb", "7g.40gb"};
void InternProfiles() {
  for (const std::string& p : kProfiles) Mig(p);
}

// Everything ClusterState shows, bucket contents as sets (a node that leaves a bucket and comes
// back may sit elsewhere in it, as after any Assign and Release).
struct Snapshot {
  std::vector<Resources> free;
  std::vector<std::vector<int32_t>> owners, milli;
  std::vector<std::vector<uint8_t>> masks;
  std::vector<int32_t> share_room;
  std::vector<std::vector<std::vector<NodeId>>> buckets;
  std::vector<std::vector<NodeId>> shared;
  std::vector<int64_t> pool_free;
  int64_t allocated = 0;
  bool operator==(const Snapshot&) const = default;
};

Snapshot Take(const ClusterState& cs) {
  Snapshot s;
  for (NodeId n = 0; n < cs.num_nodes(); ++n) {
    const int c = cs.gpu_count(n);
    s.free.push_back(cs.free(n));
    s.owners.emplace_back(cs.gpu_owners(n), cs.gpu_owners(n) + c);
    s.milli.emplace_back(cs.gpu_used_milli(n), cs.gpu_used_milli(n) + c);
    s.masks.emplace_back(cs.mig_masks(n), cs.mig_masks(n) + c);
    s.share_room.push_back(cs.share_room(n));
  }
  for (int p = 0; p < cs.num_pools(); ++p) {
    s.buckets.emplace_back();
    for (int k = 0; k <= cs.max_gpus_per_node(); ++k) {
      std::vector<NodeId> b = cs.Bucket(p, k);
      std::sort(b.begin(), b.end());
      s.buckets.back().push_back(std::move(b));
    }
    s.shared.emplace_back(cs.SharedNodes(p).begin(), cs.SharedNodes(p).end());
    s.pool_free.push_back(cs.PoolFreeGpus(p));
  }
  s.allocated = cs.allocated_gpus();
  return s;
}

// One node of each kind that matters here: whole GPUs, GPUs with known memory (shares by
// memory), and an A100-40GB whose MIG layout Tessera chooses; pool 0 holds all, pool 1 the last
// two.
ClusterState MakeCluster(int gpus) {
  InternProfiles();
  std::vector<Node> nodes = {MakeNode("plain", gpus), MakeNode("shared", gpus),
                             MakeNode("mig", gpus)};
  nodes[1].gpu_memory_mib = 81920;
  nodes[2].gpu_memory_mib = 40960;
  nodes[2].mig_dynamic = true;
  return ClusterState(nodes, {{0, 1, 2}, {1, 2}});
}

// A request of one pod: whole GPUs, a share by milli or by memory, or MIG instances.
Resources RandomRequest(NodeId n) {
  Resources r = testing::Req(0, *rc::gen::inRange(0, 4) * 1000, int64_t{1} << 30);
  // On the MIG node, half the requests are MIG instances.
  const int kind = std::min(3, *rc::gen::inRange(0, n == 2 ? 6 : 3));
  if (kind == 0) {
    r[kGpu] = *rc::gen::inRange(1, 3);
  } else if (kind == 1) {
    r[kGpuMilli] = *rc::gen::element(100, 300, 500, 800);
  } else if (kind == 2) {
    r[kGpuMemory] = *rc::gen::element(int64_t{8192}, int64_t{20480});
  } else {
    r[Mig(*rc::gen::elementOf(kProfiles))] = *rc::gen::inRange(1, 3);
  }
  return r;
}

// Where a pod asking `req` would start on node n once some workloads are gone: devices and MIG
// starts anywhere a valid placement could be, taken or not.
Room RandomWant(const ClusterState& cs, NodeId n, const Resources& req) {
  Room want{n, req, {}, {}};
  const int count = cs.gpu_count(n);
  if (cs.WantsMig(n, req)) {
    for (const MigProfile* p : cs.MigInstances(n, req)) {
      std::vector<int> starts;
      for (int s = 0; s < 8; ++s)
        if (p->starts >> s & 1u) starts.push_back(s);
      want.gpus.push_back(*rc::gen::inRange(0, count));
      want.mig_slices.push_back(MigSlices(*p, *rc::gen::elementOf(starts)));
    }
  } else if (ClusterState::IsShare(req)) {
    want.gpus.push_back(*rc::gen::inRange(0, count));
  } else {
    std::vector<int32_t> all(count);
    for (int g = 0; g < count; ++g) all[g] = g;
    for (int64_t k = 0; k < req[kGpu] && k < count; ++k) {
      const int pick = *rc::gen::inRange(static_cast<int>(k), count);
      std::swap(all[k], all[pick]);
      want.gpus.push_back(all[k]);
    }
  }
  return want;
}

// Some pods placed at random, as the engine places them (Assign after Fits).
void FillAtRandom(ClusterState& cs) {
  const int pods = *rc::gen::inRange(0, 8);
  for (int i = 0; i < pods; ++i) {
    const NodeId n = *rc::gen::inRange(0, cs.num_nodes());
    const Resources req = RandomRequest(n);
    if (!cs.Fits(n, req)) continue;
    std::vector<int8_t> starts;
    cs.Assign(n, req, 1000 + i, &starts);
  }
}

// What `booked` takes is free before and within what `want` asks less `held`.
void CheckWithin(const ClusterState& cs, const Room& want, const Room* held, const Room& booked) {
  const NodeId n = want.node;
  for (ResourceId res : {kCpu, kMemory, kPods, kGpu, kGpuMilli}) RC_ASSERT(booked.req[res] >= 0);
  for (ResourceId res : {kCpu, kMemory, kPods})
    RC_ASSERT(booked.req[res] + (held ? held->req[res] : 0) <= want.req[res]);
  if (booked.req[kGpuMilli] > 0) {
    RC_ASSERT(booked.gpus.size() == 1u && booked.gpus[0] == want.gpus[0]);
    RC_ASSERT(booked.req[kGpuMilli] + (held ? held->req[kGpuMilli] : 0) <=
              cs.ShareMilli(n, want.req));
  }
  for (size_t i = 0; i < booked.mig_slices.size(); ++i) {
    uint8_t asked = 0;
    for (size_t k = 0; k < want.gpus.size(); ++k)
      if (want.gpus[k] == booked.gpus[i]) asked |= want.mig_slices[k];
    RC_ASSERT((booked.mig_slices[i] & ~asked) == 0);
  }
}

RC_GTEST_PROP(ClusterStateTest, ARestBookedBesideAHeldClaimIsExactAndComesBackExactly, ()) {
  ClusterState cs = MakeCluster(*rc::gen::inRange(1, 5));
  FillAtRandom(cs);
  const NodeId n = *rc::gen::inRange(0, cs.num_nodes());
  const Room want = RandomWant(cs, n, RandomRequest(n));
  // As a claim is held (HoldClaim), then topped up with what is free once its victims are gone
  // (FitsOnceGone books the rest beside what the claim holds, never twice what is asked).
  Room held, rest;
  const bool took = cs.BookFreePart(want, 7, held, ClusterState::Parts::kDeviceParts);
  RC_ASSERT(took == !held.empty());
  CheckWithin(cs, want, nullptr, held);
  FillAtRandom(cs);  // others come and go around it
  const Snapshot filled = Take(cs);
  cs.BookFreePart(want, 7, rest, ClusterState::Parts::kDeviceParts, &held);
  CheckWithin(cs, want, &held, rest);
  for (size_t i = 0; i < rest.gpus.size(); ++i) {
    // Never a device or slice the claim holds already.
    if (!rest.mig_slices.empty()) {
      for (size_t k = 0; k < held.gpus.size(); ++k)
        if (held.gpus[k] == rest.gpus[i]) RC_ASSERT((held.mig_slices[k] & rest.mig_slices[i]) == 0);
    } else if (rest.req[kGpuMilli] == 0) {
      RC_ASSERT(std::find(held.gpus.begin(), held.gpus.end(), rest.gpus[i]) == held.gpus.end());
    }
  }
  cs.Unbook(rest);
  RC_ASSERT(Take(cs) == filled);
}

RC_GTEST_PROP(ClusterStateTest, UnbookingAClaimGivesBackExactlyWhatItTook, ()) {
  ClusterState cs = MakeCluster(*rc::gen::inRange(1, 5));
  FillAtRandom(cs);
  const Snapshot before = Take(cs);
  const int claims = *rc::gen::inRange(1, 4);
  std::vector<Room> booked(claims);
  for (int i = 0; i < claims; ++i) {
    const NodeId n = *rc::gen::inRange(0, cs.num_nodes());
    const Room want = RandomWant(cs, n, RandomRequest(n));
    cs.BookFreePart(want, 7 + i, booked[i], ClusterState::Parts::kDeviceParts);
    CheckWithin(cs, want, nullptr, booked[i]);
  }
  for (int i = claims; i-- > 0;) cs.Unbook(booked[i]);
  RC_ASSERT(Take(cs) == before);
}

// GPUs that fail (SetGpuFailed): a pod placed on a node never lands on a failed device, the
// counts stay those of the devices, and pods leaving and put back (a look ahead's victims),
// then every repair, leave the cluster state exactly as it was.
struct Pod {
  NodeId node;
  Resources req;
  std::vector<int32_t> gpus;
  std::vector<int8_t> starts;
};

void CheckCounts(const ClusterState& cs) {
  int64_t total = 0, free_total = 0, failed = 0;
  for (NodeId n = 0; n < cs.num_nodes(); ++n) {
    int64_t free = 0;
    for (int g = 0; g < cs.gpu_count(n); ++g) {
      free += cs.gpu_owners(n)[g] == -1;
      failed += cs.gpu_failed(n, g);
      total += !cs.gpu_failed(n, g);
      RC_ASSERT(!cs.gpu_failed(n, g) || cs.gpu_used_milli(n)[g] == kMilliPerGpu);
    }
    RC_ASSERT(cs.free(n)[kGpu] == free);
    free_total += free;
  }
  RC_ASSERT(cs.total_gpus() == total);
  RC_ASSERT(cs.failed_gpus() == failed);
  RC_ASSERT(cs.allocated_gpus() == total - free_total);
}

RC_GTEST_PROP(ClusterStateTest, FailedDevicesTakeNothingNewAndRepairsComeBackExactly, ()) {
  ClusterState cs = MakeCluster(*rc::gen::inRange(1, 5));
  std::vector<Pod> pods;
  auto place = [&](int count) {
    for (int i = 0; i < count; ++i) {
      Pod p{*rc::gen::inRange(0, cs.num_nodes()), {}, {}, {}};
      p.req = RandomRequest(p.node);
      if (!cs.Fits(p.node, p.req)) continue;
      p.gpus = cs.Assign(p.node, p.req, 1000 + i, &p.starts);
      for (int32_t g : p.gpus) RC_ASSERT(!cs.gpu_failed(p.node, g));
      pods.push_back(std::move(p));
    }
  };
  place(*rc::gen::inRange(0, 8));
  const Snapshot before = Take(cs);
  const size_t old = pods.size();
  std::vector<std::pair<NodeId, int32_t>> failed;
  for (int i = *rc::gen::inRange(1, 6); i > 0; --i) {
    const NodeId n = *rc::gen::inRange(0, cs.num_nodes());
    failed.emplace_back(n, *rc::gen::inRange(0, cs.gpu_count(n)));
    cs.SetGpuFailed(n, failed.back().second, true);
    CheckCounts(cs);
  }
  place(*rc::gen::inRange(0, 8));
  CheckCounts(cs);
  // Some of the pods there before the failures leave and are put back where they were.
  std::vector<size_t> gone;
  for (size_t i = 0; i < old; ++i) {
    if (!*rc::gen::arbitrary<bool>()) continue;
    cs.Release(pods[i].node, pods[i].req, pods[i].gpus, pods[i].starts);
    gone.push_back(i);
    CheckCounts(cs);
  }
  place(*rc::gen::inRange(0, 4));
  for (size_t k = pods.size(); k-- > old;)
    cs.Release(pods[k].node, pods[k].req, pods[k].gpus, pods[k].starts);
  pods.resize(old);
  for (size_t i : gone) cs.AssignExact(pods[i].node, pods[i].req, pods[i].gpus, 7, pods[i].starts);
  CheckCounts(cs);
  for (const auto& [n, g] : failed) cs.SetGpuFailed(n, g, false);
  CheckCounts(cs);
  // Owners of put-back whole devices are 7 now, not their first owner: compare without them.
  Snapshot after = Take(cs), want = before;
  for (size_t i : gone)
    for (int32_t g : pods[i].gpus)
      if (want.owners[pods[i].node][g] >= 0) want.owners[pods[i].node][g] = 7;
  RC_ASSERT(after == want);
}

TEST(ClusterStateTest, AClaimHoldsTheFreeMilliOfAShareDevice) {
  ClusterState cs = MakeCluster(1);
  Resources victim = testing::Req(0);
  victim[kGpuMilli] = 500;
  cs.Assign(1, victim, 1);
  const Snapshot before = Take(cs);
  Resources preemptor = testing::Req(0);
  preemptor[kGpuMilli] = 800;
  Room booked;
  ASSERT_TRUE(
      cs.BookFreePart({1, preemptor, {0}, {}}, 2, booked, ClusterState::Parts::kDeviceParts));
  EXPECT_EQ(booked.req[kGpuMilli], 500) << "the free half of the device";
  Resources passer = testing::Req(0);
  passer[kGpuMilli] = 300;
  EXPECT_FALSE(cs.Fits(1, passer)) << "nothing left of the device";
  // A reservation's phantom books no share (Parts::kWholeGpus): only cpu, memory and a pod slot.
  Room phantom;
  cs.Unbook(booked);
  ASSERT_TRUE(cs.BookFreePart({1, preemptor, {0}, {}}, 2, phantom));
  EXPECT_EQ(phantom.req[kGpuMilli], 0);
  EXPECT_TRUE(cs.Fits(1, passer));
  cs.Unbook(phantom);
  EXPECT_EQ(Take(cs), before);
}

TEST(ClusterStateTest, AClaimHoldsTheFreeSlicesOfItsMigInstancesEvenOfAPartlyTakenOne) {
  ClusterState cs = MakeCluster(2);
  // A 1g.5gb at slice 0 (PlanMig's choice on an empty device); the preemptor's 2g.10gb will
  // start at slice 0 once it is gone: slice 1 is free now and is held.
  Resources victim = testing::Req(0);
  victim[Mig("1g.5gb")] = 1;
  std::vector<int8_t> starts;
  cs.Assign(2, victim, 1, &starts);
  ASSERT_EQ(starts, std::vector<int8_t>{0});
  const Snapshot before = Take(cs);
  Resources preemptor = testing::Req(0);
  preemptor[Mig("2g.10gb")] = 1;
  Room booked;
  ASSERT_TRUE(
      cs.BookFreePart({2, preemptor, {0}, {0b11}}, 2, booked, ClusterState::Parts::kDeviceParts));
  EXPECT_EQ(booked.mig_slices, std::vector<uint8_t>{0b10});
  EXPECT_EQ(cs.mig_masks(2)[0], 0b11);
  EXPECT_EQ(cs.free_gpus(2), 1) << "GPU 1 is untouched";
  Resources other = testing::Req(0);
  other[Mig("1g.5gb")] = 13;  // 1g.5gb may start at slices 0-6: 7 on GPU 1, 6 beside the victim
  EXPECT_FALSE(cs.Fits(2, other)) << "slice 1 is held";
  other[Mig("1g.5gb")] = 12;
  EXPECT_TRUE(cs.Fits(2, other));
  cs.Unbook(booked);
  EXPECT_EQ(Take(cs), before);
  other[Mig("1g.5gb")] = 13;
  EXPECT_TRUE(cs.Fits(2, other));
  // Slices of the empty GPU 1 make it a MIG device while held: no whole-GPU pod takes it.
  Room on_empty;
  ASSERT_TRUE(cs.BookFreePart({2, preemptor, {1}, {0b1100}}, 2, on_empty,
                              ClusterState::Parts::kDeviceParts));
  EXPECT_EQ(cs.free_gpus(2), 0);
  EXPECT_EQ(cs.MaxFreeGpus(0), 2) << "the other nodes' two GPUs";
  EXPECT_FALSE(cs.Fits(2, testing::Req(1)));
  cs.Unbook(on_empty);
  EXPECT_EQ(Take(cs), before);
  EXPECT_TRUE(cs.Fits(2, testing::Req(1)));
}

}  // namespace
}  // namespace tessera
