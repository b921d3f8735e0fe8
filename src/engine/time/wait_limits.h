// Wait limits (docs/time.md): a workload that has waited longer than its limit
// (Workload::max_wait: tessera.dev/max-wait or Volcano's sla-waiting-time; else its
// ClusterQueue's tessera.dev/max-wait) goes ahead of every workload of its priority in its
// queue (its FIFO key moves before all others'), so it is the head that gets the queue's
// reservation. The moment is reported as a decision (kWaitLimitExceeded: an Event in
// Kubernetes, an event in the simulator), never silently. Priority still wins: a limit does not
// lift a workload above a higher priority.
//
// The limit counts from the workload's first queue entry and runs out once. When it runs out
// while the workload runs, it applies when a preemption (or a drain) requeues the workload: it
// goes ahead then, as Volcano's sla-waiting-time, counted from creation, would have it.
//
// It also keeps the other timer of the engine: the moment a running workload's minimum runtime
// (Workload::min_runtime, else its ClusterQueue's) ends and it becomes a preemption candidate,
// which wakes the preemptors that were waiting for it.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class WaitLimits {
 public:
  explicit WaitLimits(Engine& e);
  // The workload's limit, seconds; nullopt: none.
  std::optional<double> LimitOf(WorkloadId id) const;
  // The workload entered its queue at `now`: its limit starts (once; a requeue keeps it).
  void Track(WorkloadId id, double now);
  // The workload was admitted at `now`: its minimum runtime, if any, starts.
  void OnAdmitted(WorkloadId id, double now);
  // Moves every pending workload whose limit has run out by `now` ahead of its priority; wakes
  // preemptors when a protection ended.
  void Expire(double now, std::vector<Decision>& out);
  // The next instant a limit or a protection runs out after `now`; +infinity: none.
  double Next(double now) const;

 private:
  Engine& e_;
  EngineState& s_;
  absl::btree_set<std::pair<double, WorkloadId>> timers_;
  absl::btree_set<std::pair<double, WorkloadId>> protections_;  // (end, workload)
  std::vector<bool> tracked_;
  // Workloads whose limit ran out while they ran (admitted or terminating), in that order;
  // looked at again only after a preemption, or while one of them was terminating.
  std::vector<WorkloadId> ran_out_running_;
  int64_t seen_preempted_ = 0;
  bool terminating_ = false;
  size_t kept_ = 0;  // its size after the last look

  // Pending in its queue, with a limit not yet acted on.
  bool Movable(WorkloadId id) const;
  // Moves it ahead of its priority in its ClusterQueue and says so.
  void MoveAhead(WorkloadId id, double now, bool ran, std::vector<Decision>& out);
  // The workloads of ran_out_running_ that a preemption requeued go ahead.
  void Requeued(double now, std::vector<Decision>& out);
};

}  // namespace tessera
