// Kubernetes' PodTopologySpread for the pods of one spread group (a workload; a Deployment's
// replicas), as a filter and a score beside the placement plugins:
//   filter (whenUnsatisfiable: DoNotSchedule): a node without the topology key is not eligible,
//     and a pod goes to a domain only when its count after placing it exceeds the smallest
//     count by at most maxSkew. The smallest is taken over the domains of the nodes the pod
//     set's node selector and affinity allow in its flavor's pool (nodeAffinityPolicy: Honor,
//     nodeTaintsPolicy: Ignore, Kubernetes' defaults), empty domains included; it is 0 while
//     there are fewer such domains than the constraint's minDomains.
//   score (ScheduleAnyway): the pods of the group already in the node's domain, summed over the
//     constraints; fewer is better, a node without the key worst.
// Counts are the group's placed pods (EngineState::group_nodes) summed per domain when asked:
// groups are small next to the cluster.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class SpreadFilter {
 public:
  explicit SpreadFilter(Engine& e);

  // True when one more pod of pod set `ps` on node `n` keeps every DoNotSchedule constraint.
  // `counts`: false checks only what holds in an empty cluster (the node has the keys).
  bool Allows(WorkloadId id, int ps, const Combo& combo, NodeId n, bool counts = true) const;
  // ScheduleAnyway: the group's pods in node n's domains (a node without a key: kNoDomain).
  int64_t Penalty(WorkloadId id, int ps, NodeId n) const;
  // "maxSkew 1 over topology.kubernetes.io/zone" for the DoNotSchedule constraints of a pod
  // set, for reasons; empty when it has none.
  static std::string Describe(const PodSet& set);

  static constexpr int64_t kNoDomain = int64_t{1} << 40;

 private:
  // Per constraint of pod set `ps`, the domains of the nodes it may use (sorted, unique).
  const std::vector<std::vector<int32_t>>& EligibleDomains(WorkloadId id, int ps,
                                                           const Combo& combo) const;
  // The group's placed pods per domain of `label`.
  std::vector<int64_t> Counts(int32_t group, const std::string& label) const;

  Engine& e_;
  const EngineState& s_;
  mutable absl::flat_hash_map<std::tuple<WorkloadId, int, int>, std::vector<std::vector<int32_t>>>
      eligible_;
};

}  // namespace tessera
