// Gangs below their minimum (KAI Scheduler's stale gangs): a workload restored with fewer
// placed pods than its minimum (serve after a restart, when some of its pods were not bound or
// were recreated; the simulator's tessera.dev/admitted-flavor naming only some pod sets). The
// engine never makes such a gang itself: admission places a gang whole or not at all. Each
// cycle first tries to complete it: its missing minimum pods, all of them or none, where its
// ClusterQueue's quota and the nodes allow (a kScaleUp decision). One that stays below its
// minimum for SchedulerConfig::stale_gang_grace_seconds (spec.staleGangGracePeriod, KAI's
// default 60 s) from the first cycle that saw it is evicted whole (a kPreempt decision without
// a preemptor, the reason saying why) and waits in its queue again, where it is admitted whole
// like any other gang, preempting through the ordinary path if its queue's policy lets it.
// Until then it is a recognised state: Verify accepts such a gang (Tolerated).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class StaleGangs {
 public:
  explicit StaleGangs(Engine& e);

  // `id` was just restored with fewer placed pods than its minimum. Its grace time starts at
  // the next cycle (a restart's Restore is told when the pods were admitted, long before).
  void Track(WorkloadId id);
  // Before the cycle's actions: completes what can be completed (one kScaleUp each), starts
  // the grace time of the others, and forgets those no longer admitted below their minimum.
  void Complete(double now, std::vector<Decision>& out);
  // After the cycle's actions: evicts whole each gang still below its minimum whose grace time
  // ended by `now` (kPreempt; a victim with a grace period keeps its pods until it ends, as a
  // preemption's victim does), and requeues it.
  void EvictDue(double now, std::vector<Decision>& out);
  // When the next grace time ends; +infinity when none runs.
  double Next() const;
  // Whether `id`, admitted below its minimum, is a tracked gang within its grace time (or
  // terminating after its eviction): what Verify accepts.
  bool Tolerated(WorkloadId id) const;
  // When the first cycle saw `id` below its minimum (-1: not yet, or not tracked).
  double since(WorkloadId id) const {
    auto it = since_.find(id);
    return it == since_.end() ? -1 : it->second;
  }

 private:
  // The missing minimum pods of `id`, all or none (Statement rolled back on failure); the
  // placements added.
  std::vector<PodPlacement> PlaceMissing(WorkloadId id);
  void Evict(WorkloadId id, double now, std::vector<Decision>& out);
  double grace() const { return s_.model.config.stale_gang_grace_seconds; }

  Engine& e_;
  EngineState& s_;
  std::map<WorkloadId, double> since_;  // tracked gangs: when first seen by a cycle, or -1
  double last_now_ = -std::numeric_limits<double>::infinity();  // the last cycle's instant
};

}  // namespace tessera
