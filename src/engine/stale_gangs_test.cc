// Gangs restored below their minimum (engine/stale_gangs.h): completed when the missing pods
// fit, else evicted whole when the grace time (SchedulerConfig staleGangGracePeriod) ends.
#include "engine/scheduler.h"
#include "engine/test_scheduler.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::Cycle;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

// Node n1 (4 GPUs): `blocker` holds 2; `gang` (4 pods of 1 GPU, all required) is restored with
// 1 pod, so its 3 missing pods cannot fit while `blocker` runs.
Model GangModel(double grace) {
  Model m = MakeModel({MakeNode("n1", 4)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.config.stale_gang_grace_seconds = grace;
  m.workloads.push_back(WL("blocker").Queue("cq").Pods(1, 2).Obj());
  m.workloads.push_back(WL("gang").Queue("cq").Pods(4, 1).Obj());
  return m;
}

TEST(StaleGangsTest, EvictedWholeWhenTheGraceTimeEnds) {
  auto s = Start(GangModel(60));
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {}}}, 0).ok());
  // Restored at t=-500 (a restart): the grace time counts from the first cycle that sees it.
  ASSERT_TRUE(s->Restore(1, {{0, 0, 0, {}}}, -500).ok());
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  Cycle(*s, 10);  // below its minimum: accepted, within its grace time
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->NextTimer(10), 70);
  Cycle(*s, 69.5);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  auto d = s->RunCycle(70);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].workload, 1);
  EXPECT_EQ(d[0].preemptor, -1);
  EXPECT_NE(d[0].reason.find("stale gang: 1 of its minimum 4 pods placed for 60s"),
            std::string::npos)
      << d[0].reason;
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);  // requeued, its GPU free
  EXPECT_EQ(s->gpus_allocated(), 2);
  EXPECT_EQ(s->NextTimer(70), std::numeric_limits<double>::infinity());
}

TEST(StaleGangsTest, CompletedWholeWhenTheMissingPodsFitWithinTheGraceTime) {
  auto s = Start(GangModel(60));
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {}}}, 0).ok());
  ASSERT_TRUE(s->Restore(1, {{0, 0, 0, {}}}, 0).ok());
  Cycle(*s, 0);
  // One GPU is free: no pod of the 3 missing is placed alone.
  EXPECT_EQ(s->status(1).pods.size(), 1u);
  s->Finish(0, 30);
  auto d = s->RunCycle(30);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kScaleUp);
  EXPECT_EQ(d[0].pods.size(), 3u);
  EXPECT_EQ(s->status(1).pods.size(), 4u);
  // Complete: nothing is evicted when the grace time would have ended.
  EXPECT_TRUE(s->RunCycle(60).empty());
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
}

TEST(StaleGangsTest, GraceTimeZeroEvictsAtTheFirstCycle) {
  auto s = Start(GangModel(0));
  ASSERT_TRUE(s->Restore(0, {{0, 0, 0, {}}}, 0).ok());
  ASSERT_TRUE(s->Restore(1, {{0, 0, 0, {}}}, 0).ok());
  auto d = s->RunCycle(0);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
}

}  // namespace
}  // namespace tessera
