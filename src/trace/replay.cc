// The replay loop. Per instant (the same order as the scenario simulator, sim/simulator.cc):
//   1. integrate the metrics' current values up to the instant;
//   2. finish the jobs whose run ends by then (capacity frees before anything arrives);
//   3. submit the jobs that arrive by then;
//   4. run engine cycles until one decides nothing, booking every decision in the ledger.
// Each step is one method of Replayer below; RunReplay runs them in that order.
#include "trace/replay.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "accounting/recorder.h"
#include "engine/scheduler.h"
#include "fmt/format.h"
#include "sim/simulator.h"
#include "trace/late_jobs.h"
#include "trace/ledger.h"
#include "trace/queue_totals.h"
#include "trace/reruns.h"
#include "trace/size_classes.h"
#include "trace/typical_pods.h"

namespace tessera::trace {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct HeldPod {
  NodeId node;
  int32_t pod_set;
  int32_t share_gpu;
  std::vector<int32_t> gpus;
};

}  // namespace

double NextCycleTime(double t, double interval) {
  if (!(interval > 0) || !std::isfinite(t)) return t;
  const double k = std::ceil(t / interval);
  // Beyond 2^53 consecutive multiples are not representable: the event's own time is the cycle.
  if (!(std::abs(k) < 0x1p53)) return t;
  double now = k * interval;
  // The quotient may have rounded down across an integer: the next multiple is >= t, since
  // (k + 1) * interval >= t exactly and rounding is monotone with t representable.
  if (now < t) now = (k + 1) * interval;
  return std::isfinite(now) && now >= t ? now : t;
}

namespace {

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

  absl::StatusOr<ReplayResult> Run(Model model) {
    if (absl::Status st = Init(std::move(model)); !st.ok()) return st;
    InitQueues();
    InitArrivalOrder();
    InitMetrics();
    InitWorkloads();
    bool stopped = false;
    double stop_at = options_.until;
    while (true) {
      // A victim's grace period that ends frees its GPUs and requeues it (trace/replay.h).
      double t =
          std::min({NextManifest(), NextTrace(),
                    finishes_.empty() ? kInf : std::get<0>(finishes_.top()), s_->NextGraceEnd()});
      if (as_) {
        // Nodes coming or going keep the replay going; spot interruptions only while something
        // else does (as in `tessera sim`).
        t = std::min(t, as_->Next(false));
        if (t != kInf) t = std::min(t, as_->Next(true));
      }
      // GPU failures only while something else is due; repairs also while a job waits.
      if (failures_ && (t != kInf || pending_ > 0))
        t = std::min({t, t != kInf ? failures_->NextFailure() : kInf, failures_->NextRepair()});
      // A preemption the engine held back in the last instant (an admission is final within
      // its instant) is retried a second later when nothing else comes first, as `tessera sim`
      // does; a run of such instants alone is bounded (a circle of preemptions).
      if (const double retry = s_->NextRetry(last_); retry < t) {
        if (++retry_streak_ <= kMaxRetryStreak) t = retry;
      } else {
        retry_streak_ = 0;
      }
      if (t == kInf) break;
      double now = t;
      if (options_.cycle_interval > 0) now = NextCycleTime(t, options_.cycle_interval);
      if (now > options_.snapshot_at && res_.snapshot.time < 0) Snapshot(options_.snapshot_at);
      NotePeak();  // the state of the instant last_ (nothing changed since)
      if (now > options_.until) {
        // The early stop judges the jobs once more at the end: one still waiting past its bound
        // then is late whatever would come after.
        (void)StopEarly(options_.until);
        stopped = true;
        break;
      }
      if (StopEarly(now)) {
        stop_at = now;
        stopped = true;
        break;
      }
      Advance(now);
      if (as_) as_->Account(now);
      Departures(now);
      Arrivals(now);
      if (failures_) Failures(now);
      if (absl::Status st = Scale(now); !st.ok()) return st;
    }
    if (!stopped) NotePeak();
    res_.end = stopped ? stop_at : last_;
    if (res_.snapshot.time < 0) Snapshot(std::min(options_.snapshot_at, res_.end));
    Advance(res_.end);
    res_.admission_waits.Follow(res_.series);
    if (as_) Nodes();
    CountEndStates();
    SumQueues();
    res_.size_classes = classes_.Results(res_.end - res_.start);
    if (cost_) res_.cost = cost_->Report(res_.end, res_.start);
    if (runs_) runs_->CloseAll(res_.end);
    if (failures_) {
      failures_->Finish(res_.end);
      res_.gpu_failures = failures_->stats();
    }
    Finalize();
    return std::move(res_);
  }

