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
// An elastic NodePool (docs/autoscaling.md): spec.pricePerNodeHour at most, and
// spec.spot.interruptionsPerNodeHour at most (one a second: the simulator draws one event per
// interruption, so the rate bounds the events of a run).
inline constexpr double kMaxNodePricePerHour = 1e6;
inline constexpr double kMaxInterruptionsPerNodeHour = 3600;

// Input sizes (model/bounded_read.h). A file beyond its limit is refused before it is read whole:
// `/dev/zero` or an endless pipe is cut at the limit.
// One manifest file given to validate, sim or sim replay --manifests.
inline constexpr int64_t kMaxManifestFileBytes = int64_t{256} << 20;  // 256 MiB
// A kubeconfig, or a token / certificate file it names (real ones are a few KiB).
inline constexpr int64_t kMaxKubeconfigBytes = int64_t{4} << 20;  // 4 MiB
// What YAML aliases may add to one manifest file once expanded (config/yaml_aliases.h): the
// nodes and the scalar bytes of every aliased node, counted at each alias. Real manifests use a
// few anchors (`<<: *defaults`); anchors of anchors ("billion laughs") reach these at once.
inline constexpr int64_t kMaxYamlAliasNodesPerFile = 1'000'000;
inline constexpr int64_t kMaxYamlAliasBytesPerFile = int64_t{16} << 20;  // 16 MiB
// One line of a CSV trace (sim replay --nodes/--jobs, sim fgd --nodes/--pods).
inline constexpr int64_t kMaxCsvLineBytes = int64_t{1} << 20;  // 1 MiB
// A time or duration of a CSV trace (arrival, duration, max_wait, openb's creation, deletion and
// scheduled times, an elastic group's seconds): about 31,700 years, so that sums and products of
// times over a whole trace stay finite (1e308 became inf).
inline constexpr double kMaxTraceSeconds = 1e12;

// JSON from outside the process (model/bounded_json.h): the API server's answers and watch
// events, serve's answers to `tessera get`/`explain`, the accounting store's label columns.
// Kubernetes objects nest a few dozen levels (a CRD's schema perhaps a hundred); printing or
// copying a parsed document recurses once per level, so a deeper one is refused as it is parsed.
inline constexpr int kMaxJsonDepth = 512;
// The body of one answer of serve's JSON API read by `tessera get`/`explain` (the largest real
// answer, every workload of a big cluster, is a few MiB), and the whole time one such request
// may take, however slowly the server sends.
inline constexpr int64_t kMaxApiAnswerBytes = int64_t{64} << 20;  // 64 MiB
// A --token-file (one bearer token; real ones are under 2 KiB).
inline constexpr int64_t kMaxTokenFileBytes = int64_t{64} << 10;  // 64 KiB

}  // namespace tessera
