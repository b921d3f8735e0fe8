#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>

#include "engine/test_scheduler.h"
#include "fmt/format.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

std::vector<Decision> SubmitAll(Scheduler& s, double now = 0) {
  for (WorkloadId id = 0; id < s.num_workloads(); ++id)
    if (s.status(id).state == WorkloadState::kInactive) s.Submit(id, now);
  auto d = s.RunCycle(now);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
  return d;
}

WorkloadState State(const Scheduler& s, WorkloadId id) { return s.status(id).state; }

TEST(SchedulerTest, GangIsAllOrNothing) {
  // 8 one-GPU pods, only 6 GPUs free: none placed; once 2 free up, all 8 start.
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 100).Obj()});
  m.workloads.push_back(WL("blocker").Queue("cq").Pods(1, 2).Obj());
  m.workloads.push_back(WL("gang").Queue("cq").Pods(8, 1).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
  EXPECT_TRUE(s->status(1).pods.empty());
  // Each pod fits on a node (6 GPUs free, 1 per pod): the count is the news, not the largest
  // free, which would read "6 of 1 per pod".
  EXPECT_NE(s->status(1).reason.find("6 of 8 pods of main fit"), std::string::npos)
      << s->status(1).reason;
  EXPECT_EQ(s->status(1).reason.find("largest free"), std::string::npos) << s->status(1).reason;
  s->Finish(0, 10);
  auto d = s->RunCycle(10);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].pods.size(), 8u);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
}

TEST(SchedulerTest, NominalQuotaLimitsAndReasonHasNumbers) {
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)}, {CQ("team-a").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("a").Queue("team-a").Pods(1, 6).Obj());
  m.workloads.push_back(WL("b").Queue("team-a").Pods(1, 4).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
  // The quota shortfall, then why no start time can be given (`a` has no runtime estimate).
  EXPECT_EQ(s->status(1).reason,
            "needs 4 nvidia.com/gpu in flavor gpu; ClusterQueue team-a uses 6 of nominal 8; no "
            "expected start: 1 running workload(s) have no runtime estimate "
            "(tessera.dev/runtime-estimate, activeDeadlineSeconds, or finished runs of its "
            "LocalQueue to learn from)");
  EXPECT_EQ(s->status(1).expected_start, -1);
}

TEST(SchedulerTest, BorrowsFromCohortUpToBorrowingLimit) {
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8), MakeNode("n3", 8)},
                      {CQ("a").Cohort("org").Gpus("gpu", 8, /*borrow=*/4).Obj(),
                       CQ("b").Cohort("org").Gpus("gpu", 16).Obj()});
  m.workloads.push_back(WL("a1").Queue("a").Pods(1, 8).Obj());
  m.workloads.push_back(WL("a2").Queue("a").Pods(1, 4).Obj());  // borrows 4: ok
  m.workloads.push_back(WL("a3").Queue("a").Pods(1, 1).Obj());  // would exceed the limit
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 2), WorkloadState::kPending);
  EXPECT_NE(s->status(2).reason.find("borrowing limit 4"), std::string::npos)
      << s->status(2).reason;
}

TEST(SchedulerTest, LendingLimitKeepsQuotaBack) {
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)},
                      {CQ("a").Cohort("org").Gpus("gpu", 8).Obj(),
                       CQ("b").Cohort("org").Gpus("gpu", 8, -1, /*lend=*/2).Obj()});
  m.workloads.push_back(WL("a1").Queue("a").Pods(1, 8).Obj());
  m.workloads.push_back(WL("a2").Queue("a").Pods(1, 3).Obj());  // b lends only 2
  m.workloads.push_back(WL("a3").Queue("a").Pods(1, 2).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
  EXPECT_EQ(State(*s, 2), WorkloadState::kAdmitted);
}

