#include "engine/elastic/elastic.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>

#include "engine/admission/admission.h"
#include "engine/admission/stop_policy.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {

void SetNodeOnline(Engine& e, NodeId n, bool online) {
  EngineState& s = e.st;
  if (s.cluster->online(n) == online) return;
  if (!online) e.terminations.OnNodeOffline(n);
  s.cluster->SetOnline(n, online);
  // New capacity: workloads set aside after a placement failure try again (as after a release).
  if (online) ++s.release_epoch;
}

std::vector<WorkloadId> WorkloadsOnNode(const EngineState& s, NodeId n) {
  std::vector<WorkloadId> out;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(s.recs.size()); ++id) {
    if (s.recs.retired(static_cast<size_t>(id))) continue;
    // A preempted workload in its grace period still has its pods there.
    if (s.status[id].state != WorkloadState::kAdmitted &&
        s.status[id].state != WorkloadState::kTerminating)
      continue;
    for (const PlacedPod& p : s.recs[id].placed) {
      if (p.placement.node == n) {
        out.push_back(id);
        break;
      }
    }
  }
  return out;
}

Decision EvictForNode(Engine& e, WorkloadId id, std::string reason) {
  EngineState& s = e.st;
  WorkloadStatus& st = s.status[id];
  WorkloadRec& rec = s.recs[id];
  // In its grace period: the node going away ends it now (its preemptor is told).
  if (st.state == WorkloadState::kTerminating) e.terminations.Release(id);
  e.statement.Evict(id);
  e.statement.Commit();
  s.partial.erase(id);
  if (rec.cq >= 0) s.admitted_by_cq[rec.cq].erase({rec.priority, id});
  s.admitted_without_queue.erase(id);
  st.pods.clear();
  st.admitted_at = -1;
  ++st.preemptions;
  ++s.stats.preempted;
  Decision d;
  d.type = Decision::Type::kPreempt;
  d.workload = id;
  d.reason = std::move(reason);
  if (HeldByStopPolicy(s, id)) {
    e.pending.SetPending(id, StoppedReason(s, rec.cq));
  } else {
    e.pending.SetPending(id, "requeued after preemption: " + d.reason);
    e.pending.Enqueue(id);
  }
  return d;
}

namespace {

// One planning pass: nodes brought online for the look ahead, tentative placements through the
// Statement; Finish() undoes both.
class Planner {
 public:
  Planner(Engine& e, const std::vector<NodeGroupOffer>& groups)
      : e_(e), s_(e.st), groups_(groups), next_(groups.size(), 0), mark_(e.statement.mark()) {}

  void Online(NodeId n) {
    if (s_.cluster->online(n)) return;
    s_.cluster->SetOnline(n, true);
    brought_.push_back(n);
  }
  void Offline(NodeId n) { s_.cluster->SetOnline(n, false); }

  // Every pending workload that a scale-up could serve, in queue order, at most `max`.
  std::vector<WorkloadId> Candidates(int32_t max) const {
    std::vector<std::tuple<int32_t, double, WorkloadId>> keys;
    for (int q = 0; q < e_.pending.num_queues(); ++q) {
      for (WorkloadId id : e_.pending.members(q)) {
        const WorkloadRec& rec = s_.recs[id];
        if (s_.status[id].state != WorkloadState::kPending || !rec.unresolved.empty() ||
            rec.combos.empty() || HeldByStopPolicy(s_, id))
          continue;
        keys.emplace_back(-rec.priority, rec.order_created, id);
      }
    }
    const size_t n = std::min(keys.size(), static_cast<size_t>(std::max(max, 0)));
    std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(n), keys.end());
    std::vector<WorkloadId> out;
    for (size_t i = 0; i < n; ++i) out.push_back(std::get<2>(keys[i]));
    return out;
  }

