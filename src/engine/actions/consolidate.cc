#include "engine/actions/consolidate.h"

#include <algorithm>
#include <tuple>

#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {
namespace {

// Pods are compared by place only: a workload put back exactly where it was has not moved.
bool SamePlaces(const std::vector<PlacedPod>& a, const std::vector<PlacedPod>& b) {
  if (a.size() != b.size()) return false;
  auto key = [](const PlacedPod& p) {
    return std::tie(p.placement.pod_set, p.placement.index, p.placement.node, p.placement.gpus);
  };
  std::vector<const PlacedPod*> x, y;
  for (const auto& p : a) x.push_back(&p);
  for (const auto& p : b) y.push_back(&p);
  auto less = [&](const PlacedPod* l, const PlacedPod* r) { return key(*l) < key(*r); };
  std::sort(x.begin(), x.end(), less);
  std::sort(y.begin(), y.end(), less);
  for (size_t i = 0; i < x.size(); ++i)
    if (key(*x[i]) != key(*y[i])) return false;
  return true;
}

// "node-a[0,1] node-b[3]": each pod's node and devices.
std::string PlacesOf(const Model& m, const std::vector<PlacedPod>& pods) {
  std::string out;
  for (const auto& p : pods)
    out += fmt::format("{}{}[{}]", out.empty() ? "" : " ", m.nodes[p.placement.node].name,
                       fmt::join(p.placement.gpus, ","));
  return out;
}

}  // namespace

ConsolidateAction::ConsolidateAction(Engine& e, bool listed) : e_(e), s_(e.st), listed_(listed) {
  s_.collect_placement_failures = true;
}

bool ConsolidateAction::QueueAllows(WorkloadId id) const {
  const int32_t cq = s_.recs[id].cq;
  if (cq >= 0 && s_.model.cluster_queues[cq].consolidation)
    return *s_.model.cluster_queues[cq].consolidation;
  return listed_;
}

bool ConsolidateAction::Movable(WorkloadId v, double now) {
  if (auto it = movable_.find(v); it != movable_.end()) return it->second;
  const WorkloadRec& rec = s_.recs[v];
  const Workload& w = s_.model.workloads[v];
  const WorkloadStatus& st = s_.status[v];
  bool ok = st.state == WorkloadState::kAdmitted && !rec.non_preemptible && !rec.placed.empty() &&
            !s_.partial.contains(v) && st.admitted_at < now && rec.admitted_in != now;
  // A queue that opted out keeps its workloads where they are (unset: moved like any).
  if (ok && rec.cq >= 0 && s_.model.cluster_queues[rec.cq].consolidation == false) ok = false;
  // Placed again by PlaceMin: exactly its minimum pods, so that the counts come back the same.
  for (size_t ps = 0; ok && ps < w.pod_sets.size(); ++ps)
    ok = rec.placed_per_set[ps] == s_.MinOfSet(v, ps);
  if (ok) {
    const std::optional<double> min_runtime =
        w.min_runtime ? w.min_runtime
                      : (rec.cq >= 0 ? s_.model.cluster_queues[rec.cq].min_runtime : std::nullopt);
    ok = !(min_runtime && now - st.admitted_at < *min_runtime) &&
         WorkLost(s_, v, now) <= s_.model.config.consolidation.max_lost_work_seconds;
  }
  movable_[v] = ok;
  return ok;
}

int64_t ConsolidateAction::MilliOn(WorkloadId v, NodeId n) const {
  int64_t milli = 0;
  for (const PlacedPod& p : s_.recs[v].placed) {
    if (p.placement.node != n) continue;
    const Resources& req = s_.model.workloads[v].pod_sets[p.placement.pod_set].requests;
    milli += req[kGpu] * kMilliPerGpu + s_.cluster->ShareMilli(n, req);
  }
  return milli;
}

Resources ConsolidateAction::HeldOn(WorkloadId v, NodeId n) const {
  Resources held;
  for (const PlacedPod& p : s_.recs[v].placed)
    if (p.placement.node == n) held += s_.model.workloads[v].pod_sets[p.placement.pod_set].requests;
  return held;
}

