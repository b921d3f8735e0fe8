// OrderForTopology: victims for a gang that must sit in one topology domain come first from
// the domain where the fewest, lowest-priority victims suffice.
#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "engine/engine.h"
#include "engine/preemption/victim_search.h"

namespace tessera {

void OrderForTopology(const Engine& e, WorkloadId id, const Combo& combo,
                      std::vector<WorkloadId>& candidates) {
  const EngineState& s = e.st;
  const Workload& w = s.model.workloads[id];
  int ps = -1;
  for (size_t i = 0; i < w.pod_sets.size(); ++i)
    if (w.pod_sets[i].topology.required && w.pod_sets[i].requests[kGpu] > 0) {
      ps = static_cast<int>(i);
      break;
    }
  if (ps < 0) return;
  std::vector<std::string> levels;
  int requested = 0;
  std::string why;
  if (!e.topology.TopologyLevels(id, ps, combo, levels, requested, why)) return;
  const TopologyPlacer::DomainIndex& di = e.topology.Domains(levels[requested]);
  const int64_t need = w.pod_sets[ps].requests[kGpu] * w.pod_sets[ps].count;
  const int pool = e.flavors.PoolFor(id, combo, ps);
  std::vector<int64_t> free(di.names.size(), 0);
  for (int k = 1; k <= s.cluster->max_gpus_per_node(); ++k)
    for (NodeId n : s.cluster->Bucket(pool, k))
      if (di.domain_of[n] >= 0) free[di.domain_of[n]] += k;
  // Walk the candidates in their order (lowest priority first), per domain, until the domain
  // would have enough: the cost of a domain is (highest victim priority, victims).
  std::vector<int64_t> got = free;
  std::vector<int32_t> victims(di.names.size(), 0),
      top(di.names.size(), std::numeric_limits<int32_t>::min());
  std::vector<bool> done(di.names.size(), false);
  for (size_t d = 0; d < got.size(); ++d) done[d] = got[d] >= need;
  for (WorkloadId v : candidates) {
    absl::flat_hash_map<int32_t, int64_t> per_domain;
    for (const auto& p : s.recs[v].placed) {
      int32_t d = di.domain_of[p.placement.node];
      if (d >= 0) per_domain[d] += static_cast<int64_t>(p.placement.gpus.size());
    }
    for (const auto& [d, gpus] : per_domain) {
      if (done[d]) continue;
      got[d] += gpus;
      ++victims[d];
      top[d] = std::max(top[d], s.recs[v].priority);
      done[d] = got[d] >= need;
    }
  }
  int32_t best = -1;
  for (size_t d = 0; d < got.size(); ++d) {
    if (got[d] < need) continue;
    auto key = std::make_pair(top[d], victims[d]);
    if (best < 0 || key < std::make_pair(top[best], victims[best])) best = static_cast<int32_t>(d);
  }
  if (best < 0) return;
  std::stable_partition(candidates.begin(), candidates.end(), [&](WorkloadId v) {
    for (const auto& p : s.recs[v].placed)
      if (di.domain_of[p.placement.node] == best) return true;
    return false;
  });
}

}  // namespace tessera
