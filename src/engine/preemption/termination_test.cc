// Grace periods of preempted workloads (preemption/termination.h, docs/time.md): the victim
// keeps its GPUs until its grace period ends and its preemptor waits for it, holding its quota
// and the room it will take; a victim gone early (Kubernetes) frees them at once; without a
// grace period nothing waits; a workload waiting for what is being released counts as taking it
// until it goes away. And the
// admission fair sharing usage an engine is seeded with (a restart of serve), decayed.
#include <gtest/gtest.h>

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

// One node of 8 GPUs, ClusterQueue cq (8 GPUs, preempts lower priority within it): `victim`
// (8 GPUs, low, grace `grace`), `urgent` (8 GPUs, high), `small` (1 GPU, high).
Model Scene(double grace) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  Workload victim = WL("victim").Queue("cq").Pods(1, 8).Priority("low").Obj();
  victim.pod_sets[0].termination_grace = grace;
  m.workloads.push_back(victim);
  m.workloads.push_back(WL("urgent").Queue("cq").Pods(1, 8).Priority("high").Obj());
  m.workloads.push_back(WL("small").Queue("cq").Pods(1, 1).Priority("high").Obj());
  return m;
}

std::vector<Decision> Cycle(Scheduler& s, double now) {
  std::vector<Decision> d = s.RunCycle(now);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
  return d;
}

TEST(GracePeriodTest, TheVictimHoldsItsGpusUntilItsGracePeriodEndsAndThePreemptorWaits) {
  auto s = Start(Scene(60));
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 100);
  std::vector<Decision> d = Cycle(*s, 100);
  ASSERT_EQ(d.size(), 1u) << "the preemption only: urgent is not admitted yet";
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].workload, 0);
  EXPECT_EQ(d[0].preemptor, 1);
  EXPECT_EQ(d[0].grace_seconds, 60);
  EXPECT_EQ(s->status(0).state, WorkloadState::kTerminating);
  EXPECT_EQ(s->gpus_allocated(), 8) << "the victim's GPUs stay held";
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
  EXPECT_NE(s->status(1).reason.find("waiting for 1 preempted workload(s) to stop"),
            std::string::npos)
      << s->status(1).reason;
  EXPECT_NE(s->status(1).reason.find("t=160s"), std::string::npos) << s->status(1).reason;
  EXPECT_EQ(s->NextTimer(100), 160) << "the end of the grace period is an instant of its own";

  // Meanwhile what is being released is nobody's: a 1-GPU workload does not get it, and the
  // preemptor does not preempt again.
  s->Submit(2, 130);
  EXPECT_TRUE(Cycle(*s, 130).empty());
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(0).preemptions, 1);

  d = Cycle(*s, 160);
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kTerminated);
  EXPECT_EQ(d[0].workload, 0);
  EXPECT_EQ(d[1].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[1].workload, 1) << "the preemptor goes first (priority, then creation)";
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending) << "back in its queue";
  EXPECT_TRUE(s->status(0).pods.empty());
}

TEST(GracePeriodTest, AVictimGoneBeforeItsGracePeriodEndsFreesItsGpusAtOnce) {
  auto s = Start(Scene(60));
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 100);
  Cycle(*s, 100);
  s->Finish(0, 110);  // its pods are gone (Kubernetes: the controller saw them go)
  EXPECT_EQ(s->status(0).state, WorkloadState::kFinished);
  EXPECT_EQ(s->gpus_allocated(), 0);
  std::vector<Decision> d = Cycle(*s, 110);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[0].workload, 1);
}

TEST(GracePeriodTest, WithoutAGracePeriodThePreemptorIsAdmittedInTheSameCycle) {
  auto s = Start(Scene(0));
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 100);
  std::vector<Decision> d = Cycle(*s, 100);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].grace_seconds, 0);
  EXPECT_EQ(d[1].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[1].workload, 1);
}

