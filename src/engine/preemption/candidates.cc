// Preemptor::Candidates: the workloads a preemptor's ClusterQueue policy allows it to evict,
// in the order the victim search tries them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/engine.h"
#include "engine/preemption/preemptor.h"

namespace tessera {
namespace {

// For a workload asking more than its queue's nominal quota of some flavor-resource, without
// borrowWithinCohort: whether some cohort above its queue could hold what it borrows without
// borrowing itself (Kueue's hierarchical advantage); only then may it preempt.
bool WithinReachOfTheHierarchy(const QuotaTree& qt, int32_t cq, const Need& need) {
  for (const auto& [fr, q] : need) {
    if (q <= qt.Available(cq, fr) || q <= qt.subtree_quota(cq, fr)) continue;
    bool reclaim_in_hierarchy = false;
    int64_t remaining = q - std::max<int64_t>(0, qt.guaranteed(cq, fr) - qt.usage(cq, fr));
    for (int n = qt.parent(cq); n >= 0; n = qt.parent(n)) {
      if (qt.usage(n, fr) + remaining <= qt.subtree_quota(n, fr)) {
        reclaim_in_hierarchy = qt.parent(n) >= 0;
        break;
      }
      remaining -= std::max<int64_t>(0, qt.guaranteed(n, fr) - qt.usage(n, fr));
    }
    if (!reclaim_in_hierarchy) return false;
  }
  return true;
}

// What a preemption loses, as LeastLostWork compares it: GPU-seconds (a whole GPU counts 1000
// milli, a share its milli, a share by memory the milli it takes of its device; MIG slices are
// not counted), then CPU-seconds (what a workload without GPUs loses).
struct LostWork {
  double gpu = 0;  // GPU-milli-seconds
  double cpu = 0;  // CPU-milli-seconds
};
bool operator<(const LostWork& a, const LostWork& b) {
  return a.gpu != b.gpu ? a.gpu < b.gpu : a.cpu < b.cpu;
}
LostWork LostWorkOf(const EngineState& s, WorkloadId v, const std::vector<PlacedPod>& pods,
                    double now) {
  const double seconds = WorkLost(s, v, now);
  const Workload& w = s.model.workloads[v];
  int64_t gpu_milli = 0, cpu_milli = 0;
  for (const PlacedPod& p : pods) {
    const Resources& req = w.pod_sets[p.placement.pod_set].requests;
    gpu_milli += req[kGpu] * kMilliPerGpu + req[kGpuMilli];
    if (req[kGpuMemory] > 0 && p.placement.node >= 0 &&
        p.placement.node < static_cast<NodeId>(s.model.nodes.size())) {
      const int64_t device = s.model.nodes[p.placement.node].gpu_memory_mib;
      gpu_milli += device > 0
                       ? std::min<int64_t>(kMilliPerGpu,
                                           (req[kGpuMemory] * kMilliPerGpu + device - 1) / device)
                       : 0;
    }
    cpu_milli += req[kCpu];
  }
  return {static_cast<double>(gpu_milli) * seconds, static_cast<double>(cpu_milli) * seconds};
}

// Other queues' workloads first (reclaim), lower priority; then by the preemptor's
// ClusterQueue's victim order (tessera.dev/victim-order):
//   LeastLostWork  the least work lost (LostWork), more GPUs (fewer victims), the newest;
//   FewestVictims  more GPUs, the least time lost, the newest (Tessera's order before);
//   Kueue          the most recently admitted.
// The keys are gathered once: comparing through s.recs and s.status costs a cache miss each.
struct Key {
  bool own;
  int32_t priority;
  VictimOrder order;
  int64_t gpus;
  LostWork lost_work;
  double lost;
  double admitted_at;
  WorkloadId v;
};
Key KeyOf(const EngineState& s, int32_t own_cq, double now, WorkloadId v) {
  const VictimOrder order = s.model.cluster_queues[own_cq].preemption.victim_order;
  return {
      s.recs[v].cq == own_cq,
      s.recs[v].priority,
      order,
      s.recs[v].gpus_placed,
      order == VictimOrder::kLeastLostWork ? LostWorkOf(s, v, s.recs[v].placed, now) : LostWork{},
      WorkLost(s, v, now),
      s.status[v].admitted_at,
      v};
}
bool KeyLess(const Key& a, const Key& b) {
  if (a.own != b.own) return !a.own;
  if (a.priority != b.priority) return a.priority < b.priority;
  switch (a.order) {
    case VictimOrder::kLeastLostWork:
      if (a.lost_work < b.lost_work || b.lost_work < a.lost_work) return a.lost_work < b.lost_work;
      if (a.gpus != b.gpus) return a.gpus > b.gpus;
      break;
    case VictimOrder::kFewestVictims:
      if (a.gpus != b.gpus) return a.gpus > b.gpus;
      if (a.lost != b.lost) return a.lost < b.lost;
      break;
    case VictimOrder::kKueue:
      break;
  }
  if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
  return a.v > b.v;
}

bool KeyGreater(const Key& a, const Key& b) { return KeyLess(b, a); }

void SortCandidates(const EngineState& s, int32_t own_cq, double now,
                    std::vector<WorkloadId>& out) {
  std::vector<Key> keys;
  keys.reserve(out.size());
  for (WorkloadId v : out) keys.push_back(KeyOf(s, own_cq, now, v));
  std::sort(keys.begin(), keys.end(), KeyLess);
  for (size_t i = 0; i < keys.size(); ++i) out[i] = keys[i].v;
}

// Each queue's admitted workloads are ordered by priority: the policy allows a prefix of each,
// up to `limit` (inclusive when `inclusive`; with `equal_if_newer`, equal priority only if
// created after the preemptor).
struct Slice {
  int32_t q;
  int32_t limit;
  bool inclusive;
  bool equal_if_newer;
};

// What a preemptor's policy allows, decided from usage before any eviction.
struct Policy {
  // As in Kueue:
  // - fits_nominal: the preemptor fits its nominal quota with its own queue's usage (Kueue's
  //   hierarchical advantage): other queues' borrowers may be taken while it borrows;
  // - under_nominal: the queue uses less than its nominal quota of every flavor-resource that
  //   needs preemption: other queues' borrowers may be taken so that it fits within nominal.
  bool fits_nominal = true, under_nominal = true;
  std::vector<Slice> slices;
};

// The slices the policy of `id`'s ClusterQueue lets it take from; false when no candidate can
// help (no policy, Kueue's flavor assigner refuses, or all that the slices hold plus what is
// free of quota cannot cover `need`: most preemptors that cannot win stop here).
bool PolicyFor(const EngineState& s, WorkloadId id, const Need& need, Policy& policy) {
  const WorkloadRec& rec = s.recs[id];
  const ClusterQueue& cq = s.model.cluster_queues[rec.cq];
  const PreemptionConfig& pc = cq.preemption;
  const QuotaTree& qt = *s.quota;
  const bool fair = s.model.config.fair_sharing;
  const bool bwc = pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
  if (!s.HasPreemptionPolicy(rec.cq)) return false;
  for (const auto& [fr, q] : need) {
    if (qt.usage(rec.cq, fr) + q > qt.subtree_quota(rec.cq, fr)) policy.fits_nominal = false;
    if (q > qt.Available(rec.cq, fr) && qt.usage(rec.cq, fr) >= qt.subtree_quota(rec.cq, fr))
      policy.under_nominal = false;
  }
  // Kueue's flavor assigner: a workload asking for more than its queue's nominal quota may
  // preempt only under borrowWithinCohort (or fair sharing with reclaimWithinCohort), or when
  // some cohort above it could hold what it borrows without borrowing itself.
  const bool preempt_while_borrowing =
      bwc || (fair && pc.reclaim_within_cohort != ReclaimPolicy::kNever);
  if (!preempt_while_borrowing && !WithinReachOfTheHierarchy(qt, rec.cq, need)) return false;
  constexpr int32_t kTop = std::numeric_limits<int32_t>::max();
  std::vector<Slice>& slices = policy.slices;
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
  // borrowWithinCohort with reclaimWithinCohort Never (Kueue's webhook rejects it): the
  // borrowWithinCohort candidates alone, as before Kueue's attempts were followed.
  const bool bwc_only = bwc && pc.reclaim_within_cohort == ReclaimPolicy::kNever;
  if (!cq.cohort.empty() && (pc.reclaim_within_cohort != ReclaimPolicy::kNever || bwc_only)) {
    for (int32_t q : s.cqs_by_root[qt.root(rec.cq)]) {
      if (q == rec.cq || s.admitted_by_cq[q].empty()) continue;
      // Only workloads of queues that borrow what the preemptor needs are reclaimable.
      bool victim_borrows = false;
      for (const auto& [fr, amount] : need)
        if (qt.IsBorrowing(q, fr)) victim_borrows = true;
      if (!victim_borrows) continue;
      if (pc.reclaim_within_cohort == ReclaimPolicy::kLowerPriority)
        slices.push_back({q, rec.priority, false, false});
      if (pc.reclaim_within_cohort == ReclaimPolicy::kAny) slices.push_back({q, kTop, true, false});
      if (bwc_only && !policy.fits_nominal && !fair) {
        if (pc.max_priority_threshold && *pc.max_priority_threshold < rec.priority) {
          slices.push_back({q, *pc.max_priority_threshold, true, false});
        } else {
          slices.push_back({q, rec.priority, false, false});
        }
      }
    }
  }
  // A cheap bound before walking any list: all that the queues hold, plus what is free of
  // quota, must cover the need.
  for (const auto& [fr, amount] : need) {
    int64_t could = qt.Available(rec.cq, fr);
    for (const Slice& sl : slices) could += qt.usage(sl.q, fr);
    if (could < amount) return false;
  }
  return true;
}

// Calls `take(v)` for each candidate of the slices, in slice order, until it returns false.
template <typename Take>
void ForEachCandidate(const EngineState& s, WorkloadId id, double now,
                      const std::vector<Slice>& slices, Take&& take) {
  const WorkloadRec& rec = s.recs[id];
  for (const Slice& sl : slices) {
    for (const auto& [prio, v] : s.admitted_by_cq[sl.q]) {
      if (prio > sl.limit) break;
      if (prio == sl.limit && !sl.inclusive) {
        if (!sl.equal_if_newer) break;
        if (!(s.status[v].created > s.status[id].created)) continue;
      }
      // An admission is final within its instant: a workload admitted now is never taken back
      // now (in Kubernetes, a bind followed by the eviction of a pod that never ran). Its
      // claimant waits for a later cycle; the instant always settles (each running workload
      // can be preempted at most once in it).
      // With grace periods the instant is that of the chain of preemptions (CascadeOf): a
      // workload admitted in it is not taken back by a workload acting in it either, so a chain
      // A -> B -> C -> A stops as it does without grace periods.
      if (v == id || s.recs[v].non_preemptible) continue;
      if (s.status[v].admitted_at == now || s.recs[v].admitted_in == CascadeOf(rec, now)) {
        s.held_back_at = now;  // a cycle after this instant may take it (Scheduler::NextRetry)
        continue;
      }
      // Protected until it has run its minimum (tessera.dev/min-runtime, else its queue's).
      const Workload& vw = s.model.workloads[v];
      const std::optional<double> min_runtime =
          vw.min_runtime ? vw.min_runtime : s.model.cluster_queues[sl.q].min_runtime;
      if (min_runtime && now - s.status[v].admitted_at < *min_runtime) continue;
      if (!take(v)) return;
    }
  }
}

}  // namespace

bool MayBorrowByPreempting(const EngineState& s, WorkloadId id) {
  const WorkloadRec& rec = s.recs[id];
  if (rec.non_preemptible) return false;
  return rec.preempted_at_ends < 0 ||
         rec.preempted_at_ends != s.ends_by_root[s.quota->root(rec.cq)];
}

double WorkLost(const EngineState& s, WorkloadId v, double now) {
  const double ran = std::max(0.0, now - s.status[v].admitted_at);
  const auto& interval = s.model.workloads[v].checkpoint_interval;
  return interval && *interval > 0 ? std::fmod(ran, *interval) : ran;
}

std::vector<WorkloadId> Preemptor::Candidates(WorkloadId id, const Combo& combo, double now) const {
  return MakePlan(id, combo, now).candidates;
}

bool Preemptor::Coverable(WorkloadId id, const Combo& combo, double now) const {
  const Need& need = e_.flavors.MinQuotaNeed(id, combo);
  Policy policy;
  if (!PolicyFor(s_, id, need, policy)) return false;
  // Even every candidate gone must cover the quota gap and the GPUs (one pool, all nodes; exact
  // placement is checked later). Only the flavor-resources the preemptor needs matter (a
  // handful). What a candidate frees is never negative, so the walk stops at the first
  // candidates that cover both: a backlog's failed attempts mostly pass this bound, and the
  // full list (and its order) is wanted only for a search.
  std::vector<int64_t> gap(need.size());
  int64_t gaps = 0;  // flavor-resources still short
  for (size_t i = 0; i < need.size(); ++i) {
    gap[i] = need[i].second - s_.quota->Available(s_.recs[id].cq, need[i].first);
    gaps += gap[i] > 0;
  }
  int64_t gpu_gap = -s_.cluster->PoolFreeGpus(0);
  const Workload& w = s_.model.workloads[id];
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps)
    gpu_gap += s_.MinOfSet(id, ps) * w.pod_sets[ps].requests[kGpu];
  bool any = false;
  ForEachCandidate(s_, id, now, policy.slices, [&](WorkloadId v) {
    any = true;
    for (const auto& p : s_.recs[v].placed) {
      for (const auto& [fr, q] : p.quota)
        for (size_t i = 0; i < need.size(); ++i)
          if (need[i].first == fr && gap[i] > 0 && (gap[i] -= q) <= 0) --gaps;
      gpu_gap -= static_cast<int64_t>(p.placement.gpus.size());
    }
    return gaps > 0 || gpu_gap > 0;
  });
  return any && gaps == 0 && gpu_gap <= 0;
}

