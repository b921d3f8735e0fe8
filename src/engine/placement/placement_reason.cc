// Placer::PlacementReason: why minCount pods do not fit on the nodes, with numbers.
#include <algorithm>

#include "engine/engine.h"
#include "engine/placement/node_exclusion.h"
#include "engine/placement/placer.h"
#include "fmt/format.h"

namespace tessera {

std::string Placer::PlacementReason(WorkloadId id, const std::vector<int32_t>& combo) const {
  const Workload& w = s_.model.workloads[id];
  for (const PodSet& ps : w.pod_sets)
    if (ps.topology.required && !e_.topology.reason().empty()) return e_.topology.reason();
  auto where_of = [&](int pool) {
    return pool == 0 ? std::string("the cluster") : "flavor " + s_.model.flavors[pool - 1].name;
  };
  // The first pod set whose pods do not all fit. Buckets are walked from the most free GPUs
  // down, so the largest free on an eligible node is the first eligible node met, and nodes
  // with too few GPUs are passed over once that is known (cheap in a full cluster).
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    const PodSet& set = w.pod_sets[ps];
    const int target = s_.MinOfSet(id, ps);
    if (target <= 0) continue;
    const int pool = e_.flavors.PoolFor(id, combo, static_cast<int>(ps));
    const std::string where = where_of(pool);
    const int g = static_cast<int>(set.requests[kGpu]);
    int fit_pods = 0, max_free_gpus = -1, dra_blocked = 0;
    std::string dra_why;  // why the first eligible node cannot allocate the pod's DRA claims
    for (int k = s_.cluster->max_gpus_per_node(); k >= 0 && fit_pods < target; --k) {
      if (k < g && max_free_gpus >= 0) break;
      for (NodeId n : s_.cluster->Bucket(pool, k)) {
        if (!NodeEligible(id, static_cast<int>(ps), combo, n, false, false, /*devices=*/false))
          continue;
        max_free_gpus = std::max(max_free_gpus, k);
        if (k < g) break;
        if (!set.claims.empty() && !s_.dra->Feasible(w, static_cast<int>(ps), n)) {
          if (dra_blocked++ == 0)
            dra_why = fmt::format("node {}: {}", s_.model.nodes[n].name,
                                  s_.dra->Reason(w, static_cast<int>(ps), n));
          continue;
        }
        const Resources& free = s_.cluster->free(n);
        int64_t fits = target;
        for (int r = 0; r < kMaxResources; ++r)
          if (set.requests[r] > 0) fits = std::min(fits, free[r] / set.requests[r]);
        fit_pods += static_cast<int>(fits);
        if (fit_pods >= target) break;
      }
    }
    if (fit_pods >= target) continue;
    if (max_free_gpus < 0) {
      const std::string spread = SpreadFilter::Describe(set);
      // Which rule kept how many nodes out, where the labels and taints did (anti-affinity
      // and spread depend on what runs, and are named above).
      const std::string rules =
          ExplainNodeExclusions(s_.model, set, s_.pools[pool],
                                e_.admission.FlavorTolerations(id, combo, static_cast<int>(ps)));
      return fmt::format(
          "no node of {} matches pod set {}'s node selector, affinity{}{} and tolerations{}", where,
          set.name,
          set.anti_affinity == HostnameAntiAffinity::kRequired
              ? ", hostname anti-affinity (one pod per node)"
              : "",
          spread.empty() ? "" : ", topology spread (" + spread + ")",
          rules.empty() ? "" : " (" + rules + ")");
    }
    std::string s =
        fmt::format("{} of {} pods of {} fit on nodes of {}", fit_pods, target, set.name, where);
    if (dra_blocked > 0)
      s += fmt::format("; {} eligible node(s) cannot allocate its DRA claims ({})", dra_blocked,
                       dra_why);
    if (g > 0 && max_free_gpus < g) {
      s += fmt::format("; largest free on any eligible node is {} of {} nvidia.com/gpu per pod",
                       max_free_gpus, g);
    }
    // The count above is per node; a required spread constraint can only lower it.
    const std::string spread = SpreadFilter::Describe(set);
    if (!spread.empty()) s += fmt::format("; topology spread ({}) may allow fewer", spread);
    return s;
  }
  std::string where;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    const std::string wp = where_of(e_.flavors.PoolFor(id, combo, static_cast<int>(ps)));
    if (where.find(wp) == std::string::npos) where += (where.empty() ? "" : ", ") + wp;
  }
  // Every pod set fits node by node, but not all of them at once: name the rules that couple the
  // pods, since they are what keeps them apart.
  std::string coupled;
  for (const PodSet& set : w.pod_sets) {
    const std::string spread = SpreadFilter::Describe(set);
    if (!spread.empty()) coupled += fmt::format("; pod set {} spreads ({})", set.name, spread);
    if (set.anti_affinity == HostnameAntiAffinity::kRequired)
      coupled += fmt::format("; pod set {} wants one pod per node", set.name);
  }
  return fmt::format("the pods do not fit together on the nodes of {}{}", where, coupled);
}

}  // namespace tessera
