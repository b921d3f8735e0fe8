#include "engine/actions/admit.h"

#include <algorithm>
#include <optional>

#include "engine/engine.h"

namespace tessera {

AdmitAction::AdmitAction(Engine& e) : e_(e), s_(e.st), order_(MakeQueueOrder(e.st.model.config)) {}

void AdmitAction::Execute(double now, std::vector<Decision>& out) {
  // Passes: wake what could now be admitted, then rounds over the queues. Another pass only
  // when a workload woken for quota failed for another reason (bounded: each pass moves such
  // workloads from quota parking to the other kind).
  for (int pass = 0; pass < 64; ++pass) {
    e_.pending.WakeParked();
    if (!Rounds(now, out)) break;
  }
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
  for (int phase = 1; phase <= 2; ++phase) {
    while (true) {
      heads.clear();
      for (int q = 0; q < nq; ++q) {
        if (blocked[q]) continue;
        auto it = next(q);
        if (it == e_.pending.queue(q).end()) continue;
        WorkloadId id = std::get<2>(*it);
        const WorkloadRec& rec = s_.recs[id];
        // Only a StrictFIFO queue keeps failed workloads in place: its head blocks the queue
        // until something that could help has happened.
        bool stale = strict(q) && rec.failed_release_epoch == s_.release_epoch &&
                     (!rec.can_preempt || rec.failed_admit_epoch == s_.admit_epoch);
        if (stale) {
          blocked[q] = true;
          continue;
        }
        if (phase == 1 && e_.flavors.WouldBorrow(id)) continue;
        HeadKey key{rec.priority, s_.status[id].created, id, 0};
        if (order_->NeedsShare() && rec.cq >= 0) {
          const auto& combos = s_.recs[id].combos;
          key.share = combos.empty()
                          ? 0
                          : e_.flavors.ShareOf(rec.cq, e_.flavors.MinQuotaNeed(id, combos[0]));
        }
        heads.emplace_back(key, q);
      }
      if (heads.empty()) break;
      std::sort(heads.begin(), heads.end(),
                [&](const auto& a, const auto& b) { return order_->Less(a.first, b.first); });
      // 3./4. Admit (or preempt for) each head in order.
      for (const auto& [key, q] : heads) {
        cursor[q] = QueueKey{-key.priority, key.created, key.id};
        WorkloadId id = key.id;
        if (s_.status[id].state != WorkloadState::kPending || s_.recs[id].parked != Parked::kNo)
          continue;
        Admission::Outcome o = e_.admission.TryAdmit(id, now, out);
        if (o != Admission::Outcome::kPending) continue;
        if (strict(q)) {
          blocked[q] = true;
        } else {
          e_.pending.Park(id);
        }
      }
    }
  }
  bool again = false;
  for (WorkloadId id : e_.pending.TakeWokenForQuota()) {
    if (s_.status[id].state == WorkloadState::kPending && s_.recs[id].parked == Parked::kOther)
      again = true;
  }
  return again;
}

}  // namespace tessera
