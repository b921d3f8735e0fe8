// Unit tests of the engine's time rules (issue 14, docs/time.md): runtime estimates
// (RuntimeEstimator), reservations and backfill as a pending workload's status shows them
// (expected_start, the reason), the rule that a reservation never causes a preemption, wait
// limits and minimum runtimes as the engine applies them, and FormatSpan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"
#include "engine/time/estimator.h"
#include "engine/time/span.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::Cycle;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

// ---------------------------------------------------------------------------------------------
// RuntimeEstimator

TEST(RuntimeEstimatorTest, NamePrefixDropsCountersAndGeneratedSuffixes) {
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train-17"), "train");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train.3"), "train");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train_3"), "train");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("sweep-00001"), "sweep");  // generateName's counter
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train-x7k2p"), "train");  // Kubernetes' generateName
  EXPECT_EQ(RuntimeEstimator::NamePrefix("bert-large-9"), "bert-large");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train17"), "train");
  // Not generated: five letters without a digit, or upper case.
  EXPECT_EQ(RuntimeEstimator::NamePrefix("job-abcde"), "job-abcde");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("job-A7K2P"), "job-A7K2P");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("train"), "train");
  // Nothing would be left: the whole name.
  EXPECT_EQ(RuntimeEstimator::NamePrefix("12345"), "12345");
  EXPECT_EQ(RuntimeEstimator::NamePrefix("-7"), "-7");
  EXPECT_EQ(RuntimeEstimator::NamePrefix(""), "");
}

Workload Named(std::string name, std::string queue = "q") {
  Workload w;
  w.name = std::move(name);
  w.queue_name = std::move(queue);
  return w;
}

// Adds workloads to an estimator in order (their ids are their indices).
struct Fixture {
  explicit Fixture(EstimatorConfig c = {}) : est(c) {}
  WorkloadId Add(Workload w) {
    est.Add(w);
    ws.push_back(std::move(w));
    return static_cast<WorkloadId>(ws.size() - 1);
  }
  std::optional<double> Estimate(WorkloadId id) const { return est.Estimate(id, ws[id]); }
  RuntimeEstimator est;
  std::vector<Workload> ws;
};

TEST(RuntimeEstimatorTest, LearnsAHighQuantileOnlyAfterMinSamples) {
  Fixture f;  // quantile 0.9, minSamples 3, no default
  const WorkloadId next = f.Add(Named("train-99"));
  EXPECT_EQ(f.Estimate(next), std::nullopt);
  f.est.Observe(f.Add(Named("train-1")), 100);
  f.est.Observe(f.Add(Named("train-2")), 300);
  EXPECT_EQ(f.Estimate(next), std::nullopt) << "2 runs seen, minSamples is 3";
  f.est.Observe(f.Add(Named("train-3")), 200);
  // Nearest rank: ceil(0.9 * 3) = the 3rd of {100, 200, 300}.
  EXPECT_EQ(f.Estimate(next), 300);
  for (int i = 4; i <= 10; ++i) f.est.Observe(f.Add(Named("train-" + std::to_string(i))), 10);
  // Ten runs {10 x7, 100, 200, 300}: the 9th is 200.
  EXPECT_EQ(f.Estimate(next), 200);
}

TEST(RuntimeEstimatorTest, PrefixHistoryFirstThenTheLocalQueue) {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.est.Observe(f.Add(Named("train-" + std::to_string(i))), 1000);
  // `eval` has no history of its own: the LocalQueue's runs.
  const WorkloadId eval = f.Add(Named("eval-7"));
  EXPECT_EQ(f.Estimate(eval), 1000);
  for (int i = 0; i < 3; ++i) f.est.Observe(f.Add(Named("eval-" + std::to_string(i))), 50);
  EXPECT_EQ(f.Estimate(eval), 50) << "its own prefix once it has minSamples runs";
  // Another LocalQueue (or namespace) learns nothing from these.
  EXPECT_EQ(f.Estimate(f.Add(Named("train-9", "other"))), std::nullopt);
  Workload elsewhere = Named("train-9");
  elsewhere.ns = "team-b";
  EXPECT_EQ(f.Estimate(f.Add(elsewhere)), std::nullopt);
  // Without a LocalQueue nothing is learned.
  Workload unqueued = Named("train-10", "");
  const WorkloadId u = f.Add(unqueued);
  f.est.Observe(u, 5);
  EXPECT_EQ(f.Estimate(u), std::nullopt);
}

