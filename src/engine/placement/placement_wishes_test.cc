// Placement wishes beside the placement plugins (issue 15: they were dropped): topology spread
// as a filter (DoNotSchedule) and a preference (ScheduleAnyway), preferred node affinity as a
// score, under every kind of plugin; and the ClusterQueue stopPolicy.
#include <gtest/gtest.h>

#include <map>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

constexpr char kZone[] = "topology.kubernetes.io/zone";

std::vector<Decision> SubmitAll(Scheduler& s, double now = 0) {
  for (WorkloadId id = 0; id < s.num_workloads(); ++id)
    if (s.status(id).state == WorkloadState::kInactive) s.Submit(id, now);
  auto d = s.RunCycle(now);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
  return d;
}

Workload Spread(Workload w, int32_t skew, bool required, std::string key = kZone) {
  w.pod_sets.back().spread.push_back({std::move(key), skew, required});
  return w;
}

// Pods per node name of workload `id`.
std::map<std::string, int> PodsPerNode(const Scheduler& s, WorkloadId id) {
  std::map<std::string, int> out;
  for (const auto& p : s.status(id).pods) ++out[s.model().nodes[p.node].name];
  return out;
}

class PlacementWishesTest : public ::testing::TestWithParam<PlacementPolicy> {
 protected:
  Model WithPolicy(Model m) {
    m.config.placement = GetParam();
    return m;
  }
};

TEST_P(PlacementWishesTest, DoNotScheduleKeepsSkewAndSkipsNodesWithoutTheKey) {
  Model m =
      WithPolicy(MakeModel({MakeNode("a1", 8, {{kZone, "a"}}), MakeNode("a2", 8, {{kZone, "a"}}),
                            MakeNode("b1", 8, {{kZone, "b"}}), MakeNode("none", 8)},
                           {CQ("cq").Gpus("gpu", 100).Obj()}));
  m.workloads.push_back(Spread(WL("w").Queue("cq").Pods(6, 1).Obj(), 1, true));
  auto s = Start(m);
  SubmitAll(*s);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted) << s->status(0).reason;
  auto per_node = PodsPerNode(*s, 0);
  EXPECT_EQ(per_node.count("none"), 0u);
  EXPECT_EQ(per_node["a1"] + per_node["a2"], 3);
  EXPECT_EQ(per_node["b1"], 3);
}

TEST_P(PlacementWishesTest, APodThatWouldExceedMaxSkewIsNotPlaced) {
  // Zone b holds one pod: a, b, a; a fourth would make a 3 against b 1.
  Model m =
      WithPolicy(MakeModel({MakeNode("a1", 8, {{kZone, "a"}}), MakeNode("b1", 1, {{kZone, "b"}})},
                           {CQ("cq").Gpus("gpu", 100).Obj()}));
  m.workloads.push_back(Spread(WL("gang").Queue("cq").Pods(4, 1).Obj(), 1, true));
  m.workloads.push_back(Spread(WL("elastic").Queue("cq").Pods(4, 1).Min(2).Obj(), 1, true));
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_TRUE(s->status(0).pods.empty());
  ASSERT_EQ(s->status(1).state, WorkloadState::kAdmitted) << s->status(1).reason;
  EXPECT_EQ(s->status(1).pods.size(), 3u);  // a, b, a; a fourth on a would be skew 2
}

