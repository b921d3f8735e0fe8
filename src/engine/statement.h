// The Statement (Volcano's name): every change of a pod's placement goes through it, and
// tentative placements are logged so that a gang that cannot be placed whole, or a preemption
// search that gives up, is rolled back exactly. Evict and Reinstate take a workload's pods out
// and put them back at the same nodes and devices (victim search).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <vector>

#include "engine/engine_state.h"
#include "engine/placement/plugin.h"

namespace tessera {

struct Engine;

class Statement {
 public:
  explicit Statement(Engine& e);

  // Places one pod of pod set `ps` on `choice.node` (on the GPUs of `choice` when the plugin
  // picked them and they are still free), charging node, devices and quota.
  void PlacePod(WorkloadId id, int ps, NodeChoice choice, const Combo& combo);
  void PlacePod(WorkloadId id, int ps, NodeId node, const Combo& combo) {
    PlacePod(id, ps, NodeChoice{node, 0}, combo);
  }
  // The log position; RollbackTo(mark()) undoes every placement made after it.
  size_t mark() const { return undo_.size(); }
  void RollbackTo(size_t mark);
  // What is placed stays: forget the log.
  void Commit() { undo_.clear(); }
  // Takes every pod of an admitted workload off its nodes and quota; returns them. `announce`:
  // the release wakes parked workloads (false for a look ahead that will Reinstate them).
  std::vector<PlacedPod> Evict(WorkloadId id, bool announce = true);
  // Puts pods taken by Evict back exactly where they were.
  void Reinstate(WorkloadId id, std::vector<PlacedPod> pods);

 private:
  // Takes pod `p` of `id` off its node, devices and quota (its record stays).
  void Unaccount(WorkloadId id, const PlacedPod& p);
  void UnplaceLast(WorkloadId id);

  Engine& e_;
  EngineState& s_;
  std::vector<WorkloadId> undo_;  // the workload of each tentative placement, in order
};

}  // namespace tessera
