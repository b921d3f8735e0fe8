// What a preemptor that waits for its victims claims of the room it will start on
// (Terminations::Claim, docs/time.md "Grace period before the kill"): the part that is free now,
// so that nothing else takes it while the victims stop: whole GPUs, the free milli of a shared
// GPU's device, and the free memory slices of its MIG instances.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::Cycle;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

// One pod asking for `gpus` whole GPUs, or for `milli` of one GPU when `gpus` is 0.
Workload Pod(const std::string& name, const std::string& cq, int gpus, int64_t milli,
             const std::string& priority, double grace = 0) {
  Workload w = WL(name).Queue(cq).Pods(1, gpus).Priority(priority).Obj();
  if (gpus == 0) w.pod_sets[0].requests[kGpuMilli] = milli;
  w.pod_sets[0].termination_grace = grace;
  return w;
}

// ClusterQueue `cq` (preempts lower priorities within it) and `other`, each with quota for
// whole GPUs and shares; `n1` (and `n2`, ...) of `gpus` GPUs each.
Model Scene(int gpus, int nodes = 1) {
  auto queue = [](const std::string& name) {
    ClusterQueue cq =
        CQ(name).Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj();
    cq.resource_groups[0].covered.push_back(kGpuMilli);
    cq.resource_groups[0].flavors[0].resources.push_back({kGpuMilli, 8000, {}, {}});
    return cq;
  };
  std::vector<Node> ns;
  for (int i = 1; i <= nodes; ++i) ns.push_back(MakeNode("n" + std::to_string(i), gpus));
  return MakeModel(ns, {queue("cq"), queue("other")});
}

// The story every test here tells: workload 0 (the victim) is admitted at 0; workload 1 (the
// preemptor) comes at 100 and preempts it, and the victim is terminating (its grace period).
std::unique_ptr<Scheduler> VictimStopsForPreemptor(Model m) {
  auto s = Start(std::move(m));
  s->Submit(0, 0);
  Cycle(*s, 0);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted) << s->status(0).reason;
  s->Submit(1, 100);
  Cycle(*s, 100);
  EXPECT_EQ(s->status(0).state, WorkloadState::kTerminating);
  return s;
}

// Then workload 2 (the passer, another queue) comes at 110 and must wait (`claimed`: what the
// claim holds), and the preemptor starts at 160, when the victim is gone, having preempted it once.
void PasserWaitsAndPreemptorStarts(Scheduler& s, const std::string& claimed) {
  s.Submit(2, 110);
  Cycle(s, 110);
  EXPECT_EQ(s.status(2).state, WorkloadState::kPending) << claimed << " claimed";
  Cycle(s, 160);
  EXPECT_EQ(s.status(1).state, WorkloadState::kAdmitted) << s.status(1).reason;
  EXPECT_EQ(s.status(0).preemptions, 1);
}

TEST(ClaimTest, TheFreeWholeGpusAPreemptorCountsOnAreNotTakenWhileItsVictimStops) {
  // n1: 2 GPUs. `victim` (low, 1 GPU, grace 60 s) runs; `preemptor` (high, 2 GPUs) comes at 100:
  // it needs the free GPU and the victim's, preempts, and claims the free one. `passer` (other
  // queue, 1 GPU) comes at 110: the free GPU is claimed, so it waits, and the preemptor starts
  // at 160 when the victim is gone.
  Model m = Scene(2);
  m.workloads.push_back(Pod("victim", "cq", 1, 0, "low", 60));  // 0
  m.workloads.push_back(Pod("preemptor", "cq", 2, 0, "high"));  // 1
  m.workloads.push_back(Pod("passer", "other", 1, 0, "low"));   // 2
  auto s = VictimStopsForPreemptor(m);
  PasserWaitsAndPreemptorStarts(*s, "the free GPU is");
}

TEST(ClaimTest, TheFreePartOfASharedGpuAPreemptorCountsOnIsNotTakenWhileItsVictimStops) {
  // The same with shares of n1's one GPU: `victim` (low, 500 milli, grace 60 s) runs;
  // `preemptor` (high, 800 milli) comes at 100: it needs the free 500 and 300 of the victim's,
  // preempts, and claims the free 500 of the device. `passer` (other queue, 300 milli) comes at
  // 110: the device is full (the victim's 500 and the claim's 500), so it waits, and the
  // preemptor starts at 160 when the victim is gone, preempting it once. (Before claims held
  // shares, `passer` took 300 of the free 500, the preemptor no longer fitted at 160, the
  // requeued victim was admitted again and preempted a second time at 200, when `passer`
  // ended, and the preemptor started at 260: 100 s late.)
  Model m = Scene(1);
  m.workloads.push_back(Pod("victim", "cq", 0, 500, "low", 60));  // 0
  m.workloads.push_back(Pod("preemptor", "cq", 0, 800, "high"));  // 1
  m.workloads.push_back(Pod("passer", "other", 0, 300, "low"));   // 2
  auto s = VictimStopsForPreemptor(m);
  PasserWaitsAndPreemptorStarts(*s, "the free 500 milli are");
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending) << "200 milli free: 300 do not fit";
}

