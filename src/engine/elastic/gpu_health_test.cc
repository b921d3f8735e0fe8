// GPUs that fail (engine/elastic/gpu_health.h): a failed device is given to nobody, a gang on it
// is evicted whole by the caller and placed again elsewhere, pods left on it keep it until they
// leave, repair gives it back, and Verify holds at every step.
#include "engine/elastic/gpu_health.h"

#include <gtest/gtest.h>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"
#include "fmt/format.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::Cycle;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

Model Cluster(int nodes, int gpus) {
  std::vector<Node> ns;
  for (int i = 0; i < nodes; ++i) ns.push_back(MakeNode(fmt::format("n{}", i), gpus));
  return MakeModel(std::move(ns), {CQ("cq").Gpus("gpu", 1000).Obj()});
}

void ExpectVerified(const Scheduler& s) { EXPECT_TRUE(s.Verify().ok()) << s.Verify(); }

std::vector<int32_t> GpusOf(const Scheduler& s, WorkloadId id) {
  std::vector<int32_t> out;
  for (const PodPlacement& p : s.status(id).pods)
    out.insert(out.end(), p.gpus.begin(), p.gpus.end());
  return out;
}

TEST(GpuHealthTest, AFailedGpuIsGivenToNobody) {
  Model m = Cluster(1, 2);
  m.workloads.push_back(WL("two").Queue("cq").Pods(1, 2).Obj());
  m.workloads.push_back(WL("one").Queue("cq").Pods(1, 1).Obj());
  auto s = Start(m);
  s->SetGpuFailed(0, 0, true);
  EXPECT_TRUE(s->gpu_failed(0, 0));
  EXPECT_EQ(s->failed_gpus(), 1);
  EXPECT_EQ(s->gpus_total(), 1);
  EXPECT_EQ(s->gpus_allocated(), 0);
  ExpectVerified(*s);
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);  // 2 GPUs: only one is healthy
  ASSERT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(GpusOf(*s, 1), std::vector<int32_t>{1});
  EXPECT_EQ(s->gpus_allocated(), 1);
  // Repair gives it back, and the workload set aside retries.
  s->Finish(1, 1);
  s->SetGpuFailed(0, 0, false);
  EXPECT_EQ(s->failed_gpus(), 0);
  EXPECT_EQ(s->gpus_total(), 2);
  Cycle(*s, 2);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->gpus_allocated(), 2);
}

TEST(GpuHealthTest, AGangOnAFailedGpuIsEvictedWholeAndPlacedElsewhere) {
  Model m = Cluster(3, 4);
  m.workloads.push_back(WL("gang").Queue("cq").Pods(2, 4).Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  const NodeId n = s->status(0).pods[0].node;
  // It fails under the running gang: the gang keeps it until it is evicted.
  s->SetGpuFailed(n, 2, true);
  ExpectVerified(*s);
  EXPECT_EQ(s->gpus_total(), 11);
  EXPECT_EQ(s->WorkloadsOnGpu(n, 2), std::vector<WorkloadId>{0});
  EXPECT_TRUE(s->WorkloadsOnGpu(n, 9).empty());  // out of range: nothing
  Decision d = s->EvictForNode(0, fmt::format("GPU 2 of node n{} failed", n));
  EXPECT_EQ(d.type, Decision::Type::kPreempt);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_TRUE(s->status(0).pods.empty());  // whole: no pod stays
  ExpectVerified(*s);
  EXPECT_EQ(s->gpus_allocated(), 0);
  Cycle(*s, 1);
  ASSERT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  for (const PodPlacement& p : s->status(0).pods) EXPECT_NE(p.node, n);  // 3 healthy GPUs there
  // Repaired, the node takes a 4-GPU pod again.
  s->SetGpuFailed(n, 2, false);
  EXPECT_EQ(s->gpus_total(), 12);
  ExpectVerified(*s);
}

TEST(GpuHealthTest, PodsLeftOnAFailedGpuKeepItUntilTheyLeave) {
  Model m = Cluster(1, 2);
  m.workloads.push_back(WL("stays").Queue("cq").Pods(1, 1).Obj());
  m.workloads.push_back(WL("later").Queue("cq").Pods(1, 2).Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  ASSERT_EQ(GpusOf(*s, 0), std::vector<int32_t>{0});
  s->SetGpuFailed(0, 0, true);  // left to its controller: it runs on
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->gpus_total(), 1);
  EXPECT_EQ(s->gpus_allocated(), 0);  // the failed device is not counted, held or not
  ExpectVerified(*s);
  s->Finish(0, 1);  // its controller ended it: the device stays out
  EXPECT_TRUE(s->gpu_failed(0, 0));
  EXPECT_EQ(s->gpus_total(), 1);
  ExpectVerified(*s);
  s->Submit(1, 1);
  Cycle(*s, 1);
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
  s->SetGpuFailed(0, 0, false);
  Cycle(*s, 2);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
}

TEST(GpuHealthTest, NoShareLandsOnAFailedSharedDevice) {
  Model m = Cluster(1, 1);
  for (const char* name : {"a", "b", "c"}) {
    Workload w = WL(name).Queue("cq").Pods(1, 0).Obj();
    w.pod_sets[0].requests[kGpuMilli] = 300;
    m.workloads.push_back(w);
  }
  auto s = Start(m);
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  s->SetGpuFailed(0, 0, true);
  ExpectVerified(*s);
  EXPECT_EQ(s->WorkloadsOnGpu(0, 0), (std::vector<WorkloadId>{0, 1}));
  s->Submit(2, 1);
  Cycle(*s, 1);
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);  // 400 milli free, but failed
  s->EvictForNode(0, "GPU failed");
  ExpectVerified(*s);
  Cycle(*s, 2);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);
  s->EvictForNode(1, "GPU failed");
  ExpectVerified(*s);
  EXPECT_EQ(s->gpus_total(), 0);
  s->SetGpuFailed(0, 0, false);
  Cycle(*s, 3);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted);
}