 private:
  // Finish events: (time, workload, its preemption count when admitted). A preemption makes the
  // pending finish stale; the re-admission schedules a new one (the job runs its whole duration
  // again, less what its checkpoints saved, as in `tessera sim`).
  using Finish = std::tuple<double, WorkloadId, int32_t>;

  // The typical pods, the nodes' GPU model ids, the engine and the ledger.
  absl::Status Init(Model model) {
    fgd::GpuModelTable models;
    auto typical = TypicalPods(trace_, jobs_, model, milli_, models);
    if (!typical.ok()) return typical.status();
    res_.typical = *typical;
    std::vector<int32_t> node_models(model.nodes.size(), fgd::kNoGpuModel);
    for (size_t n = 0; n < model.nodes.size(); ++n) {
      const Node& node = model.nodes[n];
      if (node.gpu_count() == 0 || node.gpu_model.empty()) continue;
      auto id = models.Intern(node.gpu_model);
      if (!id.ok()) return id.status();
      node_models[n] = *id;
    }

    auto created = Scheduler::Create(std::move(model));
    if (!created.ok()) return created.status();
    s_ = std::move(*created);
    m_ = &s_->model();
    ledger_.emplace(m_->nodes, node_models, res_.typical, milli_);
    if (m_->config.pricing.present) cost_.emplace(*m_, /*by_workload=*/false);
    if (options_.accounting)
      runs_.emplace(*m_, *options_.accounting, accounting::RecorderOptions{"sim replay", 0});
    if (!m_->node_pools.empty()) as_.emplace(*s_, options_.scale_up);
    if (options_.gpu_failures.enabled()) failures_.emplace(*s_, options_.gpu_failures);
    idle_nodes_ = IdleGpuNodes(*s_);
    res_.nodes = static_cast<int64_t>(m_->nodes.size());
    res_.gpus_total = ledger_->total_gpu_milli() / 1000;
    return absl::OkStatus();
  }

  // Queues: ClusterQueues, then "(none)".
  void InitQueues() {
    ncq_ = static_cast<int>(m_->cluster_queues.size());
    res_.queues.resize(static_cast<size_t>(ncq_) + 1);
    for (int q = 0; q < ncq_; ++q) {
      res_.queues[static_cast<size_t>(q)].name = m_->cluster_queues[static_cast<size_t>(q)].name;
      res_.queues[static_cast<size_t>(q)].quota_gpus =
          NominalGpus(m_->cluster_queues[static_cast<size_t>(q)]);
    }
    res_.queues[static_cast<size_t>(ncq_)].name = "(none)";
    totals_.Resize(res_.queues.size());
    queue_milli_.assign(res_.queues.size(), 0);
  }
  size_t QueueOf(WorkloadId id) const {
    int32_t cq = s_->status(id).cluster_queue;
    return static_cast<size_t>(cq < 0 ? ncq_ : cq);
  }
  // The size class of a workload: its GPU milli with every pod (shares by their milli).
  int ClassOf(WorkloadId id) const {
    int64_t gpu_milli = 0;
    for (const auto& ps : m_->workloads[static_cast<size_t>(id)].pod_sets) {
      const int64_t gpus = ps.requests[kGpu];
      gpu_milli += int64_t{ps.count} * (gpus > 0 ? gpus * 1000 : ps.requests[milli_]);
    }
    return SizeClassOf(gpu_milli);
  }

