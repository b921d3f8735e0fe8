// Grace periods of preempted workloads (docs/time.md, "Grace period"). A victim whose pods
// have a terminationGracePeriodSeconds is told to stop and keeps its nodes, GPUs and quota until
// the period ends (kTerminating); its preemptor waits for every such victim to be gone, as
// Kueue's does for its evicted workloads, and is tried again once they are. Capacity that is
// being released is nobody's until it is released: no other workload is placed on it, and a
// terminating workload is never a victim again.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <limits>
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
  // decision each.
  void ReleaseDue(double now, std::vector<Decision>& out);
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
};

}  // namespace tessera
