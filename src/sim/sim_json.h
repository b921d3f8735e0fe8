// What `tessera sim -o json` adds to each workload and to the document so that `tessera get` and
// `tessera explain --from FILE` can show a simulation's end state as they show serve's
// (docs/observability.md, "The CLI"): a workload's namespace, own name, labels, LocalQueue,
// priority, GPUs and creation time; the ClusterQueues (cohort, nominal GPUs) and the nodes.
//
// Thread-safety: pure functions of the engine's state.
#pragma once

#include "engine/scheduler.h"
#include "nlohmann/json.hpp"

namespace tessera::sim_internal {

// Adds the fields above to `w`, the document's item of workload `id`.
void AddWorkloadFields(const Scheduler& s, WorkloadId id, nlohmann::json& w);
// {"clusterQueues": [{name, cohort, nominalGpus}], "nodes": [{name, gpuModel, gpus, labels}]}
// merged into the document `doc`.
void AddClusterFields(const Scheduler& s, nlohmann::json& doc);

}  // namespace tessera::sim_internal
