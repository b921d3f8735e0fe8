#include "engine/time/reservations.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/engine.h"
#include "engine/time/span.h"
#include "fmt/format.h"

namespace tessera {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Free GPUs in the node pools of a combination's pod sets, each pool once: a bound on what it
// could place now.
int64_t FreeGpusIn(const Engine& e, WorkloadId id, const Combo& combo) {
  std::vector<int> pools;
  int64_t free = 0;
  for (size_t ps = 0; ps < e.st.model.workloads[id].pod_sets.size(); ++ps) {
    const int pool = e.flavors.PoolFor(id, combo, static_cast<int>(ps));
    if (std::find(pools.begin(), pools.end(), pool) != pools.end()) continue;
    pools.push_back(pool);
    free += e.st.cluster->PoolFreeGpus(pool);
  }
  return free;
}

}  // namespace

Reservations::Reservations(Engine& e) : e_(e), s_(e.st) {}

bool Reservations::enabled() const { return s_.model.config.backfill.enable; }

double Reservations::RawEnd(WorkloadId id) const {
  // A preempted workload in its grace period is gone at its end (preemption/termination.h).
  if (s_.status[id].state == WorkloadState::kTerminating) return s_.recs[id].grace_end;
  const Workload& w = s_.model.workloads[id];
  const std::optional<double> est = e_.estimator.Estimate(id, w);
  if (!est) return kInf;
  const double admitted = s_.status[id].admitted_at;
  double end = admitted + *est;
  if (w.active_deadline) end = std::min(end, admitted + *w.active_deadline);
  return end;
}

double Reservations::Effective(double raw, double now) const {
  if (!std::isfinite(raw)) return kInf;
  const double res = s_.model.config.backfill.resolution;
  // An overrun (the estimate was wrong) may end any moment: from now on; the reservation moves.
  // Both steps keep the order of raw ends, so the runs stay sorted.
  const double end = std::max(raw, now);
  const double rounded = std::ceil(end / res) * res;
  return rounded >= end ? rounded : end;
}

double Reservations::EndOf(WorkloadId id, double now) const {
  const std::optional<double> est = e_.estimator.Estimate(id, s_.model.workloads[id]);
  return est ? now + *est : kInf;
}

void Reservations::OnAdmitted(WorkloadId id) {
  if (enabled() && built_) added_.push_back({RawEnd(id), id, s_.status[id].admitted_at});
}

void Reservations::OnTerminating(WorkloadId id) { OnAdmitted(id); }

double Reservations::ClaimEnd(WorkloadId id) const {
  const std::optional<double> est = e_.estimator.Estimate(id, s_.model.workloads[id]);
  return est ? s_.recs[id].claim_start + *est : kInf;
}

void Reservations::OnClaim(WorkloadId id) {
  if (enabled() && built_) added_.push_back({ClaimEnd(id), id, s_.recs[id].claim_start, true});
}

void Reservations::RunsInEndOrder(double now) {
  // Sorted once, then kept: admissions merge in, ended runs are skipped where they are read
  // (Stale) and dropped at the next rebuild, which also takes what the estimator learned since
  // (at most once per resolution).
  const double res = s_.model.config.backfill.resolution;
  if (!built_ || (e_.estimator.observed() != runs_observed_ && now >= built_at_ + res) ||
      stale_ > runs_.size() / 2 + 64) {
    built_ = true;
    built_at_ = now;
    runs_observed_ = e_.estimator.observed();
    stale_ = 0;
    runs_.clear();
    added_.clear();
    for (const auto& by_cq : s_.admitted_by_cq)
      for (const auto& [priority, id] : by_cq)
        runs_.push_back({RawEnd(id), id, s_.status[id].admitted_at});
    // Those without a queue hold nodes too: a plan that left them out would see their GPUs
    // held for ever ("does not fit even when every running workload has ended").
    for (WorkloadId id : s_.admitted_without_queue)
      runs_.push_back({RawEnd(id), id, s_.status[id].admitted_at});
    for (const auto& [end, id] : e_.terminations.ends())
      runs_.push_back({end, id, s_.status[id].admitted_at});
    for (WorkloadId id : e_.terminations.claimants())
      runs_.push_back({ClaimEnd(id), id, s_.recs[id].claim_start, true});
    std::sort(runs_.begin(), runs_.end());
    return;
  }
  if (added_.empty()) return;
  std::sort(added_.begin(), added_.end());
  const size_t mid = runs_.size();
  runs_.insert(runs_.end(), added_.begin(), added_.end());
  std::inplace_merge(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(mid), runs_.end());
  added_.clear();
}

