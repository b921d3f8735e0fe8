#include "engine/placement/topology.h"

#include <algorithm>
#include <limits>

#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

TopologyPlacer::TopologyPlacer(Engine& e) : e_(e), s_(e.st) {}

const TopologyPlacer::DomainIndex& TopologyPlacer::Domains(const std::string& label) const {
  auto& slot = domains_[label];
  if (slot) return *slot;
  slot = std::make_unique<DomainIndex>();
  absl::flat_hash_map<std::string, int32_t> ids;
  slot->domain_of.assign(s_.model.nodes.size(), -1);
  for (size_t n = 0; n < s_.model.nodes.size(); ++n) {
    auto it = s_.model.nodes[n].labels.find(label);
    if (it == s_.model.nodes[n].labels.end()) continue;
    auto [id, inserted] = ids.try_emplace(it->second, static_cast<int32_t>(slot->names.size()));
    if (inserted) slot->names.push_back(it->second);
    slot->domain_of[n] = id->second;
  }
  return *slot;
}

bool TopologyPlacer::TopologyLevels(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                                    std::vector<std::string>& levels, int& requested,
                                    std::string& why) const {
  const TopologyRequest& t = s_.model.workloads[id].pod_sets[ps].topology;
  levels.clear();
  int pool = e_.flavors.PoolFor(id, combo, ps);
  if (pool > 0) {
    const std::string& name = s_.model.flavors[pool - 1].topology_name;
    for (const Topology& topo : s_.model.topologies)
      if (topo.name == name) levels = topo.levels;
  }
  if (!t.level.empty()) {
    auto it = std::find(levels.begin(), levels.end(), t.level);
    if (it == levels.end()) {
      levels = {t.level};  // a plain node label: one level
      requested = 0;
    } else {
      requested = static_cast<int>(it - levels.begin());
    }
    return true;
  }
  // A Volcano tier: tier 1 is the innermost level above the nodes themselves.
  std::vector<std::string> above = levels;
  if (!above.empty() && above.back() == "kubernetes.io/hostname") above.pop_back();
  if (above.empty()) {
    why = fmt::format(
        "pod set {} asks for network tier {} but {} has no Topology with levels above the "
        "nodes",
        s_.model.workloads[id].pod_sets[ps].name, t.tier,
        pool > 0 ? "flavor " + s_.model.flavors[pool - 1].name : "the cluster");
    return false;
  }
  levels = above;
  requested = std::max(0, static_cast<int>(above.size()) - t.tier);
  return true;
}

bool TopologyPlacer::FillGroups(WorkloadId id, int ps, int count, const std::vector<int32_t>& combo,
                                const std::vector<std::vector<NodeId>>& groups) {
  int placed = 0;
  for (const auto& group : groups) {
    while (placed < count) {
      NodeId n = e_.placer.FindNodeAmong(id, ps, combo, group);
      if (n < 0) break;
      e_.statement.PlacePod(id, ps, n, combo);
      ++placed;
    }
    if (placed >= count) return true;
  }
  return false;
}

bool TopologyPlacer::PlaceSetInTopology(WorkloadId id, int ps, int count,
                                        const std::vector<int32_t>& combo, size_t mark) {
  return PlaceSetsInTopology(id, {{ps, count}}, combo, mark);
}

std::vector<std::pair<NodeId, int64_t>> TopologyPlacer::Capacities(WorkloadId id, int ps,
                                                                   const Combo& combo) const {
  // Nodes that could take a pod now, with an estimate of how many (eligibility is checked when
  // placing; an estimate that was too high sends the search to the next domain).
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  const int pool = e_.flavors.PoolFor(id, combo, ps);
  const int g = ClusterState::IsShare(req) ? 0 : static_cast<int>(req[kGpu]);
  std::vector<std::pair<NodeId, int64_t>> caps;
  std::vector<int> used_resources;
  for (int r = 0; r < kMaxResources; ++r)
    if (req[r] > 0) used_resources.push_back(r);
  for (int k = g; k <= s_.cluster->max_gpus_per_node(); ++k) {
    for (NodeId n : s_.cluster->Bucket(pool, k)) {
      const Resources& free = s_.cluster->free(n);
      int64_t c = std::numeric_limits<int64_t>::max();
      for (int r : used_resources) c = std::min(c, free[r] / req[r]);
      if (c > 0 && !used_resources.empty()) caps.emplace_back(n, c);
    }
  }
  return caps;
}

