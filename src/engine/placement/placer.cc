#include "engine/placement/placer.h"

#include <algorithm>

#include "engine/engine.h"

namespace tessera {

Placer::Placer(Engine& e) : e_(e), s_(e.st), spread_(e) {}
Placer::~Placer() = default;

void Placer::Init(PlacementPolicy policy) {
  scorer_ = MakeNodeScorer(policy);
  plugin_ = MakePlacementPlugin(policy, e_, *scorer_);
}

bool Placer::NodeEligible(WorkloadId id, int ps, const Combo& combo, NodeId n,
                          bool avoid_group_nodes, bool empty_cluster, bool devices) const {
  if (!NodeEligibleByRules(id, ps, combo, n, avoid_group_nodes, empty_cluster)) return false;
  // The pod's DRA claims last: the allocator is the dearest check (docs/dra.md).
  const Workload& w = s_.model.workloads[id];
  return !devices || w.pod_sets[ps].claims.empty() || s_.dra->Feasible(w, ps, n, empty_cluster);
}

bool Placer::NodeEligibleByRules(WorkloadId id, int ps, const Combo& combo, NodeId n,
                                 bool avoid_group_nodes, bool empty_cluster) const {
  const Node& node = s_.model.nodes[n];
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  if (!empty_cluster && !s_.cordoned.empty() && s_.cordoned[n]) return false;
  if (preferred_ && PreferenceOf(id, ps, n) != *preferred_) return false;
  if (!empty_cluster &&
      (set.anti_affinity == HostnameAntiAffinity::kRequired ||
       (avoid_group_nodes && set.anti_affinity == HostnameAntiAffinity::kPreferred)) &&
      s_.recs[id].spread_group >= 0 && s_.GroupOnNode(id, n))
    return false;
  if (!MatchesNodeSelector(set.node_selector, node.labels)) return false;
  if (!Matches(set.affinity, node.labels)) return false;
  if (!set.spread.empty() && !spread_.Allows(id, ps, combo, n, !empty_cluster)) return false;
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || combo.empty()) return ToleratesAll(node.taints, set.tolerations);
  // Every flavor chosen for the pod set must have its labels hold (the pool checked one of
  // them), and its tolerations join the pod's.
  std::vector<Toleration> tolerations;
  const std::vector<Toleration>* tol = &set.tolerations;
  const ResolvedQueue& q = s_.queues[rec.cq];
  for (size_t g = 0; g < q.groups.size(); ++g) {
    const int32_t i = e_.flavors.FlavorIndex(id, combo, ps, static_cast<int>(g));
    if (i < 0) continue;
    const ResourceFlavor& f = s_.model.flavors[q.groups[g].flavors[i]];
    if (!MatchesNodeSelector(f.node_labels, node.labels)) return false;
    if (!f.tolerations.empty()) {
      if (tol != &tolerations) tolerations = set.tolerations;
      tolerations.insert(tolerations.end(), f.tolerations.begin(), f.tolerations.end());
      tol = &tolerations;
    }
  }
  return ToleratesAll(node.taints, *tol);
}

Placer::Preference Placer::PreferenceOf(WorkloadId id, int ps, NodeId n) const {
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  Preference p;
  p.affinity = PreferredAffinityScore(set.affinity, s_.model.nodes[n].labels);
  if (!set.spread.empty()) p.spread_penalty = spread_.Penalty(id, ps, n);
  return p;
}

NodeChoice Placer::FindNode(WorkloadId id, int ps, const Combo& combo) {
  const PodSet& set = s_.model.workloads[id].pod_sets[ps];
  bool soft_spread = false;
  for (const auto& c : set.spread) soft_spread = soft_spread || !c.required;
  if (set.affinity.preferred_terms.empty() && !soft_spread) return plugin_->FindNode(id, ps, combo);
  // The best preference among the nodes that can take the pod now; the plugin then chooses
  // among those only (its own order: binpack, spread, FGD), else among all.
  std::optional<Preference> best;
  for (NodeId n : s_.pools[e_.flavors.PoolFor(id, combo, ps)]) {
    if (!s_.cluster->Fits(n, set.requests) || !NodeEligible(id, ps, combo, n)) continue;
    Preference p = PreferenceOf(id, ps, n);
    if (!best || p.affinity > best->affinity ||
        (p.affinity == best->affinity && p.spread_penalty < best->spread_penalty))
      best = p;
  }
  if (!best) return {};
  preferred_ = best;
  NodeChoice c = plugin_->FindNode(id, ps, combo);
  preferred_.reset();
  return c.node >= 0 ? c : plugin_->FindNode(id, ps, combo);
}