TEST(SchedulerTest, StrictFifoBlocksBestEffortLetsOthersAhead) {
  for (bool strict : {true, false}) {
    CQ cq("q");
    cq.Gpus("gpu", 8);
    if (strict) cq.Strict();
    Model m = MakeModel({MakeNode("n1", 8)}, {cq.Obj()});
    m.workloads.push_back(WL("running").Queue("q").Pods(1, 4).Arrive(0).Obj());
    m.workloads.push_back(WL("big").Queue("q").Pods(1, 8).Obj());
    m.workloads.push_back(WL("small").Queue("q").Pods(1, 2).Obj());
    auto s = Start(m);
    s->Submit(0, 0);
    s->RunCycle(0);
    s->Submit(1, 1);
    s->Submit(2, 2);
    s->RunCycle(2);
    EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
    EXPECT_EQ(State(*s, 2), strict ? WorkloadState::kPending : WorkloadState::kAdmitted)
        << (strict ? "StrictFIFO" : "BestEffortFIFO");
  }
}

TEST(SchedulerTest, HigherPriorityGoesFirstThenCreationTime) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("q").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("old-low").Queue("q").Pods(1, 8).Priority("low").Obj());
  m.workloads.push_back(WL("new-high").Queue("q").Pods(1, 8).Priority("high").Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  s->Submit(1, 5);
  s->RunCycle(5);
  EXPECT_EQ(State(*s, 0), WorkloadState::kPending);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
}

TEST(SchedulerTest, PreemptsFewestLowestPriorityWithinQueue) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("q").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.workloads.push_back(WL("low-a").Queue("q").Pods(1, 2).Priority("low").Obj());
  m.workloads.push_back(WL("low-b").Queue("q").Pods(1, 2).Priority("low").Obj());
  m.workloads.push_back(WL("low-c").Queue("q").Pods(1, 4).Priority("low").Obj());
  m.workloads.push_back(WL("high").Queue("q").Pods(1, 4).Priority("high").Obj());
  auto s = Start(m);
  for (int i = 0; i < 3; ++i) s->Submit(i, i);
  s->RunCycle(2);
  s->Submit(3, 10);
  auto d = s->RunCycle(10);
  ASSERT_TRUE(s->Verify().ok()) << s->Verify();
  EXPECT_EQ(State(*s, 3), WorkloadState::kAdmitted);
  // One victim suffices: low-c (4 GPUs), not the two 2-GPU ones.
  int preempted = 0;
  for (const auto& x : d)
    if (x.type == Decision::Type::kPreempt) {
      ++preempted;
      EXPECT_EQ(x.workload, 2);
      EXPECT_EQ(x.preemptor, 3);
    }
  EXPECT_EQ(preempted, 1);
  EXPECT_EQ(State(*s, 2), WorkloadState::kPending);
  EXPECT_EQ(s->status(2).preemptions, 1);
}

TEST(SchedulerTest, NeverPreemptsWithPolicyNeverOrPreemptionPolicyNever) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("q").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.workloads.push_back(WL("low").Queue("q").Pods(1, 8).Priority("low").Obj());
  m.workloads.push_back(WL("polite").Queue("q").Pods(1, 8).Priority("high-never").Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  s->RunCycle(0);
  s->Submit(1, 1);
  auto d = s->RunCycle(1);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
}

TEST(SchedulerTest, ReclaimsLentQuotaFromBorrowingQueue) {
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)},
                      {CQ("a").Cohort("org").Gpus("gpu", 8).Reclaim(ReclaimPolicy::kAny).Obj(),
                       CQ("b").Cohort("org").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("b-big").Queue("b").Pods(2, 8).Priority("high").Obj());
  m.workloads.push_back(WL("a-job").Queue("a").Pods(1, 8).Priority("low").Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  s->RunCycle(0);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);  // borrowed a's 8
  s->Submit(1, 5);
  auto d = s->RunCycle(5);
  ASSERT_TRUE(s->Verify().ok());
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 0), WorkloadState::kPending);
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_NE(d[0].reason.find("reclaims quota lent to b"), std::string::npos) << d[0].reason;
}