bool Reservations::Stale(const Run& r) const {
  // Ended (its records may be retired): stale whatever it was.
  const WorkloadState state = s_.StateOf(r.id);
  if (state == WorkloadState::kFinished) return true;
  // A claim stands while its preemptor waits (the same claim: a later one ends elsewhere).
  if (r.claim) return !e_.terminations.Claims(r.id) || r.admitted_at != s_.recs[r.id].claim_start;
  // A run cut short by a preemption with a grace period ends again, at the grace period's end.
  if (state == WorkloadState::kTerminating)
    return r.end != s_.recs[r.id].grace_end || s_.status[r.id].admitted_at != r.admitted_at;
  return state != WorkloadState::kAdmitted || s_.status[r.id].admitted_at != r.admitted_at ||
         s_.recs[r.id].placed.empty();
}

void Reservations::Hold(Reservation& r) {
  HoldQuota(r);
  if (!r.on_nodes) BookOn(r);
}

void Reservations::Lift(Reservation& r) {
  LiftQuota(r);
  if (r.on_nodes) UnbookOn(r);
}

void Reservations::HoldQuota(Reservation& r) {
  if (r.held) return;
  r.held = true;
  ++held_;
  const int32_t cq = s_.recs[r.id].cq;
  if (cq >= 0)
    for (const auto& [fr, q] : r.quota) s_.quota->AddUsage(cq, fr, q);
}

void Reservations::LiftQuota(Reservation& r) {
  if (!r.held) return;
  r.held = false;
  --held_;
  const int32_t cq = s_.recs[r.id].cq;
  if (cq >= 0)
    for (const auto& [fr, q] : r.quota) s_.quota->AddUsage(cq, fr, -q);
}

void Reservations::BookOn(Reservation& r) {
  r.on_nodes = true;
  // The entries of `booked` are reused from hold to hold (their vectors keep their room):
  // a plan holds and lifts reservations thousands of times a cycle.
  r.nbooked = 0;
  for (const Reservation::Pod& p : r.pods) {
    if (r.nbooked == r.booked.size()) r.booked.emplace_back();
    if (s_.cluster->BookFreePart(p, r.id, r.booked[r.nbooked])) ++r.nbooked;
  }
}

void Reservations::UnbookOn(Reservation& r) {
  r.on_nodes = false;
  for (size_t k = r.nbooked; k-- > 0;)
    s_.cluster->Release(r.booked[k].node, r.booked[k].req, r.booked[k].gpus);
  r.nbooked = 0;
}

bool Reservations::Deferrable(Reservation& r) {
  if (r.shares_nodes) return false;
  if (r.free_gen == free_gen_) return r.gpus_taken;
  r.free_gen = free_gen_;
  r.gpus_taken = true;
  const ClusterState& cs = *s_.cluster;
  for (const Reservation::Pod& p : r.pods) {
    if (p.req[kGpu] <= 0) continue;  // as BookOn: such a pod books no device
    const int32_t* owners = cs.gpu_owners(p.node);
    const int32_t* used = cs.gpu_used_milli(p.node);
    for (int32_t g : p.gpus)
      if (owners[g] == r.id || (owners[g] == -1 && used[g] == 0)) r.gpus_taken = false;
  }
  return r.gpus_taken;
}

