// Kueue's ClusterQueue stopPolicy. A stopped ClusterQueue (Hold or HoldAndDrain) admits nothing
// new: its pending workloads wait with Kueue's reason ("ClusterQueue NAME is stopped") and it
// lends nothing to its cohort (Kueue leaves a stopped queue out of the cohort's snapshot).
// Hold keeps its admitted workloads running; HoldAndDrain evicts them ("The ClusterQueue is
// stopped"), one instant after their admission at the earliest, because an admission is final
// within its instant (workloads marked tessera.dev/admitted are admitted at 0 and drained then).
// Workloads marked tessera.dev/admitted are admitted even into a stopped queue: they were
// running before it stopped.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

// True when ClusterQueue `cq` (-1: none) has a stopPolicy other than None.
bool QueueStopped(const EngineState& s, int32_t cq);
// True when workload `id` must not be admitted now because its ClusterQueue is stopped.
bool HeldByStopPolicy(const EngineState& s, WorkloadId id);
// The pending reason of a workload held by its stopped ClusterQueue.
std::string StoppedReason(const EngineState& s, int32_t cq);
// HoldAndDrain: evicts every workload of a draining ClusterQueue admitted before `now`; each
// eviction is a kPreempt decision without preemptor. A workload with a grace period keeps its
// pods for it (preemption/termination.h), then waits in its queue.
void DrainStoppedQueues(Engine& e, double now, std::vector<Decision>& out);
// The instant after `now` at which a workload admitted at `now` into a draining ClusterQueue
// is evicted; +infinity when there is none.
double NextDrain(const EngineState& s, double now);

}  // namespace tessera