TEST(SchedulerTest, NoReclaimWhenPolicyIsNever) {
  Model m = MakeModel(
      {MakeNode("n1", 8), MakeNode("n2", 8)},
      {CQ("a").Cohort("org").Gpus("gpu", 8).Obj(), CQ("b").Cohort("org").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("b-big").Queue("b").Pods(2, 8).Obj());
  m.workloads.push_back(WL("a-job").Queue("a").Pods(1, 8).Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  s->RunCycle(0);
  s->Submit(1, 5);
  s->RunCycle(5);
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
  EXPECT_NE(s->status(1).reason.find("cohort org can lend 0 more"), std::string::npos)
      << s->status(1).reason;
}

TEST(SchedulerTest, RejectsWhatCanNeverFit) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("q").Gpus("gpu", 64).Obj()});
  m.workloads.push_back(WL("too-wide").Queue("q").Pods(1, 16).Obj());
  m.workloads.push_back(WL("over-quota").Queue("q").Pods(9, 8).Obj());
  auto s = Start(m);
  auto d = SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kRejected);
  EXPECT_EQ(State(*s, 1), WorkloadState::kRejected);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kReject);
  EXPECT_NE(s->status(1).reason.find("can get at most 64"), std::string::npos)
      << s->status(1).reason;
}

TEST(SchedulerTest, MissingReferencesStayPendingWithReason) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("q").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("no-lq").Queue("nope").Pods(1, 1).Obj());
  m.workloads.push_back(WL("no-pc").Queue("q").Pods(1, 1).Priority("missing").Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kPending);
  EXPECT_EQ(s->status(0).reason, "LocalQueue default/nope not found");
  EXPECT_EQ(s->status(1).reason, "PriorityClass \"missing\" not found");
}

TEST(SchedulerTest, NamespaceSelectorAbsentMatchesNothing) {
  auto cq = CQ("q").Gpus("gpu", 8).Obj();
  cq.namespace_selector.present = false;
  Model m = MakeModel({MakeNode("n1", 8)}, {cq});
  m.workloads.push_back(WL("w").Queue("q").Pods(1, 1).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kPending);
  EXPECT_NE(s->status(0).reason.find("namespaceSelector"), std::string::npos);
}

TEST(SchedulerTest, GpuIndicesAreNeverDoubleBooked) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("q").Gpus("gpu", 8).Obj()});
  for (int i = 0; i < 4; ++i)
    m.workloads.push_back(WL(fmt::format("w{}", i)).Queue("q").Pods(1, 2).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  std::set<int> gpus;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(s->status(i).pods.size(), 1u);
    for (int g : s->status(i).pods[0].gpus) EXPECT_TRUE(gpus.insert(g).second) << g;
  }
  EXPECT_EQ(gpus.size(), 8u);
}

TEST(SchedulerTest, BinpackFillsANodeSpreadUsesBoth) {
  for (auto policy : {PlacementPolicy::kBinpack, PlacementPolicy::kSpread}) {
    Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)}, {CQ("q").Gpus("gpu", 16).Obj()});
    m.config.placement = policy;
    m.workloads.push_back(WL("a").Queue("q").Pods(1, 2).Obj());
    m.workloads.push_back(WL("b").Queue("q").Pods(1, 2).Obj());
    auto s = Start(m);
    SubmitAll(*s);
    bool same = s->status(0).pods[0].node == s->status(1).pods[0].node;
    EXPECT_EQ(same, policy == PlacementPolicy::kBinpack);
  }
}

TEST(SchedulerTest, BinpackKeepsWholeNodesFreeForBigGangs) {
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)}, {CQ("q").Gpus("gpu", 16).Obj()});
  m.workloads.push_back(WL("small1").Queue("q").Pods(1, 3).Obj());
  m.workloads.push_back(WL("small2").Queue("q").Pods(1, 3).Obj());
  m.workloads.push_back(WL("whole-node").Queue("q").Pods(1, 8).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 2), WorkloadState::kAdmitted);
}

TEST(SchedulerTest, NodeSelectorAndFlavorLabelsRestrictNodes) {
  Model m = MakeModel(
      {MakeNode("a100-0", 8, {{"gpu", "a100"}}), MakeNode("h100-0", 8, {{"gpu", "h100"}})},
      {CQ("q").Gpus("h100", 8).Gpus("a100", 8).Obj()}, {"a100", "h100"});
  m.flavors[0].node_labels = {{"gpu", "a100"}};
  m.flavors[1].node_labels = {{"gpu", "h100"}};
  m.workloads.push_back(WL("first").Queue("q").Pods(1, 8).Obj());
  m.workloads.push_back(WL("second").Queue("q").Pods(1, 8).Obj());
  m.workloads.push_back(WL("third").Queue("q").Pods(1, 1).Selector("gpu", "a100").Obj());
  auto s = Start(m);
  SubmitAll(*s);
  const Model& mm = s->model();
  EXPECT_EQ(mm.nodes[s->status(0).pods[0].node].name, "h100-0");  // flavors tried in order
  EXPECT_EQ(mm.nodes[s->status(1).pods[0].node].name, "a100-0");  // next flavor
  EXPECT_EQ(State(*s, 2), WorkloadState::kPending);
}

