// Tessera's and KAI's preemption fields as the manifest loader reads them: which victims a
// ClusterQueue's preemptors take (tessera.dev/victim-order), KAI's queue priority
// (tessera.dev/queue-priority) and KAI's non-preemptible workloads (kai.scheduler/preemptibility,
// tessera.dev/preemptibility on a workload or a priority class), and consolidation (a
// ClusterQueue's tessera.dev/consolidation, SchedulerConfig's spec.consolidation).
// docs/manifests.md lists them.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

// ClusterQueue metadata.annotations tessera.dev/victim-order (LeastLostWork, FewestVictims,
// Kueue), tessera.dev/queue-priority (an int32), tessera.dev/gpu-failure-policy (Requeue,
// LeaveToController) and tessera.dev/consolidation ("true", "false").
void ReadClusterQueuePreemption(DocContext& ctx, const ObjectMeta& meta, ClusterQueue& cq);

// A workload's preemptibility: label or annotation kai.scheduler/preemptibility or
// tessera.dev/preemptibility, "preemptible" or "non-preemptible" (true); absent: std::nullopt.
// Two of them that disagree, or another value, are errors naming the key.
std::optional<bool> ReadPreemptibility(DocContext& ctx, const ObjectMeta& meta);

// SchedulerConfig spec.consolidation: {maxLostWork (a duration), maxMovesPerCycle,
// maxNodesPerHead, maxHeadsPerCycle (integers >= 1)}; absent fields keep their defaults.
void ReadConsolidation(DocContext& ctx, const YAML::Node& spec, ConsolidationConfig& out);

}  // namespace tessera::config_internal
