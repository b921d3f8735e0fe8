// Discrete-event simulation of a scenario: workloads arrive (tessera.dev/arrival), run for
// their runtime once admitted (tessera.dev/runtime), and the real engine decides in between.
// Virtual time only: a run is exactly reproducible.
//
// Thread-safety: not thread-safe; one Simulator per thread.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/ledger.h"
#include "engine/scheduler.h"
#include "model/model.h"
#include "nlohmann/json_fwd.hpp"
#include "sim/autoscaler.h"
#include "sim/gpu_failures.h"

namespace tessera {

struct SimEvent {
  enum class Type {
    kAdmitted,
    kPreempted,
    kFinished,
    kRejected,
    kScaledUp,
    kFailed,             // ended at its active deadline (reason DeadlineExceeded)
    kWaitLimitExceeded,  // waited past its wait limit: now ahead of its priority
    // Elastic NodePools (sim/autoscaler.h): `node` came up, went, or got its spot notice;
    // `workload` is -1.
    kNodeAdded,
    kNodeRemoved,
    kNodeInterrupted,
    // A preempted workload's grace period ended: its pods are gone, GPUs and quota free.
    kTerminated,
    // Consolidation moved a running workload to `pods` to make room for `preemptor`; it lost
    // the work since its last checkpoint and runs on at its new place.
    kMoved,
  };
  double time = 0;
  Type type = Type::kAdmitted;
  WorkloadId workload = -1;
  NodeId node = -1;  // node events only
  int32_t cluster_queue = -1;
  WorkloadId preemptor = -1;
  std::string reason;
  std::vector<PodPlacement> pods;
  // kPreempted: the victim's grace period; it holds its pods that long (a kTerminated event
  // follows). 0: gone at once.
  double grace_seconds = 0;
};
const char* SimEventTypeName(SimEvent::Type t);

// How far a run has got: `tessera sim` shows it on long runs.
struct SimProgress {
  double now = 0;         // simulated time reached
  int64_t arrived = 0;    // workloads submitted so far
  int64_t workloads = 0;  // workloads in the scenario
  int64_t cycles = 0;     // scheduling cycles so far
};

struct SimOptions {
  // Check the engine's invariants after every cycle: a full pass over its state, so on large
  // scenarios the slowest part of a run (tests and `tessera sim --verify` turn it on).
  bool verify = true;
  // Called every 256 instants, from the running thread; empty: none.
  std::function<void(const SimProgress&)> progress;
  int max_cycles_per_instant = 1000;  // guard against a policy that never settles
  // Stop here (`tessera sim --until`): what waits then is reported pending, with its expected
  // start; what runs, running.
  double until = std::numeric_limits<double>::infinity();
  // Elastic NodePools: how nodes are added (`tessera sim --scale-up`); none: SchedulerConfig
  // spec.autoscaler.scaleUp.
  std::optional<ScaleUpMode> scale_up;
  // GPUs that fail (`tessera sim --gpu-failures`, --gpu-repair; sim/gpu_failures.h); the CLI
  // seeds them with SchedulerConfig spec.autoscaler.seed.
  GpuFailureOptions gpu_failures;
};

struct SimSummary {
  double end_time = 0;
  int64_t gpus_total = 0;
  double mean_gpu_allocation = 0;  // time-weighted fraction over [0, end_time]
  std::vector<std::pair<double, int64_t>> gpu_allocation;  // (time, GPUs allocated) at changes
  int64_t preemptions = 0;
  int64_t cycles = 0;
  // GPU time of runs that preemption or a deadline cut short, less what checkpoints saved
  // (tessera.dev/checkpoint-interval: a preempted workload resumes from its last checkpoint).
  double gpu_hours_lost = 0;
  // The part of gpu_hours_lost that preempted workloads held in their grace periods.
  double gpu_hours_in_grace = 0;
  // Consolidation (engine/actions/consolidate.h): workloads moved, and the part of
  // gpu_hours_lost that the moves cost (the work since each one's last checkpoint).
  int64_t moves = 0;
  double gpu_hours_lost_to_moves = 0;
  int64_t deadlines_exceeded = 0;
  struct QueueWait {
    std::string queue;
    int64_t admitted = 0;
    double mean_wait = 0;
    double max_wait = 0;
  };
  std::vector<QueueWait> waits;  // per ClusterQueue, then "(none)" for unqueued workloads
  // Cost in money over [0, end_time] (docs/cost.md); only when SchedulerConfig spec.pricing is
  // given.
  std::optional<cost::CostReport> cost;
  // Per NodePool: node-hours paid, idle node-hours and their cost (docs/autoscaling.md).
  std::vector<PoolUsage> node_pools;
  bool elastic = false;  // some NodePool is elastic
  ScaleUpMode scale_up = ScaleUpMode::kGangAware;
  // GPU-hours of nodes added for a workload, up and empty while it still waited.
  double waiting_gang_gpu_hours = 0;
  // With SimOptions::gpu_failures: what the failures cost (sim/gpu_failures.h).
  std::optional<GpuFailureStats> gpu_failures;
};

class Simulator {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Simulator>> Create(Model model,
                                                                         SimOptions options);
  // Runs until no event is left. Fails when an invariant breaks (a bug) or cycles never settle.
  [[nodiscard]] absl::Status Run();

  const Scheduler& scheduler() const { return *scheduler_; }
  const std::vector<SimEvent>& events() const { return events_; }
  const SimSummary& summary() const { return summary_; }

  // The `tessera sim --output json` document: JsonDocument() dumped (the CLI adds its
  // "diagnostics" to the object before it prints it).
  std::string ToJson() const;
  nlohmann::json JsonDocument() const;
  // A readable timeline and summary for a terminal.
  std::string ToTable() const;

 private:
  Simulator(std::unique_ptr<Scheduler> s, SimOptions o) : scheduler_(std::move(s)), options_(o) {}
  std::string WorkloadKey(WorkloadId id) const;
  std::string QueueName(int32_t cq) const;
  std::string PodsText(const std::vector<PodPlacement>& pods) const;
  void Summarize();
  friend class SimRun;

  std::unique_ptr<Scheduler> scheduler_;
  SimOptions options_;
  std::vector<SimEvent> events_;
  SimSummary summary_;
};

}  // namespace tessera
