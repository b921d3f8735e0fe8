#include "engine/placement/topology_spread.h"

#include <algorithm>

#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

SpreadFilter::SpreadFilter(Engine& e) : e_(e), s_(e.st) {}

const std::vector<std::vector<int32_t>>& SpreadFilter::EligibleDomains(WorkloadId id, int ps,
                                                                       const Combo& combo) const {
  const int pool = e_.flavors.PoolFor(id, combo, ps);
  auto [it, inserted] = eligible_.try_emplace({id, ps, pool});
  if (!inserted) return it->second;
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  std::vector<std::vector<int32_t>>& out = it->second;
  out.resize(set.spread.size());
  for (size_t i = 0; i < set.spread.size(); ++i) {
    const auto& di = e_.topology.Domains(set.spread[i].topology_key);
    for (NodeId n : s_.pools[pool]) {
      const Labels& labels = s_.model.nodes[n].labels;
      if (di.domain_of[n] >= 0 && MatchesNodeSelector(set.node_selector, labels) &&
          Matches(set.affinity, labels))
        out[i].push_back(di.domain_of[n]);
    }
    std::sort(out[i].begin(), out[i].end());
    out[i].erase(std::unique(out[i].begin(), out[i].end()), out[i].end());
  }
  return out;
}

std::vector<int64_t> SpreadFilter::Counts(int32_t group, const std::string& label) const {
  const auto& di = e_.topology.Domains(label);
  std::vector<int64_t> counts(di.names.size(), 0);
  if (group < 0) return counts;
  for (const auto& [node, n] : s_.group_nodes[group])
    if (di.domain_of[node] >= 0) counts[di.domain_of[node]] += n;
  return counts;
}

bool SpreadFilter::Allows(WorkloadId id, int ps, const Combo& combo, NodeId n, bool counts) const {
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  for (size_t i = 0; i < set.spread.size(); ++i) {
    const auto& c = set.spread[i];
    if (!c.required) continue;
    const int32_t d = e_.topology.Domains(c.topology_key).domain_of[n];
    if (d < 0) return false;
    if (!counts) continue;
    const std::vector<int64_t> count = Counts(s_.recs[id].spread_group, c.topology_key);
    const std::vector<int32_t>& domains = EligibleDomains(id, ps, combo)[i];
    int64_t min = count[d];
    for (int32_t other : domains) min = std::min(min, count[other]);
    // minDomains: too few domains to spread over, so the smallest count is taken as 0.
    if (static_cast<int64_t>(domains.size()) < c.min_domains) min = 0;
    if (count[d] + 1 - min > c.max_skew) return false;
  }
  return true;
}

int64_t SpreadFilter::Penalty(WorkloadId id, int ps, NodeId n) const {
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  int64_t penalty = 0;
  for (const auto& c : set.spread) {
    if (c.required) continue;
    const int32_t d = e_.topology.Domains(c.topology_key).domain_of[n];
    penalty += d < 0 ? kNoDomain : Counts(s_.recs[id].spread_group, c.topology_key)[d];
  }
  return penalty;
}

std::string SpreadFilter::Describe(const PodSet& set) {
  std::string out;
  for (const auto& c : set.spread) {
    if (!c.required) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("maxSkew {} over {}", c.max_skew, c.topology_key);
    if (c.min_domains > 0) out += fmt::format(", minDomains {}", c.min_domains);
  }
  return out;
}

}  // namespace tessera