void ConsolidateAction::IndexNodes() {
  indexed_admit_ = s_.admit_epoch;
  indexed_release_ = s_.release_epoch;
  fit_nodes_.clear();  // lists of the placements just indexed
  near_.clear();
  on_node_.resize(s_.model.nodes.size());
  for (auto& list : on_node_) list.clear();  // keeps their memory
  auto add = [&](WorkloadId id) {
    for (const PlacedPod& p : s_.recs[id].placed) {
      auto& list = on_node_[p.placement.node];
      if (list.empty() || list.back() != id) list.push_back(id);
    }
  };
  for (const auto& by_priority : s_.admitted_by_cq)
    for (const auto& [priority, id] : by_priority) add(id);
  for (WorkloadId id : s_.admitted_without_queue) add(id);
}

void ConsolidateAction::Execute(double now, std::vector<Decision>& out) {
  std::vector<WorkloadId> heads;
  heads.swap(s_.placement_failures);
  // Still pending, and allowed by its queue; in queue order (priority, then creation).
  std::erase_if(heads, [&](WorkloadId id) {
    return s_.status[id].state != WorkloadState::kPending || s_.recs[id].awaiting > 0 ||
           !s_.recs[id].failed_on_placement || !QueueAllows(id);
  });
  if (heads.empty()) return;
  std::sort(heads.begin(), heads.end(), [&](WorkloadId a, WorkloadId b) {
    return std::tuple(-s_.recs[a].priority, s_.recs[a].order_created, a) <
           std::tuple(-s_.recs[b].priority, s_.recs[b].order_created, b);
  });
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  const ConsolidationConfig& cfg = s_.model.config.consolidation;
  if (heads.size() > static_cast<size_t>(cfg.max_heads_per_cycle))
    heads.resize(cfg.max_heads_per_cycle);
  moves_left_ = cfg.max_moves_per_cycle;
  movable_.clear();
  // Placements change only by an admission or a release (each moves an epoch; a move admits
  // its head): while neither moved, the index still holds. The per-shape lists are made anew
  // each cycle (some are made in the middle of an attempt, from its tentative state).
  if (s_.admit_epoch != indexed_admit_ || s_.release_epoch != indexed_release_) {
    IndexNodes();
  } else {
    fit_nodes_.clear();
    near_.clear();
  }
  for (WorkloadId head : heads) {
    if (moves_left_ <= 0) break;
    second_left_ = kSecondPerHead;
    if (TryHead(head, now, out)) IndexNodes();
  }
}

bool ConsolidateAction::TryHead(WorkloadId head, double now, std::vector<Decision>& out) {
  const WorkloadRec& rec = s_.recs[head];
  const Workload& w = s_.model.workloads[head];
  // The pod set whose pod is the hardest to place (the most GPUs): its nodes are tried.
  int ps = -1;
  int64_t most = -1;
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    if (s_.MinOfSet(head, i) <= 0) continue;
    const Resources& r = w.pod_sets[i].requests;
    const int64_t milli = r[kGpu] * kMilliPerGpu + r[kGpuMilli];
    if (milli > most) most = milli, ps = static_cast<int>(i);
  }
  if (ps < 0 || most <= 0) return false;  // GPU heads only: fragmentation is of GPUs
  // The first flavor combination whose quota fits: one combination per head bounds the search.
  for (const Combo& combo : rec.combos) {
    if (!e_.flavors.QuotaFits(rec.cq, e_.flavors.MinQuotaNeed(head, combo))) continue;
    const std::vector<NodeId> nodes = NearestNodes(head, ps, combo, now);
    if (nodes.empty()) return false;
    // One pod: each node alone (the room is made where the head goes). A gang: room on the
    // nodes in turn until the whole gang fits.
    if (w.MinPods() == 1 && !w.pod_sets[ps].topology.present()) {
      // First one workload alone (the ones that free enough, smallest first, at most
      // kSingles of them per node), then the smallest ones together.
      constexpr int kSingles = 4;
      for (NodeId n : nodes) {
        int tried = 0;
        std::vector<std::pair<int64_t, WorkloadId>> here;
        for (WorkloadId v : on_node_[n])
          if (Movable(v, now)) here.emplace_back(MilliOn(v, n), v);
        std::sort(here.begin(), here.end());
        for (const auto& [milli, v] : here) {
          if (tried >= kSingles || moves_left_ <= 0) break;
          bool fitted = false;
          if (Attempt(head, ps, combo, {n}, now, out, v, &fitted)) return true;
          tried += fitted ? 1 : 0;
        }
        if (here.size() > 1 && Attempt(head, ps, combo, {n}, now, out)) return true;
      }
      return false;
    }
    return Attempt(head, ps, combo, nodes, now, out);
  }
  return false;
}

