// Topology between nodes: a pod set that asks for a topology level (Kueue's
// podset-required-topology / podset-preferred-topology, Volcano's networkTopology tier) is
// placed inside one domain of that level (required), or in as few domains as possible going
// outward level by level (preferred). Domains are node label values, indexed on first use.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class TopologyPlacer {
 public:
  // Nodes grouped by the value of one label.
  struct DomainIndex {
    std::vector<int32_t> domain_of;  // per node, -1 without the label
    std::vector<std::string> names;
  };

  explicit TopologyPlacer(Engine& e);

  const DomainIndex& Domains(const std::string& label) const;
  // The topology levels (node labels, outermost first) for pod set `ps` under `combo`, and the
  // index of the level it asks for; false with `why` set when the request cannot be resolved.
  bool TopologyLevels(WorkloadId id, int ps, const Combo& combo, std::vector<std::string>& levels,
                      int& requested, std::string& why) const;
  // Places `count` more pods of pod set `ps` inside one domain (required) or as few domains
  // as possible (preferred). Leaves what it placed on success; rolls back to `mark` on failure
  // and says why in reason().
  bool PlaceSetInTopology(WorkloadId id, int ps, int count, const Combo& combo, size_t mark);
  // The same for several pod sets of one workload (a topology group: Kueue's
  // podset-group-name), all in one domain, at the level of the first set's request.
  struct SetCount {
    int ps;
    int count;
  };
  bool PlaceSetsInTopology(WorkloadId id, const std::vector<SetCount>& sets, const Combo& combo,
                           size_t mark);
  // Why the last topology placement failed; empty when none did since clear_reason().
  const std::string& reason() const { return reason_; }
  void clear_reason() { reason_.clear(); }

 private:
  // The nodes of pod set ps's pool that could take one of its pods now, and about how many.
  std::vector<std::pair<NodeId, int64_t>> Capacities(WorkloadId id, int ps,
                                                     const Combo& combo) const;
  // Fills groups of nodes in order; true when `count` pods were placed.
  bool FillGroups(WorkloadId id, int ps, int count, const Combo& combo,
                  const std::vector<std::vector<NodeId>>& groups);

  Engine& e_;
  EngineState& s_;
  mutable absl::flat_hash_map<std::string, std::unique_ptr<DomainIndex>> domains_;
  std::string reason_;
};

}  // namespace tessera
