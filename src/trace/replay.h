// Time replay of a trace through the real scheduling engine: jobs arrive at their trace times,
// run for their durations once admitted, are preempted and requeued as the engine decides, and
// the replay keeps streaming metrics (time-bucketed series, per-queue delay and completion-time
// lists) instead of an event log, so that a million jobs fit in memory.
//
// Thread-safety: RunReplay is reentrant (the engine instance is its own).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/record.h"
#include "config/loader.h"
#include "cost/ledger.h"
#include "fgd/fragmentation.h"
#include "model/model.h"
#include "sim/autoscaler.h"
#include "sim/gpu_failures.h"
#include "trace/cluster_snapshot.h"
#include "trace/job_source.h"
#include "trace/metrics.h"
#include "trace/model_builder.h"
#include "trace/size_classes.h"
#include "trace/trace.h"
#include "trace/trend_stats.h"

namespace tessera::trace {

struct ReplayOptions {
  // > 0: the engine runs a cycle only at multiples of this many seconds (arrivals and departures
  // in between wait for it), as a periodic scheduler would; 0: at every instant something
  // happens.
  double cycle_interval = 0;
  // Stop at this time: jobs still waiting or running then are counted as such.
  double until = std::numeric_limits<double>::infinity();
  bool verify = false;  // check every engine invariant after every cycle (slow)
  int max_cycles_per_instant = 1000;
  int max_buckets = 240;  // points of each time series
  // Not null: a record per run goes here (docs/accounting.md), from admission to finish or
  // preemption, and for runs still going at the end. Must outlive RunReplay.
  accounting::RecordSink* accounting = nullptr;
  // Elastic NodePools of the manifests (docs/autoscaling.md): how they grow (`--scale-up`);
  // none: SchedulerConfig spec.autoscaler.scaleUp.
  std::optional<ScaleUpMode> scale_up;
  // The cluster snapshot of the report's dashboard (trace/cluster_snapshot.h) shows the state at
  // this time (after every instant up to it), or at the end when the run ends first; and lists
  // at most this many workloads.
  double snapshot_at = std::numeric_limits<double>::infinity();
  // Instead of snapshot_at: the first instant at which the GPU allocation reaches its largest
  // value (RunReplay then replays a second time up to that instant); the end when no GPU is ever
  // allocated. `sim replay --report` without --report-at.
  bool snapshot_at_peak = false;
  int64_t snapshot_workloads = kDefaultSnapshotWorkloads;
  // Stop as soon as the run is known to miss a wait bound (the capacity calculator's far too
  // small clusters, trace/plan.h, whose backlogs would take long to replay): more than
  // `late_allowed` jobs waited longer than `wait_over` seconds (admitted later than that after
  // their arrival, or still waiting past it), or the waits so far (those of jobs not yet admitted
  // counted up to the instant) sum to more than `wait_sum_max` seconds. ReplayResult::
  // stopped_early says which; the metrics cover the run up to there.
  struct EarlyStop {
    double wait_over = std::numeric_limits<double>::infinity();
    int64_t late_allowed = std::numeric_limits<int64_t>::max();
    double wait_sum_max = std::numeric_limits<double>::infinity();
  };
  EarlyStop early_stop;
  // Stop once spot interruptions (docs/autoscaling.md) have cut short runs worth more than this
  // many GPU-hours; ReplayResult::stopped_early says so. A trace job reruns from the start, so a
  // rate that interrupts long gangs faster than they finish would otherwise never end (the
  // capacity calculator sets it to the trace's GPU-hours, trace/plan.h).
  double max_interruption_loss_gpu_hours = std::numeric_limits<double>::infinity();
  // GPUs that fail (`--gpu-failures`, `--gpu-repair`, docs/gpu-failures.md): a failure evicts
  // the jobs on the GPU, each whole, back to their queue (counted as preemptions too).
  GpuFailureOptions gpu_failures;
  // Let go of each job once it has ended and been counted (Scheduler::Retire), so that memory
  // grows with the jobs in flight, not with the trace; every output is the same either way.
  // Off with an early stop, which reads every job's wait at its bound.
  bool let_go = true;
};

// The instant of the first cycle at or after `t` with cycles every `interval` seconds: the
// smallest multiple of `interval` that is >= t in floating point (ceil(t / interval) * interval
// alone can land just below t, e.g. t = 63, interval = 0.7: 62.99999999999999; the replay never
// reached the event). Always >= t; t itself when interval <= 0 or when no multiple near t is
// representable (t / interval beyond 2^53) or finite.
double NextCycleTime(double t, double interval);

// Upper bounds (seconds) of the queueing-delay histogram's bins; the last bin is "more". The
// labels in trace/report.cc follow these.
inline constexpr std::array<double, 10> kDelayBinEdges = {0,   1,    10,    60,    300,
                                                          900, 3600, 10800, 43200, 86400};
inline constexpr int kDelayBins = static_cast<int>(kDelayBinEdges.size()) + 1;

struct QueueResult {
  std::string name;       // ClusterQueue, or "(none)" for jobs without one
  double quota_gpus = 0;  // nominal GPU quota (0: none)
  int64_t jobs = 0;       // arrived
  int64_t admitted = 0;   // admitted at least once
  int64_t finished = 0;
  int64_t rejected = 0;
  int64_t pending_at_end = 0;
  int64_t running_at_end = 0;
  int64_t preempted = 0;          // preemptions suffered (a job may count several times)
  double gpu_hours = 0;           // GPU time held, shares included
  double gpu_hours_lost = 0;      // GPU time of runs that a preemption cut short
  double gpu_hours_in_grace = 0;  // the part of gpu_hours_lost held in grace periods
  double mean_gpus = 0;           // gpu_hours over the replay's span
  double peak_gpus = 0;
  Distribution wait;  // arrival to first admission, admitted jobs
  Distribution jct;   // arrival to finish, finished jobs
  std::array<int64_t, kDelayBins> wait_histogram{};
};

struct ReplayResult {
  double start = 0;  // first arrival
  double end = 0;    // last event (or --until)
  int64_t nodes = 0;
  int64_t gpus_total = 0;
  int64_t jobs = 0;
  int64_t cycles = 0;
  int64_t preemptions = 0;
  // Jobs that waited past their wait limit (tessera.dev/max-wait: the job's, its ClusterQueue's)
  // and went ahead of their priority: the engine's kWaitLimitExceeded decisions, one per job.
  int64_t wait_limits_exceeded = 0;
  double gpu_hours_lost = 0;
  double gpu_hours_in_grace = 0;  // the part of gpu_hours_lost held in grace periods
  // The part of gpu_hours_lost cut short by spot interruptions (runs on a node that went).
  double gpu_hours_lost_to_interruptions = 0;
  std::optional<GpuFailureStats> gpu_failures;  // with ReplayOptions::gpu_failures
  // Consolidation (engine/actions/consolidate.h): running jobs moved to make room, and the part
  // of gpu_hours_lost the moves cost (each one's work since its last checkpoint).
  int64_t moves = 0;
  double gpu_hours_lost_to_moves = 0;
  double mean_allocation_pct = 0;  // time-weighted over [start, end]
  // Time-weighted over the moments when at least one job was pending (admittable or not), and
  // the share of [start, end] they cover (0 and 0 when nothing ever waited).
  double allocation_while_pending_pct = 0;
  double pending_time_pct = 0;
  // Time-weighted over [start, the last arrival] (cut at `end`); 0 when that is no time.
  double arrival_window_allocation_pct = 0;
  double peak_allocation_pct = 0;
  double mean_fragmentation_pct = 0;  // time-weighted, FGD fragmented GPU milli / all GPU milli
  double final_allocation_pct = 0;
  double final_fragmentation_pct = 0;
  double jain_index = 1;          // over queues, of mean GPUs / nominal GPU quota
  int64_t overbooked_shares = 0;  // see ClusterLedger
  QueueResult all;                // every job together
  // Of the admitted jobs: the wait to the first admission (all.wait) plus, for a job preempted
  // (or interrupted on a spot node) and requeued, the time it waited again until re-admitted.
  // The capacity calculator's waits (trace/plan.h). all.wait itself when no job was requeued.
  Distribution total_wait;
  std::vector<QueueResult> queues;  // per ClusterQueue (then "(none)" when used)
  // Per job size class (trace/size_classes.h), all kSizeClasses of them in order.
  std::vector<SizeClassResult> size_classes;
  TimeSeries series{0, 1, 2, 1};
  // Names of the series' channels: gpu_allocation_pct, fragmentation_pct, pending_jobs,
  // running_jobs, idle_gpu_nodes (GPU nodes up with no GPU held, serve's idle GPU nodes), then
  // nodes_up:POOL and nodes_idle:POOL (no pod) per NodePool, then gpus_used:QUEUE.
  std::vector<std::string> channels;
  // Per bucket of `series`, the waits (first admission - arrival) of the jobs first admitted in
  // it, for the wait p95 of the dashboard's trends.
  BucketQuantiles admission_waits;
  std::vector<fgd::TypicalPod> typical;
  std::vector<std::string> notes;
  // The --manifests' diagnostics (the CLI fills them in): report.json's "diagnostics".
  std::vector<Diagnostic> diagnostics;
  // Cost in money (docs/cost.md), idle GPUs over [start, end]; only with SchedulerConfig
  // spec.pricing. No per-workload rows: a trace may hold a million jobs.
  std::optional<cost::CostReport> cost;
  // NodePools of the manifests (docs/autoscaling.md): node-hours paid and idle, their cost; with
  // an elastic one, the scale-up mode and the GPU-hours of nodes added for a gang that waited.
  std::vector<PoolUsage> node_pools;
  bool elastic = false;
  ScaleUpMode scale_up = ScaleUpMode::kGangAware;
  double waiting_gang_gpu_hours = 0;
  int64_t node_events = 0;    // nodes added, removed and interrupted
  std::string stopped_early;  // why ReplayOptions::early_stop ended the run; empty: it did not
  // Workloads and nodes at ReplayOptions::snapshot_at (or the end), for dashboard.html.
  ClusterSnapshot snapshot;
};

// Replays `trace` (jobs made by `converter`) and the workloads already in `model` (at their
// tessera.dev/arrival, for their tessera.dev/runtime). Fails only on an engine invariant broken
// (with --verify) or on cycles that never settle.
[[nodiscard]] absl::StatusOr<ReplayResult> RunReplay(Model model, const Trace& trace,
                                                     const JobConverter& converter,
                                                     const ReplayOptions& options);
// As above with the trace's jobs as a stream (trace/job_source.h), so that only the jobs that
// have arrived and not yet finished are held by the replay: `trace` gives the nodes and names
// (its own jobs are not read), `converter` must come from BuildModel with the same source.
[[nodiscard]] absl::StatusOr<ReplayResult> RunReplay(Model model, const Trace& trace,
                                                     const JobSource& jobs,
                                                     const JobConverter& converter,
                                                     const ReplayOptions& options);

}  // namespace tessera::trace
