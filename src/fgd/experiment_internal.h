// The experiment's fast path (fgd/experiment.h), internal: the cluster while one run fills it
// (Fill), the two ways a run places its queue (ReplayGreedy: the paper's policies, TesseraFGD
// and the lookahead; ReplayPlan: TesseraPlan), and the discretisation of a run's events into the
// 0..130% columns. Not for use outside src/fgd/experiment*.cc.
//
// Thread-safety: a Fill belongs to one run.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "fgd/experiment.h"
#include "fgd/fragmentation.h"
#include "fgd/plan.h"
#include "fgd/rng.h"
#include "fgd/scorer.h"

namespace tessera::fgd::experiment_internal {

// The cluster while one run fills it: node states, their cached fragmentation and FGD scores,
// with an undo log so that a lookahead can try a placement and the pods after it and take them
// back.
//
// With reservations (TesseraPlan), nodes_ is what the policy sees: what is free minus what the
// plan holds for pods still to come; actual_ is what is really free (nodes_ <= actual_ in every
// field). Reservations do not combine with the undo log.
class Fill {
 public:
  // `last_version` numbers the node states; Fills that copy state from each other share it.
  Fill(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
       std::vector<int32_t> rank, uint32_t* last_version);

  struct Choice {
    int32_t node = -1;  // -1: the pod fits nowhere (or the policy's Score failed)
    GpuSet gpus = 0;
  };
  struct Undo {
    int32_t node;
    NodeGpuState state;
    AffinityTags tags;
    double frag;
    uint8_t touched;
    uint32_t version;
  };

  double FragSum() const;
  double Frag(size_t i) const { return frag_[i]; }

  // The memo's shape of `pod` (FGD family), added when new: for requests that are not a
  // workload pod (TesseraPlan's bins).
  uint32_t Intern(const PodRequest& pod);
  uint32_t ShapeOf(int32_t pod_index) const { return shape_of_[static_cast<size_t>(pod_index)]; }

  // The policy's own choice (no lookahead). Random draws from `rng`.
  Choice Greedy(int32_t pod_index, const PodRequest& pod, Rng& rng);
  // The policy's choice for a request of memo shape `shape` (FGD family).
  Choice GreedyShape(uint32_t shape, const PodRequest& pod);

  // The best `count` choices in the policy's order, and the best node in use and the best
  // untouched node when those are not among them. REQUIRES: an FGD-family policy.
  std::vector<Choice> Candidates(int32_t pod_index, const PodRequest& pod, int count);

  // Places `pod` on the choice's node; with `log`, records what to take back.
  void Apply(const Choice& c, const PodRequest& pod, Rng& rng, std::vector<Undo>* log);

  // The node states of `other` (a Fill of the same run); memoized scores stay with each Fill.
  void CopyStateFrom(const Fill& other);
  void Rollback(std::vector<Undo>& log);

  // ---- TesseraPlan ----

  // Among equal scores, the larger BalanceGain at these ratios first.
  void SetBalance(const BalanceRatios& ratios) {
    balance_ = true;
    ratios_ = ratios;
  }
  // For GPU pods, nodes whose GPU model is marked under pressure go last (SetPressure).
  void EnablePressure();
  void SetPressure(int32_t model, bool under) {
    if (model >= 0 && model < kMaxGpuModels) pressure_[static_cast<size_t>(model)] = under;
  }
  // The idle GPU milli of `model`'s nodes as the policy sees them. REQUIRES: EnablePressure.
  double ModelIdle(int32_t model) const {
    return model >= 0 && model < kMaxGpuModels ? model_idle_[static_cast<size_t>(model)] : 0;
  }

  // From here on, nodes_ may hold less than what is free (reservations).
  void EnableReservations() {
    actual_ = nodes_;
    actual_frag_ = frag_;
  }
  bool reserving() const { return !actual_.empty(); }
  // The GPUs the pod takes on the choice's node: the scorer's, or PickGpus' (ChooseGpus).
  GpuSet GpusOf(const Choice& c, const PodRequest& pod, Rng& rng) const;
  // The fragmentation of the cluster as it is (for the experiment's curves).
  double ActualFragSum() const;

  // Holds `pod` on `gpus` of the node for later: the policy sees it as placed.
  // REQUIRES: Fits(nodes_[node], pod) on those GPUs.
  void Reserve(int32_t node, GpuSet gpus, const PodRequest& pod);
  // Places `pod` on `gpus` of the node out of what is really free (a reservation made for it, or
  // what is left): false, and nothing changes, when it does not fit there.
  bool Claim(int32_t node, GpuSet gpus, const PodRequest& pod);
  // Gives back what was reserved for `pod` on `gpus` of the node (as far as it is still free).
  void Release(int32_t node, GpuSet gpus, const PodRequest& pod);