void Reservations::MarkShared() {
  if (node_mark_.size() != static_cast<size_t>(s_.cluster->num_nodes()))
    node_mark_.assign(s_.cluster->num_nodes(), {-1, -1});
  ++stamp_;
  for (size_t k = 0; k < list_.size(); ++k) {
    Reservation& r = list_[k];
    r.shares_nodes = false;
    for (const Reservation::Pod& p : r.pods) {
      auto& [stamp, owner] = node_mark_[p.node];
      if (stamp == stamp_ && owner != static_cast<int32_t>(k)) {
        r.shares_nodes = true;
        list_[owner].shares_nodes = true;
      }
      stamp = stamp_;
      owner = static_cast<int32_t>(k);
    }
  }
}

void Reservations::BookNodes() {
  ++free_gen_;  // what the caller does next may change the cluster
  if (!deferred_) return;
  deferred_ = false;
  for (Reservation& r : list_) {
    if (r.on_nodes == r.held) continue;
    if (r.held) {
      BookOn(r);
    } else {
      UnbookOn(r);
    }
  }
}

void Reservations::LiftAll() {
  ++free_gen_;
  if (held_ == 0 && !deferred_) return;
  for (Reservation& r : list_) Lift(r);
  deferred_ = false;
}

void Reservations::BookReleased(std::vector<Room>& booked) {
  Room gpus;  // only the devices: CPU, memory and the pod slot are booked by the phantom
  Room got;
  for (const Reservation& r : list_) {
    if (!r.held) continue;
    for (const Reservation::Pod& p : r.pods) {
      if (p.req[kGpu] <= 0) continue;
      gpus.node = p.node;
      gpus.req = Resources{};
      gpus.req[kGpu] = static_cast<int64_t>(p.gpus.size());
      gpus.gpus = p.gpus;
      if (s_.cluster->BookFreePart(gpus, r.id, got)) booked.push_back(got);
    }
  }
}

bool Reservations::Before(WorkloadId a, WorkloadId b) const {
  const WorkloadRec& ra = s_.recs[a];
  const WorkloadRec& rb = s_.recs[b];
  if (ra.priority != rb.priority) return ra.priority > rb.priority;
  if (ra.order_created != rb.order_created) return ra.order_created < rb.order_created;
  return a < b;
}

void Reservations::ApplyFor(WorkloadId id, double now) {
  if (list_.empty()) return;
  const double end = EndOf(id, now);
  for (Reservation& r : list_) {
    const bool hold = r.id != id && r.start < end && Before(r.id, id);
    if (hold) {
      HoldQuota(r);
    } else {
      LiftQuota(r);
    }
    if (r.on_nodes == hold) continue;
    // Booked now, in list order, where the booking could depend on when it is made; else when
    // the attempt reads the nodes (BookNodes), if it does: most attempts in a full cluster are
    // refused by quota alone.
    if (Deferrable(r)) {
      deferred_ = true;
    } else if (hold) {
      BookOn(r);
    } else {
      UnbookOn(r);
    }
  }
}

WorkloadId Reservations::Blocking(WorkloadId id, double now) const {
  const double end = EndOf(id, now);
  for (const Reservation& r : list_)
    if (r.id != id && r.start < end && Before(r.id, id)) return r.id;
  return -1;
}

bool Reservations::FitsAt(WorkloadId id, int64_t gpus, Reservation& out) {
  WorkloadRec& rec = s_.recs[id];
  for (const Combo& combo : rec.combos) {
    if (rec.cq >= 0 && !e_.flavors.QuotaFits(rec.cq, e_.flavors.MinQuotaNeed(id, combo))) continue;
    // A non-preemptible workload never borrows (Admission::ChooseAndAdmit).
    if (rec.non_preemptible && !e_.flavors.FitsNominal(rec.cq, e_.flavors.MinQuotaNeed(id, combo)))
      continue;
    // Cheap before the placement: enough free GPUs in the combination's pools at all.
    if (gpus > FreeGpusIn(e_, id, combo)) continue;
    const size_t mark = e_.statement.mark();
    if (!e_.placer.PlaceMin(id, combo, mark)) continue;
    out.combo = combo;
    out.pods.clear();
    const Workload& w = s_.model.workloads[id];
    for (const PlacedPod& p : rec.placed)
      out.pods.push_back(
          {p.placement.node, w.pod_sets[p.placement.pod_set].requests, p.placement.gpus, {}});
    e_.statement.RollbackTo(mark);
    return true;
  }
  return false;
}

