#include "engine/admission/admission.h"

#include "engine/admission/flavor_choice.h"
#include "engine/admission/stop_policy.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {
namespace {

ComboMode ModeOf(const Preemptor::Found& f) {
  return {f.reclaim ? ComboMode::Kind::kReclaim : ComboMode::Kind::kPreempt, f.borrow};
}

// A non-preemptible workload runs only within its ClusterQueue's nominal quota (KAI's
// deserved quota): why `need` would take it beyond, else nullopt.
std::optional<ReasonPart> BeyondNominal(const EngineState& s, WorkloadId id, const Need& need) {
  const int32_t cq = s.recs[id].cq;
  if (!s.recs[id].non_preemptible || cq < 0) return std::nullopt;
  for (const auto& [fr, q] : need) {
    const int64_t usage = s.quota->usage(cq, fr), nominal = s.quota->subtree_quota(cq, fr);
    if (usage + q <= nominal) continue;
    const ResourceId r = ResourceOf(fr);
    ReasonPart part;
    part.text = fmt::format(
        "non-preemptible: runs only within the nominal quota of ClusterQueue {} (needs {} {} in "
        "flavor {}; uses {} of nominal {}), never by borrowing",
        s.model.cluster_queues[cq].name, FormatQuota(r, q), ResourceName(r),
        s.model.flavors[FlavorOf(fr)].name, FormatQuota(r, usage), FormatQuota(r, nominal));
    return part;
  }
  return std::nullopt;
}

}  // namespace

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
  rec.admitted_in = CascadeOf(rec, now);
  e_.waits.OnAdmitted(id, now);
  e_.reservations.OnAdmitted(id);
  e_.placer.PlaceExtra(id);
  st.pods.clear();
  for (const auto& p : rec.placed) st.pods.push_back(p.placement);
  st.flavors = e_.flavors.FlavorIds(id, combo);
  if (static_cast<int>(rec.placed.size()) < s_.model.workloads[id].TotalPods()) {
    s_.partial.insert(id);
  }
  if (rec.cq >= 0) {
    s_.admitted_by_cq[rec.cq].insert({rec.priority, id});
  } else {
    s_.admitted_without_queue.insert(id);
  }
  ++s_.admit_epoch;
  ++s_.stats.admitted;
  Decision d;
  d.type = Decision::Type::kAdmit;
  d.workload = id;
  d.pods = st.pods;
  out.push_back(std::move(d));
}

std::optional<Preemptor::Found> Admission::FindPreemption(WorkloadId id, const Combo& combo,
                                                          double now, PreemptionLook& look) {
  // Reservations held while it was tried (Reservations::ApplyFor): the first one is named.
  if (!look.blocking_known) {
    look.blocking_known = true;
    look.blocking = e_.reservations.any_held() ? e_.reservations.Blocking(id, now) : -1;
  }
  auto may_search = [&](const Combo&) {
    if (!look.settled) Settle(id, look);
    return !look.held_back && !look.awaits_release;
  };
  return e_.preemptor.Find(id, combo, now, may_search);
}

void Admission::Settle(WorkloadId id, PreemptionLook& look) {
  look.settled = true;
  // Preemption never sees a reservation, and a workload that would fit without the
  // reservations held for it waits (backfill refused) rather than preempt its way around them.
  // What is being released is coming (preemption/termination.h): a workload that fits once it
  // is released waits for it rather than preempt. That is judged first with the reservations
  // held for it, as they would be once the room is free: one that would then start on it
  // waits and counts as taking it (the next ones find it taken, as without grace periods the
  // first would have taken it at once and the next ones preempted); one that fits there only
  // where a reservation will start waits as well, as it would without grace periods (held
  // back: backfill refused), and takes nothing.
  const bool releasing = e_.terminations.releasing();
  const bool reserved = e_.reservations.any_held();
  std::optional<Terminations::Waiter> takes;
  if (releasing) {
    e_.reservations.BookNodes();
    takes = e_.terminations.FitsOnceGone(id, /*reserved=*/true);
  }
  e_.reservations.LiftAll();
  if (look.blocking >= 0) look.held_back = e_.placer.FitsNowAny(id);
  if (look.held_back) return;
  if (takes) {
    look.awaits_release = true;
    e_.terminations.Wait(std::move(*takes));
  } else if (releasing && reserved) {
    look.awaits_release = e_.terminations.FitsOnceGone(id, /*reserved=*/false).has_value();
    look.takes_nothing = look.awaits_release;
  }
}

