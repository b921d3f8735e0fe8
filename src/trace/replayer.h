// The replay's state and steps: one Replayer is one `RunReplay` (trace/replay.h). Its steps are
// defined in two files: replay.cc (the loop, the metrics, the snapshot and the end) and
// replay_book.cc (arrivals, departures, and the engine's decisions booked in the ledger, the cost
// ledger and the run records). Internal to src/trace/.
//
// Thread-safety: one Replayer is one replay, on one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "accounting/recorder.h"
#include "cost/ledger.h"
#include "engine/scheduler.h"
#include "model/id_pages.h"
#include "sim/simulator.h"
#include "trace/late_jobs.h"
#include "trace/ledger.h"
#include "trace/metrics.h"
#include "trace/queue_totals.h"
#include "trace/replay.h"
#include "trace/reruns.h"
#include "trace/size_classes.h"
#include "trace/trend_stats.h"

namespace tessera::trace::replay_internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// What one pod of a running job holds in the ledger.
struct HeldPod {
  NodeId node;
  int32_t pod_set;
  int32_t share_gpu;
  std::vector<int32_t> gpus;
};

// One replay: the engine, the ledger of what every node holds, the arrival order, the pending
// finishes and the metrics being integrated. Run() is the whole replay; every other method is
// one of its steps.
class Replayer {
 public:
  Replayer(const Trace& trace, const JobSource& jobs, const JobConverter& converter,
           const ReplayOptions& options)
      : trace_(trace), jobs_(jobs), converter_(converter), options_(options) {}

  // NotePeak's instant after Run.
  double peak_time() const { return peak_time_; }

  absl::StatusOr<ReplayResult> Run(Model model);

 private:
  // Finish events: (time, workload, its preemption count when admitted). A preemption makes the
  // pending finish stale; the re-admission schedules a new one (the job runs its whole duration
  // again, less what its checkpoints saved, as in `tessera sim`).
  using Finish = std::tuple<double, WorkloadId, int32_t>;

  // The typical pods, the nodes' GPU model ids, the engine and the ledger.
  absl::Status Init(Model model);

  // Queues: ClusterQueues, then "(none)".
  void InitQueues();
  size_t QueueOf(WorkloadId id) const {
    int32_t cq = s_->status(id).cluster_queue;
    return static_cast<size_t>(cq < 0 ? ncq_ : cq);
  }
  // The size class of a workload: its GPU milli with every pod (shares by their milli).
  int ClassOf(WorkloadId id) const;

  // Arrival order: the manifests' workloads (already in the engine as ids 0..k-1), then the
  // trace's jobs (from the source's cursor, one ahead), each sorted by time; equal times keep
  // file order, manifests first.
  void InitArrivalOrder();
  double ManifestArrival(WorkloadId id) const {
    return std::max(0.0, m_->workloads[static_cast<size_t>(id)].arrival);
  }
  // When a workload arrived: waits and completion times count from here, not from its FIFO key
  // (tessera.dev/created may precede the arrival).
  double ArrivalOf(WorkloadId id) const {
    return id < k_ ? ManifestArrival(id) : m_->workloads[static_cast<size_t>(id)].arrival;
  }
  double NextManifest() const {
    return mi_ < manifest_order_.size() ? ManifestArrival(manifest_order_[mi_]) : kInf;
  }
  double NextTrace() const { return has_job_ ? job_.arrival : kInf; }
  void PullJob() { has_job_ = cursor_->Next(job_, job_index_); }

  // Metrics: one series channel per quantity, then one per queue.
  void InitMetrics();
  // Integrates the current values over [last_, now).
  void Advance(double now);
  void NotePeaks();

  // Per workload: first and latest admission. Manifest workloads with pods beyond minCount can
  // be scaled up by any cycle.
  void InitWorkloads();

  // Books the pods of a workload's admission or scale-up in the ledger.
  void Book(WorkloadId id, const std::vector<PodPlacement>& pods);
  // The GPU milli a workload's pods hold.
  int64_t HeldMilli(WorkloadId id) const;
  // Releases a workload's pods; returns the GPU milli it held.
  int64_t Release(WorkloadId id);

  // 2. Departures: the runs that end by `now` (stale finishes of preempted runs are dropped).
  void Departures(double now);

  // 3. Arrivals: the workloads that arrive by `now`, in arrival order.
  void Arrivals(double now);

  // 4. Cycles until nothing changes at this instant. With nothing pending and no gang waiting
  // for more pods a cycle cannot decide anything, so none is run.
  absl::Status RunCycles(double now);

  // 4'. With NodePools (docs/autoscaling.md): the autoscaler's nodes due now (spot
  // interruptions evict what runs on them), the cycles, then its scale-up, again while more is
  // due at this instant (nodes provisioned at once).
  absl::Status Scale(double now);
  void Snapshot(double at);
  // ReplayOptions::snapshot_at_peak: called between instants, with the state of instant last_;
  // notes the first instant of the largest GPU allocation (RunReplay replays up to it again).
  void NotePeak();
  // The NodePools' figures at the end; the cost ledger's idle GPUs count nodes while up.
  void Nodes();

