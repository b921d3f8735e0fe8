// The engine's side of elastic clusters (engine/elastic/elastic.h): nodes offline and online,
// a workload evicted for its node, and the scale-up planner's decisions in both modes.
#include "engine/elastic/elastic.h"

#include <gtest/gtest.h>

#include "engine/scheduler.h"
#include "engine/test_builders.h"
#include "fmt/format.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

// `up` nodes of 8 GPUs online, then `off` more offline (an elastic pool's headroom).
Model Cluster(int up, int off, int64_t quota) {
  std::vector<Node> nodes;
  for (int i = 0; i < up + off; ++i) {
    // fmt, not "n" + std::to_string(i): GCC 12 at -O3 warns (-Wrestrict, a false positive of
    // its std::string inlining) on that concatenation.
    nodes.push_back(MakeNode(fmt::format("n{}", i), 8));
    nodes.back().provisioned = i < up;
  }
  return MakeModel(std::move(nodes), {CQ("cq").Gpus("gpu", quota).Obj()});
}

std::unique_ptr<Scheduler> Start(Model m) {
  auto s = Scheduler::Create(std::move(m));
  EXPECT_TRUE(s.ok()) << s.status();
  for (WorkloadId id = 0; id < (*s)->num_workloads(); ++id) (*s)->Submit(id, 0);
  (*s)->RunCycle(0);
  EXPECT_TRUE((*s)->Verify().ok()) << (*s)->Verify();
  return std::move(*s);
}

// One group: every offline node of the model, in id order.
std::vector<NodeGroupOffer> Offline(const Scheduler& s, double price = 1) {
  NodeGroupOffer g;
  g.node_price = price;
  for (NodeId n = 0; n < static_cast<NodeId>(s.model().nodes.size()); ++n)
    if (!s.node_online(n)) g.addable.push_back(n);
  return {g};
}

TEST(ElasticTest, OfflineNodesOfferNothingAndComeBackWhole) {
  Model m = Cluster(1, 1, 100);
  m.workloads.push_back(WL("two-nodes").Queue("cq").Pods(2, 8).Obj());
  auto s = Start(m);
  EXPECT_EQ(s->gpus_total(), 8);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_FALSE(s->node_empty(1));  // offline is not "empty": it is not there
  s->SetNodeOnline(1, true);
  EXPECT_EQ(s->gpus_total(), 16);
  auto d = s->RunCycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  EXPECT_EQ(s->WorkloadsOnNode(1), std::vector<WorkloadId>{0});
  // Its node is interrupted: it goes back to its queue; the node can then go offline.
  Decision e = s->EvictForNode(0, "spot node n1 was interrupted");
  EXPECT_EQ(e.type, Decision::Type::kPreempt);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(0).preemptions, 1);
  EXPECT_TRUE(s->node_empty(1));
  s->SetNodeOnline(1, false);
  EXPECT_EQ(s->gpus_total(), 8);
  EXPECT_TRUE(s->RunCycle(2).empty());
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(ElasticTest, CordonedNodeTakesNoNewPods) {
  Model m = Cluster(1, 0, 100);
  m.workloads.push_back(WL("one").Queue("cq").Pods(1, 8).Obj());
  auto s = Scheduler::Create(m);
  ASSERT_TRUE(s.ok());
  (*s)->SetNodeCordoned(0, true);
  (*s)->Submit(0, 0);
  EXPECT_TRUE((*s)->RunCycle(0).empty());
  EXPECT_EQ((*s)->status(0).state, WorkloadState::kPending);
  (*s)->SetNodeCordoned(0, false);  // the workload set aside retries
  EXPECT_EQ((*s)->RunCycle(1).size(), 1u);
}

TEST(ElasticTest, GangAwareAsksForTheWholeGangInOneRequest) {
  Model m = Cluster(1, 4, 100);
  m.workloads.push_back(WL("train").Queue("cq").Pods(3, 8).Obj());
  auto s = Start(m);
  auto r = s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].workload, 0);
  EXPECT_EQ(r[0].nodes, (std::vector<NodeId>{1, 2}));  // n0 is up: 2 more suffice
  EXPECT_TRUE(r[0].whole_gang);
  // The plan changed nothing.
  EXPECT_EQ(s->gpus_total(), 8);
  EXPECT_FALSE(s->node_online(1));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  EXPECT_TRUE(s->RunCycle(1).empty());
}

