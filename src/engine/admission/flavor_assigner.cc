#include "engine/admission/flavor_assigner.h"

#include <algorithm>
#include <map>

namespace tessera {
namespace {
// Flavor combinations tried per workload (resource groups x flavors), a guard against blowup.
constexpr size_t kMaxFlavorCombos = 64;
}  // namespace

namespace {
// Walks the choices (last fastest) and appends every combination whose flavors are all
// defined (and, with `dedup`, not in `out` yet), until `out` holds `cap`; `choice_of` maps a
// choice to the slots it sets. False when stopped by the cap (or after 64 times `cap` steps:
// many undefined flavors).
bool Enumerate(const ResolvedQueue& q, size_t groups, size_t sets,
               const std::vector<std::vector<std::pair<int32_t, int32_t>>>& choice_of, size_t cap,
               bool dedup, std::vector<Combo>& out) {
  std::vector<int32_t> idx(choice_of.size(), 0);
  for (size_t steps = 0;; ++steps) {
    if (out.size() >= cap || steps >= 64 * cap) return false;
    Combo combo(groups * sets, -1);
    bool defined = true;
    for (size_t k = 0; k < idx.size(); ++k) {
      for (const auto& [ps, g] : choice_of[k]) {
        combo[ps * groups + g] = idx[k];
        if (q.groups[g].flavors[idx[k]] < 0) defined = false;
      }
    }
    if (defined && (!dedup || std::find(out.begin(), out.end(), combo) == out.end()))
      out.push_back(std::move(combo));
    int k = static_cast<int>(idx.size()) - 1;
    while (k >= 0) {
      const int g = choice_of[k].front().second;
      if (++idx[k] < static_cast<int>(q.groups[g].flavors.size())) break;
      idx[k] = 0;
      --k;
    }
    if (k < 0) return true;
  }
}
}  // namespace

std::vector<Combo> FlavorAssigner::FlavorCombos(WorkloadId id) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || rec.slots.empty()) return {{}};
  const ResolvedQueue& q = s_.queues[rec.cq];
  const size_t groups = q.groups.size();
  const size_t sets = s_.model.workloads[id].pod_sets.size();
  // One choice per (pod set, group), as Kueue assigns flavors pod set by pod set.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> per_slot;
  for (const auto& slot : rec.slots) per_slot.push_back({slot});
  std::vector<Combo> out;
  if (Enumerate(q, groups, sets, per_slot, kMaxFlavorCombos, false, out)) return out;
  // Too many: the combinations with one flavor per group for all pod sets join them.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> per_group;
  for (size_t g = 0; g < groups; ++g) {
    std::vector<std::pair<int32_t, int32_t>> c;
    for (const auto& slot : rec.slots)
      if (slot.second == static_cast<int32_t>(g)) c.push_back(slot);
    if (!c.empty()) per_group.push_back(std::move(c));
  }
  Enumerate(q, groups, sets, per_group, 2 * kMaxFlavorCombos, true, out);
  return out;
}

int32_t FlavorAssigner::FlavorIndex(WorkloadId id, const Combo& combo, int ps, int g) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || g < 0) return -1;
  const size_t i = static_cast<size_t>(ps) * s_.queues[rec.cq].groups.size() + g;
  return i < combo.size() ? combo[i] : -1;
}

int32_t FlavorAssigner::FlavorFor(WorkloadId id, const Combo& combo, int ps, ResourceId r) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0) return -1;
  const ResolvedQueue& q = s_.queues[rec.cq];
  const int g = q.group_of[r];
  const int32_t f = FlavorIndex(id, combo, ps, g);
  return f < 0 ? -1 : q.groups[g].flavors[f];
}

std::vector<int32_t> FlavorAssigner::FlavorIds(WorkloadId id, const Combo& combo) const {
  std::vector<int32_t> out(combo.size(), -1);
  const int32_t cq = s_.recs[id].cq;
  if (cq < 0) return out;
  const ResolvedQueue& q = s_.queues[cq];
  for (size_t i = 0; i < combo.size(); ++i)
    if (combo[i] >= 0) out[i] = q.groups[i % q.groups.size()].flavors[combo[i]];
  return out;
}

Need FlavorAssigner::QuotaFor(WorkloadId id, const Combo& combo, int ps,
                              const Resources& req) const {
  Need out;
  if (s_.recs[id].cq < 0) return out;
  for (int r = 0; r < kMaxResources; ++r) {
    if (req[r] == 0) continue;
    int32_t f = FlavorFor(id, combo, ps, r);
    if (f >= 0) out.emplace_back(MakeFR(f, r), req[r] * QuotaScale(r));
  }
  // A share counts its milli against nvidia.com/gpu (kept in milli-GPUs) where its
  // ClusterQueue says so (tessera.dev/shares-in-gpu-quota), besides any gpu-milli quota.
  if (s_.model.cluster_queues[s_.recs[id].cq].shares_in_gpu_quota && req[kGpuMilli] > 0 &&
      req[kGpu] == 0) {
    const int32_t f = FlavorFor(id, combo, ps, kGpu);
    if (f >= 0) {
      out.emplace_back(MakeFR(f, kGpu), req[kGpuMilli]);
      std::sort(out.begin(), out.end());
    }
  }
  return out;
}

