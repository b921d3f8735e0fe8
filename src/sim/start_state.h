// Workloads that run when the simulation starts in the flavors their manifest names
// (tessera.dev/admitted-flavor, docs/manifests.md): where their pods go.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/scheduler.h"

namespace tessera {

// Placements for workload `id` of `s`: every pod of each pod set the annotation names, on the
// first node (in the model's order) that is online, carries the named flavor's node labels,
// matches the pod set's node selector and has room left in `free` (per node; charged here).
// An error names the workload when a pod set or flavor does not exist or a pod finds no such
// node (Scheduler::Restore then checks the quota and the ClusterQueue's flavors).
absl::StatusOr<std::vector<PodPlacement>> PlaceInNamedFlavors(const Scheduler& s, WorkloadId id,
                                                              std::vector<Resources>& free);

// OK when the flavors the engine charged for `id` (status().flavors) include each named one.
absl::Status CheckNamedFlavors(const Scheduler& s, WorkloadId id);

}  // namespace tessera