TEST(ElasticTest, GangTooBigForTheHeadroomGetsNothingGangAwareButHalfPodByPod) {
  Model m = Cluster(0, 4, 100);
  m.workloads.push_back(WL("too-big").Queue("cq").Pods(5, 8).Obj());
  auto s = Start(m);
  EXPECT_TRUE(s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100).empty());
  auto r = s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kPodByPod, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].nodes.size(), 4u);
  EXPECT_FALSE(r[0].whole_gang);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(ElasticTest, QuotaLimitsBothModes) {
  // The queue's 24 GPUs: 8 in use, the gang needs 24 more. Nodes would hold it; quota would not.
  Model m = Cluster(1, 4, 24);
  m.workloads.push_back(WL("running").Queue("cq").Pods(1, 8).Obj());
  m.workloads.push_back(WL("train").Queue("cq").Pods(3, 8).Obj());
  auto s = Start(m);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  ASSERT_EQ(s->status(1).state, WorkloadState::kPending);
  EXPECT_TRUE(s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100).empty());
  EXPECT_TRUE(s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kPodByPod, 100).empty());
  s->Finish(0, 1);  // the quota is free again: 3 nodes for the gang
  auto r = s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].nodes.size(), 2u);  // n0, up and now empty, holds one pod
}

TEST(ElasticTest, EarlierWorkloadsCountAgainstLaterOnes) {
  Model m = Cluster(0, 3, 100);
  m.workloads.push_back(WL("low").Queue("cq").Pods(2, 8).Priority("low").Obj());
  m.workloads.push_back(WL("high").Queue("cq").Pods(2, 8).Priority("high").Obj());
  auto s = Start(m);
  auto r = s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100);
  // Queue order: high first gets 2 nodes; low would need 2 of the 1 left: nothing.
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].workload, 1);
  EXPECT_EQ(r[0].nodes.size(), 2u);
  // Nodes already coming count as there: high is served by them, low gets nothing more than
  // the one node left could give (it needs 2).
  auto again = s->PlanScaleUp(Offline(*s), r[0].nodes, ScaleUpMode::kGangAware, 100);
  EXPECT_TRUE(again.empty());
  // max_workloads bounds the look: only high is looked at.
  EXPECT_EQ(s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 1).size(), 1u);
}

TEST(ElasticTest, CheapestGroupThatServesTheGang) {
  std::vector<Node> nodes;
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(MakeNode("small" + std::to_string(i), 4));
    nodes.back().provisioned = false;
  }
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(MakeNode("big" + std::to_string(i), 8));
    nodes.back().provisioned = false;
  }
  Model m = MakeModel(std::move(nodes), {CQ("cq").Gpus("gpu", 100).Obj()});
  m.workloads.push_back(WL("job").Queue("cq").Pods(2, 4).Obj());
  auto s = Start(m);
  NodeGroupOffer small{{0, 1, 2, 3}, 5};  // 2 nodes x $5
  NodeGroupOffer big{{4, 5}, 8};          // 1 node x $8: cheaper
  auto r = s->PlanScaleUp({small, big}, {}, ScaleUpMode::kGangAware, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].group, 1);
  EXPECT_EQ(r[0].nodes, std::vector<NodeId>{4});
  big.node_price = 20;  // now 2 small nodes ($10) are cheaper
  r = s->PlanScaleUp({small, big}, {}, ScaleUpMode::kGangAware, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].group, 0);
  EXPECT_EQ(r[0].nodes.size(), 2u);
}

TEST(ElasticTest, GangAwareHonoursNodeSelectors) {
  std::vector<Node> nodes;
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(MakeNode("a" + std::to_string(i), 8, {{"zone", "a"}}));
    nodes.back().provisioned = false;
  }
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(MakeNode("b" + std::to_string(i), 8, {{"zone", "b"}}));
    nodes.back().provisioned = false;
  }
  Model m = MakeModel(std::move(nodes), {CQ("cq").Gpus("gpu", 100).Obj()});
  m.workloads.push_back(WL("job").Queue("cq").Pods(2, 8).Selector("zone", "b").Obj());
  auto s = Start(m);
  NodeGroupOffer a{{0, 1}, 1};
  NodeGroupOffer b{{2, 3}, 2};
  auto r = s->PlanScaleUp({a, b}, {}, ScaleUpMode::kGangAware, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].group, 1);
  EXPECT_EQ(r[0].nodes.size(), 2u);
  // Pod by pod: the zone-a nodes hold no pod of it either.
  r = s->PlanScaleUp({a, b}, {}, ScaleUpMode::kPodByPod, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].group, 1);
}