TEST(SchedulerTest, PodsBeyondMinCountArePlacedLater) {
  Model m = MakeModel({MakeNode("n1", 4), MakeNode("n2", 4)}, {CQ("q").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("blocker").Queue("q").Pods(1, 4).Obj());
  m.workloads.push_back(WL("elastic").Queue("q").Pods(6, 1).Min(2).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(1).pods.size(), 4u);
  s->Finish(0, 1);
  auto d = s->RunCycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kScaleUp);
  EXPECT_EQ(d[0].pods.size(), 2u);
  EXPECT_EQ(s->status(1).pods.size(), 6u);
  EXPECT_TRUE(s->Verify().ok());
}

// spec.actions: without `preempt` a higher-priority head waits; without `scale-up` pods beyond
// minCount stay unplaced; each action that runs is counted in stats().
TEST(SchedulerTest, ActionsChosenByConfigAreTheOnlyOnesThatRun) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("q").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.workloads.push_back(WL("low").Queue("q").Pods(1, 8).Priority("low").Obj());
  m.workloads.push_back(WL("high").Queue("q").Pods(1, 8).Priority("high").Obj());
  m.config.actions = {"admit", "scale-up"};
  auto s = Start(m);
  s->Submit(0, 0);
  s->RunCycle(0);
  s->Submit(1, 1);
  auto d = s->RunCycle(1);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);
  ASSERT_EQ(s->stats().actions.size(), 2u);
  EXPECT_EQ(s->stats().actions[0].name, "admit");
  EXPECT_EQ(s->stats().actions[0].runs, 2);
  EXPECT_EQ(s->stats().actions[0].seconds, 0);  // timed only with time_actions
  EXPECT_EQ(s->stats().actions[1].name, "scale-up");

  Model e = MakeModel({MakeNode("n1", 4), MakeNode("n2", 4)}, {CQ("q").Gpus("gpu", 8).Obj()});
  e.workloads.push_back(WL("blocker").Queue("q").Pods(1, 4).Obj());
  e.workloads.push_back(WL("elastic").Queue("q").Pods(6, 1).Min(2).Obj());
  e.config.actions = {"admit", "preempt"};
  auto t = Start(e);
  SubmitAll(*t);
  t->Finish(0, 1);
  EXPECT_TRUE(t->RunCycle(1).empty());
  EXPECT_EQ(t->status(1).pods.size(), 4u);

  Model bad = MakeModel({MakeNode("n1", 8)}, {CQ("q").Gpus("gpu", 8).Obj()});
  bad.config.actions = {"admit", "allocate"};
  auto made = Scheduler::Create(std::move(bad));
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("unknown action \"allocate\""), std::string::npos);
}

