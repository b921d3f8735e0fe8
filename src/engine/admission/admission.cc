#include "engine/admission/admission.h"

#include "engine/admission/stop_policy.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

Admission::Admission(Engine& e) : e_(e), s_(e.st) {}

void Admission::Admit(WorkloadId id, const std::vector<int32_t>& combo, double now,
                      std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  WorkloadStatus& st = s_.status[id];
  e_.reservations.Forget(id);
  rec.chosen = combo;
  e_.statement.Commit();
  e_.pending.Dequeue(id);
  st.state = WorkloadState::kAdmitted;
  st.reason.clear();
  st.expected_start = -1;
  rec.time_note.clear();
  s_.recs[id].why.clear();
  s_.recs[id].reason_stale = false;
  st.admitted_at = now;
  e_.waits.OnAdmitted(id, now);
  e_.reservations.OnAdmitted(id);
  e_.placer.PlaceExtra(id);
  st.pods.clear();
  for (const auto& p : rec.placed) st.pods.push_back(p.placement);
  st.flavors.clear();
  for (size_t g = 0; g < combo.size(); ++g)
    st.flavors.push_back(combo[g] < 0 ? -1 : s_.queues[rec.cq].groups[g].flavors[combo[g]]);
  if (static_cast<int>(rec.placed.size()) < s_.model.workloads[id].TotalPods()) {
    s_.partial.insert(id);
  }
  if (rec.cq >= 0) s_.admitted_by_cq[rec.cq].insert({rec.priority, id});
  ++s_.admit_epoch;
  ++s_.stats.admitted;
  Decision d;
  d.type = Decision::Type::kAdmit;
  d.workload = id;
  d.pods = st.pods;
  out.push_back(std::move(d));
}

bool Admission::Preempt(WorkloadId id, double now, WorkloadId blocking, bool& held_back,
                        std::vector<Decision>& out) {
  // Preemption never sees a reservation, and a workload that would fit without the
  // reservations held for it waits (backfill refused) rather than preempt its way around them:
  // both are settled once a search is worth making (Preemptor's cheap bounds passed).
  bool settled = false;
  auto may_search = [&](const Combo&) {
    if (!settled) {
      settled = true;
      e_.reservations.LiftAll();
      if (blocking >= 0)
        for (const auto& c : s_.recs[id].combos)
          if (!held_back) held_back = e_.placer.FitsNow(id, c);
    }
    return !held_back;
  };
  for (const auto& combo : s_.recs[id].combos)
    if (e_.preemptor.TryPreempt(id, combo, now, out, may_search)) return true;
  return false;
}

Admission::Outcome Admission::TryAdmit(WorkloadId id, double now, std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  ++s_.stats.attempts;
  if (HeldByStopPolicy(s_, id)) {  // requeued after a preemption into a stopped queue
    e_.pending.SetPending(id, StoppedReason(s_, rec.cq));
    rec.failed_release_epoch = s_.release_epoch;
    rec.failed_admit_epoch = s_.admit_epoch;
    return Outcome::kPending;
  }
  e_.topology.clear_reason();
  const auto& combos = s_.recs[id].combos;
  // Why each flavor combination failed, in order: the user sees every flavor that was tried.
  std::vector<ReasonPart> why;
  rec.failed_on_placement = false;
  for (const auto& combo : combos) {
    const Need& need = e_.flavors.MinQuotaNeed(id, combo);
    if (rec.cq >= 0) {
      if (auto shortfall = e_.flavors.QuotaShortfall(id, need)) {
        why.push_back(std::move(*shortfall));
        continue;
      }
    }
    e_.statement.Commit();
    if (e_.placer.PlaceMin(id, combo, 0)) {
      Admit(id, combo, now, out);
      return Outcome::kAdmitted;
    }
    rec.failed_on_placement = true;
    ReasonPart part;
    part.text = (rec.cq >= 0 && !combo.empty() ? "quota fits, but " : "") +
                e_.placer.PlacementReason(id, combo);
    why.push_back(std::move(part));
  }
  // Reservations held while it was tried (Reservations::ApplyFor): the first one is named.
  const WorkloadId blocking =
      e_.reservations.any_held() ? e_.reservations.Blocking(id, now) : WorkloadId{-1};
  bool held_back = false;
  if (preemption_ && rec.can_preempt && rec.cq >= 0 && s_.HasPreemptionPolicy(rec.cq) &&
      Preempt(id, now, blocking, held_back, out))
    return Outcome::kAdmitted;
  if (blocking >= 0) {
    ReasonPart part;
    const std::string& name = s_.model.workloads[blocking].Key();
    part.text = held_back ? fmt::format(
                                "would delay the reservation of {} (it would run past its start, "
                                "by its runtime estimate)",
                                name)
                          : fmt::format("the reservation of {} is held while it would run", name);
    why.insert(held_back ? why.begin() : why.end(), std::move(part));
  }
  if (combos.empty()) {
    e_.pending.SetPending(id, "no flavor of the ClusterQueue is defined");
  } else {
    s_.status[id].state = WorkloadState::kPending;
    rec.why = std::move(why);
    rec.reason_stale = true;
  }
  rec.failed_release_epoch = s_.release_epoch;
  rec.failed_admit_epoch = s_.admit_epoch;
  return Outcome::kPending;
}

}  // namespace tessera