bool Preemptor::QuotaHopeless(WorkloadId id, const Combo& combo, double now) {
  // The classic search only (the fair-sharing one walks by share), in the Preemptor's order
  // (OrderForTopology reorders for a required topology).
  if (s_.model.config.fair_sharing) return false;
  const Workload& w = s_.model.workloads[id];
  for (const PodSet& ps : w.pod_sets)
    if (ps.topology.required && ps.requests[kGpu] > 0) return false;
  const WorkloadRec& rec = s_.recs[id];
  const PreemptionConfig& pc = s_.model.cluster_queues[rec.cq].preemption;
  const bool bwc = pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
  const Need& need = e_.flavors.MinQuotaNeed(id, combo);
  Policy policy;
  if (!PolicyFor(s_, id, need, policy)) return true;  // MakePlan's plan is empty
  // Every candidate, by queue (the walk ForEachCandidate makes for MakePlan, with its marks):
  // candidates of one queue come together (one slice each).
  std::vector<HopelessCand>& cands = hopeless_cands_;
  cands.clear();
  bool others = false;
  ForEachCandidate(s_, id, now, policy.slices, [&](WorkloadId v) {
    const WorkloadRec& vr = s_.recs[v];
    bool ok = vr.cq == rec.cq || policy.fits_nominal;  // as MakePlan
    if (!ok && bwc) {
      ok = vr.priority < rec.priority &&
           (!pc.max_priority_threshold || vr.priority <= *pc.max_priority_threshold);
    }
    others = others || vr.cq != rec.cq;
    cands.push_back({v, vr.cq, ok});
    return true;
  });
  if (cands.empty()) return true;
  for (size_t i = 1; i < cands.size(); ++i) {  // each queue's candidates together, or unsure
    if (cands[i].cq == cands[i - 1].cq) continue;
    for (size_t j = 0; j + 1 < i; ++j)
      if (cands[j].cq == cands[i].cq) return false;
  }
  std::vector<bool> attempts;
  if (!MayBorrowByPreempting(s_, id)) {
    attempts = {false};
  } else if (!others || (!bwc && !policy.under_nominal)) {
    attempts = {true};
  } else if (!bwc && !policy.fits_nominal) {
    attempts = {false, true};
  } else {
    attempts = {true, false};
  }
  // Per attempt, where the search's walk ends when it never fits: every candidate of the own
  // queue gone, and of each other queue those taken, in the search's order, while that queue
  // still borrows what the preemptor needs (StillBorrowing looks at that queue's usage only, so
  // the queues do not depend on one another). Quota only grows along the walk (Available and
  // the nominal check are monotone in usage), so a walk that fails at its end failed at every
  // step; one that fits at its end is searched.
  QuotaTree& qt = *s_.quota;
  std::vector<std::vector<WorkloadId>> taken_by_attempt;
  std::vector<WorkloadId> taken;
  std::vector<Key> left;
  auto take = [&](WorkloadId v) {
    taken.push_back(v);
    for (const PlacedPod& p : s_.recs[v].placed)
      for (const auto& [fr, q] : p.quota) qt.AddUsage(s_.recs[v].cq, fr, -q);
  };
  auto borrows = [&](int32_t q) {
    for (const auto& [fr, amount] : need)
      if (qt.IsBorrowing(q, fr)) return true;
    return false;
  };
  for (const bool allow_borrowing : attempts) {
    taken.clear();
    for (size_t b = 0, e = 0; b < cands.size(); b = e) {
      const int32_t q = cands[b].cq;
      for (e = b; e < cands.size() && cands[e].cq == q;) ++e;
      if (q == rec.cq) {
        for (size_t i = b; i < e; ++i)
          if (!allow_borrowing || cands[i].while_borrowing) take(cands[i].v);
        continue;
      }
      if (!borrows(q)) continue;  // the search skips all of them
      left.clear();
      for (size_t i = b; i < e; ++i)
        if (!allow_borrowing || cands[i].while_borrowing)
          left.push_back(KeyOf(s_, rec.cq, now, cands[i].v));
      // The least key first, as the search takes them (KeyLess is total: the ids break ties).
      // Most queues give up one or two before they stop borrowing: the least by a scan. One
      // that gives up more (a backlog's queues hold hundreds of candidates) goes on by a heap.
      bool heap = false;
      for (int scans = 0; !left.empty() && borrows(q); ++scans) {
        if (!heap && scans == 2) {
          std::make_heap(left.begin(), left.end(), KeyGreater);
          heap = true;
        }
        if (heap) {
          std::pop_heap(left.begin(), left.end(), KeyGreater);
        } else {
          size_t best = 0;
          for (size_t i = 1; i < left.size(); ++i)
            if (KeyLess(left[i], left[best])) best = i;
          std::swap(left[best], left.back());
        }
        take(left.back().v);
        left.pop_back();
      }
    }
    bool fits = !taken.empty();
    for (const auto& [fr, q] : need) {
      if (!fits) break;
      if (!allow_borrowing && qt.usage(rec.cq, fr) + q > qt.subtree_quota(rec.cq, fr)) fits = false;
      if (q > qt.Available(rec.cq, fr)) fits = false;
    }
    for (auto it = taken.rbegin(); it != taken.rend(); ++it)
      for (const PlacedPod& p : s_.recs[*it].placed)
        for (const auto& [fr, q] : p.quota) qt.AddUsage(s_.recs[*it].cq, fr, q);
    if (fits) return false;
    taken_by_attempt.push_back(taken);
  }
  // The search's evictions, made and undone as the search would have made them (each attempt
  // its victims in the search's order, then back in reverse): they leave the nodes in their
  // buckets in the order the search leaves them, and their quota tree marked released. Only
  // the fits it would check between them (all refused on quota, placing nothing) are skipped.
  const int64_t epoch = s_.release_epoch;  // a look ahead releases nothing
  Evicted evicted;
  for (std::vector<WorkloadId>& victims : taken_by_attempt) {
    std::vector<Key> order;
    for (WorkloadId v : victims) order.push_back(KeyOf(s_, rec.cq, now, v));
    std::sort(order.begin(), order.end(), KeyLess);
    evicted.clear();
    for (const Key& k : order) evicted.emplace_back(k.v, e_.statement.Evict(k.v));
    for (auto it = evicted.rbegin(); it != evicted.rend(); ++it)
      e_.statement.Reinstate(it->first, std::move(it->second));
  }
  s_.release_epoch = epoch;
  return true;
}