// A cluster without any GPU: pods asking only CPU are placed (the per-node GPU arrays are empty;
// taking the address of their first element was undefined behaviour, caught by UBSan).
TEST(SchedulerTest, CpuOnlyClusterPlacesCpuPods) {
  Model m = MakeModel({MakeNode("n1", 0), MakeNode("n2", 0)}, {CQ("q").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("cpu").Queue("q").Pods(3, 0).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(0).pods.size(), 3u);
  s->Finish(0, 1);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerTest, FairSharingAdmitsTheQueueWithTheLowerShareFirst) {
  // 16 GPUs; a borrows 4 already, b sits at nominal. 4 GPUs left, wanted by a1 (older) and b1.
  // Priority+FIFO picks a1; fair sharing picks b1, whose queue would borrow less.
  for (bool fair : {false, true}) {
    Model m = MakeModel(
        {MakeNode("n1", 8), MakeNode("n2", 8)},
        {CQ("a").Cohort("org").Gpus("gpu", 4).Obj(), CQ("b").Cohort("org").Gpus("gpu", 4).Obj(),
         CQ("idle").Cohort("org").Gpus("gpu", 8).Obj()});
    m.config.fair_sharing = fair;
    m.workloads.push_back(WL("a0").Queue("a").Pods(1, 8).Obj());
    m.workloads.push_back(WL("b0").Queue("b").Pods(1, 4).Obj());
    m.workloads.push_back(WL("a1").Queue("a").Pods(1, 4).Obj());
    m.workloads.push_back(WL("b1").Queue("b").Pods(1, 4).Obj());
    auto s = Start(m);
    s->Submit(0, 0);
    s->Submit(1, 0);
    s->RunCycle(0);
    s->Submit(2, 1);
    s->Submit(3, 2);
    s->RunCycle(2);
    EXPECT_EQ(State(*s, 2), fair ? WorkloadState::kPending : WorkloadState::kAdmitted);
    EXPECT_EQ(State(*s, 3), fair ? WorkloadState::kAdmitted : WorkloadState::kPending);
  }
}

TEST(SchedulerTest, APreemptionHeldBackInItsInstantIsRetriedAtNextRetry) {
  // 16 GPUs lent by `lender` to a (weight 2) and b (weight 1), 16 one-GPU workloads each, all at
  // 0: the first cycle admits 8 of each, and a's preemptions of b's are held back (b's were
  // admitted at 0). NextRetry says when a cycle may take them; that cycle does.
  Model m = MakeModel(
      {MakeNode("n1", 8), MakeNode("n2", 8)},
      {CQ("a").Cohort("org").Gpus("gpu", 0).Weight(2).Reclaim(ReclaimPolicy::kAny).Obj(),
       CQ("b").Cohort("org").Gpus("gpu", 0).Reclaim(ReclaimPolicy::kAny).Obj(),
       CQ("lender").Cohort("org").Gpus("gpu", 16).Obj()});
  m.config.fair_sharing = true;
  for (int i = 0; i < 16; ++i) {
    m.workloads.push_back(WL(fmt::format("a{}", i)).Queue("a").Pods(1, 1).Obj());
    m.workloads.push_back(WL(fmt::format("b{}", i)).Queue("b").Pods(1, 1).Obj());
  }
  auto s = Start(m);
  auto running = [&](const std::string& cq) {
    int n = 0;
    for (WorkloadId id = 0; id < s->num_workloads(); ++id)
      n += State(*s, id) == WorkloadState::kAdmitted && s->model().workloads[id].queue_name == cq;
    return n;
  };
  SubmitAll(*s);
  while (!s->RunCycle(0).empty()) {
  }
  EXPECT_EQ(running("a"), 8);
  EXPECT_EQ(running("b"), 8);
  ASSERT_EQ(s->NextRetry(0), kHeldBackRetrySeconds);
  EXPECT_EQ(s->NextTimer(0), std::numeric_limits<double>::infinity());  // not a timer of its own
  const double t = s->NextRetry(0);
  int preempted = 0;
  for (auto d = s->RunCycle(t); !d.empty(); d = s->RunCycle(t))
    for (const Decision& x : d) preempted += x.type == Decision::Type::kPreempt;
  EXPECT_GT(preempted, 0);
  EXPECT_GT(running("a"), running("b"));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(SchedulerRestoreTest, RestoredPodsHoldCapacityGpusAndQuota) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("running").Queue("cq").Pods(2, 2).Obj());
  m.workloads.push_back(WL("next").Queue("cq").Pods(1, 6).Obj());
  auto s = Start(m);
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {6, 7}}, {0, 1, 0, {}}}, 0).ok());
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(0).pods[0].gpus, (std::vector<int32_t>{6, 7}));
  EXPECT_EQ(s->status(0).pods[1].gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s->gpus_allocated(), 4);
  auto d = SubmitAll(*s);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(State(*s, 1), WorkloadState::kPending);  // 4 of 8 GPUs of quota used
  s->Finish(0, 5);
  d = s->RunCycle(5);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerRestoreTest, RefusesWhatDoesNotFitAndChangesNothing) {
  Model m = MakeModel({MakeNode("n1", 4)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(WL("a").Queue("cq").Pods(1, 2).Obj());
  m.workloads.push_back(WL("b").Queue("cq").Pods(2, 2).Obj());
  auto s = Start(m);
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {0, 1}}}, 0).ok());
  // GPU 1 is taken.
  EXPECT_EQ(s->Restore(1, {{0, 0, 0, {1, 2}}}, 0).code(), absl::StatusCode::kFailedPrecondition);
  // Two pods of 2 GPUs on a node with 2 free.
  EXPECT_EQ(s->Restore(1, {{0, 0, 0, {}}, {0, 1, 0, {}}}, 0).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Restore(1, {{3, 0, 0, {}}}, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Restore(0, {{0, 0, 0, {}}}, 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(State(*s, 1), WorkloadState::kInactive);
  EXPECT_EQ(s->gpus_allocated(), 2);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  // A partial restore: the remaining pod is placed by the next cycle.
  ASSERT_TRUE(s->Restore(1, {{0, 0, 0, {2, 3}}}, 0).ok());
  s->Finish(0, 1);
  auto d = s->RunCycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kScaleUp);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

Resources Share(int64_t milli) {
  Resources r = testing::Req(0);
  r[kGpuMilli] = milli;
  return r;
}

TEST(SchedulerShareTest, SharesPackOntoOneDeviceAndNeverExceed1000) {
  Model m = MakeModel({MakeNode("n1", 2)}, {});
  for (int i = 0; i < 5; ++i) {
    Workload w = WL(fmt::format("s{}", i)).Pods(1, 0).Obj();
    w.pod_sets[0].requests = Share(300);
    m.workloads.push_back(w);
  }
  Workload whole = WL("whole").Pods(1, 1).Obj();
  m.workloads.push_back(whole);
  auto s = Start(m);
  SubmitAll(*s);
  // Three shares of 300 fill device 0 to 900; the fourth starts device 1; the whole-GPU pod
  // then has no free device; the fifth share joins device 1.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(State(*s, i), WorkloadState::kAdmitted) << i;
  EXPECT_EQ(s->status(0).pods[0].gpus, (std::vector<int32_t>{0}));
  EXPECT_EQ(s->status(2).pods[0].gpus, (std::vector<int32_t>{0}));
  EXPECT_EQ(s->status(3).pods[0].gpus, (std::vector<int32_t>{1}));
  EXPECT_EQ(s->status(4).pods[0].gpus, (std::vector<int32_t>{1}));
  EXPECT_EQ(State(*s, 5), WorkloadState::kPending);
  for (int i = 0; i < 3; ++i) s->Finish(i, 1);
  s->RunCycle(1);
  EXPECT_EQ(State(*s, 5), WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(5).pods[0].gpus, (std::vector<int32_t>{0}));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerShareTest, QuotaCountsSharesExactlyAndBadSharesAreRejected) {
  ClusterQueue cq = CQ("cq").Gpus("gpu", 8).Obj();
  cq.resource_groups[0].covered.push_back(kGpuMilli);
  cq.resource_groups[0].flavors[0].resources.push_back({kGpuMilli, 1000, {}, {}});
  Model m = MakeModel({MakeNode("n1", 8)}, {cq});
  for (int64_t milli : {400, 400, 400, 1500, 2000}) {
    Workload w = WL(fmt::format("s{}", m.workloads.size())).Queue("cq").Pods(1, 0).Obj();
    w.pod_sets[0].requests = Share(milli);
    m.workloads.push_back(w);
  }
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 1), WorkloadState::kAdmitted);
  EXPECT_EQ(State(*s, 2), WorkloadState::kPending);  // 1200 > 1000 milli of quota
  EXPECT_NE(s->status(2).reason.find("tessera.dev/gpu-milli"), std::string::npos)
      << s->status(2).reason;
  EXPECT_EQ(State(*s, 3), WorkloadState::kRejected);  // 1.5 GPUs: not a share, not whole
  EXPECT_EQ(State(*s, 4), WorkloadState::kAdmitted);  // 2000 milli = 2 whole GPUs
  EXPECT_EQ(s->status(4).pods[0].gpus.size(), 2u);
}