TEST(RuntimeEstimatorTest, TheUsersEstimateWins) {
  Fixture f;
  for (int i = 0; i < 5; ++i) f.est.Observe(f.Add(Named("train-" + std::to_string(i))), 1000);
  Workload w = Named("train-42");
  w.runtime_estimate = 42;
  EXPECT_EQ(f.Estimate(f.Add(w)), 42);
}

TEST(RuntimeEstimatorTest, LearnedIsCappedByTheDeadlineAndTheDeadlineAloneIsAnEstimate) {
  EstimatorConfig c;
  c.default_estimate = 7200;
  Fixture f(c);
  Workload bounded = Named("train-42");
  bounded.active_deadline = 600;
  // No history: the deadline, not the default.
  EXPECT_EQ(f.Estimate(f.Add(bounded)), 600);
  for (int i = 0; i < 3; ++i) f.est.Observe(f.Add(Named("train-" + std::to_string(i))), 1000);
  EXPECT_EQ(f.Estimate(f.Add(bounded)), 600) << "learned 1000, capped by the 600s deadline";
  bounded.active_deadline = 5000;
  EXPECT_EQ(f.Estimate(f.Add(bounded)), 1000) << "learned 1000, under the deadline";
  // Neither an estimate nor a deadline nor history: the configured default.
  EXPECT_EQ(f.Estimate(f.Add(Named("fresh", "other"))), 7200);
}

TEST(RuntimeEstimatorTest, HistoryKeepsOnlyTheLastRuns) {
  EstimatorConfig c;
  c.history = 3;
  c.quantile = 1.0;  // the longest kept
  Fixture f(c);
  const WorkloadId next = f.Add(Named("x-0"));
  for (double r : {900.0, 10.0, 20.0, 30.0}) f.est.Observe(f.Add(Named("x-1")), r);
  EXPECT_EQ(f.Estimate(next), 30) << "900 fell out of a history of 3";
}

// ---------------------------------------------------------------------------------------------
// Reservations, expected starts and backfill, through the Scheduler.

Workload Job(const std::string& name, int gpus, std::optional<double> estimate,
             std::string priority = "low") {
  Workload w = WL(name).Queue("cq").Pods(1, gpus).Priority(std::move(priority)).Obj();
  w.runtime_estimate = estimate;
  return w;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ReservationTest, HeadBehindEstimatedWorkGetsAnExpectedStart) {
  // One node of 8 GPUs: `a` (4 GPUs, 5m) and `b` (2 GPUs, 10m) run; `big` (8) waits for both.
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(Job("a", 4, 300));
  m.workloads.push_back(Job("b", 2, 600));
  m.workloads.push_back(Job("big", 8, 100));
  auto s = Start(m);
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  s->Submit(2, 10);
  Cycle(*s, 10);
  ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(2).expected_start, 600);
  const std::string& reason = s->status(2).reason;
  EXPECT_TRUE(Contains(reason,
                       "expected to start in 10m (t=600s) when 2 running workload(s) of cq "
                       "end; held: 8 GPU(s) on n1"))
      << reason;
  // `a` ends early: the reservation moves to b's end (no earlier), and still says so.
  s->Finish(0, 100);
  Cycle(*s, 100);
  EXPECT_EQ(s->status(2).expected_start, 600);
  EXPECT_TRUE(Contains(s->status(2).reason, "when 1 running workload(s) of cq end"))
      << s->status(2).reason;
  // `b` ends: `big` starts, and no longer carries an expected start.
  s->Finish(1, 200);
  Cycle(*s, 200);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).expected_start, -1);
  EXPECT_TRUE(s->status(2).reason.empty()) << s->status(2).reason;
}

