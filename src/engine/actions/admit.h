// The `admit` action: passes over the pending queues. Each pass wakes the parked workloads that
// could now fit, then runs rounds: the next head of every ClusterQueue, ordered by the
// QueueOrder plugin (priority+FIFO, or fair share), each tried once (Admission::TryAdmit) and
// parked when it fails (a StrictFIFO queue's failed head blocks its queue instead).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <vector>

#include "engine/actions/action.h"
#include "engine/actions/queue_order.h"
#include "engine/engine_state.h"

namespace tessera {

class AdmitAction : public Action {
 public:
  explicit AdmitAction(Engine& e);
  std::string_view name() const override { return "admit"; }
  void Execute(double now, std::vector<Decision>& out) override;

 private:
  // The rounds of one pass; returns true when a workload woken for quota failed for another
  // reason (the quota it was woken for may serve another parked workload: wake again).
  bool Rounds(double now, std::vector<Decision>& out);
  // Kueue's borrowing height of a head: 0 when it fits its ClusterQueue's nominal quota, else the
  // height of the lowest cohort whose subtree holds it without borrowing (the root's when none).
  int BorrowHeight(WorkloadId id);

  Engine& e_;
  EngineState& s_;
  std::unique_ptr<QueueOrder> order_;
};

}  // namespace tessera