Resources MemoryShare(int64_t mib) {
  Resources r = testing::Req(0);
  r[kGpuMemory] = mib;
  return r;
}

TEST(SchedulerShareTest, SharesByMemoryTakeMilliOfTheDeviceTheyLandOn) {
  // n40: one 40 GiB GPU; n80: one 80 GiB GPU; unknown: one GPU of unknown memory.
  Node n40 = MakeNode("n40", 1), n80 = MakeNode("n80", 1), unknown = MakeNode("unknown", 1);
  n40.gpu_memory_mib = 40960;
  n80.gpu_memory_mib = 81920;
  ClusterQueue cq = CQ("cq").Gpus("gpu", 8).Obj();
  cq.resource_groups[0].covered.push_back(kGpuMemory);
  cq.resource_groups[0].flavors[0].resources.push_back({kGpuMemory, 90000, {}, {}});
  Model m = MakeModel({unknown, n40, n80}, {cq});
  // 30000 MiB: 733 milli on n40, 367 on n80. Three of them: n40 holds one, n80 two.
  for (int i = 0; i < 3; ++i) {
    Workload w = WL(fmt::format("m{}", i)).Queue("cq").Pods(1, 0).Obj();
    w.pod_sets[0].requests = MemoryShare(30000);
    m.workloads.push_back(w);
  }
  // A fourth exceeds the quota of 90000 MiB (and fits nowhere: n40 has 267 milli left, n80 266,
  // and the unknown node cannot say how much memory its GPU has).
  Workload fourth = WL("m3").Queue("cq").Pods(1, 0).Obj();
  fourth.pod_sets[0].requests = MemoryShare(30000);
  m.workloads.push_back(fourth);
  // A milli share of 250 still fits next to them (n40 or n80), and a whole GPU only on unknown.
  Workload milli = WL("milli").Queue("cq").Pods(1, 0).Obj();
  milli.pod_sets[0].requests = Share(250);
  m.workloads.push_back(milli);
  m.workloads.push_back(WL("whole").Queue("cq").Pods(1, 1).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  std::map<std::string, int> on_node;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(State(*s, i), WorkloadState::kAdmitted) << i;
    ++on_node[s->model().nodes[s->status(i).pods[0].node].name];
  }
  EXPECT_EQ(on_node["n40"], 1);
  EXPECT_EQ(on_node["n80"], 2);
  EXPECT_EQ(State(*s, 3), WorkloadState::kPending);
  EXPECT_NE(s->status(3).reason.find("uses 90000Mi of nominal 90000Mi"), std::string::npos)
      << s->status(3).reason;
  EXPECT_EQ(State(*s, 4), WorkloadState::kAdmitted);
  EXPECT_NE(s->model().nodes[s->status(4).pods[0].node].name, "unknown");
  EXPECT_EQ(State(*s, 5), WorkloadState::kAdmitted);
  EXPECT_EQ(s->model().nodes[s->status(5).pods[0].node].name, "unknown");
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  // Quota counted MiB exactly (3 x 30000); they go, and the fourth comes.
  for (int i = 0; i < 3; ++i) s->Finish(i, 1);
  s->RunCycle(1);
  EXPECT_EQ(State(*s, 3), WorkloadState::kAdmitted);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerShareTest, ShareByMemoryAndMilliAtOnceIsRejected) {
  Model m = MakeModel({MakeNode("n1", 1)}, {});
  Workload w = WL("both").Pods(1, 0).Obj();
  w.pod_sets[0].requests = MemoryShare(1000);
  w.pod_sets[0].requests[kGpuMilli] = 100;
  m.workloads.push_back(w);
  m.nodes[0].gpu_memory_mib = 40960;
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(State(*s, 0), WorkloadState::kRejected);
  EXPECT_NE(s->status(0).reason.find("by milli and by memory"), std::string::npos)
      << s->status(0).reason;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

Node TwoDomainNode(std::string name) {
  Node n = MakeNode(std::move(name), 8);
  for (int i = 0; i < 8; ++i)
    n.gpus.push_back({static_cast<int16_t>(i / 4), static_cast<int16_t>(i / 4), -1});
  return n;
}

TEST(SchedulerNvlinkTest, GpusOfAPodStayInOneNvlinkDomainWithBestFit) {
  // One node with NVLink domains {0-3} and {4-7}.
  Model m = MakeModel({TwoDomainNode("n1")}, {});
  m.workloads.push_back(WL("two").Pods(1, 2).Obj());
  m.workloads.push_back(WL("four").Pods(1, 4).Obj());
  m.workloads.push_back(WL("two-more").Pods(1, 2).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  // "two" takes 0,1; "four" cannot fit in domain 0 (2 left) so it takes all of domain 1;
  // "two-more" fills domain 0, rather than splitting.
  EXPECT_EQ(s->status(0).pods[0].gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s->status(1).pods[0].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(s->status(2).pods[0].gpus, (std::vector<int32_t>{2, 3}));
}

TEST(SchedulerNvlinkTest, NodesThatKeepAPodInsideOneDomainAreChosenFirst) {
  // n1 keeps GPUs 2-5 free (two in each domain), n2 keeps 4-7 (one domain). Equally full, so
  // binpack alone would take n1 (the lower node); NVLink makes a 4-GPU pod go to n2.
  Model m = MakeModel({TwoDomainNode("n1"), TwoDomainNode("n2")}, {});
  m.workloads.push_back(WL("x").Pods(2, 2).Obj());
  m.workloads.push_back(WL("y").Pods(1, 4).Obj());
  m.workloads.push_back(WL("z").Pods(1, 4).Obj());
  auto s = Start(m);
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {0, 1}}, {0, 1, 0, {6, 7}}}, 0).ok());
  ASSERT_TRUE(s->Restore(1, {{0, 0, 1, {0, 1, 2, 3}}}, 0).ok());
  s->Submit(2, 0);
  s->RunCycle(0);
  ASSERT_EQ(State(*s, 2), WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).pods[0].node, 1);
  EXPECT_EQ(s->status(2).pods[0].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerTimeSlicingTest, ReplicasGoToTheLeastLoadedGpu) {
  // 2 physical GPUs time-sliced into 3 replicas each: slots 0, 2, 4 are GPU 0; 1, 3, 5 GPU 1.
  Node n = MakeNode("ts", 6);
  n.gpu_replicas = 3;
  Model m = MakeModel({n}, {});
  for (const char* name : {"a", "b", "c", "d", "e", "f"})
    m.workloads.push_back(WL(name).Pods(1, 1).Obj());
  auto s = Start(m);
  for (WorkloadId id : {0, 1, 2, 3, 4}) s->Submit(id, 0);
  s->RunCycle(0);
  for (WorkloadId id : {0, 1, 2, 3, 4})  // alternating GPUs
    EXPECT_EQ(s->status(id).pods[0].gpus, (std::vector<int32_t>{id}));
  // Free slots 0 (GPU 0) and 3 (GPU 1): GPU 0 still runs 2 replicas, GPU 1 only 1.
  s->Finish(0, 1);
  s->Finish(3, 1);
  s->Submit(5, 1);
  s->RunCycle(1);
  // GPU 1, the least loaded (slot 3), not the lowest free slot (0, on GPU 0).
  EXPECT_EQ(s->status(5).pods[0].gpus, (std::vector<int32_t>{3}));
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(SchedulerTimeSlicingTest, APodOfSeveralReplicasGetsDistinctGpusFirst) {
  Node n = MakeNode("ts", 8);
  n.gpu_replicas = 4;  // 2 GPUs
  Model m = MakeModel({n}, {});
  m.workloads.push_back(WL("one").Pods(1, 1).Obj());
  m.workloads.push_back(WL("three").Pods(1, 3).Obj());
  auto s = Start(m);
  SubmitAll(*s);
  EXPECT_EQ(s->status(0).pods[0].gpus, (std::vector<int32_t>{0}));
  // GPU 1 (idle), then GPU 0, then GPU 1 again: slots 1, 2, 3.
  EXPECT_EQ(s->status(1).pods[0].gpus, (std::vector<int32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace tessera
