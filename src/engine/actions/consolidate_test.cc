// The `consolidate` action: a head that fits on no node while its GPUs sit idle in pieces gets
// room by moving running workloads, reported as kMove decisions before its kAdmit; within the
// bounds of spec.consolidation, and never when a moved workload would find no place.
#include <gtest/gtest.h>

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

// Four nodes of 2 GPUs, one 1-GPU workload on each (spread), and a gang of two 2-GPU pods.
Model FourFragmentedNodes() {
  Model m = MakeModel({MakeNode("n1", 2), MakeNode("n2", 2), MakeNode("n3", 2), MakeNode("n4", 2)},
                      {CQ("cq").Gpus("gpu", 8).Obj()});
  m.config.placement = PlacementPolicy::kSpread;
  m.config.actions = {"admit", "preempt", "consolidate", "scale-up"};
  for (const char* name : {"x1", "x2", "x3", "x4"})
    m.workloads.push_back(WL(name).Queue("cq").Pods(1, 1).Obj());
  m.workloads.push_back(WL("gang").Queue("cq").Pods(2, 2).Obj());
  return m;
}

std::vector<Decision> SubmitAndCycle(Scheduler& s) {
  for (WorkloadId id = 0; id < 4; ++id) s.Submit(id, 0);
  s.RunCycle(0);
  s.Submit(4, 100);
  std::vector<Decision> d = s.RunCycle(100);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
  return d;
}

TEST(ConsolidateTest, AGangGetsTwoWholeNodesByMovingTwoWorkloads) {
  auto s = Start(FourFragmentedNodes());
  std::vector<Decision> d = SubmitAndCycle(*s);
  // Two moves first (their new pods, the gang as the reason), then the gang's admission.
  ASSERT_EQ(d.size(), 3u);
  std::vector<NodeId> freed;
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(d[i].type, Decision::Type::kMove);
    EXPECT_EQ(d[i].preemptor, 4);
    ASSERT_EQ(d[i].pods.size(), 1u);
    EXPECT_EQ(s->status(d[i].workload).state, WorkloadState::kAdmitted);
    EXPECT_EQ(s->status(d[i].workload).admitted_at, 100);  // its run restarts
    EXPECT_EQ(s->status(d[i].workload).preemptions, 0);
  }
  EXPECT_EQ(d[2].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[2].workload, 4);
  ASSERT_EQ(d[2].pods.size(), 2u);
  EXPECT_NE(d[2].pods[0].node, d[2].pods[1].node);
  // The moved ones share the nodes the gang left alone: every node is full.
  EXPECT_EQ(s->gpus_allocated(), 8);
  EXPECT_EQ(s->stats().moved, 2);
}

TEST(ConsolidateTest, MaxMovesPerCycleBoundsTheSearch) {
  Model m = FourFragmentedNodes();
  m.config.consolidation.max_moves_per_cycle = 1;
  auto s = Start(std::move(m));
  std::vector<Decision> d = SubmitAndCycle(*s);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(s->status(4).state, WorkloadState::kPending);
  EXPECT_EQ(s->stats().moved, 0);
}

TEST(ConsolidateTest, NothingMovesWhenAMovedWorkloadWouldFindNoPlace) {
  // Three nodes: making two whole nodes for the gang leaves one free GPU for two workloads.
  Model m = MakeModel({MakeNode("n1", 2), MakeNode("n2", 2), MakeNode("n3", 2)},
                      {CQ("cq").Gpus("gpu", 8).Obj()});
  m.config.placement = PlacementPolicy::kSpread;
  m.config.actions = {"admit", "consolidate"};
  for (const char* name : {"x1", "x2", "x3"})
    m.workloads.push_back(WL(name).Queue("cq").Pods(1, 1).Obj());
  m.workloads.push_back(WL("gang").Queue("cq").Pods(2, 2).Obj());
  auto s = Start(std::move(m));
  for (WorkloadId id = 0; id < 3; ++id) s->Submit(id, 0);
  s->RunCycle(0);
  s->Submit(3, 100);
  EXPECT_TRUE(s->RunCycle(100).empty());
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  // Everything is back where it was.
  for (WorkloadId id = 0; id < 3; ++id) {
    EXPECT_EQ(s->status(id).admitted_at, 0);
    EXPECT_EQ(s->status(id).pods[0].node, id);
  }
}

TEST(ConsolidateTest, AQueueThatOptsOutIsNeitherMovedNorMoves) {
  Model m = FourFragmentedNodes();
  m.cluster_queues[0].consolidation = false;
  auto s = Start(std::move(m));
  EXPECT_TRUE(SubmitAndCycle(*s).empty());
}

}  // namespace
}  // namespace tessera