void Reservations::Describe(WorkloadId id, const Evicted& evicted, Reservation& out) const {
  const int32_t cq = s_.recs[id].cq;
  // Who it waits for: the workloads that must end on its nodes, by ClusterQueue.
  std::vector<bool> on(s_.cluster->num_nodes(), false);
  for (const auto& p : out.pods) on[p.node] = true;
  std::map<std::string, int> by_queue;
  Need released;
  for (const auto& [v, pods] : evicted) {
    bool in_way = false;
    for (const PlacedPod& p : pods) {
      in_way = in_way || on[p.placement.node];
      if (s_.recs[v].cq == cq)
        for (const auto& [fr, q] : p.quota) released.emplace_back(fr, q);
    }
    if (!in_way) continue;
    ++out.waits_for;
    const int32_t vcq = s_.recs[v].cq;
    ++by_queue[vcq < 0 ? std::string("(none)") : s_.model.cluster_queues[vcq].name];
  }
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [name, n] : by_queue) order.emplace_back(-n, name);
  std::sort(order.begin(), order.end());
  for (const auto& [n, name] : order) out.waits_for_queues.push_back(name);
  // The quota it holds: its need less what its own queue's releases free by its start.
  out.quota.clear();
  if (cq < 0) return;
  for (const auto& [fr, q] : e_.flavors.MinQuotaNeed(id, out.combo)) {
    int64_t freed = 0;
    for (const auto& [rfr, rq] : released)
      if (rfr == fr) freed += rq;
    if (q > freed) out.quota.emplace_back(fr, q - freed);
  }
}