  // One cycle's decisions, evictions first, so that the ledger never books a preemptor onto its
  // victims' devices.
  void ApplyDecisions(std::vector<Decision>& decisions, double now);
  // A preemption (kPreempt) or the end of a victim's grace period (kTerminated). With a grace
  // period the victim keeps its devices, cost and run record until kTerminated, as in the
  // scenario simulator; the work lost is its run so far plus the whole grace period. Returns
  // the GPU-hours lost.
  double Evict(const Decision& d, double now);
  // The GPU failures and repairs due at `now`: the jobs on a failed GPU are evicted, each whole
  // (sim/gpu_failures.h), and lose the work since their last checkpoint.
  void Failures(double now);
  // True (with the reason in res_) once the run is known to miss ReplayOptions::early_stop, or
  // spot interruptions cut short more than ReplayOptions::max_interruption_loss_gpu_hours.
  bool StopEarly(double now);

  // Consolidation moved a running job: its run ends where it was, losing the work since its
  // last checkpoint; StartRun starts the next at its new place.
  void MoveOut(const Decision& d, double now);
  // Which run of a job a finish belongs to: one planned before a preemption or a move is stale.
  int32_t Generation(WorkloadId id) const {
    auto it = moved_.find(id);
    return s_->status(id).preemptions + (it == moved_.end() ? 0 : it->second);
  }

  void Admit(WorkloadId id, const std::vector<PodPlacement>& pods, double now);
  // A run starts at `pods`: an admission, or a move (MoveOut ended the run before).
  void StartRun(WorkloadId id, const std::vector<PodPlacement>& pods, double now);

  // Once a job has ended and been counted (finished, or rejected): its total wait is added, and
  // the engine and this replay let go of it (Scheduler::Retire), so that memory grows with the
  // jobs in flight rather than with the trace. Not while the early stop is on (it reads every
  // job's wait at its bound).
  void LetGo(WorkloadId id);
  // Adds a job's total wait (its waits to be admitted, first and again) when it was admitted.
  void AddTotalWait(WorkloadId id);

  // Totals: jobs still pending or running at the end, per queue.
  void CountEndStates();
  // Per-queue summaries, their sum in res_.all, and the fairness index.
  void SumQueues();
  // Cluster-wide means and final values, and the notes.
  void Finalize();

  const Trace& trace_;
  const JobSource& jobs_;
  const JobConverter& converter_;
  const ReplayOptions& options_;
  const ResourceId milli_ = kGpuMilli;
  ReplayResult res_;

  std::unique_ptr<Scheduler> s_;
  const Model* m_ = nullptr;  // the engine's model
  std::optional<ClusterLedger> ledger_;
  // With spec.pricing: the GPUs, CPU and memory each workload held, priced (docs/cost.md).
  std::optional<cost::CostLedger> cost_;
  // With ReplayOptions::accounting: a record per run (docs/accounting.md).
  std::optional<accounting::RunRecorder> runs_;
  int ncq_ = 0;         // ClusterQueues; queue index ncq_ is "(none)"
  QueueTotals totals_;  // per queue: waits and completion times, and the sums at the end
  std::vector<int64_t> queue_milli_;  // per queue, GPU milli held now
  SizeClassMetrics classes_;

  WorkloadId k_ = 0;  // manifest workloads
  std::vector<WorkloadId> manifest_order_;
  size_t mi_ = 0;                      // next in manifest_order_
  std::unique_ptr<JobCursor> cursor_;  // the trace's jobs in arrival order
  TraceJob job_;                       // the next of them, when has_job_
  int64_t job_index_ = 0;
  bool has_job_ = false;

  std::vector<double> values_;  // the series' channels now
  int queue_channel_ = 5;       // the first queue's channel (after the NodePools' ones)
  int64_t pending_ = 0, running_ = 0;
  double last_ = 0;
  // Instants in a row that only a held-back preemption's retry brought (Scheduler::NextRetry).
  static constexpr int kMaxRetryStreak = 1000;
  int retry_streak_ = 0;
  AllocationAreas areas_;  // the time-weighted allocation figures
  double total_milli_ = 1;
  int64_t peak_milli_ = 0;  // the largest GPU milli allocated between instants
  double peak_time_ = -1;   // the first instant it was held; < 0: no GPU ever was

  IdPages<double> first_admit_, admit_at_;  // per workload (let go of with it)
  LateJobs late_{options_.early_stop};      // ReplayOptions::early_stop's bookkeeping
  bool let_go_ = false;                     // LetGo retires jobs
  // ReplayResult::total_wait's values, of the jobs let go of (the rest are added at the end).
  ValueList total_waits_;
  absl::flat_hash_map<WorkloadId, std::vector<HeldPod>> held_;
  Reruns reruns_;  // checkpoints saved and waits again of the jobs preempted
  std::priority_queue<Finish, std::vector<Finish>, std::greater<Finish>> finishes_;
  absl::flat_hash_map<WorkloadId, int32_t> moved_;  // per job: moves by consolidation
  std::vector<Decision> preempts_, others_;
  bool partial_gangs_ = false;
  // With NodePools in the manifests: node-hours, and for elastic ones the autoscaler.
  std::optional<Autoscaler> as_;
  std::optional<GpuFailures> failures_;  // with --gpu-failures
  std::vector<SimEvent> node_events_;
  IdleGpuNodes idle_nodes_;  // for the series' idle_gpu_nodes
  bool plan_ = false;        // something arrived, ended or was preempted since the last scale-up
};

}  // namespace tessera::trace::replay_internal
