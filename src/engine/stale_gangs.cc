// StaleGangs: gangs restored below their minimum, completed or evicted (engine/stale_gangs.h).
#include "engine/stale_gangs.h"

#include <algorithm>
#include <iterator>

#include "engine/admission/stop_policy.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

StaleGangs::StaleGangs(Engine& e) : e_(e), s_(e.st) {}

void StaleGangs::Track(WorkloadId id) { since_[id] = -1; }

std::vector<PodPlacement> StaleGangs::PlaceMissing(WorkloadId id) {
  WorkloadRec& rec = s_.recs[id];
  if (!e_.flavors.QuotaFits(rec.cq, e_.flavors.ComputeMinQuotaNeed(id, rec.chosen))) return {};
  const size_t before = rec.placed.size();
  const size_t mark = e_.statement.mark();
  if (!e_.placer.PlaceMin(id, rec.chosen, mark)) {
    e_.statement.RollbackTo(mark);
    return {};
  }
  e_.statement.Commit();
  std::vector<PodPlacement> added;
  for (size_t i = before; i < rec.placed.size(); ++i) added.push_back(rec.placed[i].placement);
  return added;
}

void StaleGangs::Complete(double now, std::vector<Decision>& out) {
  last_now_ = now;
  for (auto it = since_.begin(); it != since_.end();) {
    const WorkloadId id = it->first;
    const WorkloadState state = s_.StateOf(id);
    if (state == WorkloadState::kTerminating) {  // evicted, its pods not yet gone
      ++it;
      continue;
    }
    if (state != WorkloadState::kAdmitted ||
        static_cast<int>(s_.recs[id].placed.size()) >= s_.model.workloads[id].MinPods()) {
      it = since_.erase(it);  // ended, preempted, or complete
      continue;
    }
    std::vector<PodPlacement> added = PlaceMissing(id);
    if (added.empty()) {
      if (it->second < 0) it->second = now;
      ++it;
      continue;
    }
    for (const PodPlacement& p : added) s_.status[id].pods.push_back(p);
    Decision d;
    d.type = Decision::Type::kScaleUp;
    d.workload = id;
    d.pods = std::move(added);
    out.push_back(std::move(d));
    it = since_.erase(it);
  }
}

void StaleGangs::Evict(WorkloadId id, double now, std::vector<Decision>& out) {
  WorkloadStatus& st = s_.status[id];
  WorkloadRec& rec = s_.recs[id];
  const Workload& w = s_.model.workloads[id];
  Decision d;
  d.type = Decision::Type::kPreempt;
  d.workload = id;
  d.reason = fmt::format(
      "stale gang: {} of its minimum {} pods placed for {}s (SchedulerConfig "
      "staleGangGracePeriod) and the missing ones fit nowhere: evicted whole",
      rec.placed.size(), w.MinPods(), now - since_[id]);
  s_.partial.erase(id);
  if (rec.cq >= 0) s_.admitted_by_cq[rec.cq].erase({rec.priority, id});
  s_.admitted_without_queue.erase(id);
  ++st.preemptions;
  ++s_.stats.preempted;
  if (e_.terminations.Graced(id)) {  // keeps its pods for its grace period, then requeued
    d.grace_seconds = w.GraceSeconds();
    e_.terminations.Begin(id, /*preemptor=*/-1, now, d.reason);
    out.push_back(std::move(d));
    return;
  }
  e_.statement.Evict(id);
  e_.statement.Commit();
  st.pods.clear();
  st.admitted_at = -1;
  if (HeldByStopPolicy(s_, id)) {
    e_.pending.SetPending(id, StoppedReason(s_, rec.cq));
  } else {
    e_.pending.SetPending(id, "requeued: " + d.reason);
    e_.pending.Enqueue(id);
  }
  out.push_back(std::move(d));
}

void StaleGangs::EvictDue(double now, std::vector<Decision>& out) {
  for (auto it = since_.begin(); it != since_.end();) {
    const WorkloadId id = it->first;
    const double since = it->second;
    if (since < 0 || now < since + grace() || s_.StateOf(id) != WorkloadState::kAdmitted ||
        static_cast<int>(s_.recs[id].placed.size()) >= s_.model.workloads[id].MinPods()) {
      ++it;
      continue;
    }
    Evict(id, now, out);
    // One in its grace period stays tracked (Verify accepts it) until its pods are gone.
    it = s_.status[id].state == WorkloadState::kTerminating ? std::next(it) : since_.erase(it);
  }
}

double StaleGangs::Next() const {
  double next = std::numeric_limits<double>::infinity();
  for (const auto& [id, since] : since_)
    if (since >= 0 && s_.StateOf(id) == WorkloadState::kAdmitted)
      next = std::min(next, since + grace());
  return next;
}

bool StaleGangs::Tolerated(WorkloadId id) const {
  auto it = since_.find(id);
  if (it == since_.end()) return false;
  if (s_.status[id].state == WorkloadState::kTerminating) return true;
  return it->second < 0 || last_now_ < it->second + grace();
}

}  // namespace tessera
