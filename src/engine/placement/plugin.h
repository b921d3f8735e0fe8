// Placement plugins: which node a pod goes to, among the nodes its flavors, selectors,
// tolerations and anti-affinity allow. One plugin per `spec.placement` policy, made by
// MakePlacementPlugin, the one place that maps a policy to a class:
//   binpack, spread                  BucketWalkPlacement (placement/bucket_walk.h)
//   the FGD family (FGD, TesseraFGD, FgdPlacement (placement/fgd_placement.h)
//   BestFit, DotProd, GpuPacking,
//   GpuClustering, Random)
//   TesseraPlan                      PlanPlacement (placement/plan_placement.h)
// A plugin may also pick the GPUs inside the node (NodeChoice::gpus); otherwise the cluster
// state's own device choice (NVLink / PCIe / NUMA domains, MIG starts, shares) is used.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "engine/engine_state.h"
#include "fgd/scorer.h"

namespace tessera {

struct Engine;
class NodeScorer;

// Feasible nodes looked at inside the first free-GPU bucket that has any, before the best
// score is taken.
inline constexpr int kCandidatesPerBucket = 8;

struct NodeChoice {
  NodeId node = -1;
  fgd::GpuSet gpus = 0;  // the devices the policy picked; 0: let ClusterState choose
};

class PlacementPlugin {
 public:
  virtual ~PlacementPlugin() = default;
  virtual std::string_view name() const = 0;
  // A node for one more pod of pod set `ps` of workload `id` under flavor combination `combo`;
  // node -1 when none can take it now.
  virtual NodeChoice FindNode(WorkloadId id, int ps, const Combo& combo) = 0;
  // Workload `id` ended and is about to be retired (Scheduler::Retire): a plugin that learns
  // from every workload it has seen reads what it needs of this one now.
  virtual void Retiring(WorkloadId /*id*/) {}
};

// Per node, a dense id of its GPU model (nvidia.com/gpu.product) in order of first appearance;
// fgd::kNoGpuModel for a node without GPUs. The FGD-family plugins key their state on it.
std::vector<int32_t> DenseGpuModelIds(const std::vector<Node>& nodes);

// `scorer` (binpack or spread) orders the bucket walk; it outlives the plugin.
std::unique_ptr<PlacementPlugin> MakePlacementPlugin(PlacementPolicy policy, Engine& e,
                                                     const NodeScorer& scorer);

}  // namespace tessera
