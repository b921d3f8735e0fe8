#include "engine/preemption/preemptor.h"

#include <algorithm>
#include <optional>

#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

Preemptor::Preemptor(Engine& e) : e_(e), s_(e.st) {}
Preemptor::~Preemptor() = default;

void Preemptor::Init(const SchedulerConfig& config) { search_ = MakeVictimSearch(config, e_); }

bool Preemptor::TryPreempt(WorkloadId id, const Combo& combo, double now,
                           std::vector<Decision>& out,
                           const std::function<bool(const Combo&)>& may_search) {
  std::optional<Found> found = Find(id, combo, now, may_search);
  if (!found) return false;
  Apply(id, combo, *found, now, out);
  return true;
}

std::optional<Preemptor::Found> Preemptor::Find(
    WorkloadId id, const Combo& combo, double now,
    const std::function<bool(const Combo&)>& may_search) {
  // The bounds first: most attempts of a backlog stop there or at `may_search`, and neither
  // needs the candidates in order.
  if (!Coverable(id, combo, now)) return std::nullopt;
  if (may_search && !may_search(combo)) return std::nullopt;
  // Made after `may_search`: the state may have changed (reservations lifted). Most searches
  // of a backlog fail on quota: known without the candidates in order (QuotaHopeless).
  if (QuotaHopeless(id, combo, now)) return std::nullopt;
  const Plan plan = MakePlan(id, combo, now);
  if (plan.candidates.empty()) return std::nullopt;
  const Need need = e_.flavors.MinQuotaNeed(id, combo);
  std::vector<WorkloadId> candidates;
  const int64_t epoch = s_.release_epoch;  // a look ahead releases nothing
  for (const bool allow_borrowing : plan.attempts) {
    candidates.clear();
    for (size_t i = 0; i < plan.candidates.size(); ++i)
      if (!allow_borrowing || plan.while_borrowing[i]) candidates.push_back(plan.candidates[i]);
    if (candidates.empty()) continue;
    Evicted evicted;
    const bool fits = search_->Search(id, combo, need, allow_borrowing, candidates, evicted);
    std::optional<Found> found;
    if (fits) {
      Minimize(id, combo, need, allow_borrowing, evicted);
      PreferOneVictim(id, combo, need, allow_borrowing, candidates, now, evicted);
      // Kueue's preemption modes: reclaim when every victim is another queue's, and the
      // preemptor's borrowing level once they are gone.
      found.emplace();
      found->borrow = e_.flavors.BorrowHeight(s_.recs[id].cq, need);
      for (const auto& [v, pods] : evicted) {
        found->victims.push_back(v);
        found->reclaim = found->reclaim && s_.recs[v].cq != s_.recs[id].cq;
      }
    }
    for (auto it = evicted.rbegin(); it != evicted.rend(); ++it)
      e_.statement.Reinstate(it->first, std::move(it->second));
    s_.release_epoch = epoch;
    if (found) return found;
  }
  return std::nullopt;
}

void Preemptor::Apply(WorkloadId id, const Combo& combo, const Found& found, double now,
                      std::vector<Decision>& out) {
  // Victims with a grace period keep their pods for it (preemption/termination.h); the others
  // are gone at once.
  Evicted evicted;
  std::vector<WorkloadId> graced;
  for (WorkloadId v : found.victims) {
    if (e_.terminations.Graced(v)) {
      graced.push_back(v);
    } else {
      evicted.emplace_back(v, e_.statement.Evict(v));
    }
  }
  Commit(id, combo, evicted, graced, now, out);
}

void Preemptor::Minimize(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
                         Evicted& evicted) {
  // The last victim made it fit; try every earlier one back, newest eviction first.
  for (int i = static_cast<int>(evicted.size()) - 2; i >= 0; --i) {
    e_.statement.Reinstate(evicted[i].first, evicted[i].second);
    if (PreemptorFits(e_, id, combo, need, allow_borrowing)) {
      evicted.erase(evicted.begin() + i);
    } else {
      e_.statement.Evict(evicted[i].first);
    }
  }
}