bool Placer::PlaceMin(WorkloadId id, const std::vector<int32_t>& combo, size_t mark) {
  const Workload& w = s_.model.workloads[id];
  WorkloadRec& rec = s_.recs[id];
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    const int target = s_.MinOfSet(id, ps);
    if (rec.placed_per_set[ps] >= target) continue;
    if (w.pod_sets[ps].topology.present()) {
      // With the later pod sets of its topology group, if it has one: one domain for them all.
      std::vector<TopologyPlacer::SetCount> sets{
          {static_cast<int>(ps), target - rec.placed_per_set[ps]}};
      const std::string& group = w.pod_sets[ps].topology.group;
      for (size_t o = ps + 1; o < w.pod_sets.size() && !group.empty(); ++o) {
        const int more = s_.MinOfSet(id, o) - rec.placed_per_set[o];
        if (w.pod_sets[o].topology.group == group && more > 0)
          sets.push_back({static_cast<int>(o), more});
      }
      if (!e_.topology.PlaceSetsInTopology(id, sets, combo, mark)) return false;
      continue;
    }
    while (rec.placed_per_set[ps] < target) {
      NodeChoice n = FindNode(id, static_cast<int>(ps), combo);
      if (n.node < 0) {
        e_.statement.RollbackTo(mark);
        return false;
      }
      e_.statement.PlacePod(id, static_cast<int>(ps), n, combo);
    }
  }
  return true;
}

NodeId Placer::FindNodeAmong(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                             const std::vector<NodeId>& nodes) const {
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  const bool fullest = scorer_->FullestFirst();
  NodeId best = -1;
  int64_t best_key = 0;
  double best_score = 0;
  for (NodeId n : nodes) {
    if (!s_.cluster->Fits(n, req) || !NodeEligible(id, ps, combo, n)) continue;
    // Binpack: the fewest free GPUs (shares: the least room left); spread: the most.
    const int64_t share = s_.cluster->ShareMilli(n, req);
    int64_t key = share > 0 && s_.cluster->share_room(n) >= share
                      ? s_.cluster->share_room(n) - kMilliPerGpu
                      : s_.cluster->free_gpus(n);
    if (!fullest) key = -key;
    double score = scorer_->Score(s_.cluster->free(n), s_.model.nodes[n].allocatable, req);
    if (best < 0 || key < best_key || (key == best_key && score > best_score) ||
        (key == best_key && score == best_score && n < best)) {
      best = n;
      best_key = key;
      best_score = score;
    }
  }
  return best;
}

std::vector<PodPlacement> Placer::PlaceExtra(WorkloadId id) {
  const Workload& w = s_.model.workloads[id];
  WorkloadRec& rec = s_.recs[id];
  std::vector<PodPlacement> added;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    const PodSet& set = w.pod_sets[ps];
    // Topology: later pods join the domain of the pod set's first pods (required: only there).
    std::vector<NodeId> domain_nodes;
    bool have_domain = false;
    while (rec.placed_per_set[ps] < set.count) {
      auto need = e_.flavors.QuotaFor(id, rec.chosen, static_cast<int>(ps), set.requests);
      if (!e_.flavors.QuotaFits(rec.cq, need)) break;
      if (rec.non_preemptible && !e_.flavors.FitsNominal(rec.cq, need)) break;  // never borrows
      NodeChoice n;
      if (set.topology.present()) {
        if (rec.placed_per_set[ps] == 0) {
          const size_t mark = e_.statement.mark();
          if (!e_.topology.PlaceSetInTopology(id, static_cast<int>(ps), 1, rec.chosen, mark)) break;
          added.push_back(rec.placed.back().placement);
          continue;
        }
        if (!have_domain) {
          have_domain = true;
          std::vector<std::string> levels;
          int requested = 0;
          std::string why;
          if (e_.topology.TopologyLevels(id, static_cast<int>(ps), rec.chosen, levels, requested,
                                         why)) {
            const TopologyPlacer::DomainIndex& di = e_.topology.Domains(levels[requested]);
            int32_t d = -1;
            for (const auto& p : rec.placed)
              if (p.placement.pod_set == static_cast<int32_t>(ps))
                d = di.domain_of[p.placement.node];
            for (NodeId m : s_.pools[e_.flavors.PoolFor(id, rec.chosen, static_cast<int>(ps))])
              if (d >= 0 && di.domain_of[m] == d) domain_nodes.push_back(m);
          }
        }
        n.node = FindNodeAmong(id, static_cast<int>(ps), rec.chosen, domain_nodes);
        if (n.node < 0 && !set.topology.required)
          n = FindNode(id, static_cast<int>(ps), rec.chosen);
      } else {
        n = FindNode(id, static_cast<int>(ps), rec.chosen);
      }
      if (n.node < 0) break;
      e_.statement.PlacePod(id, static_cast<int>(ps), n, rec.chosen);
      added.push_back(rec.placed.back().placement);
    }
  }
  e_.statement.Commit();
  return added;
}

bool Placer::FitsNow(WorkloadId id, const std::vector<int32_t>& combo) {
  if (!e_.flavors.QuotaFits(s_.recs[id].cq, e_.flavors.MinQuotaNeed(id, combo))) return false;
  size_t mark = e_.statement.mark();
  if (!PlaceMin(id, combo, mark)) return false;
  e_.statement.RollbackTo(mark);
  return true;
}

bool Placer::FitsNowAny(WorkloadId id) {
  for (const auto& combo : s_.recs[id].combos)
    if (FitsNow(id, combo)) return true;
  return false;
}

}  // namespace tessera