TEST(ClaimTest, ANodeGoingOfflineTakesBackTheShareClaimedOnIt) {
  // n1 and n2, one GPU each. `victim` (low, 600 milli, grace 60 s) runs on n1; `preemptor`
  // (high, 2 pods of 700 milli) does not fit (n1 has 400 free) and preempts it: it will start
  // one pod on n1 and one on n2, and claims the free 400 of n1's device and 700 of n2's. n2 is
  // then taken offline (nothing is placed on it): the claim gives its share there back (a node
  // goes offline only with all its GPUs free), keeps the one on n1, and the state stays
  // consistent (Cycle verifies it).
  Model m = Scene(1, 2);
  m.workloads.push_back(Pod("victim", "cq", 0, 600, "low", 60));  // 0
  Workload preemptor = Pod("preemptor", "cq", 0, 700, "high");
  preemptor.pod_sets[0].count = 2;
  m.workloads.push_back(preemptor);                              // 1
  m.workloads.push_back(Pod("passer", "other", 0, 300, "low"));  // 2
  auto s = VictimStopsForPreemptor(m);
  ASSERT_EQ(s->status(0).state, WorkloadState::kTerminating);
  ASSERT_EQ(s->status(0).pods[0].node, 0) << "the victim is on n1";
  ASSERT_TRUE(s->WorkloadsOnNode(1).empty());
  EXPECT_FALSE(s->node_empty(1)) << "the claim holds part of it";
  s->SetNodeOnline(1, false);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify().message();
  s->SetNodeOnline(1, true);
  EXPECT_TRUE(s->node_empty(1)) << "it came back whole: nothing of it stayed claimed";
  s->SetNodeOnline(1, false);
  s->Submit(2, 110);
  Cycle(*s, 110);
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending) << "n1's free 400 milli stay claimed";
  s->SetNodeOnline(1, true);
  Cycle(*s, 160);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted) << s->status(1).reason;
}

// n1: one A100-40GB whose MIG layout Tessera chooses; both queues have quota for its profiles.
Model MigScene() {
  Model m = Scene(1);
  Node& n = m.nodes[0];
  n.gpu_memory_mib = 40960;
  n.mig_dynamic = true;
  for (const char* profile : {"nvidia.com/mig-3g.20gb", "nvidia.com/mig-7g.40gb"}) {
    auto id = ResourceRegistry::Global().Intern(profile);
    EXPECT_TRUE(id.ok());
    for (ClusterQueue& cq : m.cluster_queues) {
      cq.resource_groups[0].covered.push_back(*id);
      cq.resource_groups[0].flavors[0].resources.push_back({*id, 8, {}, {}});
    }
  }
  return m;
}

// One pod asking for one MIG instance of `profile` (nvidia.com/mig-<profile>).
Workload MigPod(const std::string& name, const std::string& cq, const std::string& profile,
                const std::string& priority, double grace = 0) {
  Workload w = Pod(name, cq, 0, 0, priority, grace);
  w.pod_sets[0].requests[ResourceRegistry::Global().Find("nvidia.com/mig-" + profile)] = 1;
  return w;
}

TEST(ClaimTest, TheFreeMigSlicesAPreemptorCountsOnAreNotTakenWhileItsVictimStops) {
  // `victim` (low, a 3g.20gb instance, grace 60 s) takes memory slices 0-3 of the GPU;
  // `preemptor` (high, 7g.40gb: the whole device) comes at 100, preempts it and claims the free
  // slices 4-7. `passer` (other queue, 3g.20gb, which may start at slice 4) comes at 110: the
  // slices are claimed, so it waits, and the preemptor starts at 160 when the victim is gone.
  // (Unclaimed, `passer` took slices 4-7 and the victim was preempted a second time.)
  Model m = MigScene();
  m.workloads.push_back(MigPod("victim", "cq", "3g.20gb", "low", 60));  // 0
  m.workloads.push_back(MigPod("preemptor", "cq", "7g.40gb", "high"));  // 1
  m.workloads.push_back(MigPod("passer", "other", "3g.20gb", "low"));   // 2
  auto s = VictimStopsForPreemptor(m);
  PasserWaitsAndPreemptorStarts(*s, "slices 4-7 are");
}

}  // namespace
}  // namespace tessera