  // Arrival order: the manifests' workloads (already in the engine as ids 0..k-1), then the
  // trace's jobs (from the source's cursor, one ahead), each sorted by time; equal times keep
  // file order, manifests first.
  void InitArrivalOrder() {
    k_ = s_->num_workloads();
    manifest_order_.resize(static_cast<size_t>(k_));
    for (WorkloadId i = 0; i < k_; ++i) manifest_order_[static_cast<size_t>(i)] = i;
    std::stable_sort(
        manifest_order_.begin(), manifest_order_.end(),
        [&](WorkloadId a, WorkloadId b) { return ManifestArrival(a) < ManifestArrival(b); });
    cursor_ = jobs_.Cursor();
    PullJob();
    res_.jobs = static_cast<int64_t>(k_) + jobs_.size();
    res_.start = std::min(NextManifest(), NextTrace());
    if (res_.start == kInf) res_.start = 0;
  }
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
  void InitMetrics() {
    double last_arrival = 0;
    if (jobs_.size() > 0) last_arrival = jobs_.last_arrival();
    if (!manifest_order_.empty())
      last_arrival = std::max(last_arrival, ManifestArrival(manifest_order_.back()));
    res_.channels = {"gpu_allocation_pct", "fragmentation_pct", "pending_jobs", "running_jobs",
                     "idle_gpu_nodes"};
    // Nodes up and idle per NodePool, before the queues' channels (the last may be dropped).
    for (const NodePoolSpec& p : as_ ? m_->node_pools : std::vector<NodePoolSpec>{})
      for (const char* what : {"nodes_up:", "nodes_idle:"}) res_.channels.push_back(what + p.name);
    queue_channel_ = static_cast<int>(res_.channels.size());
    for (const auto& q : res_.queues) res_.channels.push_back("gpus_used:" + q.name);
    areas_ = AllocationAreas(last_arrival);
    const double span_guess = std::max(1.0, last_arrival - res_.start);
    res_.series =
        TimeSeries(res_.start, static_cast<int>(res_.channels.size()), options_.max_buckets,
                   std::max(1.0, std::ceil(span_guess / options_.max_buckets)));
    values_.assign(res_.channels.size(), 0);
    last_ = res_.start;
    total_milli_ = static_cast<double>(std::max<int64_t>(1, ledger_->total_gpu_milli()));
  }
  // Integrates the current values over [last_, now).
  void Advance(double now) {
    if (now <= last_) return;
    const double dt = now - last_;
    values_[0] = 100.0 * static_cast<double>(ledger_->allocated_gpu_milli()) / total_milli_;
    values_[1] = 100.0 * ledger_->fragmented_gpu_milli() / total_milli_;
    values_[2] = static_cast<double>(pending_);
    values_[3] = static_cast<double>(running_);
    values_[4] = static_cast<double>(idle_nodes_.Count(*s_, node_events_));
    for (size_t p = 0; as_ && 5 + 2 * p < static_cast<size_t>(queue_channel_); ++p) {
      values_[5 + 2 * p] = as_->nodes_up(p);
      values_[6 + 2 * p] = as_->nodes_idle(p);
    }
    for (size_t q = 0; q < queue_milli_.size(); ++q) {
      double& gpus = values_[static_cast<size_t>(queue_channel_) + q];
      gpus = static_cast<double>(queue_milli_[q]) / 1000.0;
      res_.queues[q].gpu_hours += gpus * dt / 3600.0;
    }
    classes_.Advance(dt);
    areas_.Add(last_, now, values_[0], values_[1], pending_);
    res_.series.Integrate(last_, now, values_);
    last_ = now;
  }
  void NotePeaks() {
    res_.peak_allocation_pct =
        std::max(res_.peak_allocation_pct,
                 100.0 * static_cast<double>(ledger_->allocated_gpu_milli()) / total_milli_);
    for (size_t q = 0; q < queue_milli_.size(); ++q)
      res_.queues[q].peak_gpus =
          std::max(res_.queues[q].peak_gpus, static_cast<double>(queue_milli_[q]) / 1000.0);
  }

