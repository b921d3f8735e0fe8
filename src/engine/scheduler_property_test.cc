// Property tests over random clusters and workloads: after every cycle no node or quota is
// exceeded, no GPU is double-booked, no gang is partly placed, lending and borrowing limits
// hold, no GPU device holds more than 1000 milli of shares (shares by memory converted on each
// node's device memory, so no device's memory is exceeded either), no MIG memory slice is used
// twice or at a start NVIDIA's rules forbid, no required-topology pod set
// spans two racks, no two pods with required hostname anti-affinity share a node (Scheduler::Verify
// checks all of these), and repeated cycles on a stable cluster reach a fixed point (no preemption
// loops), with and without fair sharing, and with grace periods (preemptors' claims counted).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "engine/scheduler.h"
#include "engine/test_builders.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

Model RandomModel(bool fair) {
  const int nodes = *rc::gen::inRange(1, 8);
  std::vector<Node> ns;
  for (int i = 0; i < nodes; ++i) {
    ns.push_back(MakeNode("n" + std::to_string(i), *rc::gen::element(2, 4, 8),
                          {{"rack", "r" + std::to_string(i / 2)}}));
    // Device memory known on some nodes (40 or 80 GiB), unknown on others.
    ns.back().gpu_memory_mib = *rc::gen::element(int64_t{0}, int64_t{40960}, int64_t{81920});
    // Some A100-40GB nodes let Tessera choose their MIG layout.
    ns.back().mig_dynamic = ns.back().gpu_memory_mib == 40960 && *rc::gen::inRange(0, 2) == 0;
    // Some others time-slice their GPUs: 2 replicas of each (the slots are the devices).
    if (!ns.back().mig_dynamic && *rc::gen::inRange(0, 4) == 0) ns.back().gpu_replicas = 2;
  }
  const int queues = *rc::gen::inRange(1, 4);
  std::vector<ClusterQueue> cqs;
  for (int q = 0; q < queues; ++q) {
    CQ cq("q" + std::to_string(q));
    cq.Cohort("org");
    int nominal = *rc::gen::inRange(0, 16);
    int borrow = *rc::gen::inRange(-1, 8);
    int lend = *rc::gen::inRange(-1, nominal + 1);
    cq.Gpus("gpu", nominal, borrow, lend);
    cq.WithinQueue(*rc::gen::element(WithinClusterQueuePolicy::kNever,
                                     WithinClusterQueuePolicy::kLowerPriority,
                                     WithinClusterQueuePolicy::kLowerOrNewerEqualPriority));
    cq.Reclaim(*rc::gen::element(ReclaimPolicy::kNever, ReclaimPolicy::kLowerPriority,
                                 ReclaimPolicy::kAny));
    if (*rc::gen::inRange(0, 4) == 0) cq.Strict();
    cqs.push_back(cq.Obj());
  }
  Model m = MakeModel(ns, cqs);
  m.config.fair_sharing = fair;
  m.config.placement = *rc::gen::element(
      PlacementPolicy::kBinpack, PlacementPolicy::kSpread, PlacementPolicy::kFgd,
      PlacementPolicy::kTesseraFgd, PlacementPolicy::kBestFit, PlacementPolicy::kRandom,
      PlacementPolicy::kDotProd, PlacementPolicy::kGpuClustering, PlacementPolicy::kGpuPacking);
  const int workloads = *rc::gen::inRange(1, 25);
  for (int w = 0; w < workloads; ++w) {
    WL wl("w" + std::to_string(w));
    wl.Queue("q" + std::to_string(*rc::gen::inRange(0, queues)));
    int pods = *rc::gen::inRange(1, 5);
    wl.Pods(pods, *rc::gen::inRange(0, 9));
    Workload built = wl.Obj();
    if (*rc::gen::inRange(0, 4) == 0) {
      // GPU shares (no quota covers them: node devices are the limit).
      built.pod_sets[0].requests[kGpu] = 0;
      built.pod_sets[0].requests[kGpuMilli] = *rc::gen::element(100, 250, 500, 700, 1000);
    } else if (*rc::gen::inRange(0, 5) == 0) {
      // MIG instances (only nodes with a dynamic layout offer them; no quota covers them).
      built.pod_sets[0].requests[kGpu] = 0;
      const std::string profile =
          *rc::gen::element(std::string("1g.5gb"), std::string("1g.10gb"), std::string("2g.10gb"),
                            std::string("3g.20gb"), std::string("4g.20gb"), std::string("7g.40gb"));
      auto rid = ResourceRegistry::Global().Intern("nvidia.com/mig-" + profile);
      RC_ASSERT(rid.ok());
      built.pod_sets[0].requests[*rid] = *rc::gen::inRange(1, 3);
    } else if (*rc::gen::inRange(0, 5) == 0) {
      // GPU shares by memory (MiB): milli depend on the node's device memory.
      built.pod_sets[0].requests[kGpu] = 0;
      built.pod_sets[0].requests[kGpuMemory] =
          *rc::gen::element(int64_t{4096}, int64_t{10240}, int64_t{30000}, int64_t{40960});
    }
    if (*rc::gen::inRange(0, 3) == 0) wl.Min(*rc::gen::inRange(1, pods + 1));
    wl.Priority(
        *rc::gen::element(std::string("low"), std::string("high"), std::string("high-never")));
    wl.Arrive(*rc::gen::inRange(0, 5));
    if (*rc::gen::inRange(0, 2) == 0) wl.Runtime(*rc::gen::inRange(1, 6));
    Workload w2 = wl.Obj();
    w2.pod_sets[0].requests = built.pod_sets[0].requests;
    // Racks of two nodes (label "rack"): some gangs must stay inside one, some prefer to.
    switch (*rc::gen::inRange(0, 6)) {
      case 0:
        w2.pod_sets[0].topology = {"rack", 0, true, ""};
        break;
      case 1:
        w2.pod_sets[0].topology = {"rack", 0, false, ""};
        break;
      case 2:
        w2.pod_sets[0].anti_affinity = HostnameAntiAffinity::kRequired;
        break;
      default:
        break;
    }
    m.workloads.push_back(std::move(w2));
  }
  return m;
}

