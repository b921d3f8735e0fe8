// Flavor assignment and quota arithmetic for one workload: which flavor combinations its
// ClusterQueue offers (one flavor per resource group the workload touches, in the queue's
// order), what each pod charges to which flavor-resource, whether the queue can give it now,
// and the node pool a combination narrows placement to. Kueue's flavorassigner, without the
// node search (placement/ does that).
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

  // Enumerates flavor combinations (one flavor per touched group) in order, at most 64.
  std::vector<Combo> FlavorCombos(WorkloadId id) const;
  int32_t FlavorFor(WorkloadId id, const Combo& combo, ResourceId r) const;
  // What pods asking `req` charge to the queue under `combo`.
  Need QuotaFor(WorkloadId id, const Combo& combo, const Resources& req) const;
  // Quota for the pods still missing from minCount. The reference is valid until the next call.
  const Need& MinQuotaNeed(WorkloadId id, const Combo& combo) const;
  Need ComputeMinQuotaNeed(WorkloadId id, const Combo& combo) const;
  bool QuotaFits(int32_t cq, const Need& need) const;
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
  // The node pool of a combination: the flavor of the GPUs if any (it narrows most), else any
  // flavor chosen, else all nodes (0).
  int PoolFor(WorkloadId id, const Combo& combo) const;
  // The quota a workload's placed pods hold, times `sign`.
  Need UsageOf(WorkloadId id, int sign) const;
  // The ClusterQueue's weighted dominant-resource share after `delta`.
  double ShareOf(int32_t cq, const Need& delta) const;

 private:
  EngineState& s_;
  mutable std::vector<int> height_;  // per quota-tree node: 0 for a ClusterQueue, 1 + tallest child
};

}  // namespace tessera