  // Per workload: first and latest admission. Manifest workloads with pods beyond minCount can
  // be scaled up by any cycle.
  void InitWorkloads() {
    first_admit_.reserve(static_cast<size_t>(res_.jobs));
    admit_at_.reserve(static_cast<size_t>(res_.jobs));
    first_admit_.assign(static_cast<size_t>(k_), -1);
    admit_at_.assign(static_cast<size_t>(k_), -1);
    for (WorkloadId id = 0; id < k_; ++id) {
      const Workload& w = m_->workloads[static_cast<size_t>(id)];
      partial_gangs_ = partial_gangs_ || w.MinPods() < w.TotalPods();
    }
  }

  // Books the pods of a workload's admission or scale-up in the ledger.
  void Book(WorkloadId id, const std::vector<PodPlacement>& pods) {
    const Workload& w = m_->workloads[static_cast<size_t>(id)];
    auto& h = held_[id];
    int64_t gpu_milli = 0;
    for (const auto& p : pods) {
      const Resources& req = w.pod_sets[static_cast<size_t>(p.pod_set)].requests;
      const bool share = milli_ >= 0 && req[milli_] > 0 && req[kGpu] == 0;
      int32_t hint = share && p.gpus.size() == 1 ? p.gpus[0] : -1;
      HeldPod hp{p.node, p.pod_set, -1, share ? std::vector<int32_t>{} : p.gpus};
      hp.share_gpu = ledger_->Take(p.node, req, hp.gpus, hint);
      idle_nodes_.Hold(p.node, req, 1);
      gpu_milli += int64_t{req[kGpu]} * 1000 + (share ? req[milli_] : 0);
      h.push_back(std::move(hp));
    }
    queue_milli_[QueueOf(id)] += gpu_milli;
    classes_.Hold(ClassOf(id), gpu_milli);
  }
  // The GPU milli a workload's pods hold.
  int64_t HeldMilli(WorkloadId id) const {
    auto it = held_.find(id);
    if (it == held_.end()) return 0;
    const Workload& w = m_->workloads[static_cast<size_t>(id)];
    int64_t gpu_milli = 0;
    for (const auto& hp : it->second) {
      const Resources& req = w.pod_sets[static_cast<size_t>(hp.pod_set)].requests;
      gpu_milli += int64_t{req[kGpu]} * 1000 + (hp.share_gpu >= 0 ? req[milli_] : 0);
    }
    return gpu_milli;
  }
  // Releases a workload's pods; returns the GPU milli it held.
  int64_t Release(WorkloadId id) {
    auto it = held_.find(id);
    if (it == held_.end()) return 0;
    const Workload& w = m_->workloads[static_cast<size_t>(id)];
    int64_t gpu_milli = 0;
    for (const auto& hp : it->second) {
      const Resources& req = w.pod_sets[static_cast<size_t>(hp.pod_set)].requests;
      ledger_->Give(hp.node, req, hp.gpus, hp.share_gpu);
      idle_nodes_.Hold(hp.node, req, -1);
      gpu_milli += int64_t{req[kGpu]} * 1000 + (hp.share_gpu >= 0 ? req[milli_] : 0);
    }
    held_.erase(it);
    queue_milli_[QueueOf(id)] -= gpu_milli;
    classes_.Hold(ClassOf(id), -gpu_milli);
    return gpu_milli;
  }

  // 2. Departures: the runs that end by `now` (stale finishes of preempted runs are dropped).
  void Departures(double now) {
    while (!finishes_.empty() && std::get<0>(finishes_.top()) <= now) {
      auto [when, id, gen] = finishes_.top();
      finishes_.pop();
      const WorkloadStatus& st = s_->status(id);
      if (st.state != WorkloadState::kAdmitted || Generation(id) != gen) continue;
      Release(id);
      if (as_) as_->Released(id, when);
      plan_ = true;
      if (cost_) cost_->Release(id, when);
      if (runs_) runs_->Ended(id, accounting::RunEnd::kFinished, "", when);
      s_->Finish(id, when);
      auto q = QueueOf(id);
      ++res_.queues[q].finished;
      totals_.Finished(q, when - ArrivalOf(id));
      classes_.Finished(ClassOf(id), when - ArrivalOf(id),
                        m_->workloads[static_cast<size_t>(id)].runtime.value_or(0));
      --running_;
    }
  }

