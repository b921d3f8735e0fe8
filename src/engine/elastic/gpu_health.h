// GPUs that fail (docs/gpu-failures.md): the engine's side. A failed device is given to nobody
// (ClusterState::SetGpuFailed: not free, not in the GPU totals, padded full while pods still
// hold it); the workloads on it are the caller's to evict (EvictForNode: a gang leaves whole and
// waits in its queue again) or to leave to their controller, which ends them; repair gives the
// device back. The simulator injects failures (sim/gpu_failures.h); serve detects them.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

// The device slots that device `gpu` of node n stands for: itself, or on a time-sliced node
// (Node::gpu_replicas) every replica slot of its physical GPU. Empty when n or gpu is out of
// range.
std::vector<int32_t> PhysicalGpuSlots(const EngineState& s, NodeId n, int32_t gpu);
// Marks device `gpu` of node n (with its replica slots) failed or repaired. A repair wakes the
// workloads parked after a placement failure. Out of range: nothing.
void SetGpuFailed(Engine& e, NodeId n, int32_t gpu, bool failed);
// Admitted (or terminating) workloads with a pod on device `gpu` of node n (any replica slot of
// its physical GPU), in id order.
std::vector<WorkloadId> WorkloadsOnGpu(const EngineState& s, NodeId n, int32_t gpu);

}  // namespace tessera