Preemptor::Plan Preemptor::MakePlan(WorkloadId id, const Combo& combo, double now) const {
  const WorkloadRec& rec = s_.recs[id];
  const PreemptionConfig& pc = s_.model.cluster_queues[rec.cq].preemption;
  const bool fair = s_.model.config.fair_sharing;
  const bool bwc = pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
  Plan plan;
  Policy policy;
  if (!PolicyFor(s_, id, e_.flavors.MinQuotaNeed(id, combo), policy)) return plan;
  std::vector<WorkloadId>& out = plan.candidates;
  ForEachCandidate(s_, id, now, policy.slices, [&](WorkloadId v) {
    out.push_back(v);
    return true;
  });
  SortCandidates(s_, rec.cq, now, out);
  // Which candidates an attempt that lets the preemptor borrow may take, and the attempts, in
  // Kueue's order (borrowing first unless only a fit within nominal can take other queues').
  bool others = false;
  plan.while_borrowing.resize(out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const WorkloadRec& v = s_.recs[out[i]];
    bool ok = v.cq == rec.cq || policy.fits_nominal || fair;
    if (!ok && bwc) {
      ok = v.priority < rec.priority &&
           (!pc.max_priority_threshold || v.priority <= *pc.max_priority_threshold);
    }
    plan.while_borrowing[i] = ok;
    others = others || v.cq != rec.cq;
  }
  if (!MayBorrowByPreempting(s_, id)) {
    plan.attempts = {false};  // it runs only within its nominal quota, or waits
  } else if (fair || !others || (!bwc && !policy.under_nominal)) {
    plan.attempts = {true};
  } else if (!bwc && !policy.fits_nominal) {
    plan.attempts = {false, true};
  } else {
    plan.attempts = {true, false};
  }
  return plan;
}