  // 3. Arrivals: the workloads that arrive by `now`, in arrival order.
  void Arrivals(double now) {
    while (true) {
      double tm = NextManifest(), tt = NextTrace();
      if (std::min(tm, tt) > now) break;
      WorkloadId id;
      double at;
      if (tm <= tt) {
        id = manifest_order_[mi_++];
        at = tm;
      } else {
        id = s_->AddWorkload(converter_.Make(job_, job_index_));
        PullJob();
        first_admit_.push_back(-1);
        admit_at_.push_back(-1);
        at = tt;
      }
      s_->Submit(id, at);
      late_.Arrived(id, at);
      plan_ = true;
      ++res_.queues[QueueOf(id)].jobs;
      classes_.Arrived(ClassOf(id));
      ++pending_;
    }
  }

  // 4. Cycles until nothing changes at this instant. With nothing pending and no gang waiting
  // for more pods a cycle cannot decide anything, so none is run.
  absl::Status RunCycles(double now) {
    for (int cycle = 0; pending_ > 0 || partial_gangs_; ++cycle) {
      if (cycle >= options_.max_cycles_per_instant) {
        return absl::InternalError(
            fmt::format("scheduling did not settle after {} cycles at t={}", cycle, now));
      }
      auto decisions = s_->RunCycle(now);
      ++res_.cycles;
      if (options_.verify) {
        if (auto st = s_->Verify(); !st.ok()) {
          return absl::InternalError(
              fmt::format("invariant broken at t={}: {}", now, std::string(st.message())));
        }
      }
      if (decisions.empty()) break;
      ApplyDecisions(decisions, now);
      NotePeaks();
    }
    return absl::OkStatus();
  }

  // 4'. With NodePools (docs/autoscaling.md): the autoscaler's nodes due now (spot
  // interruptions evict what runs on them), the cycles, then its scale-up, again while more is
  // due at this instant (nodes provisioned at once).
  absl::Status Scale(double now) {
    if (!as_) return RunCycles(now);
    for (int round = 0;; ++round) {
      if (round >= options_.max_cycles_per_instant)
        return absl::InternalError(fmt::format("nodes did not settle at t={}", now));
      std::vector<Decision> evicted;
      if (as_->Advance(now, node_events_, evicted)) plan_ = true;
      for (const Decision& d : evicted) res_.gpu_hours_lost_to_interruptions += Evict(d, now);
      if (absl::Status st = RunCycles(now); !st.ok()) return st;
      as_->AfterCycles(now, plan_);
      plan_ = false;
      if (as_->Next(true) > now) return absl::OkStatus();
    }
  }
  void Snapshot(double at) {
    res_.snapshot = TakeClusterSnapshot(*s_, at, options_.snapshot_workloads);
  }
  // ReplayOptions::snapshot_at_peak: called between instants, with the state of instant last_;
  // notes the first instant of the largest GPU allocation (RunReplay replays up to it again).
  void NotePeak() {
    const int64_t held = ledger_->allocated_gpu_milli();
    if (held <= peak_milli_) return;
    peak_milli_ = held;
    peak_time_ = last_;
  }
  // The NodePools' figures at the end; the cost ledger's idle GPUs count nodes while up.
  void Nodes() {
    as_->Account(res_.end);
    res_.node_pools = as_->Usage();
    res_.elastic = as_->elastic();
    res_.scale_up = as_->mode();
    res_.waiting_gang_gpu_hours = as_->waiting_gang_gpu_hours();
    res_.node_events = static_cast<int64_t>(node_events_.size());
    if (cost_) cost_->SetNodeUptime(as_->NodeUptime(res_.end));
  }

