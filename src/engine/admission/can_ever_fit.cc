// Admission::CanEverFit: the verdict at submission. A workload whose minCount pods could not
// be admitted even with its queue's cohort idle, or one of whose pod sets no node could hold
// even empty, is rejected at once with the reason, rather than left pending forever.
#include "engine/admission/admission.h"
#include "engine/engine.h"
#include "engine/placement/node_exclusion.h"
#include "fmt/format.h"

namespace tessera {

std::vector<Toleration> Admission::FlavorTolerations(WorkloadId id, const Combo& combo,
                                                     int ps) const {
  std::vector<Toleration> out;
  const int32_t cq = s_.recs[id].cq;
  if (cq < 0) return out;
  const ResolvedQueue& q = s_.queues[cq];
  for (size_t g = 0; g < q.groups.size(); ++g) {
    const int32_t i = e_.flavors.FlavorIndex(id, combo, ps, static_cast<int>(g));
    if (i < 0) continue;
    const ResourceFlavor& f = s_.model.flavors[q.groups[g].flavors[i]];
    out.insert(out.end(), f.tolerations.begin(), f.tolerations.end());
  }
  return out;
}

std::string PodSetShapeProblem(const PodSet& ps) {
  if (ClusterState::IsShare(ps.requests) && ps.requests[kGpu] > 0)
    return fmt::format("pod set {} asks for whole GPUs and a GPU share at once", ps.name);
  if (ps.requests[kGpuMilli] > 0 && ps.requests[kGpuMemory] > 0)
    return fmt::format("pod set {} asks for a GPU share by milli and by memory at once", ps.name);
  if (ps.requests[kGpuMilli] > kMilliPerGpu)
    return fmt::format(
        "pod set {} asks for {} {}: a share is at most 1000 (one device); more must be whole "
        "GPUs",
        ps.name, ps.requests[kGpuMilli], kGpuMilliResourceName);
  return "";
}

std::string Admission::CanEverFit(WorkloadId id) const {
  const Workload& w = s_.model.workloads[id];
  const WorkloadRec& rec = s_.recs[id];
  if (w.pod_sets.empty() || w.TotalPods() == 0) return "";  // nothing to place: admits at once
  for (const PodSet& ps : w.pod_sets)
    if (std::string why = PodSetShapeProblem(ps); !why.empty()) return why;
  // Quota: the min pods' needs within what the queue could ever get, in some flavor combo.
  const auto& combos = s_.recs[id].combos;
  std::string quota_reason;
  bool any_quota = rec.cq < 0;
  for (const auto& combo : combos) {
    if (rec.cq < 0) break;
    auto need = e_.flavors.MinQuotaNeed(id, combo);
    bool ok = true;
    for (const auto& [fr, q] : need) {
      int64_t max = s_.quota->MaxPossible(rec.cq, fr);
      // A non-preemptible workload never borrows: its queue's nominal quota is all it can get.
      const bool nominal = rec.non_preemptible && s_.quota->subtree_quota(rec.cq, fr) < max;
      if (nominal) max = s_.quota->subtree_quota(rec.cq, fr);
      if (q > max) {
        ok = false;
        if (quota_reason.empty()) {
          quota_reason = fmt::format(
              "needs {} {} in flavor {} but ClusterQueue {} can get at most {} {}",
              FormatQuota(ResourceOf(fr), q), ResourceName(ResourceOf(fr)),
              s_.model.flavors[FlavorOf(fr)].name, s_.model.cluster_queues[rec.cq].name,
              FormatQuota(ResourceOf(fr), max),
              nominal ? "for a non-preemptible workload (its nominal quota: it never borrows)"
                      : "even with its cohort idle");
        }
        break;
      }
    }
    if (ok) {
      any_quota = true;
      break;
    }
  }
  if (!any_quota) return quota_reason;
  // Nodes: every pod set with pods in the min set must fit on some empty eligible node.
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    if (w.MinOfSet(ps) <= 0) continue;
    bool found = false;
    for (const auto& combo : combos) {
      int pool = e_.flavors.PoolFor(id, combo, static_cast<int>(ps));
      for (NodeId n : s_.pools[pool]) {
        if (w.pod_sets[ps].requests.FitsIn(s_.model.nodes[n].allocatable) &&
            s_.cluster->ShareMilli(n, w.pod_sets[ps].requests) <= kMilliPerGpu &&
            e_.placer.NodeEligible(id, static_cast<int>(ps), combo, n, false,
                                   /*empty_cluster=*/true)) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) {
      // A DoNotSchedule topology key that no node of the pools has says more than the size.
      for (const auto& c : w.pod_sets[ps].spread) {
        if (!c.required) continue;
        const auto& di = e_.topology.Domains(c.topology_key);
        bool any = false;
        for (const auto& combo : combos)
          for (NodeId n : s_.pools[e_.flavors.PoolFor(id, combo, static_cast<int>(ps))])
            any = any || di.domain_of[n] >= 0;
        if (!any)
          return fmt::format(
              "pod set {} spreads over {} (topologySpreadConstraints, DoNotSchedule) and no "
              "node it may use has that label",
              w.pod_sets[ps].name, c.topology_key);
      }
      // A nodeSelector, affinity or taint that rules nodes out says more than the size: which
      // rule excluded how many nodes (of the first flavor combination's pool).
      const Combo none;
      const Combo& combo = combos.empty() ? none : combos.front();
      if (std::string why =
              ExplainNodeExclusions(s_.model, w.pod_sets[ps],
                                    s_.pools[e_.flavors.PoolFor(id, combo, static_cast<int>(ps))],
                                    FlavorTolerations(id, combo, static_cast<int>(ps)));
          !why.empty())
        return fmt::format("pod set {}: no node can ever take a pod; {}", w.pod_sets[ps].name, why);
      // Nodes that would take the pod but for its DRA claims: why the first cannot.
      for (NodeId n : s_.pools[e_.flavors.PoolFor(id, combo, static_cast<int>(ps))]) {
        if (w.pod_sets[ps].claims.empty()) break;
        if (!w.pod_sets[ps].requests.FitsIn(s_.model.nodes[n].allocatable) ||
            !e_.placer.NodeEligible(id, static_cast<int>(ps), combo, n, false, true,
                                    /*devices=*/false))
          continue;
        return fmt::format(
            "pod set {}: its DRA claims can never be allocated on any node (on "
            "node {}: {})",
            w.pod_sets[ps].name, s_.model.nodes[n].name,
            s_.dra->Reason(w, static_cast<int>(ps), n, /*empty_node=*/true));
      }
      Resources shown = w.pod_sets[ps].requests;
      shown[kPods] = 0;  // every pod asks for one; saying so adds nothing
      return fmt::format("pod set {} needs {} per pod and no node can ever hold that",
                         w.pod_sets[ps].name, shown.ToString());
    }
  }
  return "";
}

}  // namespace tessera