bool TopologyPlacer::PlaceSetsInTopology(WorkloadId id, const std::vector<SetCount>& sets,
                                         const std::vector<int32_t>& combo, size_t mark) {
  const Workload& w = s_.model.workloads[id];
  const PodSet& first = w.pod_sets[sets.front().ps];
  const bool required = first.topology.required;
  std::vector<std::string> levels;
  int requested = 0;
  if (!TopologyLevels(id, sets.front().ps, combo, levels, requested, reason_)) {
    e_.statement.RollbackTo(mark);
    return false;
  }
  using Caps = std::vector<std::pair<NodeId, int64_t>>;
  std::vector<Caps> caps;
  for (const SetCount& sc : sets) caps.push_back(Capacities(id, sc.ps, combo));
  // Groups of `nodes` by their domain at the requested level, the roomiest first: as few
  // domains as possible.
  auto groups_by_requested = [&](const Caps& nodes) {
    const DomainIndex& di = Domains(levels[requested]);
    std::vector<int64_t> cap(di.names.size(), 0);
    std::vector<std::vector<NodeId>> members(di.names.size());
    for (const auto& [n, c] : nodes) {
      int32_t d = di.domain_of[n];
      if (d < 0) continue;
      cap[d] += c;
      members[d].push_back(n);
    }
    std::vector<int32_t> order;
    for (size_t d = 0; d < cap.size(); ++d)
      if (cap[d] > 0) order.push_back(static_cast<int32_t>(d));
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return cap[a] != cap[b] ? cap[a] > cap[b] : di.names[a] < di.names[b];
    });
    std::vector<std::vector<NodeId>> groups;
    for (int32_t d : order) groups.push_back(std::move(members[d]));
    return groups;
  };
  auto NodesOf = [](const Caps& v) {
    std::vector<NodeId> out;
    out.reserve(v.size());
    for (const auto& nc : v) out.push_back(nc.first);
    return out;
  };
  const size_t here = e_.statement.mark();
  int64_t largest = 0, total = 0;
  for (const SetCount& sc : sets) total += sc.count;
  // The requested level first, then (preferred only) outward: the lowest level with a domain
  // that holds every pod of every set. Among the domains that do, the one that fits best (least
  // capacity left stranded, so the next big gang still finds a whole domain).
  constexpr int kDomainsTried = 4;
  for (int j = requested; j >= (required ? requested : 0); --j) {
    const DomainIndex& di = Domains(levels[j]);
    // cap_sum orders the domains; cap_max (the most pods of any one set) is what the reason
    // reports, as the sets share the nodes.
    std::vector<int64_t> cap_sum(di.names.size(), 0), cap_max(di.names.size(), 0);
    std::vector<bool> holds(di.names.size(), true);
    std::vector<std::vector<Caps>> members(sets.size(), std::vector<Caps>(di.names.size()));
    for (size_t i = 0; i < sets.size(); ++i) {
      std::vector<int64_t> cap(di.names.size(), 0);
      for (const auto& nc : caps[i]) {
        int32_t d = di.domain_of[nc.first];
        if (d < 0) continue;
        cap[d] += nc.second;
        members[i][d].push_back(nc);
      }
      for (size_t d = 0; d < cap.size(); ++d) {
        cap_sum[d] += cap[d];
        cap_max[d] = std::max(cap_max[d], cap[d]);
        holds[d] = holds[d] && cap[d] >= sets[i].count;
      }
    }
    std::vector<int32_t> fit;
    for (size_t d = 0; d < cap_sum.size(); ++d) {
      if (j == requested) largest = std::max(largest, cap_max[d]);
      if (holds[d]) fit.push_back(static_cast<int32_t>(d));
    }
    std::sort(fit.begin(), fit.end(), [&](int32_t a, int32_t b) {
      return cap_sum[a] != cap_sum[b] ? cap_sum[a] < cap_sum[b] : di.names[a] < di.names[b];
    });
    for (size_t k = 0; k < fit.size() && k < kDomainsTried; ++k) {
      bool filled = true;
      for (size_t i = 0; i < sets.size() && filled; ++i) {
        const Caps& in = members[i][fit[k]];
        filled = j == requested
                     ? FillGroups(id, sets[i].ps, sets[i].count, combo, {NodesOf(in)})
                     : FillGroups(id, sets[i].ps, sets[i].count, combo, groups_by_requested(in));
      }
      if (filled) return true;
      e_.statement.RollbackTo(here);
    }
  }
  if (!required) {
    // No single domain at any level: as few domains of the requested level as possible.
    bool filled = true;
    for (size_t i = 0; i < sets.size() && filled; ++i)
      filled = FillGroups(id, sets[i].ps, sets[i].count, combo, groups_by_requested(caps[i]));
    if (filled) return true;
  }
  std::string names = first.name;
  for (size_t i = 1; i < sets.size(); ++i) names += "+" + w.pod_sets[sets[i].ps].name;
  reason_ =
      fmt::format("no {} domain can hold the {} pods of {} together; the roomiest has room for {}",
                  levels[requested], total, names, largest);
  e_.statement.RollbackTo(mark);
  return false;
}

}  // namespace tessera