// With backfill (docs/time.md) the gang-aware planner asks for nodes only for a workload the
// engine will start on them: g would fit on a new node, but head's reservation, planned with
// that node up, takes it at 3600 and g (estimated to end later) may not delay it. Without
// backfill g gets the node. tests/scenarios/autoscaling-reservation.yaml is the same in time.
TEST(ElasticTest, GangAwareRespectsReservationsPlannedWithTheNewNodes) {
  for (bool backfill : {true, false}) {
    Model m = Cluster(2, 1, 100);
    m.config.backfill.enable = backfill;
    auto job = [&](const std::string& name, int pods, double estimate) {
      Workload w = WL(name).Queue("cq").Pods(pods, 8).Obj();
      w.runtime_estimate = estimate;
      m.workloads.push_back(std::move(w));
    };
    job("a", 1, 3600);
    job("b", 1, 3600);
    job("head", 3, 600);
    job("g", 1, 4000);
    auto s = Start(m);
    ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
    ASSERT_EQ(s->status(3).state, WorkloadState::kPending);
    auto r = s->PlanScaleUp(Offline(*s), {}, ScaleUpMode::kGangAware, 100);
    if (backfill) {
      EXPECT_TRUE(r.empty()) << "asked " << r.size() << " node(s) for workload " << r[0].workload;
    } else {
      ASSERT_EQ(r.size(), 1u);
      EXPECT_EQ(r[0].workload, 3);
      EXPECT_EQ(r[0].nodes, std::vector<NodeId>{2});
    }
    EXPECT_TRUE(s->Verify().ok()) << s->Verify();
    // The engine agrees: with the node up, g starts on it only without backfill.
    s->SetNodeOnline(2, true);
    s->RunCycle(1);
    EXPECT_EQ(s->status(3).state, backfill ? WorkloadState::kPending : WorkloadState::kAdmitted);
    EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  }
}

// Kubernetes mode's ProvisioningRequests: which workloads the nodes up cannot hold though their
// queue would admit them, in queue order, the earlier ones' quota counted against the later.
TEST(ElasticTest, NeedCapacityIsTheGangsQuotaAdmitsButNodesCannotHold) {
  Model m = Cluster(1, 0, 24);
  m.workloads.push_back(WL("running").Queue("cq").Pods(1, 4).Obj());
  m.workloads.push_back(WL("fits").Queue("cq").Pods(1, 4).Priority("low").Obj());
  m.workloads.push_back(WL("train").Queue("cq").Pods(2, 8).Priority("high").Obj());
  m.workloads.push_back(WL("later").Queue("cq").Pods(1, 8).Priority("low").Obj());
  auto s = Scheduler::Create(m);
  ASSERT_TRUE(s.ok());
  (*s)->Submit(0, 0);
  (*s)->RunCycle(0);
  for (WorkloadId id = 1; id < 4; ++id) (*s)->Submit(id, 1);
  // Before any cycle: "fits" would fit on n0 (4 GPUs free); "train" needs two nodes; "later"
  // (8 GPUs) would find its quota taken by train's 16 and running's and fits' 8.
  EXPECT_EQ((*s)->NeedCapacity(100), std::vector<WorkloadId>{2});
  EXPECT_TRUE((*s)->NeedCapacity(0).empty());
  // Nothing changed: the quota and the node are as they were.
  EXPECT_TRUE((*s)->Verify().ok()) << (*s)->Verify();
  auto d = (*s)->RunCycle(2);
  ASSERT_EQ(d.size(), 1u);  // fits, on n0
  EXPECT_EQ((*s)->status(1).state, WorkloadState::kAdmitted);
  // train's quota charged, later has none left.
  EXPECT_EQ((*s)->NeedCapacity(100), std::vector<WorkloadId>{2});
  (*s)->Finish(2, 3);  // train gone: later's quota is there, n0 has no room for 8 GPUs
  EXPECT_EQ((*s)->NeedCapacity(100), std::vector<WorkloadId>{3});
}

