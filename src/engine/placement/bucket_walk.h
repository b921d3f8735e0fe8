// binpack and spread: nodes are walked bucket by bucket of free GPUs (fewest first for
// binpack, most first for spread); inside the first bucket with feasible nodes, up to 8 are
// scored by the NodeScorer and the best is taken (nodes that can serve a multi-GPU pod inside
// one NVLink domain first). A GPU share goes to the fullest shared device with room first under
// binpack. Preferred hostname anti-affinity: a first walk avoids nodes with the group's pods.
//
// Thread-safety: none; part of one engine.
#pragma once

#include "engine/placement/node_scorer.h"
#include "engine/placement/plugin.h"

namespace tessera {

class BucketWalkPlacement : public PlacementPlugin {
 public:
  BucketWalkPlacement(Engine& e, const NodeScorer& scorer);
  std::string_view name() const override { return scorer_.name(); }
  NodeChoice FindNode(WorkloadId id, int ps, const Combo& combo) override;

 private:
  // One walk; `avoid_group_nodes`: skip nodes holding pods of the workload's spread group.
  NodeId FindNodeOnce(WorkloadId id, int ps, const Combo& combo, bool avoid_group_nodes) const;

  Engine& e_;
  EngineState& s_;
  const NodeScorer& scorer_;
};

}  // namespace tessera