  // minCount pods of `id` placed (kept, tentatively) under the first combination whose quota
  // and placement hold; false, with nothing placed, when none does.
  bool PlaceGang(WorkloadId id) {
    const WorkloadRec& rec = s_.recs[id];
    for (size_t c = 0; c < rec.combos.size(); ++c) {
      if (!e_.flavors.QuotaFits(rec.cq, rec.min_need[c])) continue;
      if (e_.placer.PlaceMin(id, rec.combos[c], e_.statement.mark())) return true;
    }
    return false;
  }
  // Gang-aware: places the gang as the engine's next admit action would, beside the
  // reservations of the workloads before it that it must not delay (backfill, docs/time.md),
  // planned with the nodes tried now online. Without this, nodes came up for a gang that a
  // reservation then kept off them, and stood paid and empty (docs/autoscaling.md).
  bool PlaceGangAsAdmitted(WorkloadId id, bool trial = false) {
    // Reservations only take capacity away: a gang that does not fit without them does not fit
    // beside them, and planning them (the costly part) is left out.
    const size_t mark = e_.statement.mark();
    if (!PlaceGang(id)) return false;
    Reservations& res = e_.reservations;
    std::vector<WorkloadId> heads = res.HeadsBefore(id);
    if (heads.empty()) return true;
    e_.statement.RollbackTo(mark);
    // Planned once per state of the plan (what it placed and brought online) and set of heads:
    // consecutive workloads that get nothing share them.
    const std::pair<size_t, size_t> state{e_.statement.mark(), brought_.size()};
    std::vector<Reservation> fresh;
    std::vector<Reservation>* planned = &planned_;
    // The heads' reservations never see the quota charged for the gangs asked capacity for
    // (Charge): a head is often one of them, and would find its own quota gone.
    SetCharged(-1);
    if (trial) {
      fresh = res.PlanHeads(heads);
      planned = &fresh;
    } else if (state != planned_state_ || heads.size() < planned_heads_.size() ||
               !std::equal(planned_heads_.begin(), planned_heads_.end(), heads.begin())) {
      planned_ = res.PlanHeads(heads);
      planned_state_ = state;
      planned_heads_ = std::move(heads);
    } else if (heads.size() > planned_heads_.size()) {
      // The same plan state, more heads (a later workload in queue order extends the heads of
      // an earlier one): only they are planned, after the others, as PlanHeads(heads) would.
      res.ExtendPlan(
          planned_,
          std::vector<WorkloadId>(
              heads.begin() + static_cast<std::ptrdiff_t>(planned_heads_.size()), heads.end()));
      planned_heads_ = std::move(heads);
    }
    SetCharged(+1);
    res.HoldFor(id, *planned);
    const bool placed = PlaceGang(id);
    res.LiftPlanned(*planned);
    return placed;
  }
  // Charges `need` to ClusterQueue `cq` for the rest of the plan (a gang asked capacity for
  // takes its quota first); Finish() gives it back.
  void Charge(int32_t cq, const Need& need) {
    charged_.emplace_back(cq, need);
    for (const auto& [fr, q] : need) s_.quota->AddUsage(cq, fr, q);
  }
  // The first combination whose quota for minCount pods the queue can give now; -1: none.
  int QuotaCombo(WorkloadId id) const {
    const WorkloadRec& rec = s_.recs[id];
    for (size_t c = 0; c < rec.combos.size(); ++c)
      if (e_.flavors.QuotaFits(rec.cq, rec.min_need[c])) return static_cast<int>(c);
    return -1;
  }
  int Headroom(size_t g) const { return static_cast<int>(groups_[g].addable.size()) - next_[g]; }
  // Would the gang fit with the next k nodes of group g? Changes nothing.
  // `admitted`: beside the reservations (PlaceGangAsAdmitted), else ignoring them.
  bool FitsWith(WorkloadId id, size_t g, int k, bool admitted) {
    const size_t mark = e_.statement.mark();
    std::vector<NodeId> added;
    for (int i = 0; i < k; ++i) {
      NodeId n = groups_[g].addable[next_[g] + i];
      if (s_.cluster->online(n)) continue;
      s_.cluster->SetOnline(n, true);
      added.push_back(n);
    }
    const bool fits = admitted ? PlaceGangAsAdmitted(id, /*trial=*/true) : PlaceGang(id);
    e_.statement.RollbackTo(mark);
    for (NodeId n : added) s_.cluster->SetOnline(n, false);
    return fits;
  }
  // The fewest of the next nodes of group g in [lo, hi] with which the gang fits.
  // REQUIRES: FitsWith(id, g, hi, admitted).
  int Fewest(WorkloadId id, size_t g, int lo, int hi, bool admitted) {
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (FitsWith(id, g, mid, admitted)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return hi;
  }
  // Takes the next k nodes of group g for `id`.
  NodeRequest Take(WorkloadId id, size_t g, int k) {
    NodeRequest r;
    r.workload = id;
    r.group = static_cast<int32_t>(g);
    for (int i = 0; i < k; ++i) {
      NodeId n = groups_[g].addable[next_[g]++];
      Online(n);
      r.nodes.push_back(n);
    }
    return r;
  }

  void GangAware(WorkloadId id, std::vector<NodeRequest>& out) {
    if (PlaceGangAsAdmitted(id)) return;  // what exists (or is coming) serves it
    if (QuotaCombo(id) < 0) return;       // its queue cannot admit it: no nodes for it
    int best_g = -1, best_k = 0;
    double best_cost = std::numeric_limits<double>::infinity();
    for (size_t g = 0; g < groups_.size(); ++g) {
      const int h = Headroom(g);
      if (h <= 0 || !FitsWith(id, g, h, true)) continue;
      // The fewest nodes ignoring reservations bounds those beside them from below, and costs
      // no reservation planning; usually the gang fits beside them with that many too.
      int hi = Fewest(id, g, 1, h, false);
      if (!FitsWith(id, g, hi, true)) hi = Fewest(id, g, hi + 1, h, true);
      const double cost = hi * groups_[g].node_price;
      if (best_g < 0 || cost < best_cost) {
        best_g = static_cast<int>(g);
        best_k = hi;
        best_cost = cost;
      }
    }
    if (best_g < 0) return;  // no group can hold the whole gang: nothing asked
    NodeRequest r = Take(id, static_cast<size_t>(best_g), best_k);
    if (!PlaceGangAsAdmitted(id)) return;  // cannot happen: FitsWith(best_k) held
    out.push_back(std::move(r));
  }

  void PodByPod(WorkloadId id, std::vector<NodeRequest>& out) {
    // Quota limits here too: the pods of a workload its queue cannot admit do not exist yet
    // (Kueue keeps its Job suspended, Volcano's enqueue action holds its PodGroup), so an
    // autoscaler that sees pods never sees them.
    const int c = QuotaCombo(id);
    if (c < 0) return;
    const WorkloadRec& rec = s_.recs[id];
    const Combo& combo = rec.combos[c];
    const Workload& w = s_.model.workloads[id];
    std::vector<NodeRequest> mine;  // per group
    bool whole = true;
    for (size_t ps = 0; ps < w.pod_sets.size() && whole; ++ps) {
      const int target = s_.MinOfSet(id, ps);
      while (rec.placed_per_set[ps] < target) {
        NodeChoice n = e_.placer.FindNode(id, static_cast<int>(ps), combo);
        if (n.node < 0 && AddNodeFor(id, static_cast<int>(ps), combo, mine))
          n = e_.placer.FindNode(id, static_cast<int>(ps), combo);
        if (n.node < 0) {
          whole = false;
          break;
        }
        e_.statement.PlacePod(id, static_cast<int>(ps), n, combo);
      }
    }
    for (NodeRequest& r : mine) {
      r.whole_gang = whole;
      out.push_back(std::move(r));
    }
  }

  // Pod-by-pod: brings the next node of the first group whose node could hold a pod of set
  // `ps`; false when none can.
  bool AddNodeFor(WorkloadId id, int ps, const Combo& combo, std::vector<NodeRequest>& mine) {
    const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (Headroom(g) <= 0) continue;
      const NodeId n = groups_[g].addable[next_[g]];
      if (!s_.cluster->OnNode(n, req).FitsIn(s_.model.nodes[n].allocatable) ||
          !e_.placer.NodeEligible(id, ps, combo, n, false, true))
        continue;
      NodeRequest* r = nullptr;
      for (NodeRequest& m : mine)
        if (m.group == static_cast<int32_t>(g)) r = &m;
      if (!r) {
        mine.push_back({id, static_cast<int32_t>(g), {}, true});
        r = &mine.back();
      }
      ++next_[g];
      Online(n);
      r->nodes.push_back(n);
      return true;
    }
    return false;
  }