  // One cycle's decisions, evictions first, so that the ledger never books a preemptor onto its
  // victims' devices.
  void ApplyDecisions(std::vector<Decision>& decisions, double now) {
    preempts_.clear();
    others_.clear();
    // A victim's grace period that ends (kTerminated) frees its devices as an eviction does.
    for (auto& d : decisions)
      (d.type == Decision::Type::kPreempt || d.type == Decision::Type::kTerminated ? preempts_
                                                                                   : others_)
          .push_back(std::move(d));
    for (const auto& d : preempts_) Evict(d, now);
    // A moved job leaves its old devices before anything is booked.
    for (const auto& d : others_)
      if (d.type == Decision::Type::kMove) MoveOut(d, now);
    for (const auto& d : others_) {
      WorkloadId id = d.workload;
      auto q = QueueOf(id);
      switch (d.type) {
        case Decision::Type::kAdmit:
          Admit(id, d.pods, now);
          break;
        case Decision::Type::kScaleUp:
          Book(id, d.pods);
          if (as_) as_->Placed(id, d.pods, now);
          if (cost_)
            cost_->Hold(id, s_->status(id).cluster_queue, s_->status(id).flavors, d.pods, now);
          if (runs_) runs_->ScaledUp(id, d.pods, now);
          break;
        case Decision::Type::kReject:
          ++res_.queues[q].rejected;
          classes_.Rejected(ClassOf(id));
          --pending_;
          break;
        case Decision::Type::kWaitLimitExceeded:
          ++res_.wait_limits_exceeded;
          break;
        case Decision::Type::kMove:
          StartRun(id, d.pods, now);
          break;
        case Decision::Type::kPreempt:
        case Decision::Type::kTerminated:
          break;
      }
    }
  }
  // A preemption (kPreempt) or the end of a victim's grace period (kTerminated). With a grace
  // period the victim keeps its devices, cost and run record until kTerminated, as in the
  // scenario simulator; the work lost is its run so far plus the whole grace period. Returns
  // the GPU-hours lost.
  double Evict(const Decision& d, double now) {
    const WorkloadId id = d.workload;
    auto q = QueueOf(id);
    double& admitted = admit_at_[static_cast<size_t>(id)];
    double lost = 0;
    // admitted < 0: already told to stop (a node going away ends its grace period early).
    if (d.type == Decision::Type::kPreempt && admitted >= 0) {
      const double gpus = static_cast<double>(HeldMilli(id)) / 1000.0;
      const double ran = now - admitted;
      admitted = -1;
      // The next run resumes from the last checkpoint (--checkpoint-interval), as in `tessera sim`.
      const double saved =
          reruns_.Stopped(id, ran, m_->workloads[static_cast<size_t>(id)].checkpoint_interval);
      lost = gpus * (ran - saved + d.grace_seconds) / 3600.0;
      res_.queues[q].gpu_hours_lost += lost;
      res_.queues[q].gpu_hours_in_grace += gpus * d.grace_seconds / 3600.0;
      ++res_.queues[q].preempted;
      classes_.Preempted(ClassOf(id));
      ++res_.preemptions;
      if (d.grace_seconds > 0) return lost;
    }
    Release(id);
    if (as_) as_->Released(id, now);
    plan_ = true;
    if (cost_) cost_->Release(id, now);
    if (runs_) runs_->Ended(id, accounting::RunEnd::kPreempted, d.reason, now);
    --running_;
    ++pending_;
    reruns_.Requeued(id, now);
    return lost;
  }
  // The GPU failures and repairs due at `now`: the jobs on a failed GPU are evicted, each whole
  // (sim/gpu_failures.h), and lose the work since their last checkpoint.
  void Failures(double now) {
    std::vector<Decision> evicted;
    failures_->Advance(now, evicted);
    for (const Decision& d : evicted) {
      const WorkloadId id = d.workload;
      const double admitted = admit_at_[static_cast<size_t>(id)];
      const double gpus = static_cast<double>(HeldMilli(id)) / 1000.0;
      const auto& rt = m_->workloads[static_cast<size_t>(id)].runtime;
      const double before = rt ? *rt - reruns_.Left(id, *rt) : 0;
      Evict(d, now);
      const double after = rt ? *rt - reruns_.Left(id, *rt) : 0;
      if (admitted >= 0) failures_->Lost(now - admitted, after - before, before, gpus);
    }
  }
  // True (with the reason in res_) once the run is known to miss ReplayOptions::early_stop, or
  // spot interruptions cut short more than ReplayOptions::max_interruption_loss_gpu_hours.
  bool StopEarly(double now) {
    if (res_.gpu_hours_lost_to_interruptions > options_.max_interruption_loss_gpu_hours) {
      res_.stopped_early = fmt::format(
          "stopped at t={:.0f}s: spot interruptions cut short {:.0f} GPU-hours of runs, over the "
          "bound of {:.0f}",
          now, res_.gpu_hours_lost_to_interruptions, options_.max_interruption_loss_gpu_hours);
      return true;
    }
    res_.stopped_early =
        late_.Check(now, first_admit_, [this](WorkloadId id) { return ArrivalOf(id); });
    return !res_.stopped_early.empty();
  }

