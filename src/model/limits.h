// Limits on the counts in the input that become allocations (device slots, pods, nodes). They
// are far above what real clusters have, and they keep one mistyped number from taking the
// process's memory or wrapping around in a 32-bit field. docs/robustness.md lists them with what
// the user sees beyond them.
//
// Thread-safety: constants only.
#pragma once

#include <cstdint>

namespace tessera {

// nvidia.com/gpu one node may advertise (device slots: physical GPUs x time-slicing replicas):
// 16 GPUs (the FGD measure's fgd::kMaxGpusPerNode) x 64 replicas (the most ApplyGpuReplicas
// accepts). The engine keeps a few bytes per slot; Node::gpu_count() is an int.
inline constexpr int64_t kMaxGpuSlotsPerNode = 1024;
// Device slots of all nodes together: the engine's per-slot arrays (about 20 bytes a slot) stay
// under 100 MiB, and its slot offsets (int32) cannot overflow.
inline constexpr int64_t kMaxClusterGpuSlots = int64_t{1} << 22;  // 4,194,304
// Pods of one workload, over all its pod sets (a Job's parallelism, a Volcano Job's tasks, ...).
inline constexpr int64_t kMaxPodsPerWorkload = 1'000'000;
// spec.replicas of a Deployment / ReplicaSet / StatefulSet (one workload per replica).
inline constexpr int64_t kMaxDeploymentReplicas = 100'000;
// spec.count of a NodePool.
inline constexpr int64_t kMaxNodePoolSize = 500'000;

}  // namespace tessera