bool Admission::ChooseAndAdmit(WorkloadId id, double now, std::vector<ReasonPart>& why,
                               PreemptionLook& look, std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  const auto& combos = rec.combos;
  const FlavorFungibility ff =
      rec.cq >= 0 ? s_.model.cluster_queues[rec.cq].flavor_fungibility : FlavorFungibility{};
  const bool may_preempt =
      preemption_ && rec.can_preempt && rec.cq >= 0 && s_.HasPreemptionPolicy(rec.cq);
  // With whenCanPreempt: MayStopSearch a combination where preemption works may end the
  // search, so each is looked at in turn; with TryNextFlavor preemption never ends it, and is
  // looked at only once every combination that fits is known and a preemption could still win.
  const bool preempt_in_turn =
      may_preempt && ff.when_can_preempt == FungibilityPolicy::kMayStopSearch;
  int best = -1;
  ComboMode best_mode;
  std::optional<Preemptor::Found> best_found;
  // Grades combination i; true when the search ends with it.
  auto consider = [&](size_t i, const ComboMode& m, std::optional<Preemptor::Found> f) {
    const bool stop = !ShouldTryNextFlavor(m, ff);
    if (stop || IsPreferred(m, best_mode, ff.preference)) {
      best = static_cast<int>(i);
      best_mode = m;
      best_found = std::move(f);
    }
    return stop;
  };
  std::vector<bool> fits(combos.size(), false);
  bool stop = false;
  for (size_t i = 0; i < combos.size() && !stop; ++i) {
    const Combo& combo = combos[i];
    const Need& need = e_.flavors.MinQuotaNeed(id, combo);
    std::optional<ReasonPart> shortfall;
    if (rec.cq >= 0) shortfall = e_.flavors.QuotaShortfall(id, need);
    if (!shortfall) shortfall = BeyondNominal(s_, id, need);
    if (shortfall) {
      why.push_back(std::move(*shortfall));
    } else {
      // The borrowing level matters only when borrowing may not end the search.
      ComboMode m{ComboMode::Kind::kFit, 0};
      if (ff.when_can_borrow == FungibilityPolicy::kTryNextFlavor)
        m.borrow = e_.flavors.BorrowHeight(rec.cq, need);
      e_.statement.Commit();
      if (e_.placer.PlaceMin(id, combo, 0)) {
        if (!ShouldTryNextFlavor(m, ff)) {
          Admit(id, combo, now, out);
          return true;
        }
        e_.statement.RollbackTo(0);
        fits[i] = true;
        consider(i, m, std::nullopt);
        continue;
      }
      rec.failed_on_placement = true;
      ReasonPart part;
      part.text = (rec.cq >= 0 && !combo.empty() ? "quota fits, but " : "") +
                  e_.placer.PlacementReason(id, combo);
      why.push_back(std::move(part));
    }
    if (!preempt_in_turn) continue;
    std::optional<Preemptor::Found> f = FindPreemption(id, combo, now, look);
    if (look.held_back || look.awaits_release) return false;
    if (f) stop = consider(i, ModeOf(*f), std::move(f));
  }
  if (!stop && may_preempt && !preempt_in_turn) {
    for (size_t i = 0; i < combos.size() && PreemptionMayWin(best_mode, ff.preference); ++i) {
      if (fits[i]) continue;
      std::optional<Preemptor::Found> f = FindPreemption(id, combos[i], now, look);
      if (look.held_back || look.awaits_release) return false;
      if (f) consider(i, ModeOf(*f), std::move(f));
    }
  }
  if (best < 0) return false;
  if (best_found) {
    e_.preemptor.Apply(id, combos[best], *best_found, now, out);
    return true;
  }
  e_.statement.Commit();
  if (!e_.placer.PlaceMin(id, combos[best], 0)) return false;  // it just fit: not expected
  Admit(id, combos[best], now, out);
  return true;
}

std::string Admission::Uncovered(WorkloadId id) const {
  const int32_t cq = s_.recs[id].cq;
  if (cq < 0 || !s_.model.config.block_undeclared) return "";
  const ResolvedQueue& q = s_.queues[cq];
  for (const PodSet& ps : s_.model.workloads[id].pod_sets) {
    for (ResourceId r = 0; r < kMaxResources; ++r) {
      // Every pod asks for one pod; Kueue counts pods only where the queue covers them.
      if (ps.requests[r] == 0 || q.group_of[r] >= 0 || r == kPods) continue;
      if (r == kGpuMilli || r == kGpuMemory) continue;  // Tessera's own: Kueue never sees them
      return fmt::format(
          "pod set {} asks for {}, which ClusterQueue {} does not cover (no resource group "
          "lists it, and spec.quotaCheckStrategy is BlockUndeclared: add it to "
          "coveredResources)",
          ps.name, ResourceName(r), s_.model.cluster_queues[cq].name);
    }
  }
  return "";
}