bool Reservations::Plan(WorkloadId id, double now, Reservation& out, std::string& why) {
  ++plans_;
  const WorkloadRec& rec = s_.recs[id];
  if (rec.combos.empty()) return false;
  RunsInEndOrder(now);
  BookNodes();
  // The reservations of workloads that go before it are held as they will be; the others (and
  // its own) are lifted: they give way to it.
  for (Reservation& r : list_) {
    if (r.id != id && Before(r.id, id)) {
      Hold(r);
    } else {
      Lift(r);
    }
  }
  // A preemptor that waits for its victims plans without what it claimed (it is its own).
  const bool claims = !rec.claim.empty() || !rec.claim_pods.empty();
  if (claims) e_.terminations.LiftClaim(id);
  const int64_t epoch = s_.release_epoch;
  const double limit = now + s_.model.config.backfill.window;
  int64_t gpus = 0;  // whole GPUs of its minCount pods
  {
    const Workload& w = s_.model.workloads[id];
    for (size_t ps = 0; ps < w.pod_sets.size(); ++ps)
      gpus += int64_t{w.MinOfSet(ps)} * w.pod_sets[ps].requests[kGpu];
  }
  Evicted evicted;
  std::vector<WorkloadId> unclaimed;  // claims lifted as their runs end
  // The instants at which something in its way ends: running workloads and the reservations
  // made before it, in time order.
  std::vector<double> held_ends;
  for (const Reservation& r : list_)
    if (r.id != id && Before(r.id, id) && std::isfinite(r.end)) held_ends.push_back(r.end);
  std::sort(held_ends.begin(), held_ends.end());
  double t = now;
  bool found = false;
  size_t i = 0, j = 0;
  bool beyond_window = false;
  while (true) {
    if (FitsAt(id, gpus, out)) {
      found = true;
      break;
    }
    while (i < runs_.size() && Stale(runs_[i])) {
      ++stale_;
      ++i;
    }
    double next = kInf;
    if (i < runs_.size()) next = Effective(runs_[i].end, now);
    if (j < held_ends.size()) next = std::min(next, held_ends[j]);
    if (!std::isfinite(next) || next > limit) {
      beyond_window = std::isfinite(next);
      break;
    }
    t = next;
    ++stamp_;
    if (freed_.size() != static_cast<size_t>(s_.cluster->num_nodes()))
      freed_.assign(s_.cluster->num_nodes(), 0);
    for (; i < runs_.size() && Effective(runs_[i].end, now) <= t; ++i) {
      const WorkloadId v = runs_[i].id;
      if (Stale(runs_[i])) continue;
      if (runs_[i].claim) {     // the run its preemptor starts then has ended
        if (v == id) continue;  // its own, lifted for its plan
        for (const Room& room : s_.recs[v].claim_room)
          if (!room.empty()) freed_[room.node] = stamp_;
        e_.terminations.LiftClaim(v);
        unclaimed.push_back(v);
        continue;
      }
      evicted.emplace_back(v, e_.statement.Evict(v, /*announce=*/false));
      for (const PlacedPod& p : evicted.back().second) freed_[p.placement.node] = stamp_;
    }
    while (j < held_ends.size() && held_ends[j] <= t) ++j;
    // Earlier reservations take what they planned as it frees up (on the nodes just freed),
    // until they end.
    for (Reservation& r : list_) {
      if (r.id == id || !Before(r.id, id)) continue;
      if (r.end <= t) {
        Lift(r);
        continue;
      }
      bool touched = false;
      for (const auto& p : r.pods) touched = touched || freed_[p.node] == stamp_;
      if (!touched) continue;
      Lift(r);
      Hold(r);
    }
  }
  if (found) {
    out.id = id;
    out.start = t;
    out.end = EndOf(id, t);
    Describe(id, evicted, out);
  } else if (beyond_window) {
    why = fmt::format("no expected start within the backfill window ({})",
                      FormatSpan(s_.model.config.backfill.window));
  } else if (i < runs_.size()) {
    int64_t unknown = 0;
    for (size_t k = i; k < runs_.size(); ++k)
      unknown += std::isinf(runs_[k].end) && !Stale(runs_[k]) ? 1 : 0;
    why = fmt::format(
        "no expected start: {} running workload(s) have no runtime estimate "
        "(tessera.dev/runtime-estimate, activeDeadlineSeconds, or finished runs of its "
        "LocalQueue to learn from)",
        unknown);
  } else {
    why =
        "no expected start: it does not fit even when every running workload has ended "
        "(earlier reservations hold what it needs)";
  }
  for (Reservation& r : list_) Lift(r);
  for (auto it = evicted.rbegin(); it != evicted.rend(); ++it)
    e_.statement.Reinstate(it->first, std::move(it->second));
  for (WorkloadId v : unclaimed) e_.terminations.HoldClaim(v);
  s_.release_epoch = epoch;
  if (claims) {
    e_.terminations.HoldClaim(id);
    if (found) out.quota.clear();  // the claim holds it
  }
  ++free_gen_;
  return found;
}

int Reservations::QueueCount(int32_t cq) const {
  int n = 0;
  for (const Reservation& r : list_) n += s_.recs[r.id].cq == cq ? 1 : 0;
  return n;
}

void Reservations::Note(WorkloadId id, std::string note) {
  WorkloadRec& rec = s_.recs[id];
  // A reason set as text (PendingQueues::SetPending) becomes a part, so the note follows it.
  if (rec.why.empty() && !rec.reason_stale && !s_.status[id].reason.empty()) {
    ReasonPart part;
    part.text = s_.status[id].reason;
    rec.why.push_back(std::move(part));
  }
  s_.recs[id].time_note = std::move(note);
  s_.recs[id].reason_stale = s_.status[id].state == WorkloadState::kPending;
  noted_.push_back(id);
}

