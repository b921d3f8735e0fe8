// The node-scoring policies of the FGD paper's experiments, as its simulator
// (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin/*.go) defines them, and the
// Tessera policy that builds on FGD. docs/fgd.md gives each definition.
//
// A score is the plugin's integer score (0..100 for most; higher is better), computed for a pod
// on a node that passed Fits(). The scheduler takes the node with the highest score (after
// Normalize for BestFit), choosing uniformly among equal scores as kube-scheduler's selectHost
// does, and places the pod on the GPUs that Scored::gpus names (or PickGpus, where the policy's
// score does not choose GPUs).
//
// Thread-safety: a Scorer is immutable after construction; share it between threads freely.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "fgd/fragmentation.h"
#include "fgd/rng.h"

namespace tessera::fgd {

enum class Policy {
  kRandom,
  kDotProd,
  kGpuClustering,
  kGpuPacking,
  kBestFit,
  kFgd,
  // Tessera's own: FGD's score, but among equal scores a node already in use goes before an
  // untouched one (docs/fgd.md, "Beating FGD"). The tie rule lives with the caller that picks
  // among nodes (RunFgdExperiment); Score is FGD's.
  kTesseraFgd,
};

std::string_view PolicyName(Policy policy);
std::optional<Policy> ParsePolicy(std::string_view name);
// The six of the paper, in its order.
std::span<const Policy> PaperPolicies();

struct PodRequest {
  int64_t cpu_milli = 0;
  int64_t mem_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU
  ModelMask models = 0;

  bool IsShare() const { return num_gpu == 1 && gpu_milli < kMilliPerGpu; }
  int64_t TotalGpuMilli() const { return int64_t{num_gpu} * gpu_milli; }
  static PodRequest Of(const PodShape& s) {
    return PodRequest{s.cpu_milli, s.mem_mib, s.num_gpu, s.gpu_milli, s.models};
  }
};

// A set of GPU indices on one node (bit i: GPU i).
using GpuSet = uint32_t;
// The kinds of GPU pods on a node, for GpuClustering: bit 0 GPU-sharing pods, bit n (n >= 1)
// pods of n whole GPUs.
using AffinityTags = uint32_t;
AffinityTags AffinityTagOf(const PodRequest& pod);

// The filter: CPU and memory (NodeResourcesFit, actual requests), the GPU model, and GPUs that
// can hold the request (Open-Gpu-Share's AllocateGpuId).
bool Fits(const NodeGpuState& node, const PodRequest& pod);

struct Scored {
  int64_t score = 0;
  GpuSet gpus = 0;     // the GPUs the policy chose; 0 when it leaves the choice to PickGpus
  bool error = false;  // the plugin failed on this node (BestFit with too little left): the pod
                       // is not scheduled in this cycle, as kube-scheduler does on a Score error
};

// What a node looks like to the scorers beyond its free resources.
struct NodeView {
  const NodeGpuState* state;
  AffinityTags tags = 0;
  double frag = 0;  // FragmentationMeasure::Evaluate(*state), cached by the caller
};

class Scorer {
 public:
  // `measure` is the workload's typical-pod fragmentation (FGD and TesseraFgd need it; it must
  // outlive the scorer).
  Scorer(Policy policy, const FragmentationMeasure* measure);

  Policy policy() const { return policy_; }
  // REQUIRES: Fits(*node.state, pod). Random's score is constant: the caller draws the node.
  Scored Score(const NodeView& node, const PodRequest& pod) const;
  // BestFit's NormalizeScore (min-max to 0..100, integer); the identity for the others.
  void Normalize(std::span<int64_t> scores) const;
  // The GPUs the pod takes on `node` when Score did not choose them: the tightest GPU that fits
  // a sharing pod ("best"; a random one for Random), the lowest-numbered free GPUs otherwise.
  GpuSet PickGpus(const NodeGpuState& node, const PodRequest& pod, Rng& rng) const;

  // FGD's node score for placing `pod` on `node` (with fragmentation `frag_before`) using
  // `measure`, and the GPUs that give it (FGD: calculateGpuShareFragExtendScore).
  // `exact`: the fragmentation decrease itself (in 1/1000 milli), not FGD's sigmoid percent.
  // REQUIRES: frag_before == measure.Evaluate(node) (as NodeView::frag): a pod that leaves every
  // term of the measure as it was (a CPU-only pod whose CPU changes no typical pod's fit) scores
  // a zero decrease without measuring the node again.
  static Scored FgdScore(const FragmentationMeasure& measure, const NodeGpuState& node,
                         double frag_before, const PodRequest& pod, bool exact = false);

 private:
  Policy policy_;
  const FragmentationMeasure* measure_;
};

// The lowest-numbered `count` GPUs with all 1000 milli free (AllocateExclusiveGpuId).
GpuSet LowestFreeGpus(const NodeGpuState& node, int count);
// Applies the placement to `node`: CPU, memory and the GPUs' milli.
void Place(NodeGpuState& node, const PodRequest& pod, GpuSet gpus);

}  // namespace tessera::fgd