// Three nodes of 8 GPUs; ClusterQueues a, b and c (8 GPUs each, cohort "all", reclaiming from
// one another): b1, b2, b3 (queue b, 8 GPUs, grace 60) fill the cluster, b borrowing 16; then a1
// (a, 4 GPUs), a2 (a, 8 GPUs), c1 (c, 4 GPUs).
Model ReclaimScene() {
  std::vector<ClusterQueue> cqs;
  for (const char* q : {"a", "b", "c"})
    cqs.push_back(CQ(q).Cohort("all").Gpus("gpu", 8).Reclaim(ReclaimPolicy::kAny).Obj());
  Model m = MakeModel({MakeNode("n1", 8), MakeNode("n2", 8), MakeNode("n3", 8)}, cqs);
  for (const char* b : {"b1", "b2", "b3"}) {
    Workload w = WL(b).Queue("b").Pods(1, 8).Obj();
    w.pod_sets[0].termination_grace = 60;
    m.workloads.push_back(w);
  }
  m.workloads.push_back(WL("a1").Queue("a").Pods(1, 4).Obj());
  m.workloads.push_back(WL("a2").Queue("a").Pods(1, 8).Obj());
  m.workloads.push_back(WL("c1").Queue("c").Pods(1, 4).Obj());
  return m;
}

// While its victim stops, a preemptor holds what it would hold admitted (its quota, and its
// victim's quota is released), so its queue does not reclaim more; and a workload that fits
// once the victim is gone waits for it rather than preempting another. Before, a2 reclaimed b2
// (a looked empty) and c1 reclaimed b1 (b3's GPUs looked taken): three victims, not one.
TEST(GracePeriodTest, APreemptorThatWaitsHoldsItsClaimAndOthersWaitForWhatIsBeingReleased) {
  auto s = Start(ReclaimScene());
  for (WorkloadId b = 0; b < 3; ++b) s->Submit(b, 0);
  Cycle(*s, 0);
  s->Submit(3, 100);
  std::vector<Decision> d = Cycle(*s, 100);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].preemptor, 3);
  const WorkloadId victim = d[0].workload;
  EXPECT_EQ(s->ClusterQueueUsage(0, 0)[kGpu], 4) << "a1 holds its quota while it waits";
  EXPECT_EQ(s->ClusterQueueUsage(1, 0)[kGpu], 16) << "the victim's quota is released";
  EXPECT_EQ(s->gpus_allocated(), 24) << "the victim keeps its GPUs";

  s->Submit(4, 110);  // a2: a would go over its nominal quota: nothing to reclaim
  EXPECT_TRUE(Cycle(*s, 110).empty());
  s->Submit(5, 120);  // c1: fits in what the victim gives back beyond a1's 4 GPUs
  EXPECT_TRUE(Cycle(*s, 120).empty());
  EXPECT_NE(s->status(5).reason.find("fits once the 1 preempted workload(s)"), std::string::npos)
      << s->status(5).reason;
  for (WorkloadId b = 0; b < 3; ++b) EXPECT_EQ(s->status(b).preemptions, b == victim ? 1 : 0);

  d = Cycle(*s, 160);
  std::vector<WorkloadId> admitted;
  for (const Decision& x : d)
    if (x.type == Decision::Type::kAdmit) admitted.push_back(x.workload);
  EXPECT_EQ(admitted, (std::vector<WorkloadId>{3, 5})) << "a1 first, then c1 on the rest";
  EXPECT_EQ(s->status(4).state, WorkloadState::kPending);
  EXPECT_EQ(s->ClusterQueueUsage(0, 0)[kGpu], 4);
}

