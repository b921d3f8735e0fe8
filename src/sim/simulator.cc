#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>

#include "cost/report_format.h"
#include "engine/time/span.h"
#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "sim/sim_json.h"
#include "sim/start_state.h"

namespace tessera {

const char* SimEventTypeName(SimEvent::Type t) {
  switch (t) {
    case SimEvent::Type::kAdmitted:
      return "admitted";
    case SimEvent::Type::kPreempted:
      return "preempted";
    case SimEvent::Type::kFinished:
      return "finished";
    case SimEvent::Type::kRejected:
      return "rejected";
    case SimEvent::Type::kScaledUp:
      return "scaled-up";
    case SimEvent::Type::kFailed:
      return "failed";
    case SimEvent::Type::kWaitLimitExceeded:
      return "wait-limit-exceeded";
    case SimEvent::Type::kNodeAdded:
      return "node-added";
    case SimEvent::Type::kNodeRemoved:
      return "node-removed";
    case SimEvent::Type::kNodeInterrupted:
      return "node-interrupted";
    case SimEvent::Type::kTerminated:
      return "terminated";
    case SimEvent::Type::kMoved:
      return "moved";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<Simulator>> Simulator::Create(Model model, SimOptions options) {
  auto s = Scheduler::Create(std::move(model));
  if (!s.ok()) return s.status();
  return std::unique_ptr<Simulator>(new Simulator(std::move(*s), options));
}

std::string Simulator::WorkloadKey(WorkloadId id) const {
  if (id < 0) return "";
  return scheduler_->model().workloads[id].Key();
}

std::string Simulator::QueueName(int32_t cq) const {
  return cq < 0 ? "" : scheduler_->model().cluster_queues[cq].name;
}

// One run of the simulation: the event queue, the engine's cycles at each instant, and what the
// summary needs (allocation over time, the progress checkpoints saved).
class SimRun {
 public:
  explicit SimRun(Simulator& sim)
      : sim_(sim), s_(*sim.scheduler_), opt_(sim.options_), sum_(sim.summary_) {
    const int n = s_.num_workloads();
    admissions_.assign(n, 0);
    progress_.assign(n, 0);
    started_.assign(n, -1);
    gpus_.assign(n, 0);
    if (s_.model().config.pricing.present) ledger_.emplace(s_.model());
    if (!s_.model().node_pools.empty()) autoscaler_.emplace(s_, opt_.scale_up);
    if (opt_.gpu_failures.enabled()) failures_.emplace(s_, opt_.gpu_failures);
  }
  absl::Status Run();

 private:
  // At equal times: finishes and deadlines first (capacity frees), then arrivals, then timers,
  // then the retry of a preemption held back (Scheduler::NextRetry).
  enum Kind { kFinish = 0, kDeadline = 1, kArrive = 2, kTimer = 3, kRetry = 4 };
  // (time, kind, workload, admission): a finish or deadline belongs to one admission of the
  // workload, its sequence number; one of an earlier admission (preempted since, even in the
  // cycle that admitted it, then admitted again) is stale and ignored.
  using Ev = std::tuple<double, int, WorkloadId, int64_t>;

  absl::Status Settle(double now);
  // After an instant's cycles: a preemption held back in it is retried at the engine's
  // NextRetry, unless the instant came from such retries alone and the running set is one the
  // chain of retries has already seen (a circle of preemptions: the chain stops there).
  absl::Status Retry(double now, bool retry_only);
  uint64_t RunningSet() const;
  // One instant: the queue's events at `now`, the autoscaler's, the cycles; again while the
  // autoscaler has more due at `now` (nodes that provision in no time).
  absl::Status Instant(double now, SimProgress& progress);
  double NextTime() const;
  double NextNodeTime(double t) const;  // with the autoscaler's due events
  double NextFailure(double t) const;   // with the failures' and repairs
  void Record(const Decision& d, double now);
  void OnAdmitted(WorkloadId id, const std::vector<PodPlacement>& pods, double now);
  // Preempted or failed: progress and loss; `grace`: seconds it still holds its GPUs, lost.
  void OnStopped(WorkloadId id, double now, double grace = 0);
  void Pop(double now);
  // The GPU failures and repairs due at `now`; true when a failure evicted something.
  bool Failures(double now);
  void RecordAlloc(double now);
  double PodGpus(WorkloadId id, const std::vector<PodPlacement>& pods) const;

  Simulator& sim_;
  Scheduler& s_;
  const SimOptions& opt_;
  SimSummary& sum_;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> queue_;
  std::vector<int64_t> admissions_;  // per workload: admissions so far
  std::vector<double> progress_;     // work saved by checkpoints, seconds
  std::vector<double> started_;      // start of the current run
  std::vector<double> gpus_;         // GPUs held by the current run
  double next_timer_ = std::numeric_limits<double>::infinity();
  double last_time_ = 0;
  int64_t last_alloc_ = 0;
  double alloc_area_ = 0;
  double lost_gpu_seconds_ = 0;
  double grace_gpu_seconds_ = 0;            // the part of lost_gpu_seconds_ held in grace periods
  double move_lost_gpu_seconds_ = 0;        // the part of lost_gpu_seconds_ lost to consolidation
  std::optional<cost::CostLedger> ledger_;  // with spec.pricing: what each workload held
  std::optional<Autoscaler> autoscaler_;    // with NodePools: node-hours; elastic ones scale
  std::optional<GpuFailures> failures_;     // with --gpu-failures
  bool plan_ = false;       // something arrived, ended or was preempted: scale-up may be needed
  double next_retry_ = -1;  // the kRetry in the queue, -1: none
  std::vector<uint64_t> retry_chain_;  // running sets after the instants of one chain of retries
  double capacity_area_ = 0;           // GPUs up x seconds
  int64_t last_capacity_ = 0;
};

double SimRun::PodGpus(WorkloadId id, const std::vector<PodPlacement>& pods) const {
  const Workload& w = s_.model().workloads[id];
  double g = 0;
  for (const PodPlacement& p : pods) {
    const Resources& r = w.pod_sets[p.pod_set].requests;
    g += static_cast<double>(r[kGpu]) + static_cast<double>(r[kGpuMilli]) / kMilliPerGpu;
  }
  return g;
}

void SimRun::RecordAlloc(double now) {
  alloc_area_ += static_cast<double>(last_alloc_) * (now - last_time_);
  capacity_area_ += static_cast<double>(last_capacity_) * (now - last_time_);
  last_capacity_ = s_.gpus_total();
  sum_.gpus_total = std::max(sum_.gpus_total, last_capacity_);
  last_time_ = now;
  if (s_.gpus_allocated() != last_alloc_) {
    last_alloc_ = s_.gpus_allocated();
    sum_.gpu_allocation.emplace_back(now, last_alloc_);
  }
}

void SimRun::OnAdmitted(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
  const Workload& w = s_.model().workloads[id];
  // Numbered as the decision comes: a preemption later in the same cycle is not reflected yet
  // (status() is read after the whole cycle).
  const int64_t n = ++admissions_[id];
  started_[id] = now;
  gpus_[id] = PodGpus(id, pods);
  if (ledger_) ledger_->Hold(id, s_.status(id).cluster_queue, s_.status(id).flavors, pods, now);
  if (w.runtime) {
    const double left = std::max(0.0, *w.runtime - progress_[id]);
    if (!w.active_deadline || left <= *w.active_deadline)
      queue_.emplace(now + left, kFinish, id, n);
  }
  if (w.active_deadline && (!w.runtime || *w.runtime - progress_[id] > *w.active_deadline))
    queue_.emplace(now + *w.active_deadline, kDeadline, id, n);
}

void SimRun::OnStopped(WorkloadId id, double now, double grace) {
  // With a grace period the GPUs stay held (and priced) until the kTerminated decision.
  if (ledger_ && grace <= 0) ledger_->Release(id, now);
  if (started_[id] < 0) return;
  const double ran = now - started_[id];
  const auto& interval = s_.model().workloads[id].checkpoint_interval;
  const double saved = interval && *interval > 0 ? std::floor(ran / *interval) * *interval : 0;
  progress_[id] += saved;
  // Told to stop, a workload makes no more progress: its grace period is held and lost.
  lost_gpu_seconds_ += (ran - saved + grace) * gpus_[id];
  grace_gpu_seconds_ += grace * gpus_[id];
  started_[id] = -1;
}

bool SimRun::Failures(double now) {
  std::vector<Decision> evicted;
  failures_->Advance(now, evicted);
  for (const Decision& d : evicted) {
    const WorkloadId id = d.workload;
    const double before = progress_[id], ran = started_[id] >= 0 ? now - started_[id] : 0;
    const double gpus = gpus_[id];
    Record(d, now);
    if (ran > 0) failures_->Lost(ran, progress_[id] - before, before, gpus);
  }
  return !evicted.empty();
}

void SimRun::Record(const Decision& d, double now) {
  SimEvent e;
  e.time = now;
  e.workload = d.workload;
  e.cluster_queue = s_.status(d.workload).cluster_queue;
  e.reason = d.reason;
  e.preemptor = d.preemptor;
  e.pods = d.pods;
  switch (d.type) {
    case Decision::Type::kAdmit:
      e.type = SimEvent::Type::kAdmitted;
      OnAdmitted(d.workload, d.pods, now);
      if (autoscaler_) autoscaler_->Placed(d.workload, d.pods, now);
      break;
    case Decision::Type::kScaleUp:
      e.type = SimEvent::Type::kScaledUp;
      if (autoscaler_) autoscaler_->Placed(d.workload, d.pods, now);
      gpus_[d.workload] += PodGpus(d.workload, d.pods);
      if (ledger_)
        ledger_->Hold(d.workload, e.cluster_queue, s_.status(d.workload).flavors, d.pods, now);
      break;
    case Decision::Type::kPreempt:
      e.type = SimEvent::Type::kPreempted;
      e.grace_seconds = d.grace_seconds;
      ++sum_.preemptions;
      OnStopped(d.workload, now, d.grace_seconds);
      // With a grace period the GPUs stay held until kTerminated.
      if (autoscaler_ && d.grace_seconds <= 0) autoscaler_->Released(d.workload, now);
      plan_ = true;
      break;
    case Decision::Type::kMove: {
      // Stopped where it was (the work since its last checkpoint lost), started again at once
      // at its new place; a finish planned for the old run is stale from here on.
      e.type = SimEvent::Type::kMoved;
      ++sum_.moves;
      const double before = lost_gpu_seconds_;
      OnStopped(d.workload, now);
      move_lost_gpu_seconds_ += lost_gpu_seconds_ - before;
      if (autoscaler_) autoscaler_->Released(d.workload, now);
      OnAdmitted(d.workload, d.pods, now);
      if (autoscaler_) autoscaler_->Placed(d.workload, d.pods, now);
      break;
    }
    case Decision::Type::kTerminated:
      e.type = SimEvent::Type::kTerminated;
      if (ledger_) ledger_->Release(d.workload, now);
      if (autoscaler_) autoscaler_->Released(d.workload, now);
      plan_ = true;
      break;
    case Decision::Type::kReject:
      e.type = SimEvent::Type::kRejected;
      break;
    case Decision::Type::kWaitLimitExceeded:
      e.type = SimEvent::Type::kWaitLimitExceeded;
      break;
  }
  sim_.events_.push_back(std::move(e));
}

absl::Status SimRun::Settle(double now) {
  // Cycles until nothing changes at this instant (preempted workloads may fit elsewhere).
  for (int cycle = 0;; ++cycle) {
    if (cycle >= opt_.max_cycles_per_instant) {
      return absl::InternalError(
          fmt::format("scheduling did not settle after {} cycles at t={}", cycle, now));
    }
    auto decisions = s_.RunCycle(now);
    ++sum_.cycles;
    if (opt_.verify) {
      if (auto st = s_.Verify(); !st.ok()) {
        return absl::InternalError(
            fmt::format("invariant broken at t={}: {}", now, std::string(st.message())));
      }
    }
    if (decisions.empty()) break;
    for (const Decision& d : decisions) Record(d, now);
  }
  // The engine's next timer (a wait limit running out) is an instant of its own.
  const double timer = s_.NextTimer(now);
  if (timer > now && timer < next_timer_ && std::isfinite(timer)) {
    next_timer_ = timer;
    queue_.emplace(timer, kTimer, -1, 0);
  }
  return absl::OkStatus();
}

uint64_t SimRun::RunningSet() const {
  uint64_t h = 14695981039346656037ull;  // FNV-1a over the ids of the running workloads
  for (WorkloadId id = 0; id < s_.num_workloads(); ++id) {
    if (s_.status(id).state != WorkloadState::kAdmitted) continue;
    h = (h ^ static_cast<uint64_t>(id)) * 1099511628211ull;
  }
  return h;
}

absl::Status SimRun::Retry(double now, bool retry_only) {
  const double retry = s_.NextRetry(now);
  if (!std::isfinite(retry)) {
    retry_chain_.clear();
    return absl::OkStatus();
  }
  if (!retry_only) retry_chain_.clear();  // something arrived or ended: a new chain
  const uint64_t set = RunningSet();
  if (std::find(retry_chain_.begin(), retry_chain_.end(), set) != retry_chain_.end()) {
    retry_chain_.clear();
    return absl::OkStatus();
  }
  retry_chain_.push_back(set);
  if (static_cast<int>(retry_chain_.size()) > opt_.max_cycles_per_instant) {
    return absl::InternalError(fmt::format(
        "scheduling did not settle: preemptions held back at {} instants in a row up to t={}",
        retry_chain_.size(), now));
  }
  if (next_retry_ != retry) {
    next_retry_ = retry;
    queue_.emplace(retry, kRetry, -1, 0);
  }
  return absl::OkStatus();
}

void SimRun::Pop(double now) {
  auto [t, kind, id, admission] = queue_.top();
  queue_.pop();
  if (kind == kRetry) {
    if (t == next_retry_) next_retry_ = -1;
    return;
  }
  if (kind == kArrive) {
    s_.Submit(id, now);
    plan_ = true;
    return;
  }
  if (kind == kTimer) {
    if (t == next_timer_) next_timer_ = std::numeric_limits<double>::infinity();
    return;
  }
  if (s_.status(id).state != WorkloadState::kAdmitted || admission != admissions_[id]) return;
  plan_ = true;
  if (autoscaler_) autoscaler_->Released(id, now);
  SimEvent e;
  e.time = now;
  e.workload = id;
  if (kind == kFinish) {
    started_[id] = -1;
    if (ledger_) ledger_->Release(id, now);
    s_.Finish(id, now);
    e.type = SimEvent::Type::kFinished;
  } else {
    OnStopped(id, now);
    e.reason = fmt::format("DeadlineExceeded: ran for its activeDeadlineSeconds ({:.0f}s)",
                           *s_.model().workloads[id].active_deadline);
    s_.Fail(id, now, e.reason);
    e.type = SimEvent::Type::kFailed;
    ++sum_.deadlines_exceeded;
  }
  e.cluster_queue = s_.status(id).cluster_queue;
  sim_.events_.push_back(std::move(e));
}

absl::Status SimRun::Run() {
  // Workloads marked tessera.dev/admitted are admitted at 0 before anything else arrives.
  std::vector<WorkloadId> at_start;
  for (WorkloadId id = 0; id < s_.num_workloads(); ++id) {
    if (s_.model().workloads[id].admitted_at_start) {
      at_start.push_back(id);
    } else {
      queue_.emplace(std::max(0.0, s_.model().workloads[id].arrival), kArrive, id, 0);
    }
  }
  sum_.gpus_total = s_.gpus_total();
  last_capacity_ = s_.gpus_total();
  sum_.gpu_allocation.emplace_back(0, 0);
  if (!at_start.empty()) {
    // Those that name their flavors (tessera.dev/admitted-flavor) are restored there first, in
    // the manifest's order; the others are submitted and admitted by the engine.
    std::vector<Resources> free;
    for (const Node& n : s_.model().nodes) free.push_back(n.allocatable);
    for (WorkloadId id : at_start) {
      if (s_.model().workloads[id].admitted_flavors.empty()) continue;
      auto pods = PlaceInNamedFlavors(s_, id, free);
      if (!pods.ok()) return pods.status();
      if (auto st = s_.Restore(id, *pods, 0); !st.ok())
        return absl::FailedPreconditionError(
            fmt::format("{} could not be restored in its tessera.dev/admitted-flavor: {}",
                        sim_.WorkloadKey(id), std::string(st.message())));
      if (auto st = CheckNamedFlavors(s_, id); !st.ok()) return st;
      Decision d;
      d.workload = id;
      d.pods = s_.status(id).pods;
      Record(d, 0);
    }
    for (WorkloadId id : at_start)
      if (s_.model().workloads[id].admitted_flavors.empty()) s_.Submit(id, 0);
    if (auto st = Settle(0); !st.ok()) return st;
    if (auto st = Retry(0, /*retry_only=*/false); !st.ok()) return st;
    for (WorkloadId id : at_start) {
      // A restored gang below its minimum may be evicted at 0 (staleGangGracePeriod 0).
      if (!s_.model().workloads[id].admitted_flavors.empty()) continue;
      if (s_.status(id).state != WorkloadState::kAdmitted) {
        return absl::FailedPreconditionError(fmt::format(
            "{} is marked tessera.dev/admitted but could not be admitted at the start: {}",
            sim_.WorkloadKey(id), s_.status(id).reason));
      }
    }
    RecordAlloc(0);
  }
  if (autoscaler_) autoscaler_->AfterCycles(0, plan_ || !at_start.empty());
  plan_ = false;
  SimProgress progress;
  progress.workloads = s_.num_workloads();
  progress.arrived = static_cast<int64_t>(at_start.size());
  for (int64_t instant = 0;; ++instant) {
    const double now = NextTime();
    if (!std::isfinite(now) || now > opt_.until) break;
    if (opt_.progress && instant % 256 == 255) {
      progress.now = now;
      progress.cycles = sum_.cycles;
      opt_.progress(progress);
    }
    if (auto st = Instant(now, progress); !st.ok()) return st;
  }
  if (std::isfinite(opt_.until) && opt_.until > last_time_) {
    if (autoscaler_) autoscaler_->Account(opt_.until);
    RecordAlloc(opt_.until);
  }
  sum_.end_time = last_time_;
  // Allocation over the GPUs that were up (an elastic cluster's capacity changes).
  sum_.mean_gpu_allocation = capacity_area_ > 0
                                 ? alloc_area_ / capacity_area_
                                 : (s_.gpus_total() > 0 ? static_cast<double>(last_alloc_) /
                                                              static_cast<double>(s_.gpus_total())
                                                        : 0);
  sum_.gpu_hours_lost = lost_gpu_seconds_ / 3600;
  sum_.gpu_hours_lost_to_moves = move_lost_gpu_seconds_ / 3600;
  if (autoscaler_) {
    sum_.node_pools = autoscaler_->Usage();
    sum_.elastic = autoscaler_->elastic();
    sum_.scale_up = autoscaler_->mode();
    sum_.waiting_gang_gpu_hours = autoscaler_->waiting_gang_gpu_hours();
    if (ledger_) ledger_->SetNodeUptime(autoscaler_->NodeUptime(last_time_));
  }
  sum_.gpu_hours_in_grace = grace_gpu_seconds_ / 3600;
  if (failures_) {
    failures_->Finish(last_time_);
    sum_.gpu_failures = failures_->stats();
  }
  if (ledger_) sum_.cost = ledger_->Report(last_time_);
  return absl::OkStatus();
}

double SimRun::NextTime() const {
  double t = queue_.empty() ? std::numeric_limits<double>::infinity() : std::get<0>(queue_.top());
  if (failures_) return NextFailure(NextNodeTime(t));
  return NextNodeTime(t);
}

double SimRun::NextNodeTime(double t) const {
  if (!autoscaler_) return t;
  // Nodes coming or going keep the run going; a spot interruption only while something else
  // does (else an idle spot pool would be interrupted and replaced forever).
  t = std::min(t, autoscaler_->Next(false));
  if (!std::isfinite(t)) return t;
  return std::min(t, autoscaler_->Next(true));
}

double SimRun::NextFailure(double t) const {
  // Failures only while something else is due (as spot interruptions); repairs also while a
  // workload waits (it may wait for the repaired GPU).
  if (std::isfinite(t)) return std::min({t, failures_->NextFailure(), failures_->NextRepair()});
  for (int32_t cq = 0; cq < static_cast<int32_t>(s_.model().cluster_queues.size()); ++cq) {
    const ClusterQueueStats q = s_.cluster_queue_stats(cq);
    if (q.pending_active + q.pending_inadmissible > 0) return failures_->NextRepair();
  }
  return t;
}

absl::Status SimRun::Instant(double now, SimProgress& progress) {
  if (autoscaler_) autoscaler_->Account(now);
  RecordAlloc(now);
  bool retry_only = !autoscaler_ || autoscaler_->Next(true) > now;
  while (!queue_.empty() && std::get<0>(queue_.top()) == now) {
    progress.arrived += std::get<1>(queue_.top()) == kArrive;
    retry_only = retry_only && std::get<1>(queue_.top()) == kRetry;
    Pop(now);
  }
  if (failures_ && Failures(now)) retry_only = false;
  for (int round = 0;; ++round) {
    if (round >= opt_.max_cycles_per_instant)
      return absl::InternalError(fmt::format("nodes did not settle at t={}", now));
    if (autoscaler_) {
      std::vector<Decision> evicted;
      if (autoscaler_->Advance(now, sim_.events_, evicted)) plan_ = true;
      for (const Decision& d : evicted) Record(d, now);
    }
    if (auto st = Settle(now); !st.ok()) return st;
    if (!autoscaler_) break;
    autoscaler_->AfterCycles(now, plan_);
    plan_ = false;
    if (autoscaler_->Next(true) > now) break;
  }
  if (auto st = Retry(now, retry_only); !st.ok()) return st;
  RecordAlloc(now);
  return absl::OkStatus();
}

absl::Status Simulator::Run() {
  SimRun run(*this);
  if (auto st = run.Run(); !st.ok()) return st;
  Summarize();
  return absl::OkStatus();
}

void Simulator::Summarize() {
  const Scheduler& s = *scheduler_;
  // Waiting time per queue: from arrival to first admission, over admitted workloads.
  const int ncq = static_cast<int>(s.model().cluster_queues.size());
  std::vector<SimSummary::QueueWait> waits(ncq + 1);
  for (int q = 0; q < ncq; ++q) waits[q].queue = s.model().cluster_queues[q].name;
  waits[ncq].queue = "(none)";
  std::map<WorkloadId, double> first_admit;
  for (const auto& e : events_)
    if (e.type == SimEvent::Type::kAdmitted) first_admit.try_emplace(e.workload, e.time);
  for (const auto& [id, t] : first_admit) {
    int32_t cq = s.status(id).cluster_queue;
    auto& qw = waits[cq < 0 ? ncq : cq];
    const Workload& w = s.model().workloads[id];
    double wait = t - (w.admitted_at_start ? 0.0 : std::max(0.0, w.arrival));
    qw.mean_wait += wait;
    qw.max_wait = std::max(qw.max_wait, wait);
    ++qw.admitted;
  }
  for (auto& qw : waits) {
    if (qw.admitted > 0) qw.mean_wait /= static_cast<double>(qw.admitted);
    if (qw.admitted > 0 || qw.queue != "(none)") summary_.waits.push_back(qw);
  }
}

namespace {

nlohmann::json PodsJson(const Model& m, const Workload& w, const std::vector<PodPlacement>& pods) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : pods) {
    const auto& ps = w.pod_sets[p.pod_set];
    out.push_back({{"name", fmt::format("{}-{}-{}", w.name, ps.name, p.index)},
                   {"node", m.nodes[p.node].name},
                   {"gpus", p.gpus}});
  }
  return out;
}

}  // namespace

std::string Simulator::ToJson() const { return DumpJson(JsonDocument(), 2) + "\n"; }

nlohmann::json Simulator::JsonDocument() const {
  const Scheduler& s = *scheduler_;
  const Model& m = s.model();
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : events_) {
    if (e.node >= 0) {
      const Node& node = m.nodes[e.node];
      events.push_back({{"time", e.time},
                        {"type", SimEventTypeName(e.type)},
                        {"node", node.name},
                        {"pool", node.pool >= 0 ? m.node_pools[node.pool].name : ""},
                        {"reason", e.reason}});
      continue;
    }
    nlohmann::json j = {{"time", e.time},
                        {"type", SimEventTypeName(e.type)},
                        {"workload", WorkloadKey(e.workload)}};
    if (e.type == SimEvent::Type::kAdmitted || e.type == SimEvent::Type::kScaledUp ||
        e.type == SimEvent::Type::kMoved) {
      j["clusterQueue"] = QueueName(e.cluster_queue);
      j["pods"] = PodsJson(m, m.workloads[e.workload], e.pods);
    }
    if (e.type == SimEvent::Type::kMoved) {
      j["preemptor"] = WorkloadKey(e.preemptor);
      j["reason"] = e.reason;
    }
    if (e.type == SimEvent::Type::kPreempted) {
      if (e.preemptor >= 0) j["preemptor"] = WorkloadKey(e.preemptor);  // none: a drain
      j["reason"] = e.reason;
      if (e.grace_seconds > 0) j["gracePeriodSeconds"] = e.grace_seconds;
    }
    if (e.type == SimEvent::Type::kRejected || e.type == SimEvent::Type::kFailed ||
        e.type == SimEvent::Type::kWaitLimitExceeded || e.type == SimEvent::Type::kTerminated)
      j["reason"] = e.reason;
    events.push_back(std::move(j));
  }
  nlohmann::json workloads = nlohmann::json::array();
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    const auto& st = s.status(id);
    nlohmann::json w = {{"name", WorkloadKey(id)},
                        {"state", WorkloadStateName(st.state)},
                        {"clusterQueue", QueueName(st.cluster_queue)},
                        {"reason", st.reason},
                        {"preemptions", st.preemptions},
                        {"pods", PodsJson(m, m.workloads[id], st.pods)}};
    if (st.state == WorkloadState::kPending && st.expected_start >= 0)
      w["expectedStart"] = st.expected_start;
    sim_internal::AddWorkloadFields(s, id, w);  // for `get`/`explain --from` (sim/sim_json.h)
    workloads.push_back(std::move(w));
  }
  nlohmann::json alloc = nlohmann::json::array();
  for (const auto& [t, g] : summary_.gpu_allocation) alloc.push_back({{"time", t}, {"gpus", g}});
  nlohmann::json waits = nlohmann::json::array();
  for (const auto& qw : summary_.waits) {
    waits.push_back({{"clusterQueue", qw.queue},
                     {"admitted", qw.admitted},
                     {"meanWait", qw.mean_wait},
                     {"maxWait", qw.max_wait}});
  }
  nlohmann::json summary = {{"endTime", summary_.end_time},
                            {"gpusTotal", summary_.gpus_total},
                            {"meanGpuAllocation", summary_.mean_gpu_allocation},
                            {"gpuAllocation", alloc},
                            {"waitingTime", waits},
                            {"preemptions", summary_.preemptions},
                            {"gpuHoursLost", summary_.gpu_hours_lost},
                            {"gpuHoursInGracePeriods", summary_.gpu_hours_in_grace},

                            {"deadlinesExceeded", summary_.deadlines_exceeded},
                            {"cycles", summary_.cycles}};
  if (summary_.moves > 0) {  // consolidation: only when it moved something
    summary["moves"] = summary_.moves;
    summary["gpuHoursLostToMoves"] = summary_.gpu_hours_lost_to_moves;
  }
  if (summary_.cost) summary["cost"] = cost::CostJson(*summary_.cost);
  if (summary_.gpu_failures) summary["gpuFailures"] = GpuFailureJson(*summary_.gpu_failures);
  if (!summary_.node_pools.empty()) {
    nlohmann::json pools = nlohmann::json::array();
    for (const PoolUsage& u : summary_.node_pools) {
      nlohmann::json p = {{"pool", u.pool},
                          {"elastic", u.elastic},
                          {"spot", u.spot},
                          {"peakNodes", u.peak_nodes},
                          {"nodesAtEnd", u.nodes_at_end},
                          {"nodeHours", u.node_hours},
                          {"idleNodeHours", u.idle_node_hours},
                          {"gpuHours", u.gpu_hours},
                          {"nodesAdded", u.added},
                          {"nodesRemoved", u.removed},
                          {"interruptions", u.interrupted}};
      if (u.price_per_node_hour) {
        p["pricePerNodeHour"] = *u.price_per_node_hour;
        p["cost"] = *u.cost;
        p["idleCost"] = *u.idle_cost;
      }
      pools.push_back(std::move(p));
    }
    summary["nodePools"] = std::move(pools);
    if (summary_.elastic) {
      summary["scaleUp"] =
          summary_.scale_up == ScaleUpMode::kGangAware ? "gang-aware" : "pod-by-pod";
      summary["waitingGangGpuHours"] = summary_.waiting_gang_gpu_hours;
    }
  }
  nlohmann::json doc = {{"events", events}, {"workloads", workloads}, {"summary", summary}};
  sim_internal::AddClusterFields(s, doc);
  return doc;
}

}  // namespace tessera
