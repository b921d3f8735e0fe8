// TesseraPlan online (`spec.placement: TesseraPlan`; docs/fgd.md, "TesseraPlan online"): the
// experiment's TesseraPlan (fgd/plan.h) as a placement plugin of the engine, with only what an
// online scheduler has: the workloads submitted so far (pending or placed), never one that has
// not arrived (a workload the engine was given but not yet Submit()ted is not read).
//
// For one pod:
//   1. Candidates: every node of the pod's pool where it fits and the Placer allows it (not a
//      bounded sample: the order below is a first fit over the node order).
//   2. FGD's integer score (fgd::Scorer, typical pods of the submitted workloads, rebuilt when
//      they have grown by 10%), for CPU-only pods too.
//   3. Among equal scores, the larger fgd::BalanceGain (free CPU and memory towards the cluster's
//      proportion to idle GPUs), then a node in use before an untouched one (TesseraFGD), then
//      the lower node.
//   4. Shares: the pending sharing pods (submitted, not yet placed) and this one are packed into
//      GPU bins (fgd::PackShares, MBS'); when this pod's bin has other members, the bin is
//      placed as one request (members' milli, CPU and memory summed) and the members are hinted
//      to that GPU: when their turn comes they go there if they still fit.
// The experiment's model pressure is not part of it (it needs the constrained demand still to
// come); see docs/fgd.md.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/placement/plugin.h"
#include "fgd/fragmentation.h"
#include "fgd/plan.h"

namespace tessera {

class PlanPlacement : public PlacementPlugin {
 public:
  explicit PlanPlacement(Engine& e);
  std::string_view name() const override { return "TesseraPlan"; }
  NodeChoice FindNode(WorkloadId id, int ps, const Combo& combo) override;
  void Retiring(WorkloadId) override {
    Observe();
    ++retired_in_list_;
  }

 private:
  struct Hint {
    NodeId node = -1;
    int gpu = -1;
  };
  struct Best {
    NodeId node = -1;
    int64_t score = 0;
    int64_t gain = 0;
    bool used = false;
    fgd::GpuSet gpus = 0;
  };

  fgd::PodRequest RequestOf(const Resources& req) const;
  fgd::NodeGpuState GpuStateOf(NodeId n) const;
  // Fragmentation of node n as it is now, cached until the node changes.
  double FragOf(NodeId n, const fgd::NodeGpuState& st);
  // The typical pods of the submitted workloads, rebuilt when their number has grown by 10%.
  const fgd::FragmentationMeasure& Measure();
  // Catches up with the workloads submitted since the last call.
  void Observe();
  // The best node for `pod` (scored as `scored`, which may be a share bin's total).
  Best Choose(WorkloadId id, int ps, const Combo& combo, const fgd::PodRequest& scored);
  // The pending sharing pods packed with `id`'s: the bin of `id` (its members' workload ids,
  // `id` included) when it has other members; empty otherwise.
  std::vector<WorkloadId> PendingBin(WorkloadId id, const fgd::PodRequest& pod);

  Engine& e_;
  EngineState& s_;
  std::vector<int32_t> node_gpu_model_;  // dense GPU model id per node (-1: no GPUs)
  fgd::BalanceRatios ratios_;
  std::unique_ptr<fgd::FragmentationMeasure> measure_;
  int32_t measure_submitted_ = 0;
  // Per node: the state its cached fragmentation is of.
  std::vector<fgd::NodeGpuState> cached_state_;
  std::vector<double> cached_frag_;
  std::vector<uint8_t> cached_;

  // What has arrived: workloads [0, observed_) of the model were looked at; those not submitted
  // then are in unsubmitted_ and looked at again.
  int32_t observed_ = 0;
  std::vector<WorkloadId> unsubmitted_;
  // In submission order (sharing pods are binned in it), less those retired since.
  std::vector<WorkloadId> submitted_;
  int32_t submitted_count_ = 0;  // every workload ever submitted
  int32_t retired_in_list_ = 0;  // ids of submitted_ retired (dropped when half of it)
  fgd::PodShapeTally shapes_;    // of every workload ever submitted: the typical pods' input

  absl::flat_hash_map<WorkloadId, Hint> hints_;
};

}  // namespace tessera