// Three nodes of 8 GPUs, ClusterQueue cq (24 GPUs, preempts lower priority within it): big
// (low, 2 pods of 8 GPUs, grace 60) on two nodes, low2 (low, 8 GPUs) on the third; then p, w1
// and w2 (high, 8 GPUs each). The largest victim first (FewestVictims), so that p takes big:
// by the least lost work (the default) it would take low2.
Model WaitersScene() {
  Model m = MakeModel(
      {MakeNode("n1", 8), MakeNode("n2", 8), MakeNode("n3", 8)},
      {CQ("cq").Gpus("gpu", 24).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.cluster_queues[0].preemption.victim_order = VictimOrder::kFewestVictims;
  Workload big = WL("big").Queue("cq").Pods(2, 8).Priority("low").Obj();
  big.pod_sets[0].termination_grace = 60;
  m.workloads.push_back(big);
  m.workloads.push_back(WL("low2").Queue("cq").Pods(1, 8).Priority("low").Obj());
  for (const char* h : {"p", "w1", "w2"})
    m.workloads.push_back(WL(h).Queue("cq").Pods(1, 8).Priority("high").Obj());
  return m;
}

// A workload waiting for what is being released counts as taking it (the next one preempts
// instead), until it goes away: deleted while it waits, it takes nothing, and the next one
// waits for the room in its place rather than preempt low2.
TEST(GracePeriodTest, AWaiterCountsAsTakingTheRoomUntilItGoesAway) {
  auto s = Start(WaitersScene());
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  s->Submit(2, 100);
  std::vector<Decision> d = Cycle(*s, 100);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].workload, 0) << "p preempts big, which keeps both nodes for 60 s";
  s->Submit(3, 110);
  EXPECT_TRUE(Cycle(*s, 110).empty()) << "w1 waits for big's second node";
  EXPECT_NE(s->status(3).reason.find("fits once the 1 preempted workload(s)"), std::string::npos)
      << s->status(3).reason;
  s->Finish(3, 115);  // deleted while it waits
  s->Submit(4, 120);
  EXPECT_TRUE(Cycle(*s, 120).empty()) << "w2 waits in w1's place: low2 is not preempted";
  EXPECT_NE(s->status(4).reason.find("fits once the 1 preempted workload(s)"), std::string::npos)
      << s->status(4).reason;
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  d = Cycle(*s, 160);
  std::vector<WorkloadId> admitted;
  for (const Decision& x : d)
    if (x.type == Decision::Type::kAdmit) admitted.push_back(x.workload);
  EXPECT_EQ(admitted, (std::vector<WorkloadId>{2, 4})) << "p, then the waiter w2";
  EXPECT_EQ(s->status(1).preemptions, 0);
}

// A second waiter finds the room taken by the first and preempts at once, as without grace
// periods (where the first would have taken the room at once).
TEST(GracePeriodTest, ASecondWaiterFindsTheRoomTakenAndPreempts) {
  auto s = Start(WaitersScene());
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  s->Submit(2, 100);
  Cycle(*s, 100);
  s->Submit(3, 110);
  EXPECT_TRUE(Cycle(*s, 110).empty()) << "w1 waits for big's second node";
  s->Submit(4, 120);
  std::vector<Decision> d = Cycle(*s, 120);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].workload, 1) << "w2 preempts low2 (no grace period: gone at once)";
  EXPECT_EQ(d[0].preemptor, 4);
  EXPECT_EQ(d[1].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[1].workload, 4);
}

// ClusterQueue cq (8 GPUs) ordered by admission fair sharing, LocalQueues a and b; one 8-GPU
// workload in each, a's first.
Model FairScene() {
  ClusterQueue cq = CQ("cq").Gpus("gpu", 8).Obj();
  cq.usage_based_admission = true;
  Model m = MakeModel({MakeNode("n1", 8)}, {cq});
  m.local_queues.clear();
  m.local_queues.push_back({"default", "a", "cq", "", 1.0});
  m.local_queues.push_back({"default", "b", "cq", "", 1.0});
  m.config.admission_fair_sharing.enabled = true;
  m.config.admission_fair_sharing.usage_half_life = 100;
  m.config.admission_fair_sharing.sampling_interval = 10;
  m.workloads.push_back(WL("a1").Queue("a").Pods(1, 8).Obj());
  m.workloads.push_back(WL("b1").Queue("b").Pods(1, 8).Obj());
  return m;
}

TEST(FairUsageSeedTest, SeededUsageIsDecayedAndOrdersTheFirstCycle) {
  {
    auto s = Start(FairScene());  // no seed: both count 0, creation order
    s->Submit(0, 0);
    s->Submit(1, 0);
    std::vector<Decision> d = Cycle(*s, 0);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].workload, 0);
  }
  auto s = Start(FairScene());
  LocalQueueUsage used;
  used.at = -100;  // one half-life before the first cycle
  used.consumed = {{"nvidia.com/gpu", 4}, {"example.com/unknown", 9}};
  s->SeedLocalQueueUsage(0, used);
  s->Submit(0, 0);
  s->Submit(1, 0);
  std::vector<Decision> d = Cycle(*s, 0);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].workload, 1) << "LocalQueue a used the GPUs before the restart: b goes first";
  LocalQueueUsage now = s->local_queue_usage(0);
  EXPECT_EQ(now.at, 0);
  ASSERT_EQ(now.consumed.size(), 1u);
  EXPECT_EQ(now.consumed[0].first, "nvidia.com/gpu");
  EXPECT_DOUBLE_EQ(now.consumed[0].second, 2) << "halved by one half-life";
  EXPECT_DOUBLE_EQ(s->local_queue_usage(1).consumed[0].second, 0);
}

}  // namespace
}  // namespace tessera