bool Admission::QuotaAloneRefuses(WorkloadId id) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0) return false;
  if (preemption_ && rec.can_preempt && s_.HasPreemptionPolicy(rec.cq)) return false;
  const Workload& w = s_.model.workloads[id];
  if (w.PerSetMinimums() && w.MinPods() < w.TotalPods()) return false;
  for (const Combo& c : rec.combos)
    if (e_.flavors.QuotaFits(rec.cq, e_.flavors.MinQuotaNeed(id, c))) return false;
  return true;
}

Admission::Outcome Admission::TryAdmit(WorkloadId id, double now, std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  ++s_.stats.attempts;
  e_.terminations.StopWaiting(id);
  // The reservations ApplyFor held but left unbooked on the nodes are booked before anything
  // here reads the nodes; an attempt that quota alone refuses reads none, and its reasons are
  // the same either way (quota is held at once).
  if (!e_.reservations.list().empty() && !QuotaAloneRefuses(id)) e_.reservations.BookNodes();
  if (HeldByStopPolicy(s_, id)) {  // requeued after a preemption into a stopped queue
    e_.pending.SetPending(id, StoppedReason(s_, rec.cq));
    rec.failed_release_epoch = s_.release_epoch;
    rec.failed_admit_epoch = s_.admit_epoch;
    return Outcome::kPending;
  }
  if (rec.awaiting > 0) {  // its victims still stop (preemption/termination.h)
    e_.pending.SetPending(id, e_.terminations.WaitingReason(id));
    rec.failed_release_epoch = s_.release_epoch;
    rec.failed_admit_epoch = s_.admit_epoch;
    return Outcome::kPending;
  }
  e_.topology.clear_reason();
  // Why each flavor combination failed, in order: the user sees every flavor that was tried.
  std::vector<ReasonPart> why;
  rec.failed_on_placement = false;
  PreemptionLook look;
  const Workload& w = s_.model.workloads[id];
  // More pods than the minimums (by preemption, or with per-pod-set minimums) only while no
  // reservation is held: a search lifts them, and what fits must still be judged around them.
  const bool may_preempt =
      preemption_ && rec.can_preempt && rec.cq >= 0 && s_.HasPreemptionPolicy(rec.cq);
  if ((may_preempt || w.PerSetMinimums()) && w.MinPods() < w.TotalPods() &&
      !e_.reservations.any_held() && TryAdmitMorePods(id, may_preempt, now, why, look, out))
    return Outcome::kAdmitted;
  if (ChooseAndAdmit(id, now, why, look, out)) return Outcome::kAdmitted;
  if (!look.blocking_known)
    look.blocking = e_.reservations.any_held() ? e_.reservations.Blocking(id, now) : -1;
  if (look.blocking >= 0) {
    ReasonPart part;
    const std::string& name = s_.model.workloads[look.blocking].Key();
    part.text = look.held_back
                    ? fmt::format(
                          "would delay the reservation of {} (it would run past its start, "
                          "by its runtime estimate)",
                          name)
                    : fmt::format("the reservation of {} is held while it would run", name);
    why.insert(look.held_back ? why.begin() : why.end(), std::move(part));
  }
  if (look.awaits_release) {
    ReasonPart part;
    part.text = fmt::format(
        "fits once the {} preempted workload(s) in their grace period are gone{}: waits for them "
        "rather than preempt",
        e_.terminations.ends().size(),
        look.takes_nothing ? " (where a reservation held for another will start)" : "");
    why.insert(why.begin(), std::move(part));
  }
  if (rec.combos.empty()) {
    e_.pending.SetPending(id, "no flavor of the ClusterQueue is defined");
  } else {
    s_.status[id].state = WorkloadState::kPending;
    rec.why = std::move(why);
    rec.reason_stale = true;
  }
  rec.failed_release_epoch = s_.release_epoch;
  rec.failed_admit_epoch = s_.admit_epoch;
  if (rec.failed_on_placement && s_.collect_placement_failures) s_.placement_failures.push_back(id);
  return Outcome::kPending;
}

}  // namespace tessera