void Preemptor::PreferOneVictim(WorkloadId id, const Combo& combo, const Need& need,
                                bool allow_borrowing, const std::vector<WorkloadId>& candidates,
                                double now, Evicted& evicted) {
  const int32_t own_cq = s_.recs[id].cq;
  if (evicted.size() < 2 || s_.model.config.fair_sharing ||
      s_.model.cluster_queues[own_cq].preemption.victim_order != VictimOrder::kLeastLostWork)
    return;
  LostWork set_lost;
  bool all_others = true;
  int32_t lowest = std::numeric_limits<int32_t>::max();
  for (const auto& [v, pods] : evicted) {
    const LostWork l = LostWorkOf(s_, v, pods, now);
    set_lost.gpu += l.gpu;
    set_lost.cpu += l.cpu;
    all_others = all_others && s_.recs[v].cq != own_cq;
    lowest = std::min(lowest, s_.recs[v].priority);
  }
  // The set back in, newest eviction first; each one candidate tried alone.
  for (auto it = evicted.rbegin(); it != evicted.rend(); ++it)
    e_.statement.Reinstate(it->first, std::move(it->second));
  constexpr int kMaxTries = 16;  // fits tried (each a placement)
  int tries = 0;
  for (WorkloadId c : candidates) {
    if (tries >= kMaxTries) break;
    if (std::any_of(evicted.begin(), evicted.end(), [c](const auto& e) { return e.first == c; }))
      continue;
    const WorkloadRec& cr = s_.recs[c];
    if ((all_others && cr.cq == own_cq) || cr.priority > lowest) continue;
    if (set_lost < LostWorkOf(s_, c, cr.placed, now)) continue;
    if (!StillBorrowing(s_, id, c, need)) continue;
    ++tries;
    std::vector<PlacedPod> pods = e_.statement.Evict(c);
    if (PreemptorFits(e_, id, combo, need, allow_borrowing)) {
      evicted.clear();
      evicted.emplace_back(c, std::move(pods));
      return;
    }
    e_.statement.Reinstate(c, std::move(pods));
  }
  for (auto& [v, pods] : evicted) pods = e_.statement.Evict(v);
}

bool NonPreemptible(const Model& model, const Workload& w) {
  if (w.non_preemptible) return *w.non_preemptible;
  if (!w.workload_priority_class.empty()) {
    for (const WorkloadPriorityClass& pc : model.workload_priority_classes)
      if (pc.name == w.workload_priority_class) return pc.non_preemptible;
  }
  for (const PriorityClass& pc : model.priority_classes)
    if (w.priority_class.empty() ? pc.global_default : pc.name == w.priority_class)
      return pc.non_preemptible;
  return false;
}

}  // namespace tessera
