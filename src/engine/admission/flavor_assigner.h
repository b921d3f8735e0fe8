// Flavor assignment and quota arithmetic for one workload: which flavor combinations its
// ClusterQueue offers (for each pod set, one flavor per resource group the pod set asks from, as
// Kueue assigns flavors pod set by pod set; in the queue's order), what each pod charges to
// which flavor-resource, whether the queue can give it now, and the node pool a combination
// narrows a pod set's placement to. Kueue's flavorassigner, without the node search (placement/
// does that).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <optional>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

class FlavorAssigner {
 public:
  explicit FlavorAssigner(EngineState& s) : s_(s) {}

  // Enumerates flavor combinations in order: the choices (pod set, group) walked with the last
  // fastest, so the first pod set keeps its first flavor longest. At most 64 of them, and when
  // there are more, also every combination in which all pod sets take the same flavor of a group
  // (so no workload is tried in fewer flavors than with one flavor for all its pod sets).
  std::vector<Combo> FlavorCombos(WorkloadId id) const;
  // The index of pod set ps's flavor in group g under `combo` (-1: none).
  int32_t FlavorIndex(WorkloadId id, const Combo& combo, int ps, int g) const;
  // Pod set ps's flavor (a flavor id) for resource r under `combo` (-1: none).
  int32_t FlavorFor(WorkloadId id, const Combo& combo, int ps, ResourceId r) const;
  // The flavor ids of `combo`, flattened as the combination (WorkloadStatus::flavors).
  std::vector<int32_t> FlavorIds(WorkloadId id, const Combo& combo) const;
  // What pods of pod set ps asking `req` charge to the queue under `combo`.
  Need QuotaFor(WorkloadId id, const Combo& combo, int ps, const Resources& req) const;
  // Quota for the pods still missing from the minimums. Valid until the next call.
  const Need& MinQuotaNeed(WorkloadId id, const Combo& combo) const;
  Need ComputeMinQuotaNeed(WorkloadId id, const Combo& combo) const;
  bool QuotaFits(int32_t cq, const Need& need) const;
  // Whether the queue's own (nominal, subtree) quota holds `need` on top of its usage: no
  // borrowing. True without a ClusterQueue.
  bool FitsNominal(int32_t cq, const Need& need) const;
  // The first resource of `need` the queue cannot give now, with the numbers for a message.
  std::optional<ReasonPart> QuotaShortfall(WorkloadId id, const Need& need) const;
  // Whether the workload's minCount pods would take more than its ClusterQueue's own quota
  // (usage above its subtree quota) in the first combination whose quota fits now, else the
  // first combination. A workload without a ClusterQueue never borrows.
  bool WouldBorrow(WorkloadId id) const;
  // Kueue's borrowing level of `need` in `cq` now: 0 when the queue's own quota holds it, else
  // the height of the lowest cohort whose subtree holds it without borrowing itself (the
  // root's when none does); the largest over the flavor-resources of `need`.
  int BorrowHeight(int32_t cq, const Need& need) const;
  // The node pool of pod set ps under a combination: the flavor of its GPUs if any (it narrows
  // most), else any flavor chosen for it, else all nodes (0).
  int PoolFor(WorkloadId id, const Combo& combo, int ps) const;
  // The quota a workload's placed pods hold, times `sign`.
  Need UsageOf(WorkloadId id, int sign) const;
  // The ClusterQueue's weighted dominant-resource share after `delta`.
  double ShareOf(int32_t cq, const Need& delta) const;

 private:
  EngineState& s_;
  mutable std::vector<int> height_;  // per quota-tree node: 0 for a ClusterQueue, 1 + tallest child
};

}  // namespace tessera
