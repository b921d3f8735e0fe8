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
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
  // Pods of this shape: a gang of a million pods is one PodShape, not a million.
  int64_t count = 1;
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

// Pod shapes seen so far, equal shapes (every field but `count`) kept once with their counts
// summed, in order of first appearance: what a scheduler that learns its typical pods from
// every workload keeps instead of the workloads, which a long replay lets go of. With the
// default options BuildTypicalPods over shapes() equals BuildTypicalPods over every shape added
// (each pod weighs 1: the sums are of integers, exact); shapes of no pod are dropped, as it
// drops them.
class PodShapeTally {
 public:
  void Add(const PodShape& shape);
  const std::vector<PodShape>& shapes() const { return shapes_; }

 private:
  using Key = std::tuple<int64_t, int64_t, int32_t, int32_t, ModelMask, std::string>;
  absl::flat_hash_map<Key, size_t> index_;
  std::vector<PodShape> shapes_;
};

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

  // An estimate of Evaluate for the scoring loops, where a node is measured once per GPU the pod
  // could take. A node is summarized once (Prepare: its free CPU and model fixed) and the
  // estimate of the node with one GPU's free milli changed costs O(1): per-node weights come
  // from tables indexed by (model, free-CPU rank, per-GPU milli), and the sum over shapes is
  // turned into a sum over GPUs (a GPU with f free milli counts f times the weight of the
  // one-GPU shapes it can hold). The estimate sums in another order than Evaluate, so it may
  // differ in the last bits: by at most estimate_tolerance() GPU milli. Callers that need
  // Evaluate's exact value (FGD's integer scores) use the estimate only when it is farther
  // than that from a rounding boundary.
  static constexpr size_t kMaxMultiThresholds = 4;
  struct NodeSums {
    const double* single = nullptr;  // weight of the fitting one-GPU shapes, per milli level
    const double* multi = nullptr;   // weight of the fitting multi-GPU shapes, per GPU count
    int64_t idle = 0;
    double single_sum = 0;  // sum over GPUs of free milli x single[level(free milli)]
    // Per multi-GPU threshold (only the first num_multi_ are set): the GPUs that reach it and
    // their free milli. Left uninitialized: Prepare runs once per node in the scoring loop.
    std::array<int32_t, kMaxMultiThresholds> count;
    std::array<int64_t, kMaxMultiThresholds> above;
    uint32_t full_gpus = 0;     // bit i: GPU i is wholly free
    uint32_t partial_gpus = 0;  // bit i: GPU i is partly used (0 < free < 1000)
  };
  // Summarizes `node` for the estimate, with `cpu_free_milli` in place of its free CPU. False
  // when the estimate does not cover it (a GPU's free milli outside 0..1000, more than
  // kMaxGpusPerNode GPUs, or typical pods beyond the tables' limits); use Evaluate then.
  bool Prepare(const NodeGpuState& node, int64_t cpu_free_milli, NodeSums* sums) const;
  // The estimate of the prepared node.
  double Estimate(const NodeSums& sums) const { return EstimateWithGpu(sums, 0, 0); }
  // The estimate of the prepared node with one GPU's free milli changed from `from` to `to`.
  // REQUIRES: Prepare returned true; a GPU of the node has `from` free; 0 <= to <= 1000.
  double EstimateWithGpu(const NodeSums& sums, int32_t from, int32_t to) const {
    const uint8_t* level = level_of_milli_.data();
    double single = sums.single_sum - from * sums.single[level[from]] + to * sums.single[level[to]];
    for (size_t k = 0; k < num_multi_; ++k) {
      const int32_t milli = multi_thresholds_[k];
      const int32_t count = sums.count[k] - (from >= milli) + (to >= milli);
      const int64_t above = sums.above[k] - (from >= milli ? from : 0) + (to >= milli ? to : 0);
      single += sums.multi[k * kCounts + static_cast<size_t>(count)] * static_cast<double>(above);
    }
    return static_cast<double>(sums.idle - from + to) * weight_all_ - single;
  }
  // A bound on |Estimate - Evaluate| in GPU milli (with a wide margin over the rounding error).
  double estimate_tolerance() const { return estimate_tolerance_; }
  // Whether Evaluate gives the same value, bit for bit, for `node` with free CPU `a` as with `b`:
  // every typical pod fits on both or on neither.
  bool SameTerms(const NodeGpuState& node, int64_t a, int64_t b) const;

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

  // The estimate's tables (BuildEstimateTables). Model classes: 0 for models no shape names,
  // then one per model some shape's constraint names. CPU ranks: how many of the distinct CPU
  // requests of the GPU shapes a free CPU reaches. Milli levels: how many of the distinct
  // per-GPU requests a GPU's free milli reaches.
  void BuildEstimateTables();
  bool estimate_ok_ = false;
  double estimate_tolerance_ = 0;
  double weight_all_ = 0;  // every shape's weight: idle milli count fully unless a shape fits
  std::array<uint8_t, kMaxGpuModels> class_of_model_{};
  std::vector<int64_t> cpu_levels_;
  // The CPU rank at multiples of kCpuBucketMilli (up to the last level), so that a rank is a
  // lookup and a step or two (CpuRank).
  static constexpr int kCpuBucketShift = 8;
  std::vector<uint8_t> cpu_rank_at_bucket_;
  size_t CpuRank(int64_t cpu_free_milli) const;
  std::vector<uint8_t> level_of_milli_;                   // 0..1000 -> milli level
  size_t num_levels_ = 0;                                 // milli levels + 1
  static constexpr size_t kCounts = kMaxGpusPerNode + 1;  // GPU counts 0..kMaxGpusPerNode
  std::array<int32_t, kMaxMultiThresholds> multi_thresholds_{};
  size_t num_multi_ = 0;
  size_t row_ranks_ = 0;   // CPU ranks per model class
  size_t single_row_ = 0;  // doubles per (class, rank) in single_
  size_t multi_row_ = 0;   // doubles per (class, rank) in multi_
  std::vector<double> single_;
  std::vector<double> multi_;
};

}  // namespace tessera::fgd