  // Undoes every tentative placement and charge, and takes the nodes brought online back
  // offline.
  void Finish() {
    SetCharged(-1);
    charged_.clear();
    e_.statement.RollbackTo(mark_);
    for (NodeId n : brought_) s_.cluster->SetOnline(n, false);
  }

 private:
  // Adds (+1) or takes away (-1) every Charge.
  void SetCharged(int sign) {
    for (const auto& [cq, need] : charged_)
      for (const auto& [fr, q] : need) s_.quota->AddUsage(cq, fr, sign * q);
  }

  Engine& e_;
  EngineState& s_;
  const std::vector<NodeGroupOffer>& groups_;
  std::vector<int> next_;  // per group: addable nodes taken so far
  std::vector<NodeId> brought_;
  std::vector<std::pair<int32_t, Need>> charged_;  // Charge()s, in order
  size_t mark_;
  // PlaceGangAsAdmitted's reservations, for the plan's state (statement mark, nodes brought
  // online) and heads they were planned for.
  std::vector<Reservation> planned_;
  std::pair<size_t, size_t> planned_state_{SIZE_MAX, 0};
  std::vector<WorkloadId> planned_heads_;
};

}  // namespace

std::vector<WorkloadId> NeedCapacity(Engine& e, int32_t max_workloads) {
  EngineState& s = e.st;
  std::vector<std::tuple<int32_t, double, WorkloadId>> keys;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(s.recs.size()); ++id) {
    if (s.recs.retired(static_cast<size_t>(id))) continue;
    const WorkloadStatus& st = s.status[id];
    const WorkloadRec& rec = s.recs[id];
    if (st.state != WorkloadState::kPending && st.state != WorkloadState::kRejected) continue;
    if (!rec.unresolved.empty() || rec.combos.empty() || HeldByStopPolicy(s, id)) continue;
    const Workload& w = s.model.workloads[id];
    if (w.MinPods() > w.TotalPods() || w.TotalPods() == 0) continue;
    // A request no node shape could serve (a share and whole GPUs at once...) is no node's
    // business: it stays rejected.
    bool shape_ok = true;
    for (const PodSet& ps : w.pod_sets) shape_ok = shape_ok && PodSetShapeProblem(ps).empty();
    if (shape_ok) keys.emplace_back(-rec.priority, rec.order_created, id);
  }
  std::sort(keys.begin(), keys.end());
  // The look ahead must not wake anything: placements it rolls back are not releases.
  const int64_t epoch = s.release_epoch;
  const std::vector<NodeGroupOffer> none;
  Planner p(e, none);
  std::vector<WorkloadId> out;
  for (const auto& [prio, created, id] : keys) {
    if (static_cast<int32_t>(out.size()) >= max_workloads) break;
    // Placed as the engine's admit action would (beside the reservations of the workloads
    // before it, with backfill on): a gang a reservation keeps off the nodes up needs capacity
    // as much as one they cannot hold.
    if (s.status[id].state == WorkloadState::kPending && p.PlaceGangAsAdmitted(id)) continue;
    const int c = p.QuotaCombo(id);
    if (c < 0) continue;  // its queue cannot admit it now: no capacity is asked for it
    const WorkloadRec& rec = s.recs[id];
    if (rec.cq >= 0) p.Charge(rec.cq, rec.min_need[c]);
    out.push_back(id);
  }
  p.Finish();
  s.release_epoch = epoch;
  return out;
}

std::vector<NodeRequest> PlanScaleUp(Engine& e, const std::vector<NodeGroupOffer>& groups,
                                     const std::vector<NodeId>& coming, ScaleUpMode mode,
                                     int32_t max_workloads) {
  // The look ahead must not wake anything: placements it rolls back are not releases.
  const int64_t epoch = e.st.release_epoch;
  Planner p(e, groups);
  for (NodeId n : coming) p.Online(n);
  std::vector<NodeRequest> out;
  for (WorkloadId id : p.Candidates(max_workloads)) {
    if (mode == ScaleUpMode::kGangAware) {
      p.GangAware(id, out);
    } else {
      p.PodByPod(id, out);
    }
  }
  p.Finish();
  e.st.release_epoch = epoch;
  return out;
}

}  // namespace tessera
