// Placement of a workload's pods: node eligibility (selectors, affinity, taints and the
// flavors' tolerations, hostname anti-affinity, topology spread: placement/topology_spread.h),
// one node per pod through the placement plugin (inside the nodes it prefers most, by preferred
// node affinity and ScheduleAnyway spread, when the pod set has such wishes),
// pod sets with a topology through TopologyPlacer, gangs placed whole (minCount pods or none,
// through the Statement's undo log), pods beyond minCount as room allows, and the reason when
// nothing fits.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_state.h"
#include "engine/placement/node_scorer.h"
#include "engine/placement/plugin.h"
#include "engine/placement/topology_spread.h"

namespace tessera {

struct Engine;

class Placer {
 public:
  explicit Placer(Engine& e);
  ~Placer();
  // Chooses the plugin of `policy`; call once before any placement.
  void Init(PlacementPolicy policy);

  const NodeScorer& scorer() const { return *scorer_; }
  // `avoid_group_nodes`: also exclude nodes holding pods of the workload's spread group (the
  // first pass of preferred anti-affinity). `empty_cluster`: only what would hold with nothing
  // placed (no hostname anti-affinity, no spread counts), for CanEverFit.
  bool NodeEligible(WorkloadId id, int ps, const Combo& combo, NodeId n,
                    bool avoid_group_nodes = false, bool empty_cluster = false,
                    bool devices = true) const;
  // A node for one more pod through the plugin; with preferred node affinity or ScheduleAnyway
  // spread, first among the nodes that can take the pod and score best by them.
  NodeChoice FindNode(WorkloadId id, int ps, const Combo& combo);
  // Workload `id` is about to be retired (PlacementPlugin::Retiring).
  void Retiring(WorkloadId id) {
    if (plugin_) plugin_->Retiring(id);
  }
  // The best eligible node of `nodes` (inside a topology domain): binpack's fewest free GPUs,
  // or spread's most, then the scorer.
  NodeId FindNodeAmong(WorkloadId id, int ps, const Combo& combo,
                       const std::vector<NodeId>& nodes) const;
  // Places pods until minCount are placed; on failure rolls back to `mark` and returns false.
  bool PlaceMin(WorkloadId id, const Combo& combo, size_t mark);
  // Places further pods (beyond minCount) while quota and nodes allow; returns them.
  std::vector<PodPlacement> PlaceExtra(WorkloadId id);
  // Whether minCount pods would fit now (quota and nodes); changes nothing.
  bool FitsNow(WorkloadId id, const Combo& combo);
  // Whether it fits now (as FitsNow) under some flavor combination of its own.
  bool FitsNowAny(WorkloadId id);
  // Why minCount pods do not fit on the nodes under `combo`, with numbers.
  std::string PlacementReason(WorkloadId id, const Combo& combo) const;

 private:
  // NodeEligible without the DRA claims.
  bool NodeEligibleByRules(WorkloadId id, int ps, const Combo& combo, NodeId n,
                           bool avoid_group_nodes, bool empty_cluster) const;

  Engine& e_;
  EngineState& s_;
  std::unique_ptr<NodeScorer> scorer_;
  std::unique_ptr<PlacementPlugin> plugin_;
  SpreadFilter spread_;
  // While FindNode looks among the preferred nodes: their score (preferred node affinity, then
  // less ScheduleAnyway spread), which NodeEligible then also requires.
  struct Preference {
    int64_t affinity = 0;
    int64_t spread_penalty = 0;
    bool operator==(const Preference&) const = default;
  };
  Preference PreferenceOf(WorkloadId id, int ps, NodeId n) const;
  std::optional<Preference> preferred_;
};

}  // namespace tessera