  // The policy's choice among the nodes where `pod` fits what is really free, reservations
  // included: for a pod that fits nowhere else. No memo (rare).
  Choice GreedyActual(const PodRequest& pod);
  // Places `pod` out of what is really free; the reservations it runs into shrink (the policy
  // sees the pod take what is unreserved first).
  void ApplyActual(const Choice& c, const PodRequest& pod, Rng& rng);

 private:
  // The scores of the feasible nodes for workload pod `pod_index`, into feasible_ / scores_ /
  // gpus_. Returns false when a Score failed (BestFit): the pod is not placed.
  bool ScoreFeasible(int32_t pod_index, const PodRequest& pod) {
    return ScoreShape(memo_ ? shape_of_[static_cast<size_t>(pod_index)] : 0, pod);
  }
  // The same for a request of memo shape `shape` (ignored without the memo).
  bool ScoreShape(uint32_t shape, const PodRequest& pod);
  // True when feasible_[a] goes before feasible_[b] in the policy's order (see the .cc).
  bool Before(size_t a, size_t b) const;
  // The first feasible node in the policy's order.
  Choice Pick() const;
  void ComputeGains(const std::vector<NodeGpuState>& states, const PodRequest& pod);
  bool UnderPressure(int32_t model) const {
    return model >= 0 && model < kMaxGpuModels && pressure_[static_cast<size_t>(model)] != 0;
  }
  // After nodes_[i] changed.
  void Changed(size_t i);
  // feasible_ = the nodes where the pod fits, in index order.
  void CollectFeasible(const PodRequest& pod);
  void Sync(size_t i);
  void InitMemo();

  static constexpr uint32_t kNever = UINT32_MAX;
  const Workload& workload_;
  const FragmentationMeasure& measure_;
  const Scorer scorer_;
  const bool used_first_;
  const std::vector<int32_t> rank_;
  uint32_t* const last_version_;

  std::vector<NodeGpuState> nodes_;
  std::vector<AffinityTags> tags_;
  std::vector<double> frag_;
  std::vector<uint8_t> touched_;
  std::vector<uint32_t> version_;
  std::vector<int64_t> cpu_free_;  // copies of nodes_' fields for CollectFeasible
  std::vector<int64_t> mem_free_;
  std::vector<int32_t> max_gpu_free_;
  std::vector<int64_t> idle_;  // IdleGpuMilli of nodes_, as of the last Sync

  // TesseraPlan: what is really free and its fragmentation (empty without reservations), the
  // balance, the model pressure.
  std::vector<NodeGpuState> actual_;
  std::vector<double> actual_frag_;
  bool balance_ = false;
  BalanceRatios ratios_;
  std::vector<int64_t> gains_;  // per feasible_ entry
  bool pressure_on_ = false;
  bool pod_uses_gpu_ = false;       // the request being ranked asks for GPUs
  std::vector<uint8_t> pressure_;   // per model id
  std::vector<double> model_idle_;  // per model id

  bool memo_ = false;
  size_t num_shapes_ = 0;
  std::map<std::tuple<int64_t, int32_t, int32_t>, uint32_t> shape_ids_;
  std::vector<uint32_t> shape_of_;      // per workload pod
  std::vector<uint32_t> memo_version_;  // per (shape, node); kNever when never scored
  std::vector<int64_t> memo_score_;
  std::vector<GpuSet> memo_gpus_;

  std::vector<int32_t> feasible_;
  std::vector<int64_t> scores_;
  std::vector<GpuSet> gpus_;
};

// One run's placements: each position's node (-1: the pod fit nowhere) and the cluster's
// fragmentation after it.
struct Replay {
  std::vector<int32_t> node;
  std::vector<double> frag;
};

// The paper's policies, TesseraFGD and the lookahead (experiment_greedy.cc).
Replay ReplayGreedy(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                    const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng);
// TesseraPlan (experiment_plan.cc).
Replay ReplayPlan(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                  const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng);

// One pod event of a run: GPU milli arrived so far (dropped pods too), placed so far, and the
// cluster's fragmented milli after it.
struct Event {
  int64_t arrived_milli;
  int64_t used_milli;
  double frag_milli;
};
// The events as the authors' analysis scripts reduce them to columns 0..130 of arrived load
// (RunResult::alloc_percent, frag_percent) (experiment_curves.cc).
void Discretize(const std::vector<Event>& events, int64_t total_gpus, RunResult& out);

}  // namespace tessera::fgd::experiment_internal
