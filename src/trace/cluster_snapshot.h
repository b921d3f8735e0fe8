// The cluster as a replay leaves it at one instant, for the report's dashboard page
// (docs/observability.md, "Dashboard"): serve's /api/v1/workloads and /api/v1/nodes documents
// (the shape of src/k8s/api/api_routes.cc, built here from the engine without the Kubernetes code),
// so that `sim replay --report` shows the Workloads tab and the GPU map as serve does.
//
// Bounded whatever the trace: at most `max_workloads` workloads (admitted ones first, then the
// pending ones oldest first), at most kMaxSnapshotPods pods listed per workload and the first
// kMaxSnapshotNodes nodes up in the GPU map; `total` in the workloads document says how many
// there were.
//
// Thread-safety: pure function of the engine's state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/scheduler.h"

namespace tessera::trace {

inline constexpr int64_t kDefaultSnapshotWorkloads = 1000;
inline constexpr int64_t kMaxSnapshotPods = 64;
inline constexpr int64_t kMaxSnapshotNodes = 2000;

// One ClusterQueue at the snapshot's instant (the dashboard's queue rows).
struct QueueAtSnapshot {
  double used_gpus = 0;   // GPUs (shares by their milli) held by its admitted workloads
  int64_t admitted = 0;   // admitted or terminating workloads
  int64_t pending = 0;    // pending workloads
};

struct ClusterSnapshot {
  double time = -1;               // simulated seconds; < 0: none taken
  int64_t workloads_total = 0;    // pending and admitted at `time`
  int64_t workloads_written = 0;  // of them in workloads_json
  int64_t nodes_up = 0;           // nodes online at `time`
  int64_t gpus_up = 0;            // their GPU device slots
  int64_t idle_gpu_nodes = 0;     // of them, nodes with GPUs of which none is held
  int64_t gpus_allocated = 0;     // GPU device slots of the nodes up held by a pod (the map's)
  int64_t admitted = 0;           // admitted or terminating workloads at `time`
  int64_t pending = 0;            // pending workloads at `time`
  std::vector<QueueAtSnapshot> queues;  // per ClusterQueue of the model, in its order
  std::string workloads_json;     // {"time", "total", "items": [serve's workload items]}
  std::string nodes_json;         // {"time", "total", "items": [serve's node items]}
};

// REQUIRES: max_workloads >= 0.
ClusterSnapshot TakeClusterSnapshot(const Scheduler& s, double now, int64_t max_workloads);

}  // namespace tessera::trace