absl::btree_set<QueueKey>& Reservations::Claimants(int32_t cq) {
  const int q = EngineState::queue_index(cq);
  if (static_cast<size_t>(q) >= claimants_.size()) claimants_.resize(q + 1);
  return claimants_[q];
}

void Reservations::Forget(WorkloadId id) {
  for (auto it = list_.begin(); it != list_.end(); ++it) {
    if (it->id != id) continue;
    Lift(*it);
    list_.erase(it);
    break;
  }
  if (claimants_.empty()) return;
  const int q = EngineState::queue_index(s_.recs[id].cq);
  if (static_cast<size_t>(q) < claimants_.size()) claimants_[q].erase(s_.KeyOf(id));
}

int Reservations::Limit() const {
  const int32_t k = s_.model.config.backfill.reservations_per_queue;
  return k > 0 ? k : std::numeric_limits<int>::max();
}

std::vector<WorkloadId> Reservations::Heads() {
  // The first claimants of every queue (parked or not), then all in queue order.
  std::vector<WorkloadId> heads;
  for (auto& claimants : claimants_) {
    int taken = 0;
    for (auto it = claimants.begin(); it != claimants.end() && taken < Limit();) {
      const WorkloadId id = KeyId(*it);
      if (s_.status[id].state != WorkloadState::kPending || s_.KeyOf(id) != *it) {
        it = claimants.erase(it);
        continue;
      }
      heads.push_back(id);
      ++taken;
      ++it;
    }
  }
  std::sort(heads.begin(), heads.end(),
            [&](WorkloadId a, WorkloadId b) { return s_.KeyOf(a) < s_.KeyOf(b); });
  return heads;
}

void Reservations::Begin(double now) {
  plans_ = 0;
  last_now_ = now;
  ++free_gen_;  // the cluster changed since the last admit action
  if (!enabled()) return;
  // Nothing happened since the last plan at this instant: the reservations stand.
  if (now == planned_now_ && s_.admit_epoch == planned_admit_ &&
      s_.release_epoch == planned_release_) {
    for (Reservation& r : list_) Hold(r);
    return;
  }
  LiftAll();
  list_.clear();
  for (WorkloadId id : Heads()) {
    if (plans_ >= s_.model.config.backfill.max_job_test) break;
    Reservation r;
    std::string why;
    if (Plan(id, now, r, why)) {
      list_.push_back(std::move(r));
    } else {
      Note(id, std::move(why));
    }
  }
  MarkShared();
  for (Reservation& r : list_) Hold(r);
  planned_now_ = now;
  planned_admit_ = s_.admit_epoch;
  planned_release_ = s_.release_epoch;
}

void Reservations::OnFailed(WorkloadId id, double now) {
  if (!enabled() || s_.status[id].state != WorkloadState::kPending) return;
  absl::btree_set<QueueKey>& claimants = Claimants(s_.recs[id].cq);
  claimants.insert(s_.KeyOf(id));
  for (const Reservation& r : list_)
    if (r.id == id) return;
  if (plans_ >= s_.model.config.backfill.max_job_test) return;
  // Only the first Limit() claimants of its queue get a reservation.
  int rank = 0;
  for (const QueueKey& k : claimants) {
    if (KeyId(k) == id || rank >= Limit()) break;
    if (s_.status[KeyId(k)].state == WorkloadState::kPending) ++rank;
  }
  if (rank >= Limit()) return;
  const int32_t cq = s_.recs[id].cq;
  if (QueueCount(cq) >= Limit()) {
    // Full: the queue's last reservation gives way to this one, which goes before it.
    auto last = list_.end();
    for (auto it = list_.begin(); it != list_.end(); ++it)
      if (s_.recs[it->id].cq == cq) last = it;
    Lift(*last);
    Note(last->id, "");
    list_.erase(last);
  }
  Reservation r;
  std::string why;
  if (Plan(id, now, r, why)) {
    // In queue order: a reservation of a workload that goes before it keeps precedence.
    auto at = list_.begin();
    while (at != list_.end() && Before(at->id, id)) ++at;
    list_.insert(at, std::move(r));
  } else {
    Note(id, std::move(why));
  }
  MarkShared();
  ApplyFor(id, now);  // as before the attempt: the next one adjusts
}

