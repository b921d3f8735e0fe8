// Property tests of the simulator over random loaded clusters: 40 nodes, 8 ClusterQueues in 2
// cohorts with borrowing and lending limits and every preemption policy (reclaimWithinCohort
// included), mixed priorities and 300 jobs (some gangs) arriving over time, each with a runtime.
// On the simulator's event list:
//   - every admission that finishes ran exactly its runtime (the finish belongs to the latest
//     admission; an earlier admission that was preempted never finishes the workload);
//   - no workload is admitted and preempted at the same instant (in Kubernetes that is a bind
//     followed by the eviction of a pod that never ran);
//   - every admitted workload with a runtime finishes;
// and the simulator checks the engine's invariants (Scheduler::Verify) after every cycle.
//
// A failure prints the scenario as a manifest set (tests/scenarios/*.yaml form).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/test_builders.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {

// A random scenario as plain data, so that rapidcheck can shrink it and print it.
struct SimScenario {
  struct Queue {
    int cohort = 0;
    int nominal = 0;
    int borrow = -1;  // borrowingLimit; -1: none
    int lend = -1;    // lendingLimit; -1: none
    WithinClusterQueuePolicy within = WithinClusterQueuePolicy::kNever;
    ReclaimPolicy reclaim = ReclaimPolicy::kNever;
    bool borrow_within_cohort = false;  // borrowWithinCohort: LowerPriority
  };
  struct Job {
    int queue = 0;
    int pods = 1;
    int gpus = 1;  // per pod
    int min = -1;  // pods that must start together; -1: all
    std::string priority = "low";
    int arrival = 0;
    int runtime = 1;
  };
  std::vector<int> nodes;  // GPUs of each node
  std::vector<Queue> queues;
  std::vector<Job> jobs;
};

namespace {

const char* WithinName(WithinClusterQueuePolicy p) {
  switch (p) {
    case WithinClusterQueuePolicy::kNever:
      return "Never";
    case WithinClusterQueuePolicy::kLowerPriority:
      return "LowerPriority";
    case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
      return "LowerOrNewerEqualPriority";
  }
  return "?";
}

const char* ReclaimName(ReclaimPolicy p) {
  switch (p) {
    case ReclaimPolicy::kNever:
      return "Never";
    case ReclaimPolicy::kLowerPriority:
      return "LowerPriority";
    case ReclaimPolicy::kAny:
      return "Any";
  }
  return "?";
}

// The priority classes of testing::MakeModel, plus "mid".
int PriorityValue(const std::string& name) {
  if (name == "low") return 10;
  if (name == "mid") return 50;
  return 100;
}

}  // namespace

// The scenario as manifests that `tessera sim` and scenario_runner read.
std::string ScenarioYaml(const SimScenario& s) {
  std::string out;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    out += fmt::format(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: node-{}, labels: {{rack: r{}}}}}\n"
        "status: {{allocatable: {{cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: "
        "\"{}\"}}}}\n---\n",
        i, i / 4, s.nodes[i]);
  }
  for (const char* pc : {"low", "mid", "high", "high-never"}) {
    out += fmt::format(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {}}}\n"
        "value: {}\n{}---\n",
        pc, PriorityValue(pc), std::string(pc) == "high-never" ? "preemptionPolicy: Never\n" : "");
  }
  out += "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\n";
  for (size_t q = 0; q < s.queues.size(); ++q) {
    const auto& cq = s.queues[q];
    std::string limits;
    if (cq.borrow >= 0) limits += fmt::format(", borrowingLimit: {}", cq.borrow);
    if (cq.lend >= 0) limits += fmt::format(", lendingLimit: {}", cq.lend);
    out += fmt::format(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: q{}}}\n"
        "spec:\n  cohort: c{}\n  namespaceSelector: {{}}\n"
        "  preemption: {{withinClusterQueue: {}, reclaimWithinCohort: {}{}}}\n"
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
        "    - name: gpu\n      resources: [{{name: nvidia.com/gpu, nominalQuota: {}{}}}]\n---\n",
        q, cq.cohort, WithinName(cq.within), ReclaimName(cq.reclaim),
        cq.borrow_within_cohort ? ", borrowWithinCohort: {policy: LowerPriority}" : "", cq.nominal,
        limits);
    out += fmt::format(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: q{}}}\n"
        "spec: {{clusterQueue: q{}}}\n---\n",
        q, q);
  }
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& job = s.jobs[j];
    std::string annotations = fmt::format(
        "tessera.dev/arrival: \"{}\", tessera.dev/runtime: \"{}\"", job.arrival, job.runtime);
    if (job.min >= 0) {
      // A Volcano Job carries minAvailable.
      out += fmt::format(
          "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: j{}, "
          "annotations: {{{}}}}}\nspec:\n  queue: q{}\n  minAvailable: {}\n"
          "  priorityClassName: {}\n  tasks:\n  - name: main\n    replicas: {}\n    template:\n"
          "      spec: {{containers: [{{name: c, image: x, resources: {{limits: "
          "{{nvidia.com/gpu: \"{}\"}}}}}}]}}\n---\n",
          j, annotations, job.queue, job.min, job.priority, job.pods, job.gpus);
    } else {
      out += fmt::format(
          "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j{}, labels: "
          "{{kueue.x-k8s.io/queue-name: q{}}}, annotations: {{{}}}}}\n"
          "spec: {{parallelism: {}, template: {{spec: {{priorityClassName: {}, containers: "
          "[{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: \"{}\"}}}}}}]}}}}}}\n---\n",
          j, job.queue, annotations, job.pods, job.priority, job.gpus);
    }
  }
  return out;
}

