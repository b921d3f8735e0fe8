// The building blocks of TesseraPlan (docs/fgd.md, "TesseraPlan"), a policy of the FGD
// experiment that uses what the experiment knows, the queue of pods still to come:
//   - the share plan: the GPU-sharing pods of the queue packed into GPU-sized bins (PackShares);
//     a bin's GPU is chosen when its first pod arrives and held for the others;
//   - the CPU/memory balance: among nodes that FGD scores alike, the one whose free CPU and memory
//     get closer to the cluster's proportion to its idle GPUs (BalanceGain);
//   - the GPU-model pressure: a pod that may use several GPU models keeps off a model whose
//     constrained pods still to come need about all of its free GPUs (ModelPressure).
// RunFgdExperiment (experiment.cc) drives them with reservations on the cluster's state.
//
// Thread-safety: pure functions; a ModelPressure is immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fgd/fragmentation.h"
#include "fgd/gpu_models.h"
#include "fgd/scorer.h"

namespace tessera::fgd {

// How the share plan packs the sharing pods into GPUs.
enum class SharePacking {
  // Minimum bin slack with the largest item first (Gupta and Ho's MBS'): each new GPU takes the
  // largest pod left, then the subset of the others that fills it best (an exact subset-sum over
  // the distinct sizes).
  kMinimumBinSlack,
  // Best fit decreasing: largest pod first, each into the fullest GPU it fits.
  kBestFitDecreasing,
};

struct PlanOptions {
  // Pack the sharing pods of the horizon into GPU bins and hold each bin's GPU for its pods.
  bool share_plan = true;
  SharePacking packing = SharePacking::kMinimumBinSlack;
  // Multi-GPU pods of the horizon hold their GPUs (and CPU, memory) from the start.
  bool gang_reservations = true;
  // CPU/memory balance among nodes of equal FGD score.
  bool balance = true;
  // Pods that may use several GPU models keep off models under pressure: models whose
  // constrained demand still to come reaches this multiple of their free GPU milli.
  bool model_pressure = true;
  double pressure_threshold = 0.9;
  // The plan covers the pods that arrive before this fraction of the cluster's GPU milli has
  // arrived (the experiment measures at 100%; pods planned past the measuring point would hold
  // GPUs that are still empty there).
  double horizon = 0.95;
  // 0: one plan for the whole horizon, made at the start. Otherwise a plan for the next `window`
  // pods only, made again every window / 2 pods for the pods not planned yet: a bin's pods, and
  // a multi-GPU pod's reservation, lie within one window.
  size_t window = 0;

  bool operator==(const PlanOptions&) const = default;
};

// A sharing pod of the queue: its position, per-GPU milli (< kMilliPerGpu) and model mask.
struct ShareItem {
  size_t position = 0;
  int32_t milli = 0;
  ModelMask models = 0;
};

// The pods that will share one GPU: positions in ascending order.
struct ShareBin {
  std::vector<size_t> members;
  ModelMask models = 0;
  int32_t milli = 0;  // the members' sum, at most kMilliPerGpu

  bool operator==(const ShareBin&) const = default;
};

// Packs `items` into bins of kMilliPerGpu milli. Items with different model masks never share a
// bin. Among items of one size, the earlier positions are taken first. Deterministic.
// REQUIRES: 0 < milli < kMilliPerGpu for every item.
std::vector<ShareBin> PackShares(std::span<const ShareItem> items, SharePacking packing);

// The cluster's CPU milli and memory MiB per GPU milli.
struct BalanceRatios {
  double cpu_per_milli = 0;
  double mem_per_milli = 0;
};
BalanceRatios ClusterRatios(std::span<const NodeGpuState> nodes);

// How far a node's free CPU and memory are from the cluster's proportion to its idle GPU milli,
// in GPU milli: max(|cpu - r_cpu x idle| / r_cpu, |mem - r_mem x idle| / r_mem). Zero when both
// are in proportion; large for a node that has CPU or memory but no GPU left, or GPUs but no
// CPU or memory left.
double Imbalance(int64_t cpu_free_milli, int64_t mem_free_mib, int64_t idle_milli,
                 const BalanceRatios& ratios);

// The imbalance removed by placing `pod` on `node`, in whole steps of kBalanceStepMilli (rounded
// down; negative when the pod adds imbalance). Higher is better. Coarse steps leave ties to the
// next criteria (the node in use, then the first-fit order), which pack.
inline constexpr double kBalanceStepMilli = 250;
int64_t BalanceGain(const NodeGpuState& node, const PodRequest& pod, const BalanceRatios& ratios);

// The GPU milli that pods constrained to some GPU models (a non-empty model mask) still ask for,
// per model, from each position of the queue on. A pod allowed on several models counts on each
// in proportion to the model's GPUs in the cluster.
//
// Keeping flexible pods (no model constraint) off a model for its constrained pods pays only when
// the flexible pods lose nothing by it: when some model's constrained pods ask for more than the
// model has. Those pods will be dropped whatever the policy does, so at the measuring point (the
// cluster's GPUs arrived) GPUs of other models are left over, room for the flexible pods.
// Otherwise every GPU is needed, and the constrained demand (an estimate: pods allowed on several
// models are spread over them, and a model's nodes may lack the CPU for its pods) holds GPUs that
// end up empty.
class ModelPressure {
 public:
  // `queue`: the pods in arrival order (up to the plan's horizon); `gpus_per_model`: the
  // cluster's GPUs of each model id.
  ModelPressure(std::span<const PodShape* const> queue, std::span<const int64_t> gpus_per_model);

  // Whether any pod of the queue is constrained to models (otherwise there is no pressure).
  bool any() const { return !models_.empty(); }
  // The GPU milli that constrained pods ask for beyond their models' capacity: the sum over
  // models of demand from the first position minus capacity, where positive.
  double oversubscribed() const { return oversubscribed_; }
  // any(), and oversubscribed() reaches kOversubscribedShare of the cluster's GPU milli.
  bool Worthwhile() const {
    return any() && oversubscribed_ >= kOversubscribedShare * cluster_milli_;
  }
  static constexpr double kOversubscribedShare = 0.01;
  // The model ids some pod of the queue is constrained to, ascending.
  const std::vector<int32_t>& models() const { return models_; }
  // The constrained GPU milli of positions t.. that may use `model` (0 past the queue).
  double Demand(size_t t, int32_t model) const;
  // Whether `model` is under pressure at position t with `free_milli` of its GPU milli free:
  // the demand still to come reaches `threshold` x what is free.
  bool UnderPressure(size_t t, int32_t model, double free_milli, double threshold) const {
    const double d = Demand(t, model);
    return d > 0 && d >= threshold * free_milli;
  }

 private:
  std::vector<int32_t> models_;    // the models some pod is constrained to
  std::vector<int32_t> index_of_;  // model id -> index in models_, -1 if none
  std::vector<double> demand_;     // (queue size + 1) x models_.size(), suffix sums
  double oversubscribed_ = 0;
  double cluster_milli_ = 0;
};

}  // namespace tessera::fgd