TEST(ElasticTest, NeedCapacityIncludesWhatNoNodeCouldEverHoldButNotWhatQuotaNeverAdmits) {
  Model m = MakeModel({}, {CQ("cq").Gpus("gpu", 16).Obj()});  // scaled to zero
  m.workloads.push_back(WL("train").Queue("cq").Pods(2, 8).Obj());
  m.workloads.push_back(WL("huge").Queue("cq").Pods(3, 8).Obj());
  auto s = Start(m);
  EXPECT_EQ(s->status(0).state, WorkloadState::kRejected);
  EXPECT_EQ(s->status(1).state, WorkloadState::kRejected);
  EXPECT_EQ(s->NeedCapacity(100), std::vector<WorkloadId>{0});
}

// A gang that fits on the nodes up but that a head's reservation keeps off them (it would end
// after the head's planned start) waits as much as one they cannot hold: it gets a request.
// Without backfill it is admitted, and needs none. (Once NeedCapacity ignored the reservations
// and asked nothing for it.)
TEST(ElasticTest, NeedCapacityCountsAGangAReservationKeepsOffTheNodesUp) {
  for (bool backfill : {true, false}) {
    Model m = Cluster(3, 0, 100);
    m.config.backfill.enable = backfill;
    auto job = [&](const std::string& name, int pods, double estimate) {
      Workload w = WL(name).Queue("cq").Pods(pods, 8).Obj();
      w.runtime_estimate = estimate;
      m.workloads.push_back(std::move(w));
    };
    job("a", 1, 3600);
    job("b", 1, 3600);
    job("head", 3, 600);
    job("g", 1, 4000);  // n2 is free, but g would still run when the head's reservation starts
    auto s = Start(m);
    ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
    if (!backfill) {
      EXPECT_EQ(s->status(3).state, WorkloadState::kAdmitted);
      EXPECT_EQ(s->NeedCapacity(100), std::vector<WorkloadId>{2});
      continue;
    }
    ASSERT_EQ(s->status(3).state, WorkloadState::kPending);
    EXPECT_EQ(s->NeedCapacity(100), (std::vector<WorkloadId>{2, 3}));
    EXPECT_TRUE(s->Verify().ok()) << s->Verify();
    // Nothing changed: the engine still keeps g waiting.
    s->RunCycle(1);
    EXPECT_EQ(s->status(3).state, WorkloadState::kPending);
  }
}

// Two queues, each with a head reserved behind the running work: a gang of each queue fits on the
// nodes up but its queue's head (and the other queue's, before it) keeps it off them; the heads
// before the second gang extend those before the first (the plan is extended, not made again).
TEST(ElasticTest, NeedCapacityCountsGangsKeptOffByTheHeadsOfSeveralQueues) {
  std::vector<Node> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(MakeNode("n" + std::to_string(i), 8));
  Model m =
      MakeModel(std::move(nodes), {CQ("a").Gpus("gpu", 100).Obj(), CQ("b").Gpus("gpu", 100).Obj()});
  auto job = [&](const std::string& name, const std::string& cq, int pods, double estimate) {
    Workload w = WL(name).Queue(cq).Pods(pods, 8).Obj();
    w.runtime_estimate = estimate;
    m.workloads.push_back(std::move(w));
  };
  job("a1", "a", 1, 3600);
  job("b1", "b", 1, 3600);
  job("headA", "a", 4, 600);  // all four nodes, at 3600
  job("gA", "a", 1, 4000);    // n2 or n3 is free now, but gA would still run at 3600
  job("headB", "b", 4, 600);  // after headA
  job("gB", "b", 1, 4000);
  auto s = Start(m);
  for (WorkloadId id = 2; id < 6; ++id)
    ASSERT_EQ(s->status(id).state, WorkloadState::kPending) << id;
  EXPECT_EQ(s->NeedCapacity(100), (std::vector<WorkloadId>{2, 3, 4, 5}));
  EXPECT_EQ(s->NeedCapacity(3), (std::vector<WorkloadId>{2, 3, 4}));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  s->RunCycle(1);
  EXPECT_EQ(s->status(3).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(5).state, WorkloadState::kPending);
}

}  // namespace
}  // namespace tessera
