// Actions: the steps of a scheduling cycle, run in the order SchedulerConfig's `spec.actions`
// names them (Volcano's `actions:` string), each through one wrapper that counts it and, with
// SchedulerConfig::time_actions, times it (Scheduler::stats().actions). MakeAction is the one
// place that maps a name to a class:
//   admit     passes over the pending queues: wake what could now fit, then rounds of heads
//             (one per ClusterQueue, ordered by the QueueOrder plugin), each admitted or left
//             pending; a head that fits nowhere preempts first when `preempt` is listed
//   preempt   not a pass of its own: it turns on preemption inside `admit`, as Kueue tries a
//             head's preemption before the next head (listing it alone does nothing)
//   consolidate  heads that failed on placement with their quota fitting get room by moving
//             running workloads elsewhere (KAI's consolidation, actions/consolidate.h); also
//             run, after `admit`, when a ClusterQueue opts in (tessera.dev/consolidation)
//   scale-up  admitted workloads with pods beyond minCount place more as room allows
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/scheduler.h"

namespace tessera {

struct Engine;

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view name() const = 0;
  virtual void Execute(double now, std::vector<Decision>& out) = 0;
};

// nullptr for `preempt` (a switch of `admit`, see above) and for a name no action has.
std::unique_ptr<Action> MakeAction(std::string_view name, Engine& e);
// The names MakeAction knows, for validation and messages.
const std::vector<std::string_view>& ActionNames();

}  // namespace tessera
