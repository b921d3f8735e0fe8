// The FGD paper's placement policies (FGD, TesseraFGD, BestFit, DotProd, GpuPacking,
// GpuClustering, Random; docs/fgd.md) inside the engine: a GPU pod goes to the best-scored
// node among a bounded candidate set (up to 8 feasible nodes of every free-GPU bucket, and
// nodes with shared devices for a share), scored by fgd::Scorer against the typical pods of
// the workloads known so far, and gets the GPUs the policy picks. Pods without GPUs go through
// the bucket walk.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "engine/placement/bucket_walk.h"
#include "fgd/fragmentation.h"

namespace tessera {

class FgdPlacement : public PlacementPlugin {
 public:
  FgdPlacement(Engine& e, const NodeScorer& scorer, fgd::Policy policy);
  std::string_view name() const override;
  NodeChoice FindNode(WorkloadId id, int ps, const Combo& combo) override;
  void Retiring(WorkloadId) override { Tally(); }

 private:
  NodeChoice FindNodeFgd(WorkloadId id, int ps, const Combo& combo);
  fgd::NodeGpuState GpuStateOf(NodeId n) const;
  // The typical pods of the workloads known so far, rebuilt when their number has doubled.
  const fgd::FragmentationMeasure& Measure();
  // Adds the pod shapes of the workloads added since the last call to shapes_.
  void Tally();
  // A share's milli for the typical-pod statistics: a share by memory measured on the most
  // common device memory of the cluster.
  int64_t TypicalShareMilli(const Resources& req) const;

  Engine& e_;
  EngineState& s_;
  BucketWalkPlacement walk_;  // pods without GPUs
  const fgd::Policy policy_;
  std::unique_ptr<fgd::FragmentationMeasure> measure_;
  int32_t measure_workloads_ = 0;
  fgd::PodShapeTally shapes_;  // of workloads [0, tallied_)
  int32_t tallied_ = 0;
  std::vector<int32_t> node_gpu_model_;  // dense GPU model id per node
  uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
  int64_t typical_gpu_mem_mib_ = 0;  // the most common known device memory, MiB
};

}  // namespace tessera
