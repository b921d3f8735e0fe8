// Reservations' bookings (time/reservations.h, docs/time.md "Reservations and backfill"):
//  - ApplyFor holds a reservation's quota at once but may leave its phantom unbooked on the nodes
//    until an attempt reads them (Reservations::BookNodes; d9b9030, 39c2431). These tests put a
//    backfill candidate that reads the nodes after attempts that quota alone refuses, on a
//    reserved node shared with running workloads, and check the decisions immediate booking
//    gives, computed by hand: a deferral that booked late, not at all, or in another order would
//    let the candidate onto what the reservation holds.
//  - A preemptor waiting for its victims claims room; the plans free that claim at its start plus
//    its estimate, as they free a running workload at its estimated end (3da2dbf).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
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

// One pod of `gpus` GPUs and `cpu` cores in ClusterQueue `cq`.
Workload Job(const std::string& name, const std::string& cq, int gpus, int cpu,
             std::optional<double> estimate, const std::string& priority = "low") {
  Workload w = WL(name).Queue(cq).Pods(1, gpus).Priority(priority).Obj();
  w.pod_sets[0].requests[kCpu] = int64_t{cpu} * 1000;
  w.runtime_estimate = estimate;
  return w;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// n1: 8 GPUs, 64 cores, where the reservations go. n2: 1 GPU and 2 cores, held by ClusterQueue
// `tiny`'s only GPU of quota, so that `tiny-next` is refused by quota alone (its attempt reads
// no node: the deferral's case). ClusterQueue `cq` (8 GPUs) runs what is on n1 and waits; `cpu`
// (no GPU quota) runs workloads that ask for cores only, which fit on n1 alone.
Model Scene() {
  Node n2 = MakeNode("n2", 1);
  n2.allocatable[kCpu] = 2000;
  Model m = MakeModel({MakeNode("n1", 8), n2},
                      {CQ("cq").Gpus("gpu", 8).Obj(), CQ("tiny").Gpus("gpu", 1).Obj(),
                       CQ("cpu").Gpus("gpu", 0).Obj()});
  return m;
}

// Submits the workloads of `m` from index `from` at `now`.
void SubmitFrom(Scheduler& s, int from, int to, double now) {
  for (int id = from; id < to; ++id) s.Submit(id, now);
}

TEST(DeferredBookingTest, APhantomWhoseGpusAreAllTakenStillKeepsItsCoresFromABackfill) {
  // a (4 GPUs, ends by 300) and b (4 GPUs, ends by 600) fill n1's GPUs; `big` (8 GPUs, 40 cores)
  // is reserved n1 from 600 (planned at 10). None of its GPUs is free, so its phantom, booked
  // late, takes 40 of n1's 62 free cores. At 20, `cpu-long` (30 cores, no estimate) would take
  // 30 of them for ever: it must wait; `cpu-short` (30 cores, 60 s) ends before 600: it starts.
  // With them comes `tiny-next`, whose attempt quota alone refuses.
  Model m = Scene();
  m.workloads.push_back(Job("tiny-run", "tiny", 1, 1, std::nullopt));  // 0: n2
  m.workloads.push_back(Job("a", "cq", 4, 1, 300));                    // 1
  m.workloads.push_back(Job("b", "cq", 4, 1, 600));                    // 2
  m.workloads.push_back(Job("big", "cq", 8, 40, 100));                 // 3
  m.workloads.push_back(Job("tiny-next", "tiny", 1, 1, 60));           // 4
  m.workloads.push_back(Job("cpu-long", "cpu", 0, 30, std::nullopt));  // 5
  m.workloads.push_back(Job("cpu-short", "cpu", 0, 30, 60));           // 6
  auto s = Start(m);
  SubmitFrom(*s, 0, 3, 0);
  Cycle(*s, 0);
  ASSERT_EQ(s->status(2).state, WorkloadState::kAdmitted);
  s->Submit(3, 10);
  Cycle(*s, 10);  // big's reservation
  SubmitFrom(*s, 4, 7, 20);
  Cycle(*s, 20);
  EXPECT_EQ(s->status(3).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(3).expected_start, 600);
  EXPECT_EQ(s->status(4).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(5).state, WorkloadState::kPending);
  EXPECT_TRUE(Contains(s->status(5).reason, "the reservation of default/big is held"))
      << s->status(5).reason;
  EXPECT_EQ(s->status(5).expected_start, 700) << "once big has run";
  EXPECT_EQ(s->status(6).state, WorkloadState::kAdmitted) << s->status(6).reason;

  // The next instant, nothing changed but cpu-short's end: still so.
  s->Finish(6, 80);
  Cycle(*s, 80);
  EXPECT_EQ(s->status(5).state, WorkloadState::kPending) << s->status(5).reason;
  // a ends: its 4 GPUs are free and booked by the reservation at once (no longer deferrable);
  // still no room for cpu-long until big has run.
  s->Finish(1, 300);
  Cycle(*s, 300);
  EXPECT_EQ(s->status(5).state, WorkloadState::kPending) << s->status(5).reason;
  EXPECT_EQ(s->gpus_allocated(), 5) << "b and tiny-run; big's phantom is not an allocation";
  s->Finish(2, 600);
  Cycle(*s, 600);
  EXPECT_EQ(s->status(3).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(5).state, WorkloadState::kPending) << "40 + 30 cores over 62 free";
  s->Finish(3, 700);
  Cycle(*s, 700);
  EXPECT_EQ(s->status(5).state, WorkloadState::kAdmitted) << s->status(5).reason;
}

TEST(DeferredBookingTest, AFreeGpuOnTheReservedNodeIsBookedAtOnce) {
  // a (3 GPUs, ends by 300) and b (4 GPUs, ends by 600) leave 1 GPU of n1 free; `big` (8 GPUs)
  // is reserved n1 from 600, and its phantom takes that GPU. `one-long` (1 GPU, no estimate)
  // must not take it; `one-short` (1 GPU, 60 s) may.
  Model m = Scene();
  m.workloads.push_back(Job("tiny-run", "tiny", 1, 1, std::nullopt));  // 0
  m.workloads.push_back(Job("a", "cq", 3, 1, 300));                    // 1
  m.workloads.push_back(Job("b", "cq", 4, 1, 600));                    // 2
  m.workloads.push_back(Job("big", "cq", 8, 1, 100));                  // 3
  m.workloads.push_back(Job("tiny-next", "tiny", 1, 1, 60));           // 4
  Model m2 = m;
  m.workloads.push_back(Job("one-long", "cq", 1, 1, std::nullopt));  // 5
  m2.workloads.push_back(Job("one-short", "cq", 1, 1, 60));          // 5
  for (bool short_one : {false, true}) {
    auto s = Start(short_one ? m2 : m);
    SubmitFrom(*s, 0, 3, 0);
    Cycle(*s, 0);
    s->Submit(3, 10);
    Cycle(*s, 10);  // big's reservation
    SubmitFrom(*s, 4, 6, 20);
    Cycle(*s, 20);
    EXPECT_EQ(s->status(3).expected_start, 600);
    if (short_one) {
      EXPECT_EQ(s->status(5).state, WorkloadState::kAdmitted) << s->status(5).reason;
    } else {
      EXPECT_EQ(s->status(5).state, WorkloadState::kPending);
      EXPECT_TRUE(Contains(s->status(5).reason, "the reservation of default/big is held"))
          << s->status(5).reason;
    }
  }
}

TEST(DeferredBookingTest, TwoReservationsOnOneNodeBothKeepTheirCores) {
  // Two reservations on n1 (conservative backfill): `big1` (4 GPUs, 20 cores) from a's end at
  // 300, `big2` (4 GPUs, 20 cores) from b's at 600. They share a node, so neither is deferred;
  // together they take 40 of n1's 62 free cores. At 20, `cpu-mid` (20 cores, no estimate) fits
  // in the 22 left; `cpu-long` (30 cores, no estimate), after it, does not.
  Model m = Scene();
  m.config.backfill.reservations_per_queue = 0;
  m.workloads.push_back(Job("tiny-run", "tiny", 1, 1, std::nullopt));  // 0
  m.workloads.push_back(Job("a", "cq", 4, 1, 300));                    // 1
  m.workloads.push_back(Job("b", "cq", 4, 1, 600));                    // 2
  m.workloads.push_back(Job("big1", "cq", 4, 20, 1000));               // 3
  m.workloads.push_back(Job("big2", "cq", 4, 20, 1000));               // 4
  m.workloads.push_back(Job("tiny-next", "tiny", 1, 1, 60));           // 5
  m.workloads.push_back(Job("cpu-mid", "cpu", 0, 20, std::nullopt));   // 6
  m.workloads.push_back(Job("cpu-long", "cpu", 0, 30, std::nullopt));  // 7
  auto s = Start(m);
  SubmitFrom(*s, 0, 3, 0);
  Cycle(*s, 0);
  SubmitFrom(*s, 3, 5, 10);
  Cycle(*s, 10);  // the reservations
  SubmitFrom(*s, 5, 8, 20);
  Cycle(*s, 20);
  EXPECT_EQ(s->status(3).expected_start, 300);
  EXPECT_EQ(s->status(4).expected_start, 600);
  EXPECT_EQ(s->status(6).state, WorkloadState::kAdmitted) << s->status(6).reason;
  EXPECT_EQ(s->status(7).state, WorkloadState::kPending);
  EXPECT_TRUE(Contains(s->status(7).reason, "0 of 1 pods of main fit")) << s->status(7).reason;
  EXPECT_TRUE(Contains(s->status(7).reason, "the reservation of default/big"))
      << s->status(7).reason;
}

// ---------------------------------------------------------------------------------------------
// A waiting preemptor's claim ends, in the plans, at its start plus its estimate (3da2dbf).

TEST(ClaimInPlansTest, AHeadPlansOntoWhatAWaitingPreemptorClaimsFromWhenItsRunWouldEnd) {
  // One node of 8 GPUs, ClusterQueue cq preempting lower priorities. `victim` (low, 4 GPUs, grace
  // 60 s) and `other` (high, 2 GPUs, ends by 200) run; `preemptor` (high, 6 GPUs, 300 s) comes at
  // 100: it preempts `victim` and, while `victim` stops (until 160), claims the 2 free GPUs.
  // `big` (high, 8 GPUs) comes at 110: the GPUs it needs are free once `victim` is gone (160),
  // `other` has ended (200) and the run `preemptor` starts at 160 has ended (460): expected at
  // 480 (ends rounded up to the 60 s resolution; the preemptor's own reservation, from 180, says
  // the same). Were the claim held for the whole plan, the 2 claimed GPUs would never free and
  // `big` would have no expected start ("earlier reservations hold what it needs").
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.config.backfill.reservations_per_queue = 0;  // the waiting preemptor holds one too
  Workload victim = Job("victim", "cq", 4, 1, 1000);
  victim.pod_sets[0].termination_grace = 60;
  m.workloads.push_back(victim);                                     // 0
  m.workloads.push_back(Job("other", "cq", 2, 1, 200, "high"));      // 1
  m.workloads.push_back(Job("preemptor", "cq", 6, 1, 300, "high"));  // 2
  m.workloads.push_back(Job("big", "cq", 8, 1, 100, "high"));        // 3
  auto s = Start(m);
  SubmitFrom(*s, 0, 2, 0);
  Cycle(*s, 0);
  s->Submit(2, 100);
  Cycle(*s, 100);
  ASSERT_EQ(s->status(0).state, WorkloadState::kTerminating);
  ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
  s->Submit(3, 110);
  Cycle(*s, 110);
  ASSERT_EQ(s->status(3).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(3).expected_start, 480) << s->status(3).reason;
  // The victim is gone at 160: the preemptor starts, and big's expected start stands.
  Cycle(*s, 160);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted) << s->status(2).reason;
  EXPECT_EQ(s->status(3).expected_start, 480) << s->status(3).reason;
}

}  // namespace
}  // namespace tessera
