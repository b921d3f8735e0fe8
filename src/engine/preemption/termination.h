// Grace periods of preempted workloads (docs/time.md, "Grace period"). A victim whose pods
// have a terminationGracePeriodSeconds is told to stop and keeps its nodes and GPUs until the
// period ends (kTerminating); its quota passes at once to its preemptor, which waits for every
// such victim to be gone, as Kueue's does for its evicted workloads, holding meanwhile what it
// would hold admitted (Claim), and is tried first once they are. Capacity that is being
// released is nobody's but its preemptor's until it is released: no other workload is placed on
// it, a terminating workload is never a victim again, and a workload that would fit once the
// terminating ones are gone waits for them rather than preempt (FitsOnceGone); it counts as
// taking that room for the next ones (Wait) when the reservations let it start there, and is
// tried right after the preemptors when a victim is released.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class Terminations {
 public:
  explicit Terminations(Engine& e);

  // Whether victim `v` gets a grace period (its pod sets ask for one).
  bool Graced(WorkloadId v) const;
  // `v` (admitted, already out of the preemption candidates) stops for `preemptor` at `now`:
  // it keeps its pods until now + its grace period. `reason`: the preemption's.
  void Begin(WorkloadId v, WorkloadId preemptor, double now, const std::string& reason);
  // Releases every victim whose grace period ended by `now` and requeues it; one kTerminated
  // decision each. Then tries the preemptors whose last victim is gone, and the waiters (Wait)
  // that fit now, in the order they began to wait.
  void ReleaseDue(double now, std::vector<Decision>& out);
  // Preemptor `p` waits for its victims (just told to stop): until the last is gone it holds
  // what it would hold admitted, as without grace periods (and as in Kubernetes mode, where it
  // is admitted at once and only its binds wait): `need` of its ClusterQueue's quota (its
  // victims' quota is released at the notice) and, of `pods` (where it would start), what is
  // free now (whole GPUs, a share's milli on its device, MIG instances' memory slices, cpu,
  // memory, pods). Otherwise what its victims give back would look free while they stop: other
  // workloads of its queue would reclaim more, others would take the GPUs it counted on, and
  // it would preempt again when they are gone.
  void Claim(WorkloadId p, Need need, std::vector<Room> pods);
  bool Claims(WorkloadId p) const { return claimants_.count(p) > 0; }
  const std::set<WorkloadId>& claimants() const { return claimants_; }
  // Gives back what `p` holds (its last victim is gone, or it ended).
  void DropClaim(WorkloadId p);
  // Takes `p`'s claim off, and puts it back (a reservation of `p` is planned without it).
  // REQUIRES: Hold after Lift, the state otherwise as it was.
  void LiftClaim(WorkloadId p);
  void HoldClaim(WorkloadId p);
  // Where a workload that waits for what is being released would start (FitsOnceGone): the
  // quota and the room it would take once it is.
  struct Waiter {
    WorkloadId id = -1;
    Need need;
    std::vector<Room> pods;
  };
  // Where `id` would start (quota and placement, some flavor combination) once every
  // terminating workload is gone, its preemptor has taken what it claimed, and the waiters
  // (Wait) have taken what they will; nothing when it would not fit. With `reserved`, the
  // reservations held for `id` (Reservations::ApplyFor, still held) also take, of what is
  // released, the GPUs they will start on: then it fits only where they let it start.
  std::optional<Waiter> FitsOnceGone(WorkloadId id, bool reserved);
  // `w.id` waits for what is being released and will take `w`'s quota and room then: the next
  // workloads judged by FitsOnceGone find them taken, as without grace periods the first would
  // have taken the room at once and the next ones preempted. Until it is tried again
  // (StopWaiting) or a terminating workload is released (all are tried again then).
  void Wait(Waiter w) { waiters_.push_back(std::move(w)); }
  // `id` is tried again: it no longer counts as waiting for what is being released.
  void StopWaiting(WorkloadId id) {
    if (!waiters_.empty()) std::erase_if(waiters_, [id](const Waiter& w) { return w.id == id; });
  }
  // Whether some workload is in its grace period.
  bool releasing() const { return !ends_.empty(); }
  // Node `n` goes offline: claims give up their room on it.
  void OnNodeOffline(NodeId n);
  // A terminating `v` is gone early (Finish): its pods are released, nothing is requeued.
  void Release(WorkloadId v);
  // When the next grace period ends; +infinity when none runs.
  double Next() const {
    return ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.begin()->first;
  }
  // For a preemptor still waiting for its victims: why, with when the last is gone; empty when
  // it waits for none.
  std::string WaitingReason(WorkloadId id) const;
  // Every terminating victim, by the end of its grace period.
  const std::set<std::pair<double, WorkloadId>>& ends() const { return ends_; }

 private:
  // Frees `v`'s pods and quota and tells its preemptor.
  void Free(WorkloadId v);

  Engine& e_;
  EngineState& s_;
  std::set<std::pair<double, WorkloadId>> ends_;  // (end of grace period, victim)
  std::set<WorkloadId> claimants_;                // preemptors holding a claim
  // Workloads waiting for what is being released that will take it (Wait).
  std::vector<Waiter> waiters_;
};

}  // namespace tessera