ConsolidateAction::Near& ConsolidateAction::NearOf(const Resources& req) {
  for (Near& nl : near_)
    if (nl.req == req) return nl;
  const bool share = ClusterState::IsShare(req);
  // (GPU milli missing, CPU and memory missing in thousandths of the node, node): cheap to
  // compute for every node; what could be moved there is summed only for the nearest ones.
  Near nl{req, {}, 0};
  for (NodeId n : s_.pools[0]) {
    if (!s_.cluster->online(n) || s_.cluster->gpu_count(n) == 0) continue;
    const Node& node = s_.model.nodes[n];
    if (req[kGpu] > s_.cluster->gpu_count(n) || !req.FitsIn(node.allocatable)) continue;
    int64_t gap = 0;
    if (share) {
      const int64_t room = std::max<int64_t>(s_.cluster->share_room(n),
                                             s_.cluster->free_gpus(n) > 0 ? kMilliPerGpu : 0);
      gap = s_.cluster->ShareMilli(n, req) - room;
    } else {
      gap = (req[kGpu] - s_.cluster->free_gpus(n)) * kMilliPerGpu;
    }
    int64_t other = 0;
    for (ResourceId r : {kCpu, kMemory}) {
      const int64_t missing = req[r] - s_.cluster->free(n)[r];
      if (missing > 0 && node.allocatable[r] > 0) other += missing * 1000 / node.allocatable[r];
    }
    if (gap <= 0 && other <= 0) continue;  // fits by numbers: something else keeps it out
    nl.near.emplace_back(std::max<int64_t>(gap, 0), other, n);
  }
  near_.push_back(std::move(nl));
  return near_.back();
}

std::vector<NodeId> ConsolidateAction::NearestNodes(WorkloadId head, int ps, const Combo& combo,
                                                    double now, NodeId skip) {
  const Resources& req = s_.model.workloads[head].pod_sets[ps].requests;
  Near& nl = NearOf(req);
  auto& near = nl.near;
  const size_t k = static_cast<size_t>(s_.model.config.consolidation.max_nodes_per_head);
  // Most of the nearest pass the checks below: sort a prefix, and the rest only when needed.
  if (nl.sorted == 0) {
    nl.sorted = std::min(near.size(), 4 * k);
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(nl.sorted),
                      near.end());
  }
  std::vector<NodeId> nodes;
  for (size_t i = 0; i < near.size() && nodes.size() < k; ++i) {
    if (i == nl.sorted) {
      std::sort(near.begin() + static_cast<std::ptrdiff_t>(i), near.end());
      nl.sorted = near.size();
    }
    const auto [gap, other, n] = near[i];
    if (n == skip) continue;
    if (!e_.placer.NodeEligible(head, ps, combo, n, false, /*empty_cluster=*/true, false)) continue;
    // What the movable workloads there hold must close every gap: GPU milli where GPUs are
    // missing, CPU and memory where they are (a CPU-only workload frees no GPU but may free
    // the CPU that keeps the head off a node whose GPUs are free).
    int64_t milli = 0;
    Resources held;
    for (WorkloadId v : on_node_[n]) {
      if (v == head || !Movable(v, now)) continue;
      milli += MilliOn(v, n);
      held += HeldOn(v, n);
    }
    if (milli < gap) continue;
    bool enough = true;
    for (ResourceId r : {kCpu, kMemory})
      enough = enough && s_.cluster->free(n)[r] + held[r] >= req[r];
    if (enough) nodes.push_back(n);
  }
  return nodes;
}

