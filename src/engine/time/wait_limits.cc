#include "engine/time/wait_limits.h"

#include <algorithm>
#include <limits>

#include "engine/engine.h"
#include "engine/time/span.h"

namespace tessera {

namespace {
// How far ahead an overdue workload's FIFO key moves: before any real creation time.
constexpr double kOverdueShift = 1e15;
}  // namespace

WaitLimits::WaitLimits(Engine& e) : e_(e), s_(e.st) {}

std::optional<double> WaitLimits::LimitOf(WorkloadId id) const {
  const Workload& w = s_.model.workloads[id];
  if (w.max_wait) return w.max_wait;
  const int32_t cq = s_.recs[id].cq;
  if (cq >= 0) return s_.model.cluster_queues[cq].max_wait;
  return std::nullopt;
}

void WaitLimits::Track(WorkloadId id, double now) {
  if (static_cast<size_t>(id) >= tracked_.size()) tracked_.resize(id + 1, false);
  if (tracked_[id]) return;
  const std::optional<double> limit = LimitOf(id);
  if (!limit) return;
  tracked_[id] = true;
  timers_.insert({now + *limit, id});
}

void WaitLimits::OnAdmitted(WorkloadId id, double now) {
  const Workload& w = s_.model.workloads[id];
  const int32_t cq = s_.recs[id].cq;
  const std::optional<double> min_runtime =
      w.min_runtime ? w.min_runtime
                    : (cq >= 0 ? s_.model.cluster_queues[cq].min_runtime : std::nullopt);
  if (min_runtime && *min_runtime > 0) protections_.insert({now + *min_runtime, id});
}

bool WaitLimits::Movable(WorkloadId id) const {
  if (s_.StateOf(id) != WorkloadState::kPending) return false;
  const WorkloadRec& rec = s_.recs[id];
  return rec.cq >= 0 && rec.unresolved.empty() && rec.order_created >= s_.status[id].created &&
         e_.pending.members(EngineState::queue_index(rec.cq)).contains(id);
}

void WaitLimits::MoveAhead(WorkloadId id, double now, bool ran, std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  e_.reservations.Forget(id);
  e_.pending.Dequeue(id);
  rec.order_created = s_.status[id].created - kOverdueShift;
  e_.pending.Enqueue(id);
  Decision d;
  d.type = Decision::Type::kWaitLimitExceeded;
  d.workload = id;
  const std::string what =
      ran ? fmt::format(
                "requeued {} after it entered its queue; its wait limit ({}) ran out while "
                "it ran",
                FormatSpan(now - rec.submitted), FormatSpan(*LimitOf(id)))
          : fmt::format("waited {} (its wait limit is {})", FormatSpan(now - rec.submitted),
                        FormatSpan(*LimitOf(id)));
  d.reason = fmt::format("{}: now ahead of the other workloads of priority {} in ClusterQueue {}",
                         what, rec.priority, s_.model.cluster_queues[rec.cq].name);
  out.push_back(std::move(d));
}

void WaitLimits::Requeued(double now, std::vector<Decision>& out) {
  // Also when the list has doubled since it was last looked at, so that the workloads that
  // finished meanwhile do not pile up in a long run without preemptions.
  const bool grown = ran_out_running_.size() > 2 * kept_ + 64;
  if (ran_out_running_.empty() ||
      (s_.stats.preempted == seen_preempted_ && !terminating_ && !grown))
    return;
  seen_preempted_ = s_.stats.preempted;
  terminating_ = false;
  size_t kept = 0;
  for (WorkloadId id : ran_out_running_) {
    const WorkloadState state = s_.StateOf(id);
    if (state == WorkloadState::kAdmitted || state == WorkloadState::kTerminating) {
      terminating_ = terminating_ || state == WorkloadState::kTerminating;
      ran_out_running_[kept++] = id;
    } else if (Movable(id)) {
      MoveAhead(id, now, /*ran=*/true, out);
    }
  }
  ran_out_running_.resize(kept);
  kept_ = kept;
}

void WaitLimits::Expire(double now, std::vector<Decision>& out) {
  bool ended = false;
  while (!protections_.empty() && protections_.begin()->first <= now) {
    ended = ended || s_.StateOf(protections_.begin()->second) == WorkloadState::kAdmitted;
    protections_.erase(protections_.begin());
  }
  if (ended) ++s_.admit_epoch;  // preemptors parked since may find victims now
  Requeued(now, out);
  while (!timers_.empty() && timers_.begin()->first <= now) {
    const WorkloadId id = timers_.begin()->second;
    timers_.erase(timers_.begin());
    const WorkloadState state = s_.StateOf(id);
    if (state == WorkloadState::kAdmitted || state == WorkloadState::kTerminating) {
      ran_out_running_.push_back(id);
      terminating_ = terminating_ || state == WorkloadState::kTerminating;
      continue;
    }
    if (Movable(id)) MoveAhead(id, now, /*ran=*/false, out);
  }
}

double WaitLimits::Next(double now) const {
  // The first timer after `now` that still matters (a wait limit of a workload still pending,
  // a protection of one still running); stale ones are dropped when they come due.
  auto first = [&](const absl::btree_set<std::pair<double, WorkloadId>>& set, WorkloadState state) {
    for (auto it = set.upper_bound({now, std::numeric_limits<WorkloadId>::max()}); it != set.end();
         ++it)
      if (s_.StateOf(it->second) == state) return it->first;
    return std::numeric_limits<double>::infinity();
  };
  return std::min(first(timers_, WorkloadState::kPending),
                  first(protections_, WorkloadState::kAdmitted));
}

}  // namespace tessera
