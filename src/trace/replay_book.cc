// The replay's bookings (trace/replayer.h): the jobs that arrive and the runs that end, and the
// engine's decisions applied to the ledger of what every node holds, the metrics, the cost ledger,
// the autoscaler and the run records.
#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "trace/replayer.h"

namespace tessera::trace::replay_internal {

void Replayer::Book(WorkloadId id, const std::vector<PodPlacement>& pods) {
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

int64_t Replayer::HeldMilli(WorkloadId id) const {
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

int64_t Replayer::Release(WorkloadId id) {
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

void Replayer::Departures(double now) {
  while (!finishes_.empty() && std::get<0>(finishes_.top()) <= now) {
    auto [when, id, gen] = finishes_.top();
    finishes_.pop();
    if (s_->retired(id)) continue;  // a stale finish of a job already let go of
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
    LetGo(id);
  }
}

void Replayer::Arrivals(double now) {
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

void Replayer::ApplyDecisions(std::vector<Decision>& decisions, double now) {
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
        LetGo(id);
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

double Replayer::Evict(const Decision& d, double now) {
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

void Replayer::Failures(double now) {
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

void Replayer::MoveOut(const Decision& d, double now) {
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

void Replayer::Admit(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
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

void Replayer::AddTotalWait(WorkloadId id) {
  const double first = first_admit_[static_cast<size_t>(id)];
  if (first >= 0) total_waits_.Add(first - ArrivalOf(id) + reruns_.RequeueWaits(id));
}

void Replayer::LetGo(WorkloadId id) {
  if (!let_go_) return;
  AddTotalWait(id);
  reruns_.Forget(id);
  moved_.erase(id);
  if (runs_) runs_->Forget(id);
  s_->Retire(id);
  first_admit_.Retire(static_cast<size_t>(id));
  admit_at_.Retire(static_cast<size_t>(id));
}

void Replayer::StartRun(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
  const WorkloadStatus& st = s_->status(id);
  admit_at_[static_cast<size_t>(id)] = now;
  Book(id, pods);
  if (as_) as_->Placed(id, pods, now);
  if (cost_) cost_->Hold(id, st.cluster_queue, st.flavors, pods, now);
  if (runs_) runs_->Admitted(id, ArrivalOf(id), st.cluster_queue, st.flavors, pods, now);
  const auto& rt = m_->workloads[static_cast<size_t>(id)].runtime;
  if (rt) finishes_.emplace(now + reruns_.Left(id, *rt), id, Generation(id));
}

}  // namespace tessera::trace::replay_internal