const ConsolidateAction::FitNodes& ConsolidateAction::NodesFitting(const Resources& req) {
  for (const FitNodes& f : fit_nodes_)
    if (f.req == req) return f;
  FitNodes f{req, {}, false};
  for (NodeId n : s_.pools[0]) {
    if (!s_.cluster->online(n) || !s_.cluster->Fits(n, req)) continue;
    if (f.nodes.size() == kFitNodes) {
      f.more = true;
      break;
    }
    f.nodes.push_back(n);
  }
  fit_nodes_.push_back(std::move(f));
  return fit_nodes_.back();
}

bool ConsolidateAction::MayFit(WorkloadId v, NodeId freed) {
  const Workload& w = s_.model.workloads[v];
  if (w.MinPods() != 1) return true;
  int ps = 0;
  while (s_.MinOfSet(v, ps) <= 0) ++ps;
  const Resources& req = w.pod_sets[ps].requests;
  const FitNodes& f = NodesFitting(req);
  if (f.more || s_.cluster->Fits(freed, req)) return true;
  return std::any_of(f.nodes.begin(), f.nodes.end(),
                     [&](NodeId n) { return s_.cluster->Fits(n, req); });
}

void ConsolidateAction::Undo(size_t mark, std::vector<Taken>& taken) {
  e_.statement.RollbackTo(mark);
  for (auto it = taken.rbegin(); it != taken.rend(); ++it)
    e_.statement.Reinstate(it->id, std::move(it->pods));
  taken.clear();
}

bool ConsolidateAction::Attempt(WorkloadId head, int ps, const Combo& combo,
                                const std::vector<NodeId>& nodes, double now,
                                std::vector<Decision>& out, WorkloadId only, bool* fitted) {
  const Resources& req = s_.model.workloads[head].pod_sets[ps].requests;
  const bool one = nodes.size() == 1 && s_.model.workloads[head].MinPods() == 1;
  auto fits = [&](NodeId n) {
    return one ? s_.cluster->Fits(n, req) && e_.placer.NodeEligible(head, ps, combo, n)
               : e_.placer.FitsNow(head, combo);
  };
  const size_t mark = e_.statement.mark();
  std::vector<Taken> taken;
  NodeId room = -1;
  // 1. Take movable workloads off the nodes, smallest first, until the head fits.
  for (NodeId n : nodes) {
    std::vector<std::pair<int64_t, WorkloadId>> here;
    for (WorkloadId v : on_node_[n]) {
      if (!Movable(v, now) || (only >= 0 && v != only)) continue;
      if (std::any_of(taken.begin(), taken.end(), [&](const Taken& t) { return t.id == v; }))
        continue;
      here.emplace_back(MilliOn(v, n), v);
    }
    std::sort(here.begin(), here.end());
    for (const auto& [milli, v] : here) {
      if (static_cast<int32_t>(taken.size()) >= moves_left_) break;
      taken.push_back({v, e_.statement.Evict(v, /*announce=*/false)});
      if (fits(n)) {
        room = n;
        break;
      }
    }
    if (room >= 0) break;
  }
  if (fitted) *fitted = room >= 0;
  if (room < 0) {
    Undo(mark, taken);
    return false;
  }
  // 2. The head into the room made; 3. the workloads taken off elsewhere, the largest first,
  // each under its own flavors and quota.
  if (one) {
    e_.statement.PlacePod(head, ps, room, combo);
  } else if (!e_.placer.PlaceMin(head, combo, mark)) {
    Undo(mark, taken);
    return false;
  }
  std::vector<std::pair<int64_t, WorkloadId>> order;  // (-GPU milli it held, workload)
  for (const Taken& t : taken) {
    int64_t milli = 0;
    for (const PlacedPod& p : t.pods) {
      const Resources& r = s_.model.workloads[t.id].pod_sets[p.placement.pod_set].requests;
      milli += r[kGpu] * kMilliPerGpu + r[kGpuMilli];
    }
    order.emplace_back(-milli, t.id);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [neg_milli, v] : order) {
    const Combo& chosen = s_.recs[v].chosen;
    const bool quota = e_.flavors.QuotaFits(s_.recs[v].cq, e_.flavors.MinQuotaNeed(v, chosen));
    bool placed =
        quota && (!one || MayFit(v, room)) && e_.placer.PlaceMin(v, chosen, e_.statement.mark());
    // Where it fits nowhere as things are: room made for it by one more move.
    if (!placed && quota && one && second_left_ > 0) {
      --second_left_;
      placed = PlaceByMove(v, room, now, taken);
    }
    if (!placed) {
      Undo(mark, taken);
      return false;
    }
  }
  Report(head, taken, now, out);
  e_.admission.Admit(head, combo, now, out);  // commits the Statement
  return true;
}

