// The GPU-related labels and annotations of Nodes and Pods, interpreted once for both ways in:
// manifest files (config/loader) and live objects from the API server (k8s/objects).
//
//   Nodes: GPU Feature Discovery's nvidia.com/gpu.memory (MiB per device), nvidia.com/gpu.count
//          (checked against nvidia.com/gpu) and nvidia.com/gpu.replicas (time-slicing), the
//          annotations tessera.dev/gpu-replicas (the same, where GFD does not run),
//          tessera.dev/gpu-layout (per-device NVLink domain, NUMA node, PCIe switch) and
//          tessera.dev/mig (dynamic: Tessera chooses the MIG layout).
//   Pods:  KAI Scheduler's gpu-fraction and gpu-memory annotations (GPU shares), Kueue's
//          kueue.x-k8s.io/podset-required-topology and podset-preferred-topology annotations.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/labels.h"
#include "model/node.h"
#include "model/resources.h"
#include "model/workload.h"

namespace tessera {

// One problem with one label or annotation. An error means the object cannot be used as it
// says (the loader drops it); a warning means the value was ignored.
struct FieldProblem {
  bool error = true;
  bool in_labels = false;  // the key is a label (else an annotation)
  std::string key;
  std::string message;
};

inline constexpr std::string_view kGpuLayoutAnnotation = "tessera.dev/gpu-layout";
inline constexpr std::string_view kMigAnnotation = "tessera.dev/mig";
inline constexpr std::string_view kGpuMemoryLabel = "nvidia.com/gpu.memory";
inline constexpr std::string_view kGpuCountLabel = "nvidia.com/gpu.count";
inline constexpr std::string_view kGpuReplicasLabel = "nvidia.com/gpu.replicas";
inline constexpr std::string_view kGpuReplicasAnnotation = "tessera.dev/gpu-replicas";
// Kueue's podset-group-name: pod sets of one workload that name the same group are placed in
// one domain of their topology level together.
inline constexpr std::string_view kPodSetGroupAnnotation = "kueue.x-k8s.io/podset-group-name";
inline constexpr std::string_view kRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr std::string_view kPreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";

// The node's nvidia.com/gpu (device slots) within kMaxGpuSlotsPerNode (model/limits.h): "" when
// it is, else the message. Checked before anything else reads Node::gpu_count().
std::string CheckGpuSlots(int64_t slots);

// Parses "nvlink=0,0,1,1;numa=0,0,0,1;pcie=0,0,1,1" for a node of `gpus` devices into `out`;
// returns the error message, or "" when it is fine.
std::string ParseGpuLayoutText(const std::string& text, int gpus, std::vector<GpuDevice>& out);

// Time-slicing: `text` replicas per physical GPU (1..64). Checks that the node's nvidia.com/gpu
// is a whole number of GPUs of that many replicas and sets node.gpu_replicas (left as it was on
// error). Returns the error message, or "".
std::string ApplyGpuReplicas(const std::string& text, Node& node);

// On a time-sliced node, a layout of the physical GPUs (node.gpus) becomes one entry per replica
// slot (slot s: GPU s % physical). Nothing otherwise, nor for a layout of the slots already.
void ExpandLayoutToSlots(Node& node);

// Sets node.mig_dynamic for a tessera.dev/mig value ("dynamic" or "static"); returns the error
// message, or "". Needs node.gpu_memory_mib / node.gpu_model (or the product label) first.
std::string ApplyMigMode(const std::string& value, Node& node);

// Reads the GPU labels and annotations of `node` (its labels and allocatable already set).
std::vector<FieldProblem> ApplyNodeGpuFields(const Labels& annotations, Node& node);

// KAI's gpu-fraction / gpu-memory: replace the pod's GPU request with a share.
std::vector<FieldProblem> ApplyGpuShareAnnotations(const Labels& annotations, Resources& requests);

// Kueue's pod-set topology annotations (required wins over preferred).
std::vector<FieldProblem> ApplyTopologyAnnotations(const Labels& annotations,
                                                   TopologyRequest& topology);

}  // namespace tessera
