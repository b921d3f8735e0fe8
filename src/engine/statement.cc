#include "engine/statement.h"

#include "engine/engine.h"

namespace tessera {

Statement::Statement(Engine& e) : e_(e), s_(e.st) {}

void Statement::PlacePod(WorkloadId id, int ps, NodeChoice choice, const Combo& combo) {
  const NodeId node = choice.node;
  WorkloadRec& rec = s_.recs[id];
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  PlacedPod p;
  p.placement.pod_set = ps;
  p.placement.index = rec.placed_per_set[ps]++;
  p.placement.node = node;
  bool picked = choice.gpus != 0;
  const int64_t share = s_.cluster->ShareMilli(node, req);
  if (picked) {
    const int32_t* owners = s_.cluster->gpu_owners(node);
    const int32_t* used = s_.cluster->gpu_used_milli(node);
    for (int g = 0; g < s_.cluster->gpu_count(node); ++g) {
      if (!(choice.gpus >> g & 1u)) continue;
      p.placement.gpus.push_back(g);
      picked =
          picked && (share ? owners[g] < 0 && used[g] + share <= kMilliPerGpu : owners[g] == -1);
    }
    picked = picked && static_cast<int64_t>(p.placement.gpus.size()) == (share ? 1 : req[kGpu]);
  }
  if (picked) {
    s_.cluster->AssignExact(node, req, p.placement.gpus, id);
  } else {
    p.placement.gpus.clear();
    p.placement.gpus = s_.cluster->Assign(node, req, id, &p.placement.mig_starts);
  }
  const Workload& w = s_.model.workloads[id];
  if (!w.pod_sets[ps].claims.empty()) p.placement.dra = s_.dra->Allocate(w, ps, node);
  p.quota = e_.flavors.QuotaFor(id, combo, ps, req);
  for (const auto& [fr, q] : p.quota) s_.quota->AddUsage(rec.cq, fr, q);
  rec.gpus_placed += req[kGpu];
  if (rec.spread_group >= 0) ++s_.group_nodes[rec.spread_group][node];
  rec.placed.push_back(std::move(p));
  undo_.push_back(id);
}

void Statement::Unaccount(WorkloadId id, const PlacedPod& p) {
  WorkloadRec& rec = s_.recs[id];
  const Resources& req = s_.model.workloads[id].pod_sets[p.placement.pod_set].requests;
  s_.cluster->Release(p.placement.node, req, p.placement.gpus, p.placement.mig_starts);
  if (!p.placement.dra.empty())
    s_.dra->Release(s_.model.workloads[id], p.placement.pod_set, p.placement.dra);
  for (const auto& [fr, q] : p.quota) s_.quota->AddUsage(rec.cq, fr, -q);
  rec.gpus_placed -= req[kGpu];
  if (rec.spread_group >= 0) --s_.group_nodes[rec.spread_group][p.placement.node];
  --rec.placed_per_set[p.placement.pod_set];
}

void Statement::UnplaceLast(WorkloadId id) {
  WorkloadRec& rec = s_.recs[id];
  Unaccount(id, rec.placed.back());
  rec.placed.pop_back();
}

void Statement::RollbackTo(size_t mark) {
  while (undo_.size() > mark) {
    UnplaceLast(undo_.back());
    undo_.pop_back();
  }
}

std::vector<PlacedPod> Statement::Evict(WorkloadId id, bool announce) {
  // Last pod first, as UnplaceLast would; the pods move out whole (no copy: a look ahead evicts
  // and reinstates thousands of workloads a cycle).
  WorkloadRec& rec = s_.recs[id];
  for (auto it = rec.placed.rbegin(); it != rec.placed.rend(); ++it) Unaccount(id, *it);
  std::vector<PlacedPod> pods = std::move(rec.placed);
  rec.placed.clear();
  if (!announce) return pods;
  ++s_.release_epoch;
  e_.pending.MarkRootReleased(rec.cq);
  return pods;
}

void Statement::Reinstate(WorkloadId id, std::vector<PlacedPod> pods) {
  WorkloadRec& rec = s_.recs[id];
  for (const auto& p : pods) {
    const Resources& req = s_.model.workloads[id].pod_sets[p.placement.pod_set].requests;
    s_.cluster->AssignExact(p.placement.node, req, p.placement.gpus, id, p.placement.mig_starts);
    if (!p.placement.dra.empty())
      s_.dra->Take(s_.model.workloads[id], p.placement.pod_set, p.placement.node,
                   p.placement.dra);
    for (const auto& [fr, q] : p.quota) s_.quota->AddUsage(rec.cq, fr, q);
    rec.gpus_placed += req[kGpu];
    if (rec.spread_group >= 0) ++s_.group_nodes[rec.spread_group][p.placement.node];
    ++rec.placed_per_set[p.placement.pod_set];
  }
  if (rec.placed.empty()) {
    rec.placed = std::move(pods);
  } else {
    for (auto& p : pods) rec.placed.push_back(std::move(p));
  }
}

}  // namespace tessera
