// Preemptor::Candidates: the workloads a preemptor's ClusterQueue policy allows it to evict,
// in the order the victim search tries them.
#include <algorithm>
#include <limits>

#include "engine/engine.h"
#include "engine/preemption/preemptor.h"

namespace tessera {

std::vector<WorkloadId> Preemptor::Candidates(WorkloadId id, const Combo& combo, double now) const {
  const WorkloadRec& rec = s_.recs[id];
  const ClusterQueue& cq = s_.model.cluster_queues[rec.cq];
  const PreemptionConfig& pc = cq.preemption;
  const Need need = e_.flavors.MinQuotaNeed(id, combo);
  // Would the preemptor borrow? Then, as in Kueue, it may only take from its own queue (or
  // from others under borrowWithinCohort).
  bool borrows = false;
  for (const auto& [fr, q] : need)
    if (s_.quota->usage(rec.cq, fr) + q > s_.quota->subtree_quota(rec.cq, fr)) borrows = true;
  bool fair = s_.model.config.fair_sharing;
  std::vector<WorkloadId> out;
  if (!s_.HasPreemptionPolicy(rec.cq)) return out;
  const bool other_queues =
      !cq.cohort.empty() && (pc.reclaim_within_cohort != ReclaimPolicy::kNever ||
                             pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever);
  // Each queue's admitted workloads are ordered by priority: the policy allows a prefix of each,
  // up to `limit` (inclusive when `inclusive`; with `equal_if_newer`, equal priority only if
  // created after the preemptor).
  struct Slice {
    int32_t q;
    int32_t limit;
    bool inclusive;
    bool equal_if_newer;
  };
  constexpr int32_t kTop = std::numeric_limits<int32_t>::max();
  std::vector<Slice> slices;
  switch (pc.within_cluster_queue) {
    case WithinClusterQueuePolicy::kNever:
      break;
    case WithinClusterQueuePolicy::kLowerPriority:
      slices.push_back({rec.cq, rec.priority, false, false});
      break;
    case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
      slices.push_back({rec.cq, rec.priority, false, true});
      break;
  }
  if (other_queues) {
    for (int32_t q : s_.cqs_by_root[s_.quota->root(rec.cq)]) {
      if (q == rec.cq || s_.admitted_by_cq[q].empty()) continue;
      // Only workloads of queues that borrow what the preemptor needs are reclaimable.
      bool victim_borrows = false;
      for (const auto& [fr, amount] : need)
        if (s_.quota->IsBorrowing(q, fr)) victim_borrows = true;
      if (!victim_borrows) continue;
      if (!borrows || fair) {
        if (pc.reclaim_within_cohort == ReclaimPolicy::kLowerPriority)
          slices.push_back({q, rec.priority, false, false});
        if (pc.reclaim_within_cohort == ReclaimPolicy::kAny)
          slices.push_back({q, kTop, true, false});
      } else if (pc.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority) {
        if (pc.max_priority_threshold && *pc.max_priority_threshold < rec.priority) {
          slices.push_back({q, *pc.max_priority_threshold, true, false});
        } else {
          slices.push_back({q, rec.priority, false, false});
        }
      }
    }
  }
  // A cheap bound before walking any list: all that the queues hold, plus what is free of
  // quota, must cover the need (most preemptors that cannot win stop here).
  for (const auto& [fr, amount] : need) {
    int64_t could = s_.quota->Available(rec.cq, fr);
    for (const Slice& sl : slices) could += s_.quota->usage(sl.q, fr);
    if (could < amount) return out;
  }
  for (const Slice& sl : slices) {
    for (const auto& [prio, v] : s_.admitted_by_cq[sl.q]) {
      if (prio > sl.limit) break;
      if (prio == sl.limit && !sl.inclusive) {
        if (!sl.equal_if_newer) break;
        if (!(s_.status[v].created > s_.status[id].created)) continue;
      }
      // An admission is final within its instant: a workload admitted now is never taken back
      // now (in Kubernetes, a bind followed by the eviction of a pod that never ran). Its
      // claimant waits for a later cycle; the instant always settles (each running workload
      // can be preempted at most once in it).
      if (v != id && s_.status[v].admitted_at != now) out.push_back(v);
    }
  }
  // Other queues' (reclaim) first, then lowest priority, then the largest (fewest victims),
  // then most recently admitted (least work lost).
  // The keys are gathered once: comparing through s_.recs and s_.status costs a cache miss each.
  struct Key {
    bool own;
    int32_t priority;
    int64_t gpus;
    double admitted_at;
    WorkloadId v;
  };
  std::vector<Key> keys;
  keys.reserve(out.size());
  for (WorkloadId v : out)
    keys.push_back({s_.recs[v].cq == rec.cq, s_.recs[v].priority, s_.recs[v].gpus_placed,
                    s_.status[v].admitted_at, v});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.own != b.own) return !a.own;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
    return a.v > b.v;
  });
  for (size_t i = 0; i < keys.size(); ++i) out[i] = keys[i].v;
  return out;
}

}  // namespace tessera