TEST(ReservationTest, AnOverrunMovesTheReservationInsteadOfKillingAnything) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(Job("a", 8, 300));
  m.workloads.push_back(Job("big", 8, 100));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  EXPECT_EQ(s->status(1).expected_start, 300);
  // At 400 `a` has outlived its estimate: it may end any moment, counted from now, rounded up to
  // the 1m resolution: ceil(400 / 60) * 60 = 420. Nothing is preempted or failed.
  std::vector<Decision> d = s->RunCycle(400);
  for (const Decision& x : d) EXPECT_NE(x.type, Decision::Type::kPreempt);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(1).expected_start, 420) << s->status(1).reason;
}

TEST(ReservationTest, NoEstimateInTheWayMeansNoExpectedStart) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(Job("a", 4, 300));
  m.workloads.push_back(Job("forever", 4, std::nullopt));
  m.workloads.push_back(Job("big", 8, 100));
  auto s = Start(m);
  s->Submit(0, 0);
  s->Submit(1, 0);
  Cycle(*s, 0);
  s->Submit(2, 10);
  Cycle(*s, 10);
  ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(2).expected_start, -1);
  EXPECT_TRUE(Contains(s->status(2).reason,
                       "no expected start: 1 running workload(s) have no runtime estimate"))
      << s->status(2).reason;
}

// A head whose start waits for another queue's reservation (planned first: it is earlier in
// queue order) is expected when that reservation ends. One node of 8 GPUs; ClusterQueues q0 and
// q1. `running` (q0, 8 GPUs, estimate 300) runs from 0; `small` (q1, 1 GPU, estimate 100)
// arrives at 10 and reserves 1 GPU for [300, 400); `big` (q0, 8 GPUs) arrives at 20: expected
// at 400. (Found by time_property_test: the plan once advanced over running workloads' ends
// only, never over the end of an earlier reservation, and gave no start.)
TEST(ReservationTest, HeadBehindAnotherQueuesReservationGetsAnExpectedStart) {
  Model m = MakeModel({MakeNode("n1", 8)},
                      {CQ("q0").Gpus("gpu", 8).Obj(), CQ("q1").Gpus("gpu", 8).Obj()});
  Workload running = Job("running", 8, 300);
  running.queue_name = "q0";
  Workload small = Job("small", 1, 100);
  small.queue_name = "q1";
  Workload big = Job("big", 8, 100);
  big.queue_name = "q0";
  m.workloads = {running, small, big};
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  EXPECT_EQ(s->status(1).expected_start, 300) << s->status(1).reason;
  s->Submit(2, 20);
  Cycle(*s, 20);
  Cycle(*s, 20);
  ASSERT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(2).expected_start, 400) << s->status(2).reason;
}

TEST(ReservationTest, ExpectedStartFromLearnedRuntimes) {
  // Three `train-N` runs of 200s finish; `train-4` (no estimate of its own) then runs, and the
  // head behind it is expected when a 200s run started at 600 would end.
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  for (int i = 1; i <= 4; ++i)
    m.workloads.push_back(Job("train-" + std::to_string(i), 8, std::nullopt));
  m.workloads.push_back(Job("big", 8, 100));
  auto s = Start(m);
  for (WorkloadId id = 0; id < 3; ++id) {
    s->Submit(id, 200.0 * id);
    Cycle(*s, 200.0 * id);
    ASSERT_EQ(s->status(id).state, WorkloadState::kAdmitted);
    s->Finish(id, 200.0 * (id + 1));
  }
  s->Submit(3, 600);
  Cycle(*s, 600);
  s->Submit(4, 610);
  Cycle(*s, 610);
  EXPECT_EQ(s->status(4).expected_start, 840) << s->status(4).reason;  // 800 rounded up to 1m
}

TEST(ReservationTest, ExpectedStartFromAnActiveDeadline) {
  // `bounded` has no estimate but a 600s deadline: that is the latest it can end.
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  Workload bounded = Job("bounded", 6, std::nullopt);
  bounded.active_deadline = 600;
  m.workloads.push_back(bounded);
  m.workloads.push_back(Job("big", 8, 100));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  EXPECT_EQ(s->status(1).expected_start, 600) << s->status(1).reason;
}