TEST_P(PlacementWishesTest, PreferredNodeAffinityWinsOverThePolicysOrder) {
  // `busy` is the fullest node (binpack's choice), `idle` the emptiest (spread's); the pod
  // prefers `ssd`, in between.
  Model m = WithPolicy(
      MakeModel({MakeNode("busy", 8), MakeNode("ssd", 8, {{"disk", "ssd"}}), MakeNode("idle", 8)},
                {CQ("cq").Gpus("gpu", 100).Obj()}));
  m.workloads.push_back(
      WL("filler").Queue("cq").Pods(1, 6).Selector("kubernetes.io/hostname", "busy").Obj());
  m.workloads.push_back(
      WL("filler2").Queue("cq").Pods(1, 3).Selector("kubernetes.io/hostname", "ssd").Obj());
  for (Node& n : m.nodes) n.labels["kubernetes.io/hostname"] = n.name;
  Workload w = WL("prefers").Queue("cq").Pods(1, 1).Obj();
  PreferredSchedulingTerm t;
  t.weight = 10;
  t.term.match_expressions.push_back({"disk", SelectorOp::kIn, {"ssd"}});
  w.pod_sets[0].affinity.preferred_terms.push_back(t);
  m.workloads.push_back(w);
  auto s = Start(m);
  SubmitAll(*s);
  ASSERT_EQ(s->status(2).state, WorkloadState::kAdmitted) << s->status(2).reason;
  EXPECT_EQ(PodsPerNode(*s, 2), (std::map<std::string, int>{{"ssd", 1}}));
}

TEST_P(PlacementWishesTest, ScheduleAnywaySpreadsButNeverBlocks) {
  // Three pods over hostname, two nodes: one each, then the third shares.
  Model m = WithPolicy(
      MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)}, {CQ("cq").Gpus("gpu", 100).Obj()}));
  for (Node& n : m.nodes) n.labels["kubernetes.io/hostname"] = n.name;
  m.workloads.push_back(
      Spread(WL("w").Queue("cq").Pods(3, 1).Obj(), 1, false, "kubernetes.io/hostname"));
  auto s = Start(m);
  SubmitAll(*s);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted) << s->status(0).reason;
  auto per_node = PodsPerNode(*s, 0);
  EXPECT_EQ(per_node.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Policies, PlacementWishesTest,
                         ::testing::Values(PlacementPolicy::kBinpack, PlacementPolicy::kSpread,
                                           PlacementPolicy::kFgd, PlacementPolicy::kTesseraPlan));

TEST(StopPolicyTest, HoldKeepsRunningAdmitsNothingNewAndLendsNothing) {
  ClusterQueue held = CQ("held").Cohort("org").Gpus("gpu", 8).Obj();
  held.stop_policy = StopPolicy::kHold;
  Model m = MakeModel({MakeNode("n1", 16)}, {held, CQ("open").Cohort("org").Gpus("gpu", 2).Obj()});
  Workload running = WL("running").Queue("held").Pods(1, 4).Obj();
  running.admitted_at_start = true;
  m.workloads.push_back(running);
  m.workloads.push_back(WL("new").Queue("held").Pods(1, 1).Obj());
  m.workloads.push_back(WL("borrower").Queue("open").Pods(1, 4).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(1).reason, "ClusterQueue held is stopped (stopPolicy: Hold)");
  EXPECT_NE(s->status(2).state, WorkloadState::kAdmitted);  // held lends nothing to open
  auto later = s->RunCycle(5);
  EXPECT_TRUE(later.empty());
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
}

TEST(StopPolicyTest, HoldAndDrainEvictsAfterTheAdmittingInstant) {
  ClusterQueue drained = CQ("drained").Gpus("gpu", 8).Obj();
  drained.stop_policy = StopPolicy::kHoldAndDrain;
  Model m = MakeModel({MakeNode("n1", 8)}, {drained});
  Workload running = WL("running").Queue("drained").Pods(1, 4).Obj();
  running.admitted_at_start = true;
  m.workloads.push_back(running);
  auto s = Start(m);
  SubmitAll(*s);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_TRUE(s->RunCycle(0).empty());  // an admission is final within its instant
  const double at = s->NextTimer(0);
  ASSERT_GT(at, 0);
  ASSERT_LE(at, 1);
  auto d = s->RunCycle(at);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].preemptor, -1);
  EXPECT_EQ(d[0].reason, "The ClusterQueue is stopped: drained has stopPolicy HoldAndDrain");
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(0).reason, "ClusterQueue drained is stopped (stopPolicy: HoldAndDrain)");
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  EXPECT_EQ(s->gpus_allocated(), 0);
  EXPECT_TRUE(s->RunCycle(at + 1).empty());  // never admitted again
}

}  // namespace
}  // namespace tessera