TEST(GpuHealthTest, APreemptionSearchOverAPodOnAFailedGpuLeavesItConsistent) {
  // A low-priority pod runs on on a failed device; a high-priority 2-GPU job looks for victims
  // (evicting and reinstating it tentatively) and can never get two healthy GPUs.
  Model m = Cluster(1, 2);
  m.cluster_queues[0] =
      CQ("cq").Gpus("gpu", 1000).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj();
  m.workloads.push_back(WL("low").Queue("cq").Priority("low").Pods(1, 1).Obj());
  m.workloads.push_back(WL("high").Queue("cq").Priority("high").Pods(1, 2).Obj());
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  ASSERT_EQ(GpusOf(*s, 0), std::vector<int32_t>{0});
  s->SetGpuFailed(0, 0, true);
  s->Submit(1, 1);
  Cycle(*s, 1);
  Cycle(*s, 2);
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
  EXPECT_TRUE(s->gpu_failed(0, 0));
}

TEST(GpuHealthTest, AFailureOnAnOfflineNodeHoldsWhenItComesOnline) {
  Model m = Cluster(2, 2);
  m.nodes[1].provisioned = false;
  m.workloads.push_back(WL("four").Queue("cq").Pods(2, 2).Obj());
  auto s = Start(m);
  s->SetGpuFailed(1, 1, true);
  EXPECT_EQ(s->gpus_total(), 2);
  s->SetNodeOnline(1, true);
  EXPECT_EQ(s->gpus_total(), 3);
  ExpectVerified(*s);
  s->Submit(0, 0);
  Cycle(*s, 0);
  EXPECT_EQ(s->status(0).state, WorkloadState::kPending);
  s->SetNodeOnline(1, false);
  EXPECT_EQ(s->gpus_total(), 2);
  s->SetGpuFailed(1, 1, false);
  s->SetNodeOnline(1, true);
  EXPECT_EQ(s->gpus_total(), 4);
  Cycle(*s, 1);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
}

TEST(GpuHealthTest, ATimeSlicedGpuFailsWithAllItsReplicas) {
  Model m = Cluster(1, 4);  // 2 physical GPUs, 2 replicas each: slots 0..3, slot s on GPU s % 2
  m.nodes[0].gpu_replicas = 2;
  auto s = Start(m);
  s->SetGpuFailed(0, 2, true);
  EXPECT_TRUE(s->gpu_failed(0, 0));
  EXPECT_TRUE(s->gpu_failed(0, 2));
  EXPECT_FALSE(s->gpu_failed(0, 1));
  EXPECT_EQ(s->failed_gpus(), 2);
  EXPECT_EQ(s->gpus_total(), 2);
  ExpectVerified(*s);
}

}  // namespace
}  // namespace tessera