TEST(BackfillTest, ShortJobGoesOnTheReservedNodeALongOneIsRefusedWithTheReason) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(Job("running", 6, 600));
  m.workloads.push_back(Job("big", 8, 100));
  m.workloads.push_back(Job("short", 2, 300));
  m.workloads.push_back(Job("long", 2, 1200));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  EXPECT_EQ(s->status(1).expected_start, 600);
  s->Submit(3, 20);  // `long` first: the 2 free GPUs are the reservation's
  Cycle(*s, 20);
  EXPECT_EQ(s->status(3).state, WorkloadState::kPending);
  // The refusal names the reservation ("would delay the reservation of default/big").
  EXPECT_TRUE(Contains(s->status(3).reason, "reservation of default/big")) << s->status(3).reason;
  s->Submit(2, 30);  // `short` ends at 330, before 600
  Cycle(*s, 30);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).pods.at(0).node, 0);
  EXPECT_EQ(s->status(3).state, WorkloadState::kPending);
  EXPECT_EQ(s->status(1).expected_start, 600) << "the backfilled job did not move it";
}

TEST(BackfillTest, OffByConfigThereIsNoReservation) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.config.backfill.enable = false;
  m.workloads.push_back(Job("running", 6, 600));
  m.workloads.push_back(Job("big", 8, 100));
  m.workloads.push_back(Job("long", 2, 1200));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  EXPECT_EQ(s->status(1).expected_start, -1);
  s->Submit(2, 20);
  Cycle(*s, 20);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted) << "BestEffortFIFO: it goes ahead";
}

// Runs low-run (6 of 8 GPUs, estimate 600) from 0, `big` (8 GPUs, of `big_class`) from 10 and
// `mid` (2 GPUs, estimate 1200, of `mid_class`) from 20, on a queue that preempts lower
// priorities; settles each instant as the simulator does. Returns every decision.
struct HeldBackRun {
  std::unique_ptr<Scheduler> s;
  std::vector<Decision> decisions;
};
HeldBackRun RunHeldBack(bool backfill, const std::string& big_class, const std::string& mid_class) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  m.config.backfill.enable = backfill;
  m.workloads.push_back(Job("low-run", 6, 600, "low"));
  m.workloads.push_back(Job("big", 8, 100, big_class));
  m.workloads.push_back(Job("mid", 2, 1200, mid_class));
  HeldBackRun run{Start(m), {}};
  Scheduler& s = *run.s;
  const double at[] = {0, 10, 20};
  for (WorkloadId id = 0; id < 3; ++id) {
    s.Submit(id, at[id]);
    for (int i = 0; i < 10; ++i) {
      auto d = s.RunCycle(at[id]);
      EXPECT_TRUE(s.Verify().ok()) << s.Verify();
      if (d.empty()) break;
      run.decisions.insert(run.decisions.end(), d.begin(), d.end());
    }
  }
  return run;
}

std::vector<WorkloadId> Preempted(const std::vector<Decision>& ds) {
  std::vector<WorkloadId> out;
  for (const Decision& d : ds)
    if (d.type == Decision::Type::kPreempt) out.push_back(d.workload);
  return out;
}

// A reservation never makes the engine preempt. `big` (high, preemptionPolicy: Never) reserves
// the node from 600; `mid` (high too, so later in queue order: a backfill candidate, and it may
// preempt `low-run`) would fit in the 2 free GPUs but for the reservation. With backfill off it
// starts there, preempting nothing; with backfill on it waits, and must not preempt `low-run`
// to get around the reservation.
TEST(BackfillTest, AReservationNeverCausesAPreemption) {
  const HeldBackRun off = RunHeldBack(false, "high-never", "high");
  EXPECT_TRUE(Preempted(off.decisions).empty());
  EXPECT_EQ(off.s->status(2).state, WorkloadState::kAdmitted);
  const HeldBackRun on = RunHeldBack(true, "high-never", "high");
  EXPECT_TRUE(Preempted(on.decisions).empty()) << "a preemption only because of a reservation";
  const Scheduler* s = on.s.get();
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);
  EXPECT_TRUE(Contains(s->status(2).reason, "reservation of default/big")) << s->status(2).reason;
  EXPECT_EQ(s->status(1).expected_start, 600) << s->status(1).reason;
}