std::string Preemptor::VictimReason(WorkloadId id, WorkloadId v) const {
  const WorkloadRec& rec = s_.recs[id];
  const WorkloadRec& vr = s_.recs[v];
  const std::string& preemptor = s_.model.workloads[id].name;
  if (vr.cq == rec.cq && rec.priority == vr.priority)  // LowerOrNewerEqualPriority
    return fmt::format(
        "preempted within ClusterQueue {} by {} (same priority {}, created earlier: {}s < {}s)",
        s_.model.cluster_queues[rec.cq].name, preemptor, rec.priority, s_.status[id].created,
        s_.status[v].created);
  if (vr.cq == rec.cq)
    return fmt::format("preempted within ClusterQueue {} by {} (priority {} > {})",
                       s_.model.cluster_queues[rec.cq].name, preemptor, rec.priority, vr.priority);
  if (s_.model.config.fair_sharing)
    return fmt::format(
        "preempted by {} of ClusterQueue {} for fair sharing: {} was above its fair share",
        preemptor, s_.model.cluster_queues[rec.cq].name, s_.model.cluster_queues[vr.cq].name);
  return fmt::format("preempted by {}: ClusterQueue {} reclaims quota lent to {}", preemptor,
                     s_.model.cluster_queues[rec.cq].name, s_.model.cluster_queues[vr.cq].name);
}

std::vector<Room> Preemptor::PlacementAfter(WorkloadId id, const Combo& combo,
                                            const std::vector<WorkloadId>& graced) {
  Evicted gone;
  for (WorkloadId v : graced) gone.emplace_back(v, e_.statement.Evict(v, /*announce=*/false));
  std::vector<Room> pods;
  const size_t mark = e_.statement.mark();
  if (e_.placer.PlaceMin(id, combo, mark)) {
    const Workload& w = s_.model.workloads[id];
    for (const PlacedPod& p : s_.recs[id].placed)
      pods.push_back(s_.cluster->PodRoom(p.placement.node, w.pod_sets[p.placement.pod_set].requests,
                                         p.placement.gpus, p.placement.mig_starts));
  }
  e_.statement.RollbackTo(mark);
  for (auto it = gone.rbegin(); it != gone.rend(); ++it)
    e_.statement.Reinstate(it->first, std::move(it->second));
  return pods;
}

void Preemptor::Commit(WorkloadId id, const Combo& combo, const Evicted& evicted,
                       const std::vector<WorkloadId>& graced, double now,
                       std::vector<Decision>& out) {
  // The instant this preemption belongs to: its victims and its own admission count in it.
  const double cascade = CascadeOf(s_.recs[id], now);
  auto decide = [&](WorkloadId v) {
    WorkloadStatus& vs = s_.status[v];
    WorkloadRec& vr = s_.recs[v];
    s_.partial.erase(v);
    s_.admitted_by_cq[vr.cq].erase({vr.priority, v});
    // It does not borrow by preempting until a run of its cohort ends (MayBorrowByPreempting).
    vr.preempted_at_ends = s_.ends_by_root[s_.quota->root(vr.cq)];
    ++vs.preemptions;
    ++s_.stats.preempted;
    Decision d;
    d.type = Decision::Type::kPreempt;
    d.workload = v;
    d.preemptor = id;
    d.reason = VictimReason(id, v);
    return d;
  };
  for (const auto& [v, pods] : evicted) {
    Decision d = decide(v);
    WorkloadStatus& vs = s_.status[v];
    vs.pods.clear();
    e_.pending.SetPending(v, "requeued after preemption: " + d.reason);
    vs.admitted_at = -1;
    s_.recs[v].cascade = cascade;
    s_.recs[v].cascade_at = now;
    e_.pending.Enqueue(v);
    out.push_back(std::move(d));
  }
  for (WorkloadId v : graced) {
    Decision d = decide(v);
    d.grace_seconds = s_.model.workloads[v].GraceSeconds();
    e_.terminations.Begin(v, id, now, d.reason);
    // Requeued when its grace period ends, it acts in this preemption's instant then.
    s_.recs[v].cascade = cascade;
    s_.recs[v].cascade_at = s_.recs[v].grace_end;
    out.push_back(std::move(d));
  }
  e_.statement.Commit();
  if (!graced.empty()) {
    // As Kueue's preemptor: it waits for its victims to be gone, and is tried again then.
    e_.pending.SetPending(id, e_.terminations.WaitingReason(id));
    e_.terminations.Claim(id, e_.flavors.MinQuotaNeed(id, combo),
                          PlacementAfter(id, combo, graced));
    // Tried again when its last victim is gone: its admission then counts in this instant.
    s_.recs[id].cascade = cascade;
    s_.recs[id].cascade_at = now;
    for (WorkloadId v : graced)
      s_.recs[id].cascade_at = std::max(s_.recs[id].cascade_at, s_.recs[v].grace_end);
    s_.recs[id].failed_release_epoch = s_.release_epoch;
    s_.recs[id].failed_admit_epoch = s_.admit_epoch;
    return;
  }
  const bool placed = e_.placer.PlaceMin(id, combo, 0);
  (void)placed;  // cannot fail: FitsNow just held
  e_.admission.Admit(id, combo, now, out);
}

}  // namespace tessera
