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

void WaitLimits::Expire(double now, std::vector<Decision>& out) {
  bool ended = false;
  while (!protections_.empty() && protections_.begin()->first <= now) {
    ended = ended || s_.status[protections_.begin()->second].state == WorkloadState::kAdmitted;
    protections_.erase(protections_.begin());
  }
  if (ended) ++s_.admit_epoch;  // preemptors parked since may find victims now
  while (!timers_.empty() && timers_.begin()->first <= now) {
    const WorkloadId id = timers_.begin()->second;
    timers_.erase(timers_.begin());
    WorkloadRec& rec = s_.recs[id];
    if (s_.status[id].state != WorkloadState::kPending || rec.cq < 0 || !rec.unresolved.empty() ||
        rec.order_created < s_.status[id].created)
      continue;
    e_.reservations.Forget(id);
    e_.pending.Dequeue(id);
    rec.order_created = s_.status[id].created - kOverdueShift;
    e_.pending.Enqueue(id);
    Decision d;
    d.type = Decision::Type::kWaitLimitExceeded;
    d.workload = id;
    d.reason = fmt::format(
        "waited {} (its wait limit is {}): now ahead of the other workloads of priority {} in "
        "ClusterQueue {}",
        FormatSpan(now - rec.submitted), FormatSpan(*LimitOf(id)), rec.priority,
        s_.model.cluster_queues[rec.cq].name);
    out.push_back(std::move(d));
  }
}

double WaitLimits::Next(double now) const {
  // The first timer after `now` that still matters (a wait limit of a workload still pending,
  // a protection of one still running); stale ones are dropped when they come due.
  auto first = [&](const absl::btree_set<std::pair<double, WorkloadId>>& set, WorkloadState state) {
    for (auto it = set.upper_bound({now, std::numeric_limits<WorkloadId>::max()}); it != set.end();
         ++it)
      if (s_.status[it->second].state == state) return it->first;
    return std::numeric_limits<double>::infinity();
  };
  return std::min(first(timers_, WorkloadState::kPending),
                  first(protections_, WorkloadState::kAdmitted));
}

}  // namespace tessera
