// Tessera's and KAI's preemption fields as the manifest loader reads them: which victims a
// ClusterQueue's preemptors take (tessera.dev/victim-order), KAI's queue priority
// (tessera.dev/queue-priority) and KAI's non-preemptible workloads (kai.scheduler/preemptibility,
// tessera.dev/preemptibility on a workload or a priority class). docs/manifests.md lists them.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

// ClusterQueue metadata.annotations tessera.dev/victim-order (LeastLostWork, FewestVictims,
// Kueue), tessera.dev/queue-priority (an int32) and tessera.dev/gpu-failure-policy (Requeue,
// LeaveToController).
void ReadClusterQueuePreemption(DocContext& ctx, const ObjectMeta& meta, ClusterQueue& cq);

// A workload's preemptibility: label or annotation kai.scheduler/preemptibility or
// tessera.dev/preemptibility, "preemptible" or "non-preemptible" (true); absent: std::nullopt.
// Two of them that disagree, or another value, are errors naming the key.
std::optional<bool> ReadPreemptibility(DocContext& ctx, const ObjectMeta& meta);

}  // namespace tessera::config_internal