const Need& FlavorAssigner::MinQuotaNeed(WorkloadId id, const Combo& combo) const {
  const WorkloadRec& rec = s_.recs[id];
  // Nothing placed (every pending workload): the need computed at Resolve.
  if (rec.placed.empty() && rec.target_per_set.empty() &&
      rec.min_need.size() == rec.combos.size()) {
    for (size_t i = 0; i < rec.combos.size(); ++i)
      if (&rec.combos[i] == &combo || rec.combos[i] == combo) return rec.min_need[i];
  }
  static thread_local Need scratch;
  scratch = ComputeMinQuotaNeed(id, combo);
  return scratch;
}

Need FlavorAssigner::ComputeMinQuotaNeed(WorkloadId id, const Combo& combo) const {
  const Workload& w = s_.model.workloads[id];
  const WorkloadRec& rec = s_.recs[id];
  Need sum;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    int need = s_.MinOfSet(id, ps) - rec.placed_per_set[ps];
    if (need <= 0) continue;
    for (const auto& [fr, q] : QuotaFor(id, combo, static_cast<int>(ps), w.pod_sets[ps].requests)) {
      auto it =
          std::find_if(sum.begin(), sum.end(), [fr = fr](const auto& e) { return e.first == fr; });
      if (it == sum.end()) {
        sum.emplace_back(fr, q * need);
      } else {
        it->second += q * need;
      }
    }
  }
  std::sort(sum.begin(), sum.end());
  return sum;
}

bool FlavorAssigner::QuotaFits(int32_t cq,
                               const std::vector<std::pair<FlavorResource, int64_t>>& need) const {
  if (cq < 0) return true;
  for (const auto& [fr, q] : need)
    if (q > s_.quota->Available(cq, fr)) return false;
  return true;
}

bool FlavorAssigner::FitsNominal(int32_t cq, const Need& need) const {
  if (cq < 0) return true;
  for (const auto& [fr, q] : need)
    if (s_.quota->usage(cq, fr) + q > s_.quota->subtree_quota(cq, fr)) return false;
  return true;
}

std::optional<ReasonPart> FlavorAssigner::QuotaShortfall(WorkloadId id, const Need& need) const {
  int32_t cq = s_.recs[id].cq;
  for (const auto& [fr, amount] : need) {
    int64_t avail = s_.quota->Available(cq, fr);
    if (amount <= avail) continue;
    ReasonPart p;
    p.quota = true;
    p.fr = fr;
    p.amount = amount;
    p.avail = avail;
    p.usage = s_.quota->usage(cq, fr);
    p.nominal = s_.quota->nominal(cq, fr);
    p.borrowing_limit = s_.quota->borrowing_limit(cq, fr);
    return p;
  }
  return std::nullopt;
}

int FlavorAssigner::PoolFor(WorkloadId id, const Combo& combo, int ps) const {
  // The flavor of its GPUs if any (it narrows most), else any flavor chosen for it, else all.
  int32_t f = FlavorFor(id, combo, ps, kGpu);
  if (f < 0 && s_.recs[id].cq >= 0) {
    const ResolvedQueue& q = s_.queues[s_.recs[id].cq];
    for (size_t g = 0; g < q.groups.size() && f < 0; ++g) {
      const int32_t i = FlavorIndex(id, combo, ps, static_cast<int>(g));
      if (i >= 0) f = q.groups[g].flavors[i];
    }
  }
  return f < 0 ? 0 : f + 1;
}

std::vector<std::pair<FlavorResource, int64_t>> FlavorAssigner::UsageOf(WorkloadId id,
                                                                        int sign) const {
  std::map<FlavorResource, int64_t> sum;
  for (const auto& p : s_.recs[id].placed)
    for (const auto& [fr, q] : p.quota) sum[fr] += sign * q;
  return {sum.begin(), sum.end()};
}

double FlavorAssigner::ShareOf(int32_t cq,
                               const std::vector<std::pair<FlavorResource, int64_t>>& delta) const {
  return s_.quota->DominantShare(cq, delta, s_.model.cluster_queues[cq].fair_weight);
}
int FlavorAssigner::BorrowHeight(int32_t cq, const Need& need) const {
  const QuotaTree& qt = *s_.quota;
  if (height_.empty()) {
    height_.assign(qt.num_nodes(), 0);
    for (int n = 0; n < qt.num_nodes(); ++n) {
      if (!qt.is_cluster_queue(n)) continue;
      for (int c = n, p = qt.parent(n); p >= 0; c = p, p = qt.parent(p))
        height_[p] = std::max(height_[p], height_[c] + 1);
    }
  }
  if (cq < 0) return 0;
  int height = 0;
  for (const auto& [fr, q] : need) {
    if (qt.usage(cq, fr) + q <= qt.subtree_quota(cq, fr)) continue;
    int64_t remaining = q - std::max<int64_t>(0, qt.guaranteed(cq, fr) - qt.usage(cq, fr));
    int h = 0;
    for (int n = qt.parent(cq); n >= 0; n = qt.parent(n)) {
      h = height_[n];
      if (qt.usage(n, fr) + remaining <= qt.subtree_quota(n, fr)) break;
      remaining -= std::max<int64_t>(0, qt.guaranteed(n, fr) - qt.usage(n, fr));
    }
    height = std::max(height, h);
  }
  return height;
}

bool FlavorAssigner::WouldBorrow(WorkloadId id) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || rec.combos.empty()) return false;
  const Combo* combo = &rec.combos[0];
  for (const Combo& c : rec.combos)
    if (QuotaFits(rec.cq, MinQuotaNeed(id, c))) {
      combo = &c;
      break;
    }
  for (const auto& [fr, q] : MinQuotaNeed(id, *combo))
    if (s_.quota->usage(rec.cq, fr) + q > s_.quota->subtree_quota(rec.cq, fr)) return true;
  return false;
}

}  // namespace tessera
