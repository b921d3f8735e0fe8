#include "engine/preemption/termination.h"

#include <optional>

#include "engine/admission/stop_policy.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

Terminations::Terminations(Engine& e) : e_(e), s_(e.st) {}

bool Terminations::Graced(WorkloadId v) const { return s_.model.workloads[v].GraceSeconds() > 0; }

void Terminations::Begin(WorkloadId v, WorkloadId preemptor, double now,
                         const std::string& reason) {
  WorkloadRec& vr = s_.recs[v];
  WorkloadStatus& vs = s_.status[v];
  vs.state = WorkloadState::kTerminating;
  vr.grace_end = now + s_.model.workloads[v].GraceSeconds();
  vr.grace_for = preemptor;
  vr.preempted_reason = reason;
  vs.reason = fmt::format("terminating until t={}s (its grace period): {}", vr.grace_end, reason);
  if (preemptor >= 0) {
    ++s_.recs[preemptor].awaiting;
    // Its quota goes at the notice, as it would without a grace period: the preemptor claims it.
    for (PlacedPod& p : vr.placed) {
      for (const auto& [fr, q] : p.quota) s_.quota->AddUsage(vr.cq, fr, -q);
      p.quota.clear();
    }
  }
  ends_.insert({vr.grace_end, v});
  e_.reservations.OnTerminating(v);
}

void Terminations::Free(WorkloadId v) {
  WorkloadRec& vr = s_.recs[v];
  ends_.erase({vr.grace_end, v});
  waiters_.clear();       // they are tried again: they wake with the release
  e_.statement.Evict(v);  // announced: parked workloads may wake, the preemptor among them
  if (vr.grace_for >= 0 && --s_.recs[vr.grace_for].awaiting == 0) DropClaim(vr.grace_for);
  vr.grace_for = -1;
  vr.grace_end = -1;
}

void Terminations::ReleaseDue(double now, std::vector<Decision>& out) {
  std::vector<WorkloadId> ready;    // preemptors whose last victim is gone now
  std::vector<WorkloadId> waiting;  // workloads that waited for what is released (Wait), in order
  if (!ends_.empty() && ends_.begin()->first <= now)
    for (const Waiter& w : waiters_) waiting.push_back(w.id);
  while (!ends_.empty() && ends_.begin()->first <= now) {
    const WorkloadId v = ends_.begin()->second;
    const WorkloadId preemptor = s_.recs[v].grace_for;
    std::string reason = std::move(s_.recs[v].preempted_reason);
    s_.recs[v].preempted_reason.clear();
    // Drained by its stopped ClusterQueue (no preemptor): it waits there, as one drained
    // without a grace period does (admission/stop_policy.h).
    const bool drained = s_.recs[v].grace_for < 0 && QueueStopped(s_, s_.recs[v].cq);
    Free(v);
    WorkloadStatus& vs = s_.status[v];
    vs.pods.clear();
    vs.admitted_at = -1;
    if (drained) {
      e_.pending.SetPending(v, StoppedReason(s_, s_.recs[v].cq));
    } else {
      e_.pending.SetPending(v, "requeued after preemption: " + reason);
      e_.pending.Enqueue(v);
    }
    Decision d;
    d.type = Decision::Type::kTerminated;
    d.workload = v;
    d.reason = std::move(reason);
    out.push_back(std::move(d));
    if (preemptor >= 0 && s_.recs[preemptor].awaiting == 0) ready.push_back(preemptor);
  }
  // What the victims held goes to their preemptor first, as it does when a preemption takes
  // effect at once: tried now, before the queues' rounds, where its own victims (requeued with
  // their original creation time, so often ahead of it) would take it back and be preempted
  // again, round after round.
  for (WorkloadId p : ready)
    if (s_.status[p].state == WorkloadState::kPending) e_.admission.TryAdmit(p, now, out);
  // Then the workloads that waited for it, in the order they began to wait: without grace
  // periods the first would have taken the room at once.
  for (WorkloadId w : waiting) {
    if (s_.status[w].state != WorkloadState::kPending || s_.recs[w].awaiting > 0) continue;
    if (e_.placer.FitsNowAny(w)) e_.admission.TryAdmit(w, now, out);
  }
}

void Terminations::Claim(WorkloadId p, Need need, std::vector<Room> pods) {
  DropClaim(p);
  WorkloadRec& r = s_.recs[p];
  r.claim = std::move(need);
  r.claim_pods = std::move(pods);
  r.claim_start = 0;
  for (const auto& [end, v] : ends_)
    if (s_.recs[v].grace_for == p) r.claim_start = std::max(r.claim_start, end);
  claimants_.insert(p);
  HoldClaim(p);
  e_.reservations.OnClaim(p);
}

void Terminations::HoldClaim(WorkloadId p) {
  WorkloadRec& r = s_.recs[p];
  for (const auto& [fr, q] : r.claim) s_.quota->AddUsage(r.cq, fr, q);
  // One room per pod (empty where nothing of it was free), GPU shares and MIG slices included.
  r.claim_room.assign(r.claim_pods.size(), Room{});
  for (size_t i = 0; i < r.claim_pods.size(); ++i)
    s_.cluster->BookFreePart(r.claim_pods[i], p, r.claim_room[i],
                             ClusterState::Parts::kDeviceParts);
}