void Reservations::End(double now) {
  LiftAll();
  // What no reservation says any more is cleared; a note that no start can be given stays
  // until the workload is planned again.
  std::sort(noted_.begin(), noted_.end());
  noted_.erase(std::unique(noted_.begin(), noted_.end()), noted_.end());
  std::vector<WorkloadId> kept;
  for (WorkloadId id : noted_) {
    if (s_.recs.retired(static_cast<size_t>(id))) continue;
    bool reserved = false;
    for (const Reservation& r : list_) reserved = reserved || r.id == id;
    if (reserved) continue;
    s_.status[id].expected_start = -1;
    WorkloadRec& rec = s_.recs[id];
    const bool pending = s_.status[id].state == WorkloadState::kPending;
    if (pending && rec.time_note.rfind("no expected start", 0) == 0) {
      kept.push_back(id);
      continue;
    }
    rec.time_note.clear();
    rec.reason_stale = pending;
  }
  noted_.swap(kept);
  for (const Reservation& r : list_) {
    int64_t gpus = 0;
    std::vector<NodeId> nodes;
    for (const auto& p : r.pods) {
      gpus += p.req[kGpu];
      if (std::find(nodes.begin(), nodes.end(), p.node) == nodes.end()) nodes.push_back(p.node);
    }
    std::string where;
    for (size_t k = 0; k < nodes.size() && k < 4; ++k)
      where += (k ? ", " : "") + s_.model.nodes[nodes[k]].name;
    if (nodes.size() > 4) where += fmt::format(" and {} more", nodes.size() - 4);
    std::string note;
    if (r.start <= now) {
      note = "reserved: starts as soon as capacity frees up";
    } else {
      note = fmt::format("expected to start in {} (t={:.0f}s)", FormatSpan(r.start - now), r.start);
      if (r.waits_for > 0)
        note += fmt::format(" when {} running workload(s) of {} end", r.waits_for,
                            fmt::join(r.waits_for_queues, ", "));
    }
    note += gpus > 0 ? fmt::format("; held: {} GPU(s) on {}", gpus, where)
                     : fmt::format("; held: room on {}", where);
    Note(r.id, std::move(note));
    s_.status[r.id].expected_start = std::max(r.start, now);
  }
}

std::vector<WorkloadId> Reservations::HeadsBefore(WorkloadId id) {
  std::vector<WorkloadId> out;
  if (!enabled()) return out;
  for (WorkloadId head : Heads()) {
    if (static_cast<int>(out.size()) >= s_.model.config.backfill.max_job_test) break;
    // A workload the planner placed (tentatively) starts on what it was given: no reservation.
    if (head != id && Before(head, id) && s_.recs[head].placed.empty()) out.push_back(head);
  }
  return out;
}

std::vector<Reservation> Reservations::PlanHeads(const std::vector<WorkloadId>& heads) {
  std::vector<Reservation> planned;
  ExtendPlan(planned, heads);
  return planned;
}

void Reservations::ExtendPlan(std::vector<Reservation>& planned,
                              const std::vector<WorkloadId>& more) {
  // Plan() holds what list_ has: here the reservations planned so far, in precedence order.
  std::vector<Reservation> kept;
  kept.swap(list_);
  list_.swap(planned);
  for (WorkloadId head : more) {
    Reservation r;
    std::string why;
    if (Plan(head, last_now_, r, why)) list_.push_back(std::move(r));
  }
  planned.swap(list_);
  list_.swap(kept);
}

void Reservations::HoldFor(WorkloadId id, std::vector<Reservation>& planned) {
  const double end = EndOf(id, last_now_);
  for (Reservation& r : planned)
    if (r.start < end) Hold(r);
}

void Reservations::LiftPlanned(std::vector<Reservation>& planned) {
  for (Reservation& r : planned) Lift(r);
}

}  // namespace tessera