bool ConsolidateAction::PlaceByMove(WorkloadId v, NodeId room, double now,
                                    std::vector<Taken>& taken) {
  const Workload& w = s_.model.workloads[v];
  if (w.MinPods() != 1) return false;
  int ps = 0;
  while (s_.MinOfSet(v, ps) <= 0) ++ps;
  if (w.pod_sets[ps].topology.present()) return false;
  const Resources& req = w.pod_sets[ps].requests;
  const Combo& chosen = s_.recs[v].chosen;
  auto is_taken = [&](WorkloadId u) {
    return std::any_of(taken.begin(), taken.end(), [&](const Taken& t) { return t.id == u; });
  };
  std::vector<NodeId> nodes = NearestNodes(v, ps, chosen, now, room);
  if (nodes.size() > static_cast<size_t>(kSecondNodes)) nodes.resize(kSecondNodes);
  for (NodeId m : nodes) {
    std::vector<std::pair<int64_t, WorkloadId>> here;
    for (WorkloadId u : on_node_[m])
      if (Movable(u, now) && !is_taken(u)) here.emplace_back(MilliOn(u, m), u);
    std::sort(here.begin(), here.end());
    int tried = 0;
    for (const auto& [milli, u] : here) {
      if (tried >= kSecondSingles || static_cast<int32_t>(taken.size()) >= moves_left_) break;
      const size_t local = e_.statement.mark();
      std::vector<PlacedPod> pods = e_.statement.Evict(u, /*announce=*/false);
      if (s_.cluster->Fits(m, req) && e_.placer.NodeEligible(v, ps, chosen, m)) {
        ++tried;
        e_.statement.PlacePod(v, ps, m, chosen);
        const Combo& its = s_.recs[u].chosen;
        if (e_.flavors.QuotaFits(s_.recs[u].cq, e_.flavors.MinQuotaNeed(u, its)) && MayFit(u, m) &&
            e_.placer.PlaceMin(u, its, e_.statement.mark())) {
          taken.push_back({u, std::move(pods)});
          return true;
        }
      }
      e_.statement.RollbackTo(local);
      e_.statement.Reinstate(u, std::move(pods));
    }
  }
  return false;
}

void ConsolidateAction::Report(WorkloadId head, std::vector<Taken>& taken, double now,
                               std::vector<Decision>& out) {
  for (Taken& t : taken) {
    WorkloadRec& rec = s_.recs[t.id];
    if (SamePlaces(t.pods, rec.placed)) continue;  // put back where it was: not moved
    const double lost = WorkLost(s_, t.id, now);
    WorkloadStatus& st = s_.status[t.id];
    st.pods.clear();
    for (const PlacedPod& p : rec.placed) st.pods.push_back(p.placement);
    // Its run restarts at the new place, from its last checkpoint.
    st.admitted_at = now;
    rec.admitted_in = now;
    e_.waits.OnAdmitted(t.id, now);
    movable_[t.id] = false;
    ++s_.stats.moved;
    --moves_left_;
    Decision d;
    d.type = Decision::Type::kMove;
    d.workload = t.id;
    d.preemptor = head;
    d.pods = st.pods;
    d.reason = fmt::format(
        "moved from {} to {} to make room for {} (consolidation; {:.0f}s of work since its last "
        "checkpoint lost)",
        PlacesOf(s_.model, t.pods), PlacesOf(s_.model, rec.placed), s_.model.workloads[head].Key(),
        lost);
    out.push_back(std::move(d));
  }
}

}  // namespace tessera
