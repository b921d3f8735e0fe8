// Scheduler::Restore: a workload admitted at placements that already exist (pods bound before
// a restart, or by another scheduler). Everything is checked before anything changes.
#include "engine/restore.h"

#include <algorithm>

#include "engine/engine.h"
#include "engine/reasons.h"
#include "fmt/format.h"

namespace tessera {
namespace {

// Pod sets, nodes and GPU indices that exist and match the workload.
absl::Status CheckPods(const EngineState& s, const Workload& w,
                       const std::vector<PodPlacement>& pods) {
  // Check everything before changing anything.
  std::vector<int32_t> per_set(w.pod_sets.size(), 0);
  for (const PodPlacement& p : pods) {
    if (p.pod_set < 0 || p.pod_set >= static_cast<int32_t>(w.pod_sets.size()))
      return absl::InvalidArgumentError(fmt::format("{}: no pod set {}", w.Key(), p.pod_set));
    if (p.node < 0 || p.node >= static_cast<NodeId>(s.model.nodes.size()))
      return absl::InvalidArgumentError(fmt::format("{}: no node {}", w.Key(), p.node));
    const PodSet& set = w.pod_sets[p.pod_set];
    if (++per_set[p.pod_set] > set.count)
      return absl::InvalidArgumentError(
          fmt::format("{}: more pods than pod set {} has", w.Key(), set.name));
    const int64_t devices = ClusterState::IsShare(set.requests) ? 1 : set.requests[kGpu];
    if (!p.gpus.empty() && p.mig_starts.empty() && static_cast<int64_t>(p.gpus.size()) != devices)
      return absl::InvalidArgumentError(
          fmt::format("{}: {} GPU indices for a pod asking {}", w.Key(), p.gpus.size(), devices));
    for (int32_t g : p.gpus)
      if (g < 0 || g >= s.model.nodes[p.node].gpu_count())
        return absl::InvalidArgumentError(
            fmt::format("{}: node {} has no GPU {}", w.Key(), s.model.nodes[p.node].name, g));
  }
  return absl::OkStatus();
}

// The flavor combination, pod set by pod set: for each resource group a pod set asks from, the
// first flavor whose node labels hold on every node its pods use (a pod set without pods: the
// first defined flavor); the quota of all the pods must be within what the ClusterQueue may use.
absl::Status ChooseCombo(Engine& e, WorkloadId id, const std::vector<PodPlacement>& pods,
                         Combo& combo) {
  const EngineState& s = e.st;
  const Workload& w = s.model.workloads[id];
  const WorkloadRec& rec = s.recs[id];
  if (rec.cq >= 0) {
    if (!rec.unresolved.empty())
      return absl::FailedPreconditionError(fmt::format("{}: {}", w.Key(), rec.unresolved));
    const ResolvedQueue& q = s.queues[rec.cq];
    combo.clear();
    if (!rec.slots.empty()) combo.assign(q.groups.size() * w.pod_sets.size(), -1);
    for (const auto& [ps, g] : rec.slots) {
      const auto& flavors = q.groups[g].flavors;
      for (size_t f = 0; f < flavors.size(); ++f) {
        if (flavors[f] < 0) continue;
        bool ok = true;
        for (const PodPlacement& p : pods)
          ok =
              ok && (p.pod_set != ps || MatchesNodeSelector(s.model.flavors[flavors[f]].node_labels,
                                                            s.model.nodes[p.node].labels));
        if (ok) {
          combo[ps * q.groups.size() + g] = static_cast<int32_t>(f);
          break;
        }
      }
      if (combo[ps * q.groups.size() + g] < 0)
        return absl::FailedPreconditionError(
            fmt::format("{}: no flavor of ClusterQueue {} matches the nodes the pods of {} run on",
                        w.Key(), s.model.cluster_queues[rec.cq].name, w.pod_sets[ps].name));
    }
    std::vector<std::pair<FlavorResource, int64_t>> total;
    for (const PodPlacement& p : pods)
      for (const auto& fq :
           e.flavors.QuotaFor(id, combo, p.pod_set, w.pod_sets[p.pod_set].requests))
        total.push_back(fq);
    std::sort(total.begin(), total.end());
    std::vector<std::pair<FlavorResource, int64_t>> merged;
    for (const auto& [fr, q] : total) {
      if (!merged.empty() && merged.back().first == fr) {
        merged.back().second += q;
      } else {
        merged.emplace_back(fr, q);
      }
    }
    if (!e.flavors.QuotaFits(rec.cq, merged))
      return absl::FailedPreconditionError(
          fmt::format("{}: running pods exceed what ClusterQueue {} may use: {}", w.Key(),
                      s.model.cluster_queues[rec.cq].name,
                      FormatQuotaPart(s, id, *e.flavors.QuotaShortfall(id, merged))));
  }
  return absl::OkStatus();
}

// Nodes and devices, pod by pod; a pod that does not fit rolls back those before it. Pods
// without GPU indices get the lowest free ones.
absl::Status ChargeNodes(EngineState& s, WorkloadId id, std::vector<PodPlacement>& pods) {
  const Workload& w = s.model.workloads[id];
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodPlacement& p = pods[i];
    const Resources& req = w.pod_sets[p.pod_set].requests;
    const int32_t* owners = s.cluster->gpu_owners(p.node);
    const int32_t* used = s.cluster->gpu_used_milli(p.node);
    bool ok = s.cluster->Fits(p.node, req);
    const int64_t share = s.cluster->ShareMilli(p.node, req);
    if (!p.mig_starts.empty()) {
      ok = ok && s.cluster->MigPlacementFree(p.node, req, p.gpus, p.mig_starts);
    } else {
      for (int32_t g : p.gpus) {
        if (share > 0) {
          ok = ok && owners[g] < 0 && used[g] + share <= kMilliPerGpu;
        } else {
          ok = ok && owners[g] == -1;
        }
      }
    }
    if (!ok) {
      for (size_t j = i; j-- > 0;)
        s.cluster->Release(pods[j].node, w.pod_sets[pods[j].pod_set].requests, pods[j].gpus,
                           pods[j].mig_starts);
      return absl::FailedPreconditionError(fmt::format(
          "{}: node {} cannot hold pod {} of {} (free {}{})", w.Key(), s.model.nodes[p.node].name,
          i, w.pod_sets[p.pod_set].name, s.cluster->free(p.node).ToString(),
          p.gpus.empty() ? "" : ", or a GPU asked for is taken"));
    }
    if (p.gpus.empty()) {
      pods[i].gpus = s.cluster->Assign(p.node, req, id, &pods[i].mig_starts);
    } else {
      s.cluster->AssignExact(p.node, req, p.gpus, id, p.mig_starts);
    }
    // DRA claims are allocated again on the pod's node (docs/dra.md).
    if (w.pod_sets[p.pod_set].claims.empty()) continue;
    pods[i].dra = s.dra->Allocate(w, p.pod_set, p.node);
    if (pods[i].dra.empty()) {
      const std::string why = s.dra->Reason(w, p.pod_set, p.node);
      for (size_t j = i + 1; j-- > 0;) {
        s.cluster->Release(pods[j].node, w.pod_sets[pods[j].pod_set].requests, pods[j].gpus,
                           pods[j].mig_starts);
        if (!pods[j].dra.empty()) s.dra->Release(w, pods[j].pod_set, pods[j].dra);
      }
      return absl::FailedPreconditionError(
          fmt::format("{}: the DRA claims of pod {} of {} cannot be allocated on node {}: {}",
                      w.Key(), i, w.pod_sets[p.pod_set].name, s.model.nodes[p.node].name, why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RestoreWorkload(Engine& e, WorkloadId id, std::vector<PodPlacement> pods, double now) {
  EngineState& s = e.st;
  if (id < 0 || id >= static_cast<WorkloadId>(s.status.size()))
    return absl::InvalidArgumentError("no such workload");
  const Workload& w = s.model.workloads[id];
  WorkloadStatus& st = s.status[id];
  WorkloadRec& rec = s.recs[id];
  if (st.state != WorkloadState::kInactive && st.state != WorkloadState::kPending)
    return absl::FailedPreconditionError(
        fmt::format("{} is {}: only a workload not yet admitted can be restored", w.Key(),
                    WorkloadStateName(st.state)));
  if (pods.empty()) return absl::InvalidArgumentError(fmt::format("{}: no pods", w.Key()));
  if (auto st = CheckPods(s, w, pods); !st.ok()) return st;
  Combo combo;
  if (auto st = ChooseCombo(e, id, pods, combo); !st.ok()) return st;
  if (auto st = ChargeNodes(s, id, pods); !st.ok()) return st;
  if (st.state == WorkloadState::kPending) e.pending.Dequeue(id);
  if (st.state == WorkloadState::kInactive) {
    st.created = now;
    rec.order_created = now;
    st.cluster_queue = rec.cq;
  }
  for (const PodPlacement& p : pods) {
    const Resources& req = w.pod_sets[p.pod_set].requests;
    PlacedPod pp;
    pp.placement.pod_set = p.pod_set;
    pp.placement.index = rec.placed_per_set[p.pod_set]++;
    pp.placement.node = p.node;
    pp.placement.gpus = p.gpus;  // assigned above
    pp.placement.mig_starts = p.mig_starts;
    pp.quota = e.flavors.QuotaFor(id, combo, p.pod_set, req);
    for (const auto& [fr, q] : pp.quota) s.quota->AddUsage(rec.cq, fr, q);
    rec.gpus_placed += req[kGpu];
    if (rec.spread_group >= 0) ++s.group_nodes[rec.spread_group][p.node];
    rec.placed.push_back(std::move(pp));
  }
  rec.chosen = combo;
  st.state = WorkloadState::kAdmitted;
  st.reason.clear();
  s.recs[id].why.clear();
  s.recs[id].reason_stale = false;
  st.admitted_at = now;
  s.recs[id].admitted_in = now;
  e.waits.OnAdmitted(id, now);
  e.reservations.OnAdmitted(id);
  st.pods.clear();
  for (const auto& p : rec.placed) st.pods.push_back(p.placement);
  st.flavors = e.flavors.FlavorIds(id, combo);
  if (static_cast<int>(rec.placed.size()) < w.TotalPods()) s.partial.insert(id);
  // Below its minimum: completed or evicted by the next cycles (stale_gangs.h).
  if (static_cast<int>(rec.placed.size()) < w.MinPods()) e.stale_gangs.Track(id);
  if (rec.cq >= 0) {
    s.admitted_by_cq[rec.cq].insert({rec.priority, id});
  } else {
    s.admitted_without_queue.insert(id);
  }
  ++s.admit_epoch;
  return absl::OkStatus();
}

}  // namespace tessera