// Replays arrivals and finishes over 12 ticks, checking invariants after every cycle, then
// runs cycles on the stable cluster until nothing changes.
// With `grace`, some workloads' pods get a grace period of 1-3 ticks: their preemptors wait,
// claiming the free part of the room they will start on (whole GPUs, shares, MIG slices), which
// Verify counts.
void CheckRun(bool fair, bool grace = false) {
  Model m = RandomModel(fair);
  if (grace)
    for (Workload& w : m.workloads)
      if (*rc::gen::inRange(0, 2) == 0) w.pod_sets[0].termination_grace = *rc::gen::inRange(1, 4);
  auto created = Scheduler::Create(m);
  RC_ASSERT(created.ok());
  Scheduler& s = **created;
  std::vector<double> finish_at(s.num_workloads(), -1);
  for (int t = 0; t < 12; ++t) {
    for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
      if (s.status(id).state == WorkloadState::kAdmitted && finish_at[id] >= 0 &&
          finish_at[id] <= t)
        s.Finish(id, t);
      if (s.status(id).state == WorkloadState::kInactive && s.model().workloads[id].arrival <= t)
        s.Submit(id, t);
    }
    for (int cycle = 0; cycle < 3; ++cycle) {
      for (const auto& d : s.RunCycle(t)) {
        if (d.type == Decision::Type::kAdmit && s.model().workloads[d.workload].runtime)
          finish_at[d.workload] = t + *s.model().workloads[d.workload].runtime;
        if (d.type == Decision::Type::kPreempt) finish_at[d.workload] = -1;
      }
      auto st = s.Verify();
      if (!st.ok()) RC_FAIL(std::string(st.message()));
    }
  }
  // A stable cluster: cycles must stop producing decisions.
  int quiet_after = -1;
  for (int cycle = 0; cycle < 50; ++cycle) {
    if (s.RunCycle(100).empty()) {
      quiet_after = cycle;
      break;
    }
    if (auto st = s.Verify(); !st.ok()) RC_FAIL(std::string(st.message()));
  }
  if (quiet_after < 0) RC_FAIL("cycles keep deciding on a stable cluster");
  RC_ASSERT(s.RunCycle(100).empty());
}

RC_GTEST_PROP(SchedulerProperty, InvariantsHoldAndCyclesSettle, ()) { CheckRun(false); }
RC_GTEST_PROP(SchedulerProperty, InvariantsHoldAndCyclesSettleWithFairSharing, ()) {
  CheckRun(true);
}
RC_GTEST_PROP(SchedulerProperty, InvariantsHoldAndCyclesSettleWithGracePeriods, ()) {
  CheckRun(false, /*grace=*/true);
}

}  // namespace
}  // namespace tessera
