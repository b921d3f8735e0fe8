// The GPU fragmentation measure of the FGD paper (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23), as its
// published simulator (hkust-adsl/kubernetes-scheduler-simulator, pkg/utils/frag.go) computes it.
//
// A node's idle GPU milli are "fragmented" for a pod shape when that pod could not use them:
//   - the pod asks for no GPU, or may not use the node's GPU model: all idle GPU milli;
//   - the node lacks the CPU or enough GPUs with the pod's per-GPU milli: all idle GPU milli;
//   - otherwise (the pod fits): the milli of the GPUs that each have less than the pod's
//     per-GPU request.
// The node's fragmentation is the expectation over the workload's typical pods (the most popular
// pod shapes, weighted by popularity). Memory plays no part, as in the paper; CPU-only typical
// pods count every idle GPU, as in the simulator (its XL/XR quadrants are not excluded).
//
// Thread-safety: all functions are pure; a FragmentationMeasure is immutable after construction
// and may be shared between threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fgd/gpu_models.h"

namespace tessera::fgd {

inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int32_t kMilliPerGpu = 1000;

// Kubernetes' scheduler counts a container without a CPU request as 100 millicores when it
// scores (GetNonzeroRequests); the FGD simulator builds its pod shapes that way.
inline int64_t EffectiveCpuMilli(int64_t cpu_milli) { return cpu_milli == 0 ? 100 : cpu_milli; }

// What is free on one node. GPU i has gpu_free_milli[i] of 1000 milli free (i < num_gpus).
struct NodeGpuState {
  int64_t cpu_free_milli = 0;
  int64_t mem_free_mib = 0;
  int32_t gpu_model = kNoGpuModel;
  int32_t num_gpus = 0;
  std::array<int32_t, kMaxGpusPerNode> gpu_free_milli{};

  int64_t IdleGpuMilli() const {
    int64_t sum = 0;
    for (int i = 0; i < num_gpus; ++i) sum += gpu_free_milli[static_cast<size_t>(i)];
    return sum;
  }
};

// One pod as the typical-pod builder sees it.
struct PodShape {
  int64_t cpu_milli = 0;
  int64_t mem_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU, 0..1000; 0 for CPU-only pods
  ModelMask models = 0;
  std::string model_spec;  // the '|'-joined model names behind `models` ("" = any)
};

// A pod shape of the workload with its popularity (weights of a list sum to 1).
struct TypicalPod {
  int64_t cpu_milli = 0;  // effective (EffectiveCpuMilli)
  int64_t mem_mib = 0;    // not used by the measure; kept for reports
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;
  ModelMask models = 0;
  std::string model_spec;
  double weight = 0;
};

// The simulator's typicalPodsConfig; the defaults are those of the paper's experiments
// (scripts/generate_config_and_run.py): CPU pods included, the most popular shapes up to 95% of
// the pods, one shape at a time, no extra weight for GPU-heavy pods.
struct TypicalPodOptions {
  bool include_cpu_pods = true;
  double popularity_threshold_percent = 95;
  int increase_step = 1;
  double gpu_res_weight = 0;
  // Tessera's variant: a pod counts by its GPU request (num_gpu x gpu_milli / 1000) instead of
  // once, so shapes weigh what they take from the GPUs; CPU-only pods then weigh nothing.
  bool weight_by_gpu_request = false;
};

// The workload's typical pods (GetTypicalPods): pods grouped by (effective CPU, per-GPU milli,
// GPU count, model spec), most popular first (ties: the larger shape first), cut once the
// cumulated popularity reaches the threshold, weights renormalized to sum to 1. Memory is not
// part of a shape. Empty when `pods` has no pod to count.
std::vector<TypicalPod> BuildTypicalPods(std::span<const PodShape> pods,
                                         const TypicalPodOptions& options = {});

// The simulator's per-node quadrants, in GPU milli weighted by popularity.
struct FragBreakdown {
  double q1_lack_both = 0;
  double q2_lack_gpu = 0;
  double q3_satisfied = 0;
  double q4_lack_cpu = 0;
  double xl_satisfied = 0;  // CPU-only pod, CPU fits
  double xr_lack_cpu = 0;   // CPU-only pod, CPU lacks
  double no_access = 0;     // GPU model not allowed
  // Everything but Q3: the fragmented GPU milli.
  double Fragmented() const {
    return q1_lack_both + q2_lack_gpu + q4_lack_cpu + xl_satisfied + xr_lack_cpu + no_access;
  }
  double Idle() const { return Fragmented() + q3_satisfied; }
};

// The measure by its definition, one typical pod at a time (NodeGpuShareFragAmount).
FragBreakdown NodeFragBreakdown(const NodeGpuState& node, std::span<const TypicalPod> typical);

// Fragmented GPU milli of one node (FragAmountSumExceptQ3 of the above).
double NodeFragmentedGpuMilli(const NodeGpuState& node, std::span<const TypicalPod> typical);

// The same number, computed fast for the scoring loops: typical pods are preprocessed once (the
// weight of CPU-only shapes folded into one factor; per-GPU thresholds deduplicated so that a
// node's GPUs are counted once per threshold, not once per shape).
class FragmentationMeasure {
 public:
  explicit FragmentationMeasure(std::span<const TypicalPod> typical);

  // Fragmented GPU milli of a node with `cpu_free_milli` free CPU, GPU model `gpu_model` and
  // `num_gpus` GPUs whose free milli are gpu_free_milli[0..num_gpus).
  double Evaluate(int64_t cpu_free_milli, int32_t gpu_model, const int32_t* gpu_free_milli,
                  int num_gpus) const;
  double Evaluate(const NodeGpuState& node) const {
    return Evaluate(node.cpu_free_milli, node.gpu_model, node.gpu_free_milli.data(), node.num_gpus);
  }

  const std::vector<TypicalPod>& typical() const { return typical_; }

 private:
  static constexpr size_t kMaxThresholds = 64;
  std::vector<TypicalPod> typical_;
  double cpu_only_weight_ = 0;
  // Distinct per-GPU milli of the GPU shapes (the first kMaxThresholds), and the GPU shapes as
  // parallel arrays for the hot loop.
  std::vector<int32_t> thresholds_;
  std::vector<int64_t> shape_cpu_;
  std::vector<int32_t> shape_num_gpu_;
  std::vector<int32_t> shape_threshold_;
  std::vector<double> shape_weight_;
  std::vector<ModelMask> shape_models_;
  bool any_model_constraint_ = false;
  // Shapes beyond kMaxThresholds distinct requests, measured directly (rare).
  std::vector<TypicalPod> slow_shapes_;
};

}  // namespace tessera::fgd