// Backfill concerns workloads later in queue order than a reservation's. `mid` (high) is ahead
// of `big` (low) in queue order: it is not a backfill candidate and starts at once in the free
// GPUs, as it does with backfill off; `big` keeps waiting for `low-run`.
//
// Only the reservations of workloads that go before it in queue order are held for an attempt:
// `mid` (priority 100, 2 GPUs, arrives at 20 with 2 GPUs free) is admitted at 20 although `big`
// (priority 10) holds a reservation that starts before `mid` would end. (Found by
// time_test: it was once refused "would delay the reservation of default/big" and left idle
// GPUs for 580 s.)
TEST(BackfillTest, AHigherPriorityArrivalIsNotHeldBackByALowerPriorityReservation) {
  const HeldBackRun off = RunHeldBack(false, "low", "high");
  EXPECT_EQ(off.s->status(2).state, WorkloadState::kAdmitted);
  const HeldBackRun on = RunHeldBack(true, "low", "high");
  EXPECT_EQ(on.s->status(2).state, WorkloadState::kAdmitted) << on.s->status(2).reason;
  EXPECT_TRUE(Preempted(on.decisions).empty());
}

// ---------------------------------------------------------------------------------------------
// Wait limits and minimum runtimes.

TEST(WaitLimitTest, AnOverdueWorkloadGoesAheadOfItsPriorityNotAboveAHigherOne) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.workloads.push_back(Job("blocker", 8, 1000));
  m.workloads.push_back(Job("first", 8, 100));
  Workload second = Job("second", 8, 100);
  second.max_wait = 300;
  m.workloads.push_back(second);
  m.workloads.push_back(Job("vip", 8, 100, "high"));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 1);
  s->Submit(2, 2);
  s->Submit(3, 3);
  Cycle(*s, 3);
  EXPECT_EQ(s->NextTimer(3), 302);
  std::vector<Decision> d = s->RunCycle(302);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kWaitLimitExceeded);
  EXPECT_EQ(d[0].workload, 2);
  EXPECT_TRUE(Contains(d[0].reason,
                       "waited 5m (its wait limit is 5m): now ahead of the other "
                       "workloads of priority 10 in ClusterQueue cq"))
      << d[0].reason;
  EXPECT_TRUE(std::isinf(s->NextTimer(302)));
  s->Finish(0, 1000);
  Cycle(*s, 1000);
  EXPECT_EQ(s->status(3).state, WorkloadState::kAdmitted) << "priority still wins";
  s->Finish(3, 1100);
  Cycle(*s, 1100);
  EXPECT_EQ(s->status(2).state, WorkloadState::kAdmitted) << "the overdue one before `first`";
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
}

TEST(WaitLimitTest, ClusterQueueDefaultApplies) {
  ClusterQueue cq = CQ("cq").Gpus("gpu", 8).Obj();
  cq.max_wait = 60;  // tessera.dev/max-wait on the ClusterQueue
  Model m = MakeModel({MakeNode("n1", 8)}, {cq});
  m.workloads.push_back(Job("blocker", 8, 1000));
  m.workloads.push_back(Job("early", 8, 100));
  m.workloads.push_back(Job("w", 8, 100));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 4);
  s->Submit(2, 5);
  Cycle(*s, 5);
  // `blocker` was admitted at once: its limit, had it waited, would end at 60; nothing happens.
  EXPECT_TRUE(s->RunCycle(60).empty());
  std::vector<Decision> d = s->RunCycle(64);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Decision::Type::kWaitLimitExceeded);
  EXPECT_EQ(d[0].workload, 1);
  EXPECT_EQ(s->NextTimer(64), 65);
  d = s->RunCycle(65);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].workload, 2);
  // Both overdue: among them, creation order again.
  s->Finish(0, 1000);
  Cycle(*s, 1000);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(2).state, WorkloadState::kPending);
}

TEST(MinRuntimeTest, NoPreemptionBeforeTheMinimumRuntimeThenTheTimerWakesThePreemptor) {
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  Workload victim = Job("victim", 8, std::nullopt);
  victim.min_runtime = 600;
  m.workloads.push_back(victim);
  m.workloads.push_back(Job("urgent", 8, 100, "high"));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 100);
  std::vector<Decision> d = s->RunCycle(100);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->NextTimer(100), 600) << "the protection's end is an instant of its own";
  d = s->RunCycle(599);
  EXPECT_TRUE(d.empty());
  d = s->RunCycle(600);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].workload, 0);
  EXPECT_EQ(d[1].type, Decision::Type::kAdmit);
  EXPECT_EQ(d[1].workload, 1);
  EXPECT_TRUE(s->Verify().ok()) << s->Verify();
}