void showValue(const SimScenario& s, std::ostream& os) {
  os << s.nodes.size() << " nodes, " << s.queues.size() << " ClusterQueues, " << s.jobs.size()
     << " jobs; as manifests:\n"
     << ScenarioYaml(s);
}

namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

rc::Gen<SimScenario::Queue> QueueGen(int cohort) {
  return rc::gen::exec([cohort] {
    SimScenario::Queue q;
    q.cohort = cohort;
    q.nominal = *rc::gen::inRange(0, 49);
    if (*rc::gen::inRange(0, 2) == 0) q.borrow = *rc::gen::inRange(0, 33);
    if (*rc::gen::inRange(0, 2) == 0) q.lend = *rc::gen::inRange(0, q.nominal + 1);
    q.within = *rc::gen::element(WithinClusterQueuePolicy::kNever,
                                 WithinClusterQueuePolicy::kLowerPriority,
                                 WithinClusterQueuePolicy::kLowerOrNewerEqualPriority);
    q.reclaim = *rc::gen::element(ReclaimPolicy::kNever, ReclaimPolicy::kLowerPriority,
                                  ReclaimPolicy::kAny, ReclaimPolicy::kAny);
    q.borrow_within_cohort = *rc::gen::inRange(0, 4) == 0;
    return q;
  });
}

rc::Gen<SimScenario::Job> JobGen(int queues) {
  return rc::gen::exec([queues] {
    SimScenario::Job j;
    j.queue = *rc::gen::inRange(0, queues);
    j.pods = *rc::gen::element(1, 1, 1, 2, 2, 4);
    j.gpus = *rc::gen::element(1, 1, 2, 4, 8);
    if (j.pods > 1 && *rc::gen::inRange(0, 4) == 0) j.min = *rc::gen::inRange(1, j.pods + 1);
    j.priority = *rc::gen::element(std::string("low"), std::string("low"), std::string("mid"),
                                   std::string("high"), std::string("high-never"));
    j.arrival = *rc::gen::inRange(0, 10000);
    j.runtime = *rc::gen::inRange(100, 3000);
    return j;
  });
}

SimScenario RandomScenario() {
  SimScenario s;
  s.nodes = *rc::gen::container<std::vector<int>>(40, rc::gen::element(4, 8, 8));
  for (int q = 0; q < 8; ++q) s.queues.push_back(*QueueGen(q / 4));
  s.jobs = *rc::gen::container<std::vector<SimScenario::Job>>(300, JobGen(8));
  return s;
}