void Terminations::LiftClaim(WorkloadId p) {
  WorkloadRec& r = s_.recs[p];
  for (const auto& [fr, q] : r.claim) s_.quota->AddUsage(r.cq, fr, -q);
  for (auto it = r.claim_room.rbegin(); it != r.claim_room.rend(); ++it) s_.cluster->Unbook(*it);
  r.claim_room.clear();
}

void Terminations::DropClaim(WorkloadId p) {
  if (claimants_.erase(p) == 0) return;
  LiftClaim(p);
  WorkloadRec& r = s_.recs[p];
  r.claim.clear();
  r.claim_pods.clear();
  r.claim_start = -1;
  // What it held is free: parked workloads may try again.
  ++s_.release_epoch;
  e_.pending.MarkRootReleased(r.cq);
}

std::optional<Terminations::Waiter> Terminations::FitsOnceGone(WorkloadId id, bool reserved) {
  if (ends_.empty()) return std::nullopt;
  std::erase_if(waiters_, [&](const Waiter& w) {  // admitted since, or gone
    return s_.status[w.id].state != WorkloadState::kPending;
  });
  // Every terminating workload gone, what their preemptors claimed of it taken by them, what
  // the workloads already waiting for it will take, and (`reserved`) what the reservations
  // held for `id` will start on.
  std::vector<std::pair<WorkloadId, std::vector<PlacedPod>>> gone;
  for (const auto& [end, v] : ends_)
    gone.emplace_back(v, e_.statement.Evict(v, /*announce=*/false));
  // Each claimant takes the rest of each pod's room: what it asks less what its claim holds
  // already (a share's milli, cpu, memory and pods would otherwise be counted twice).
  std::vector<Room> taken;
  Room booked;
  for (WorkloadId p : claimants_) {
    const WorkloadRec& r = s_.recs[p];
    for (size_t i = 0; i < r.claim_pods.size(); ++i) {
      const Room* held = i < r.claim_room.size() ? &r.claim_room[i] : nullptr;
      if (s_.cluster->BookFreePart(r.claim_pods[i], p, booked, ClusterState::Parts::kDeviceParts,
                                   held))
        taken.push_back(booked);
    }
  }
  std::vector<Room> promised;  // to the waiters and (`reserved`) the reservations
  for (const Waiter& w : waiters_) {
    for (const auto& [fr, q] : w.need) s_.quota->AddUsage(s_.recs[w.id].cq, fr, q);
    for (const Room& want : w.pods)
      if (s_.cluster->BookFreePart(want, w.id, booked, ClusterState::Parts::kDeviceParts))
        promised.push_back(booked);
  }
  if (reserved) e_.reservations.BookReleased(promised);
  std::optional<Waiter> fits;
  const WorkloadRec& rec = s_.recs[id];
  for (const Combo& c : rec.combos) {
    Need need = e_.flavors.MinQuotaNeed(id, c);
    if (rec.cq >= 0 && !e_.flavors.QuotaFits(rec.cq, need)) continue;
    const size_t mark = e_.statement.mark();
    if (!e_.placer.PlaceMin(id, c, mark)) continue;
    const Workload& w = s_.model.workloads[id];
    fits.emplace(Waiter{id, std::move(need), {}});
    for (const PlacedPod& p : rec.placed)
      fits->pods.push_back(s_.cluster->PodRoom(p.placement.node,
                                               w.pod_sets[p.placement.pod_set].requests,
                                               p.placement.gpus, p.placement.mig_starts));
    e_.statement.RollbackTo(mark);
    break;
  }
  for (auto it = promised.rbegin(); it != promised.rend(); ++it) s_.cluster->Unbook(*it);
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) s_.cluster->Unbook(*it);
  for (const Waiter& w : waiters_)
    for (const auto& [fr, q] : w.need) s_.quota->AddUsage(s_.recs[w.id].cq, fr, -q);
  for (auto it = gone.rbegin(); it != gone.rend(); ++it)
    e_.statement.Reinstate(it->first, std::move(it->second));
  return fits;
}

void Terminations::OnNodeOffline(NodeId n) {
  std::erase_if(waiters_, [n](const Waiter& w) {
    for (const Room& r : w.pods)
      if (r.node == n) return true;
    return false;
  });
  for (WorkloadId p : claimants_) {
    WorkloadRec& r = s_.recs[p];
    // claim_room[i] is what claim_pods[i] holds: both keep the pods on other nodes, in order.
    std::vector<Room> pods, rooms;
    for (size_t i = 0; i < r.claim_pods.size(); ++i) {
      Room* room = i < r.claim_room.size() ? &r.claim_room[i] : nullptr;
      if (r.claim_pods[i].node == n) {
        if (room != nullptr) s_.cluster->Unbook(*room);
        continue;
      }
      pods.push_back(std::move(r.claim_pods[i]));
      if (room != nullptr) rooms.push_back(std::move(*room));
    }
    r.claim_pods.swap(pods);
    r.claim_room.swap(rooms);
  }
}

void Terminations::Release(WorkloadId v) {
  Free(v);
  s_.recs[v].preempted_reason.clear();
}

std::string Terminations::WaitingReason(WorkloadId id) const {
  if (s_.recs[id].awaiting <= 0) return "";
  double last = 0;
  for (const auto& [end, v] : ends_)
    if (s_.recs[v].grace_for == id) last = end;
  return fmt::format(
      "waiting for {} preempted workload(s) to stop: their pods keep their GPUs and quota until "
      "their grace period (terminationGracePeriodSeconds) ends, the last at t={}s",
      s_.recs[id].awaiting, last);
}

}  // namespace tessera