TEST(MinRuntimeTest, ClusterQueueMinRuntimeAppliesToWorkloadsWithoutOne) {
  ClusterQueue cq =
      CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj();
  cq.min_runtime = 300;
  Model m = MakeModel({MakeNode("n1", 8)}, {cq});
  m.workloads.push_back(Job("victim", 8, std::nullopt));
  m.workloads.push_back(Job("urgent", 8, 100, "high"));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 100);
  EXPECT_TRUE(s->RunCycle(100).empty());
  EXPECT_EQ(s->NextTimer(100), 300);
  EXPECT_EQ(s->RunCycle(300).size(), 2u);
}

TEST(CheckpointVictimTest, TheVictimThatLosesLeastWorkIsTaken) {
  // Equal victims (priority, GPUs). `ckpt` (older, checkpoints every 100s) loses 50s at t=250;
  // `plain` (newer, no checkpoints) would lose 240s. Without checkpoints the newest goes.
  Model m = MakeModel(
      {MakeNode("n1", 8)},
      {CQ("cq").Gpus("gpu", 8).WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Obj()});
  Workload ckpt = Job("ckpt", 4, std::nullopt);
  ckpt.checkpoint_interval = 100;
  m.workloads.push_back(ckpt);
  m.workloads.push_back(Job("plain", 4, std::nullopt));
  m.workloads.push_back(Job("urgent", 4, 100, "high"));
  auto s = Start(m);
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 10);
  Cycle(*s, 10);
  s->Submit(2, 250);
  std::vector<Decision> d = s->RunCycle(250);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].type, Decision::Type::kPreempt);
  EXPECT_EQ(d[0].workload, 0) << "the checkpointed victim loses 50s, the other 240s";
  // Just before its next checkpoint it would lose more than `plain`.
  Model m2 = m;
  auto s2 = Start(m2);
  s2->Submit(0, 0);
  Cycle(*s2, 0);
  s2->Submit(1, 10);
  Cycle(*s2, 10);
  s2->Submit(2, 99);
  d = s2->RunCycle(99);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].workload, 1) << "at 99 `ckpt` would lose 99s, `plain` 89s";
}

// ---------------------------------------------------------------------------------------------
// FormatSpan

TEST(FormatSpanTest, RoundsUpToTheUnitShown) {
  EXPECT_EQ(FormatSpan(0), "0s");
  EXPECT_EQ(FormatSpan(-5), "0s");
  EXPECT_EQ(FormatSpan(0.2), "1s");
  EXPECT_EQ(FormatSpan(45), "45s");
  EXPECT_EQ(FormatSpan(59), "59s");
  EXPECT_EQ(FormatSpan(60), "1m");
  EXPECT_EQ(FormatSpan(61), "2m");
  EXPECT_EQ(FormatSpan(720), "12m");
  EXPECT_EQ(FormatSpan(3600), "1h");
  EXPECT_EQ(FormatSpan(3601), "1h1m");
  EXPECT_EQ(FormatSpan(3 * 3600 + 600), "3h10m");
  EXPECT_EQ(FormatSpan(86400), "1d");
  EXPECT_EQ(FormatSpan(2 * 86400 + 4 * 3600), "2d4h");
  EXPECT_EQ(FormatSpan(2 * 86400 + 1), "2d1h");
  EXPECT_EQ(FormatSpan(std::numeric_limits<double>::infinity()), "forever");
  EXPECT_EQ(FormatSpan(std::numeric_limits<double>::quiet_NaN()), "forever");
}

// Rounding up carries into the next unit: just under an hour reads "1h", not "60m".
TEST(FormatSpanTest, RoundingUpCarriesIntoTheNextUnit) {
  EXPECT_EQ(FormatSpan(3599), "1h");
  EXPECT_EQ(FormatSpan(3541), "1h");
  EXPECT_EQ(FormatSpan(86399), "1d");
  EXPECT_EQ(FormatSpan(86340 + 1), "1d");
}

}  // namespace
}  // namespace tessera