Model BuildModel(const SimScenario& s) {
  std::vector<Node> nodes;
  for (size_t i = 0; i < s.nodes.size(); ++i)
    nodes.push_back(
        MakeNode("node-" + std::to_string(i), s.nodes[i], {{"rack", "r" + std::to_string(i / 4)}}));
  std::vector<ClusterQueue> cqs;
  for (size_t q = 0; q < s.queues.size(); ++q) {
    const auto& spec = s.queues[q];
    CQ cq("q" + std::to_string(q));
    cq.Cohort("c" + std::to_string(spec.cohort));
    cq.Gpus("gpu", spec.nominal, spec.borrow, spec.lend);
    cq.WithinQueue(spec.within);
    cq.Reclaim(spec.reclaim);
    ClusterQueue obj = cq.Obj();
    if (spec.borrow_within_cohort)
      obj.preemption.borrow_within_cohort = BorrowWithinCohortPolicy::kLowerPriority;
    cqs.push_back(std::move(obj));
  }
  Model m = MakeModel(nodes, cqs);
  m.priority_classes.push_back({"mid", 50, false, false, "", false});
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const auto& spec = s.jobs[j];
    WL wl("j" + std::to_string(j));
    wl.Queue("q" + std::to_string(spec.queue));
    wl.Pods(spec.pods, spec.gpus);
    if (spec.min >= 0) wl.Min(spec.min);
    wl.Priority(spec.priority);
    wl.Arrive(spec.arrival);
    wl.Runtime(spec.runtime);
    m.workloads.push_back(wl.Obj());
  }
  return m;
}

// Every finish belongs to the workload's latest admission, which ran exactly its runtime; every
// admitted workload with a runtime finishes. Returns the first violation.
std::optional<std::string> CheckRuntimes(const Simulator& sim) {
  const Model& m = sim.scheduler().model();
  std::map<WorkloadId, double> running;  // workload -> time of its current admission
  for (const auto& e : sim.events()) {
    const std::string key = m.workloads[e.workload].Key();
    switch (e.type) {
      case SimEvent::Type::kAdmitted:
        if (running.count(e.workload))
          return fmt::format("t={}: {} admitted while running", e.time, key);
        running[e.workload] = e.time;
        break;
      case SimEvent::Type::kPreempted:
        running.erase(e.workload);
        break;
      case SimEvent::Type::kMoved:  // a new run at the new place (consolidation)
        running[e.workload] = e.time;
        break;
      case SimEvent::Type::kFinished: {
        auto it = running.find(e.workload);
        if (it == running.end())
          return fmt::format("t={}: {} finished while not running", e.time, key);
        const double runtime = *m.workloads[e.workload].runtime;
        if (e.time - it->second != runtime) {
          return fmt::format("t={}: {} admitted at t={} finished after {}s; its runtime is {}s",
                             e.time, key, it->second, e.time - it->second, runtime);
        }
        running.erase(it);
        break;
      }
      default:
        break;
    }
  }
  if (!running.empty()) {
    return fmt::format("{} admitted at t={} never finished",
                       m.workloads[running.begin()->first].Key(), running.begin()->second);
  }
  return std::nullopt;
}

// No workload is preempted at the instant it was admitted.
std::optional<std::string> CheckNoAdmitPreemptSameInstant(const Simulator& sim) {
  const Model& m = sim.scheduler().model();
  std::map<WorkloadId, double> admitted_at;
  for (const auto& e : sim.events()) {
    if (e.type == SimEvent::Type::kAdmitted) admitted_at[e.workload] = e.time;
    if (e.type == SimEvent::Type::kPreempted) {
      auto it = admitted_at.find(e.workload);
      if (it != admitted_at.end() && it->second == e.time) {
        return fmt::format("t={}: {} was admitted and preempted (by {}: {}) at the same instant",
                           e.time, m.workloads[e.workload].Key(), m.workloads[e.preemptor].Key(),
                           e.reason);
      }
    }
  }
  return std::nullopt;
}

