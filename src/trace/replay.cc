// The replay loop. Per instant (the same order as the scenario simulator, sim/simulator.cc):
//   1. integrate the metrics' current values up to the instant;
//   2. finish the jobs whose run ends by then (capacity frees before anything arrives);
//   3. submit the jobs that arrive by then;
//   4. run engine cycles until one decides nothing, booking every decision in the ledger.
// Each step is one method of Replayer (trace/replayer.h; 2 and 3 and the decisions of 4 are
// booked by replay_book.cc); RunReplay runs them in that order.
#include "trace/replay.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "trace/replayer.h"
#include "trace/typical_pods.h"

namespace tessera::trace {

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

namespace replay_internal {

absl::StatusOr<ReplayResult> Replayer::Run(Model model) {
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

absl::Status Replayer::Init(Model model) {
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

void Replayer::InitQueues() {
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

int Replayer::ClassOf(WorkloadId id) const {
  int64_t gpu_milli = 0;
  for (const auto& ps : m_->workloads[static_cast<size_t>(id)].pod_sets) {
    const int64_t gpus = ps.requests[kGpu];
    gpu_milli += int64_t{ps.count} * (gpus > 0 ? gpus * 1000 : ps.requests[milli_]);
  }
  return SizeClassOf(gpu_milli);
}

void Replayer::InitArrivalOrder() {
  k_ = s_->num_workloads();
  manifest_order_.resize(static_cast<size_t>(k_));
  for (WorkloadId i = 0; i < k_; ++i) manifest_order_[static_cast<size_t>(i)] = i;
  std::stable_sort(manifest_order_.begin(), manifest_order_.end(), [&](WorkloadId a, WorkloadId b) {
    return ManifestArrival(a) < ManifestArrival(b);
  });
  cursor_ = jobs_.Cursor();
  PullJob();
  res_.jobs = static_cast<int64_t>(k_) + jobs_.size();
  res_.start = std::min(NextManifest(), NextTrace());
  if (res_.start == kInf) res_.start = 0;
}

void Replayer::InitMetrics() {
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
  res_.series = TimeSeries(res_.start, static_cast<int>(res_.channels.size()), options_.max_buckets,
                           std::max(1.0, std::ceil(span_guess / options_.max_buckets)));
  values_.assign(res_.channels.size(), 0);
  last_ = res_.start;
  total_milli_ = static_cast<double>(std::max<int64_t>(1, ledger_->total_gpu_milli()));
}

void Replayer::Advance(double now) {
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

void Replayer::NotePeaks() {
  res_.peak_allocation_pct =
      std::max(res_.peak_allocation_pct,
               100.0 * static_cast<double>(ledger_->allocated_gpu_milli()) / total_milli_);
  for (size_t q = 0; q < queue_milli_.size(); ++q)
    res_.queues[q].peak_gpus =
        std::max(res_.queues[q].peak_gpus, static_cast<double>(queue_milli_[q]) / 1000.0);
}

void Replayer::InitWorkloads() {
  let_go_ = options_.let_go && !late_.on();
  for (WorkloadId id = 0; id < k_; ++id) {
    first_admit_.push_back(-1);
    admit_at_.push_back(-1);
  }
  for (WorkloadId id = 0; id < k_; ++id) {
    const Workload& w = m_->workloads[static_cast<size_t>(id)];
    partial_gangs_ = partial_gangs_ || w.MinPods() < w.TotalPods();
  }
}

absl::Status Replayer::RunCycles(double now) {
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

absl::Status Replayer::Scale(double now) {
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

void Replayer::Snapshot(double at) {
  res_.snapshot = TakeClusterSnapshot(*s_, at, options_.snapshot_workloads);
}

void Replayer::NotePeak() {
  const int64_t held = ledger_->allocated_gpu_milli();
  if (held <= peak_milli_) return;
  peak_milli_ = held;
  peak_time_ = last_;
}

void Replayer::Nodes() {
  as_->Account(res_.end);
  res_.node_pools = as_->Usage();
  res_.elastic = as_->elastic();
  res_.scale_up = as_->mode();
  res_.waiting_gang_gpu_hours = as_->waiting_gang_gpu_hours();
  res_.node_events = static_cast<int64_t>(node_events_.size());
  if (cost_) cost_->SetNodeUptime(as_->NodeUptime(res_.end));
}

bool Replayer::StopEarly(double now) {
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

void Replayer::CountEndStates() {
  for (WorkloadId id = 0; id < s_->num_workloads(); ++id) {
    if (s_->retired(id)) continue;  // ended
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

void Replayer::SumQueues() {
  totals_.Sum(res_, queue_milli_);
  // Each admitted job's wait to its first admission plus its waits to be admitted again; the
  // first waits alone (res_.all) when no job waited again.
  if (reruns_.waited_again()) {
    for (WorkloadId id = 0; id < s_->num_workloads(); ++id)
      if (!s_->retired(id)) AddTotalWait(id);
    res_.total_wait = total_waits_.Summary();
  } else {
    res_.total_wait = res_.all.wait;
  }
}

void Replayer::Finalize() {
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

}  // namespace replay_internal

using replay_internal::Replayer;

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
