// The Preemptor's cheap bounds (Preemptor::Coverable): a failed admission asks whether its
// candidates could cover what it lacks before any victim is tried, and stops walking them once
// a prefix does. A bound that stopped too early, or kept an answer from an earlier attempt,
// would miss preemptions these tests expect.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

std::vector<Decision> Cycle(Scheduler& s, double now) {
  std::vector<Decision> d = s.RunCycle(now);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
  return d;
}

std::vector<WorkloadId> Preempted(const std::vector<Decision>& d, WorkloadId preemptor) {
  std::vector<WorkloadId> v;
  for (const Decision& x : d)
    if (x.type == Decision::Type::kPreempt && x.preemptor == preemptor) v.push_back(x.workload);
  std::sort(v.begin(), v.end());
  return v;
}

bool Admitted(const std::vector<Decision>& d, WorkloadId id) {
  for (const Decision& x : d)
    if (x.type == Decision::Type::kAdmit && x.workload == id) return true;
  return false;
}

// One node of 8 GPUs and ClusterQueue cq (8 GPUs, preempts lower priority within it).
Model OneNode() {
  return MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
}

TEST(PreemptorBoundTest, APreemptorThatNeedsEveryCandidateTakesThemAll) {
  // Three low-priority workloads of 2, 2 and 4 GPUs fill the node: the 8-GPU preemptor needs
  // the quota and GPUs of all three, so no prefix of the candidates covers it.
  Model m = OneNode();
  m.workloads.push_back(WL("a").Queue("cq").Pods(1, 2).Priority("low").Obj());
  m.workloads.push_back(WL("b").Queue("cq").Pods(1, 2).Priority("low").Obj());
  m.workloads.push_back(WL("c").Queue("cq").Pods(1, 4).Priority("low").Obj());
  m.workloads.push_back(WL("urgent").Queue("cq").Pods(1, 8).Priority("high").Obj());
  auto s = Start(std::move(m));
  for (WorkloadId id = 0; id < 3; ++id) s->Submit(id, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->gpus_allocated(), 8);
  s->Submit(3, 10);
  const std::vector<Decision> d = Cycle(*s, 10);
  EXPECT_EQ(Preempted(d, 3), (std::vector<WorkloadId>{0, 1, 2}));
  EXPECT_TRUE(Admitted(d, 3));
}

TEST(PreemptorBoundTest, NoPreemptionWhileTheCandidatesCannotCoverItThenAllOfThem) {
  // `a` (4 GPUs) is protected for 100 s by its minimum runtime, `b` (4 GPUs) is not: at t=10
  // the only candidate covers half of what the 8-GPU preemptor lacks, so nothing is preempted.
  // At t=100 `a` becomes a candidate too, and the preemptor takes both: a bound kept from the
  // earlier attempt, or one that stopped at `b`, would leave it waiting.
  Model m = OneNode();
  Workload a = WL("a").Queue("cq").Pods(1, 4).Priority("low").Obj();
  a.min_runtime = 100;
  m.workloads.push_back(a);
  m.workloads.push_back(WL("b").Queue("cq").Pods(1, 4).Priority("low").Obj());
  m.workloads.push_back(WL("urgent").Queue("cq").Pods(1, 8).Priority("high").Obj());
  auto s = Start(std::move(m));
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->gpus_allocated(), 8);
  s->Submit(2, 10);
  EXPECT_TRUE(Preempted(Cycle(*s, 10), 2).empty());
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted) << "taking b alone would not help";
  ASSERT_EQ(s->NextTimer(10), 100) << "the end of a's protection is an instant of its own";
  const std::vector<Decision> d = Cycle(*s, 100);
  EXPECT_EQ(Preempted(d, 2), (std::vector<WorkloadId>{0, 1}));
  EXPECT_TRUE(Admitted(d, 2));
}

TEST(PreemptorBoundTest, ReclaimCoversTheQuotaGapFromSeveralBorrowers) {
  // Cohort of cq-a and cq-b, 8 GPUs of nominal quota each, two nodes of 8 GPUs. cq-b borrows
  // all of cq-a's quota with four 4-GPU workloads; cq-a's 8-GPU workload reclaims it. Its
  // quota gap (8) and its GPUs need two victims, and only cq-b's borrowers are candidates.
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)},
                      {CQ("cq-a").Cohort("c").Gpus("gpu", 8).Reclaim(ReclaimPolicy::kAny).Obj(),
                       CQ("cq-b").Cohort("c").Gpus("gpu", 8).Reclaim(ReclaimPolicy::kAny).Obj()});
  for (int i = 0; i < 4; ++i)
    m.workloads.push_back(WL("b" + std::to_string(i)).Queue("cq-b").Pods(1, 4).Obj());
  m.workloads.push_back(WL("a").Queue("cq-a").Pods(1, 8).Obj());
  auto s = Start(std::move(m));
  for (WorkloadId id = 0; id < 4; ++id) s->Submit(id, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->gpus_allocated(), 16);
  s->Submit(4, 10);
  const std::vector<Decision> d = Cycle(*s, 10);
  EXPECT_EQ(Preempted(d, 4).size(), 2u);
  EXPECT_TRUE(Admitted(d, 4));
  EXPECT_EQ(s->gpus_allocated(), 16);
}

// Two ClusterQueues of 8 GPUs of nominal quota in one cohort, two nodes of 8 GPUs; cq-a
// preempts lower priority within it and reclaims from cq-b.
Model TwoQueues() {
  return MakeModel({MakeNode("n1", 8), MakeNode("n2", 8)},
                   {CQ("cq-a")
                        .Cohort("c")
                        .Gpus("gpu", 8)
                        .WithinQueue(WithinClusterQueuePolicy::kLowerPriority)
                        .Reclaim(ReclaimPolicy::kAny)
                        .Obj(),
                    CQ("cq-b").Cohort("c").Gpus("gpu", 8).Reclaim(ReclaimPolicy::kAny).Obj()});
}

TEST(PreemptorBoundTest, WithinNominalItsOwnQueuesCandidatesBringItDown) {
  // cq-b borrows 4 GPUs (three 4-GPU workloads), cq-a runs a low-priority 4-GPU workload. Its
  // 8-GPU preemptor would take cq-a past its nominal quota, so only Kueue's attempt within
  // nominal quota may take cq-b's borrower, and that attempt must also take cq-a's own
  // low-priority workload (other queues' evictions do not lower cq-a's usage). A bound per
  // attempt that counted no own candidate towards the nominal quota, or other queues'
  // candidates towards it, would leave it pending.
  Model m = TwoQueues();
  for (int i = 0; i < 3; ++i)
    m.workloads.push_back(WL("b" + std::to_string(i)).Queue("cq-b").Pods(1, 4).Obj());
  m.workloads.push_back(WL("a-low").Queue("cq-a").Pods(1, 4).Priority("low").Obj());
  m.workloads.push_back(WL("a-high").Queue("cq-a").Pods(2, 4).Priority("high").Obj());
  auto s = Start(std::move(m));
  for (WorkloadId id = 0; id < 4; ++id) s->Submit(id, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->gpus_allocated(), 16);
  s->Submit(4, 10);
  const std::vector<Decision> d = Cycle(*s, 10);
  const std::vector<WorkloadId> victims = Preempted(d, 4);
  ASSERT_EQ(victims.size(), 2u);
  EXPECT_EQ(victims.back(), 3) << "its own low-priority workload";
  EXPECT_TRUE(Admitted(d, 4));
}

}  // namespace
}  // namespace tessera
