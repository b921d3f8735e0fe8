#include "engine/admission/flavor_assigner.h"

#include <algorithm>
#include <map>

namespace tessera {
namespace {
// Flavor combinations tried per workload (resource groups x flavors), a guard against blowup.
constexpr int kMaxFlavorCombos = 64;
}  // namespace

std::vector<std::vector<int32_t>> FlavorAssigner::FlavorCombos(WorkloadId id) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || rec.groups_touched.empty()) return {{}};
  const ResolvedQueue& q = s_.queues[rec.cq];
  std::vector<std::vector<int32_t>> out;
  std::vector<int32_t> idx(rec.groups_touched.size(), 0);
  while (static_cast<int>(out.size()) < kMaxFlavorCombos) {
    std::vector<int32_t> combo(q.groups.size(), -1);
    bool defined = true;
    for (size_t k = 0; k < idx.size(); ++k) {
      int g = rec.groups_touched[k];
      combo[g] = idx[k];
      if (q.groups[g].flavors[idx[k]] < 0) defined = false;
    }
    if (defined) out.push_back(std::move(combo));
    // Next combination, last group fastest.
    int k = static_cast<int>(idx.size()) - 1;
    while (k >= 0) {
      int g = rec.groups_touched[k];
      if (++idx[k] < static_cast<int>(q.groups[g].flavors.size())) break;
      idx[k] = 0;
      --k;
    }
    if (k < 0) break;
  }
  return out;
}

int32_t FlavorAssigner::FlavorFor(WorkloadId id, const std::vector<int32_t>& combo,
                                  ResourceId r) const {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0) return -1;
  const ResolvedQueue& q = s_.queues[rec.cq];
  int g = q.group_of[r];
  if (g < 0 || combo.empty() || combo[g] < 0) return -1;
  return q.groups[g].flavors[combo[g]];
}

std::vector<std::pair<FlavorResource, int64_t>> FlavorAssigner::QuotaFor(
    WorkloadId id, const std::vector<int32_t>& combo, const Resources& req) const {
  std::vector<std::pair<FlavorResource, int64_t>> out;
  if (s_.recs[id].cq < 0) return out;
  for (int r = 0; r < kMaxResources; ++r) {
    if (req[r] == 0) continue;
    int32_t f = FlavorFor(id, combo, r);
    if (f >= 0) out.emplace_back(MakeFR(f, r), req[r]);
  }
  return out;
}

const Need& FlavorAssigner::MinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const {
  const WorkloadRec& rec = s_.recs[id];
  // Nothing placed (every pending workload): the need computed at Resolve.
  if (rec.placed.empty() && rec.target_pods < 0 && rec.min_need.size() == rec.combos.size()) {
    for (size_t i = 0; i < rec.combos.size(); ++i)
      if (&rec.combos[i] == &combo || rec.combos[i] == combo) return rec.min_need[i];
  }
  static thread_local Need scratch;
  scratch = ComputeMinQuotaNeed(id, combo);
  return scratch;
}

Need FlavorAssigner::ComputeMinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const {
  const Workload& w = s_.model.workloads[id];
  const WorkloadRec& rec = s_.recs[id];
  Need sum;
  int remaining = s_.MinPods(id);
  for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
    int need = std::max(0, std::min(w.pod_sets[ps].count, remaining) - rec.placed_per_set[ps]);
    remaining -= w.pod_sets[ps].count;
    if (need <= 0) continue;
    for (const auto& [fr, q] : QuotaFor(id, combo, w.pod_sets[ps].requests)) {
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

int FlavorAssigner::PoolFor(WorkloadId id, const std::vector<int32_t>& combo) const {
  // The flavor of the GPUs if any (it narrows most), else any flavor chosen, else all nodes.
  int32_t f = FlavorFor(id, combo, kGpu);
  if (f < 0) {
    for (size_t g = 0; g < combo.size(); ++g) {
      if (combo[g] >= 0) {
        f = s_.queues[s_.recs[id].cq].groups[g].flavors[combo[g]];
        break;
      }
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