  // Consolidation moved a running job: its run ends where it was, losing the work since its
  // last checkpoint; StartRun starts the next at its new place.
  void MoveOut(const Decision& d, double now) {
    const WorkloadId id = d.workload;
    const double ran = now - admit_at_[static_cast<size_t>(id)];
    const auto& interval = m_->workloads[static_cast<size_t>(id)].checkpoint_interval;
    const double lost = static_cast<double>(HeldMilli(id)) / 1000.0 *
                        (ran - reruns_.Stopped(id, ran, interval)) / 3600;
    res_.queues[QueueOf(id)].gpu_hours_lost += lost;
    res_.gpu_hours_lost_to_moves += lost;
    ++res_.moves;
    ++moved_[id];
    Release(id);
    if (as_) as_->Released(id, now);
    if (cost_) cost_->Release(id, now);
    if (runs_) runs_->Ended(id, accounting::RunEnd::kPreempted, d.reason, now);
  }
  // Which run of a job a finish belongs to: one planned before a preemption or a move is stale.
  int32_t Generation(WorkloadId id) const {
    auto it = moved_.find(id);
    return s_->status(id).preemptions + (it == moved_.end() ? 0 : it->second);
  }

  void Admit(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
    auto q = QueueOf(id);
    if (first_admit_[static_cast<size_t>(id)] < 0) {
      first_admit_[static_cast<size_t>(id)] = now;
      ++res_.queues[q].admitted;
      double wait = now - ArrivalOf(id);
      totals_.FirstAdmitted(q, wait);
      late_.FirstAdmitted(ArrivalOf(id), wait);
      res_.admission_waits.Add(res_.series, now, wait);
      classes_.FirstAdmitted(ClassOf(id), wait);
      ++res_.queues[q].wait_histogram[static_cast<size_t>(DelayBin(wait))];
    } else {
      reruns_.Readmitted(id, now);
    }
    StartRun(id, pods, now);
    ++running_;
    --pending_;
  }
  // A run starts at `pods`: an admission, or a move (MoveOut ended the run before).
  void StartRun(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
    const WorkloadStatus& st = s_->status(id);
    admit_at_[static_cast<size_t>(id)] = now;
    Book(id, pods);
    if (as_) as_->Placed(id, pods, now);
    if (cost_) cost_->Hold(id, st.cluster_queue, st.flavors, pods, now);
    if (runs_) runs_->Admitted(id, ArrivalOf(id), st.cluster_queue, st.flavors, pods, now);
    const auto& rt = m_->workloads[static_cast<size_t>(id)].runtime;
    if (rt) finishes_.emplace(now + reruns_.Left(id, *rt), id, Generation(id));
  }

