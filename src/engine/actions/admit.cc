#include "engine/actions/admit.h"

#include <algorithm>
#include <optional>

#include "engine/engine.h"

namespace tessera {

AdmitAction::AdmitAction(Engine& e) : e_(e), s_(e.st), order_(MakeQueueOrder(e.st.model.config)) {}

int AdmitAction::BorrowHeight(WorkloadId id) {
  const WorkloadRec& rec = s_.recs[id];
  if (rec.cq < 0 || rec.combos.empty()) return 0;
  const Combo* combo = &rec.combos[0];  // the combination WouldBorrow judges
  for (const Combo& c : rec.combos)
    if (e_.flavors.QuotaFits(rec.cq, e_.flavors.MinQuotaNeed(id, c))) {
      combo = &c;
      break;
    }
  return e_.flavors.BorrowHeight(rec.cq, e_.flavors.MinQuotaNeed(id, *combo));
}

void AdmitAction::Execute(double now, std::vector<Decision>& out) {
  // Passes: wake what could now be admitted, then rounds over the queues. Another pass only
  // when a workload woken for quota failed for another reason (bounded: each pass moves such
  // workloads from quota parking to the other kind).
  e_.reservations.Begin(now);
  for (int pass = 0; pass < 64; ++pass) {
    // Waking judges what is free without reservations; each attempt then holds those it must
    // not delay (Reservations::ApplyFor).
    e_.reservations.LiftAll();
    e_.pending.WakeParked();
    if (!Rounds(now, out)) break;
  }
  e_.reservations.End(now);
}

bool AdmitAction::Rounds(double now, std::vector<Decision>& out) {
  // 1. Every queue is walked in its order (priority, then creation) from a cursor; workloads
  //    that fail are parked, so a queue holds only what is worth trying.
  const int nq = static_cast<int>(e_.pending.num_queues());
  std::vector<std::optional<QueueKey>> cursor(nq);
  std::vector<bool> blocked(nq, false);
  auto strict = [&](int q) {
    return q > 0 && s_.model.cluster_queues[q - 1].strategy == QueueingStrategy::kStrictFIFO;
  };
  auto next = [&](int q) {
    return cursor[q] ? e_.pending.queue(q).upper_bound(*cursor[q]) : e_.pending.queue(q).begin();
  };
  // 2. Rounds: the next head of every queue, ordered by the QueueOrder plugin. As in Kueue,
  //    heads that fit within their ClusterQueue's own quota go before heads that would borrow
  //    (phase 1 takes only the former; a queue whose head would borrow waits for phase 2, which
  //    goes on from the same cursors): a queue reclaiming what it lent gets it before a
  //    borrower is admitted into it, only to be preempted in the same instant.
  std::vector<std::pair<HeadKey, int>> heads;
  // The queues with anything pending: most of a large cluster's queues are empty in a cycle
  // that decides little. A queue becomes non-empty within the rounds only when a preemption
  // requeues its victims (an Enqueue), and then the list is made again.
  std::vector<int> live;
  int64_t live_at = -1;
  auto refresh_live = [&] {
    if (live_at == e_.pending.enqueued()) return;
    live_at = e_.pending.enqueued();
    live.clear();
    for (int q = 0; q < nq; ++q)
      if (!e_.pending.queue(q).empty()) live.push_back(q);
  };
  for (int phase = 1; phase <= 2; ++phase) {
    bool deferred = false;  // a head left for phase 2 in this round
    while (true) {
      heads.clear();
      deferred = false;
      refresh_live();
      for (int q : live) {
        if (blocked[q]) continue;
        auto it = next(q);
        if (it == e_.pending.queue(q).end()) continue;
        WorkloadId id = KeyId(*it);
        const WorkloadRec& rec = s_.recs[id];
        // Only a StrictFIFO queue keeps failed workloads in place: its head blocks the queue
        // until something that could help has happened.
        bool stale = strict(q) && rec.failed_release_epoch == s_.release_epoch &&
                     (!rec.can_preempt || rec.failed_admit_epoch == s_.admit_epoch);
        if (stale) {
          blocked[q] = true;
          continue;
        }
        if (phase == 1 && e_.flavors.WouldBorrow(id)) {
          deferred = true;
          continue;
        }
        HeadKey key{rec.priority, rec.order_created, id, 0,
                    rec.cq >= 0 ? s_.model.cluster_queues[rec.cq].queue_priority : 0};
        if (order_->NeedsShare() && rec.cq >= 0) {
          const auto& combos = s_.recs[id].combos;
          key.share = combos.empty()
                          ? 0
                          : e_.flavors.ShareOf(rec.cq, e_.flavors.MinQuotaNeed(id, combos[0]));
        }
        heads.emplace_back(key, q);
      }
      if (heads.empty()) break;
      if (phase == 2 && !order_->NeedsShare()) {
        // As Kueue orders its entries (after the queue priority): a head that borrows from a
        // lower cohort goes before one that borrows from higher up (hierarchical cohorts; in a
        // flat one all borrow at 1).
        std::vector<std::pair<int, size_t>> by_height(heads.size());
        for (size_t i = 0; i < heads.size(); ++i)
          by_height[i] = {BorrowHeight(heads[i].first.id), i};
        std::vector<std::pair<HeadKey, int>> sorted = heads;
        std::sort(by_height.begin(), by_height.end(), [&](const auto& a, const auto& b) {
          const HeadKey& ka = heads[a.second].first;
          const HeadKey& kb = heads[b.second].first;
          if (bool less; QueuePriorityFirst(ka, kb, less)) return less;  // KAI's queue priority
          if (a.first != b.first) return a.first < b.first;
          return order_->Less(heads[a.second].first, heads[b.second].first);
        });
        for (size_t i = 0; i < heads.size(); ++i) sorted[i] = heads[by_height[i].second];
        heads.swap(sorted);
      } else {
        std::sort(heads.begin(), heads.end(),
                  [&](const auto& a, const auto& b) { return order_->Less(a.first, b.first); });
      }
      // 3./4. Admit (or preempt for) each head in order.
      for (const auto& [key, q] : heads) {
        cursor[q] = s_.KeyOf(key.id);
        WorkloadId id = key.id;
        if (s_.status[id].state != WorkloadState::kPending || s_.recs[id].parked != Parked::kNo)
          continue;
        e_.reservations.ApplyFor(id, now);
        Admission::Outcome o = e_.admission.TryAdmit(id, now, out);
        if (o != Admission::Outcome::kPending) continue;
        e_.reservations.OnFailed(id, now);
        if (strict(q)) {
          blocked[q] = true;
        } else {
          e_.pending.Park(id);
        }
      }
    }
    // Phase 1's last round found no head; when it left none for phase 2 either, every queue
    // is done or blocked and phase 2 would find nothing.
    if (!deferred) break;
  }
  // A workload woken for quota that failed for another reason (placement, a reservation) took
  // no quota: its queue's tree is marked released again, so that the next pass's WakeParked
  // offers that quota to the next parked workloads (it cleared the tree's mark when it woke it).
  bool again = false;
  for (WorkloadId id : e_.pending.TakeWokenForQuota()) {
    if (s_.status[id].state == WorkloadState::kPending && s_.recs[id].parked == Parked::kOther) {
      again = true;
      e_.pending.MarkRootReleased(s_.recs[id].cq);
    }
  }
  return again;
}

}  // namespace tessera