// Removes jobs, nodes and queues, and simplifies jobs, while `fails` still holds: a small
// counterexample instead of 300 jobs. Greedy (chunks of halving size, then single items).
SimScenario Minimize(SimScenario s, const std::function<bool(const SimScenario&)>& fails) {
  auto remove_items = [&](auto member) {
    for (size_t chunk = (s.*member).size() / 2; chunk >= 1; chunk /= 2) {
      for (size_t i = 0; i < (s.*member).size();) {
        SimScenario t = s;
        auto& v = t.*member;
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(i),
                v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), i + chunk)));
        if (!v.empty() && fails(t)) {
          s = std::move(t);
        } else {
          i += chunk;
        }
      }
    }
  };
  remove_items(&SimScenario::jobs);
  remove_items(&SimScenario::nodes);
  // Queues: drop those no job uses (renumbering the jobs' queues).
  for (size_t q = s.queues.size(); q-- > 0;) {
    bool used = false;
    for (const auto& j : s.jobs) used = used || j.queue == static_cast<int>(q);
    if (used) continue;
    SimScenario t = s;
    t.queues.erase(t.queues.begin() + static_cast<std::ptrdiff_t>(q));
    for (auto& j : t.jobs)
      if (j.queue > static_cast<int>(q)) --j.queue;
    if (fails(t)) s = std::move(t);
  }
  // Simpler queues: no limits, no preemption they do not need.
  for (size_t q = 0; q < s.queues.size(); ++q) {
    for (auto simplify :
         {+[](SimScenario::Queue& c) { c.borrow = -1; },
          +[](SimScenario::Queue& c) { c.lend = -1; },
          +[](SimScenario::Queue& c) { c.within = WithinClusterQueuePolicy::kNever; },
          +[](SimScenario::Queue& c) { c.reclaim = ReclaimPolicy::kNever; },
          +[](SimScenario::Queue& c) { c.borrow_within_cohort = false; },
          +[](SimScenario::Queue& c) { c.cohort = 0; }}) {
      SimScenario t = s;
      simplify(t.queues[q]);
      if (fails(t)) s = std::move(t);
    }
  }
  // Simpler jobs: whole gangs, one pod, low priority, earlier and rounder times.
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    for (auto simplify :
         {+[](SimScenario::Job& j) { j.min = -1; }, +[](SimScenario::Job& j) { j.pods = 1; },
          +[](SimScenario::Job& j) { j.priority = "low"; },
          +[](SimScenario::Job& j) { j.arrival = 0; },
          +[](SimScenario::Job& j) { j.arrival = j.arrival / 100 * 100; },
          +[](SimScenario::Job& j) { j.runtime = j.runtime / 100 * 100; }}) {
      SimScenario t = s;
      simplify(t.jobs[i]);
      if (fails(t)) s = std::move(t);
    }
  }
  return s;
}

// Checks `check` on random scenarios (the configured seed; `runs` of them: each is a whole
// simulation). rapidcheck's own shrinking would re-simulate thousands of times; a failure is
// minimized by Minimize() instead and printed as manifests.
void CheckScenarios(int runs,
                    const std::function<std::optional<std::string>(const Simulator&)>& check) {
  auto violation = [&](const SimScenario& s) -> std::optional<std::string> {
    auto sim = Simulator::Create(BuildModel(s), SimOptions{});
    if (!sim.ok()) return std::string(sim.status().message());
    if (auto st = (*sim)->Run(); !st.ok()) return std::string(st.message());
    return check(**sim);
  };
  std::optional<SimScenario> failed;
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::min(params.maxSuccess, runs);
  params.disableShrinking = true;
  const auto info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  auto result = rc::detail::checkTestable(
      [&] {
        SimScenario s = RandomScenario();
        if (auto err = violation(s)) {
          failed = s;
          RC_FAIL(*err);
        }
      },
      metadata, params);
  if (result.is<rc::detail::SuccessResult>()) return;
  std::ostringstream ss;
  if (result.is<rc::detail::FailureResult>()) {
    // Not printResultMessage: it lists every generated value (hundreds of jobs).
    const auto& failure = result.get<rc::detail::FailureResult>();
    ss << "Falsifiable after " << failure.numSuccess << " scenarios: " << failure.description;
  } else {
    rc::detail::printResultMessage(result, ss);
  }
  if (failed) {
    SimScenario small =
        Minimize(*failed, [&](const SimScenario& s) { return violation(s).has_value(); });
    ss << "\nMinimized: " << *violation(small) << "\n";
    showValue(small, ss);
  }
  FAIL() << ss.str();
}

// 300-job simulations are slow under sanitizers: a few scenarios per property.
constexpr int kRuns = 10;

TEST(SimulatorProperty, EveryAdmissionRunsExactlyItsRuntime) {
  CheckScenarios(kRuns, CheckRuntimes);
}

// Admit-then-reclaim thrash: a workload admitted and preempted at one instant is, in
// Kubernetes, a bind followed by the eviction of a pod that never ran. Failed on seed 42 before
// heads within their own quota went first and an admission became final within its instant.
TEST(SimulatorProperty, NoWorkloadAdmittedAndPreemptedAtOneInstant) {
  CheckScenarios(kRuns, CheckNoAdmitPreemptSameInstant);
}

}  // namespace
}  // namespace tessera