  // Totals: jobs still pending or running at the end, per queue.
  void CountEndStates() {
    for (WorkloadId id = 0; id < s_->num_workloads(); ++id) {
      const WorkloadStatus& st = s_->status(id);
      if (st.state == WorkloadState::kPending) {
        ++res_.queues[QueueOf(id)].pending_at_end;
        classes_.PendingAtEnd(ClassOf(id), res_.end - ArrivalOf(id));
      }
      if (st.state == WorkloadState::kAdmitted) {
        ++res_.queues[QueueOf(id)].running_at_end;
        classes_.RunningAtEnd(ClassOf(id));
      }
    }
  }
  // Per-queue summaries, their sum in res_.all, and the fairness index.
  void SumQueues() {
    totals_.Sum(res_, queue_milli_);
    res_.total_wait =
        reruns_.TotalWaits(first_admit_, [this](WorkloadId id) { return ArrivalOf(id); })
            .value_or(res_.all.wait);
  }
  // Cluster-wide means and final values, and the notes.
  void Finalize() {
    areas_.Fill(res_, values_[0], values_[1]);
    res_.final_allocation_pct =
        100.0 * static_cast<double>(ledger_->allocated_gpu_milli()) / total_milli_;
    res_.final_fragmentation_pct = 100.0 * ledger_->RecomputeFragmentation() / total_milli_;
    res_.overbooked_shares = ledger_->overbooked_shares();
    if (res_.overbooked_shares > 0) {
      res_.notes.push_back(fmt::format(
          "{} GPU shares were placed on a device without room for them (the engine does not "
          "book tessera.dev/gpu-milli per device yet); allocation counts each device at most "
          "once",
          res_.overbooked_shares));
    }
    if (ledger_->nodes_over_gpu_limit() > 0) {
      res_.notes.push_back(
          fmt::format("{} nodes have more than {} GPUs; fragmentation looks at their first {} only",
                      ledger_->nodes_over_gpu_limit(), fgd::kMaxGpusPerNode, fgd::kMaxGpusPerNode));
    }
  }

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

  std::vector<double> first_admit_, admit_at_;  // per workload
  LateJobs late_{options_.early_stop};          // ReplayOptions::early_stop's bookkeeping
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

}  // namespace

absl::StatusOr<ReplayResult> RunReplay(Model model, const Trace& trace,
                                       const JobConverter& converter,
                                       const ReplayOptions& options) {
  return RunReplay(std::move(model), trace, TraceJobs(trace), converter, options);
}

absl::StatusOr<ReplayResult> RunReplay(Model model, const Trace& trace, const JobSource& jobs,
                                       const JobConverter& converter,
                                       const ReplayOptions& options) {
  if (!options.snapshot_at_peak)
    return Replayer(trace, jobs, converter, options).Run(std::move(model));
  // The peak is known only at the end. The replay is deterministic, so a second run, stopped at
  // the peak's instant, takes the snapshot there: one snapshot and a partial replay, where
  // snapshotting every new peak on the way up cost ~200 snapshots (5.6x the replay's time on
  // openb, bench/README.md "Replay").
  Model again = model;
  ReplayOptions first = options;
  first.snapshot_at_peak = false;
  absl::StatusOr<ReplayResult> r;
  double peak = -1;
  {  // the first run's engine is gone before the second's is built
    Replayer replayer(trace, jobs, converter, first);
    r = replayer.Run(std::move(model));
    peak = replayer.peak_time();
  }
  if (!r.ok() || peak < 0) return r;  // no GPU held: the end's snapshot
  ReplayOptions second = first;
  second.snapshot_at = second.until = peak;
  second.accounting = nullptr;
  second.verify = false;
  absl::StatusOr<ReplayResult> at_peak =
      Replayer(trace, jobs, converter, second).Run(std::move(again));
  if (!at_peak.ok()) return at_peak.status();
  r->snapshot = std::move(at_peak->snapshot);
  return r;
}

}  // namespace tessera::trace
