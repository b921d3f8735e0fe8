#include "engine/pending_queues.h"

#include <limits>
#include <optional>

#include "engine/engine.h"

namespace tessera {

PendingQueues::PendingQueues(Engine& e) : e_(e), s_(e.st) {}

void PendingQueues::Init(int num_cluster_queues, int quota_tree_nodes) {
  pending_.resize(num_cluster_queues + 1);
  members_.resize(num_cluster_queues + 1);
  quota_parked_.resize(num_cluster_queues);
  root_dirty_.assign(quota_tree_nodes, false);
}

void PendingQueues::MarkRootReleased(int32_t cq) {
  if (cq < 0) return;
  int root = s_.quota->root(cq);
  if (!root_dirty_[root]) {
    root_dirty_[root] = true;
    dirty_roots_.push_back(root);
  }
}

std::vector<WorkloadId> PendingQueues::TakeWokenForQuota() {
  std::vector<WorkloadId> out;
  out.swap(woken_for_quota_);
  return out;
}

void PendingQueues::SetPending(WorkloadId id, std::string reason) {
  s_.status[id].state = WorkloadState::kPending;
  s_.status[id].reason = std::move(reason);
  s_.recs[id].why.clear();
  s_.recs[id].reason_stale = false;
}

void PendingQueues::Enqueue(WorkloadId id) {
  const int q = EngineState::queue_index(s_.recs[id].cq);
  // Admission fair sharing: its LocalQueue's usage at the last sample, whether it arrives, is
  // requeued or moved (time/fair_usage.h); 0 elsewhere.
  s_.recs[id].afs_key = e_.fair_usage.EntryKey(id);
  pending_[q].insert(s_.KeyOf(id));
  members_[q].insert(id);
  ++enqueued_;
}

void PendingQueues::Dequeue(WorkloadId id) {
  const int q = EngineState::queue_index(s_.recs[id].cq);
  members_[q].erase(id);
  if (s_.recs[id].parked != Parked::kNo) {
    Unpark(id);
    return;
  }
  pending_[q].erase(s_.KeyOf(id));
}

void PendingQueues::Park(WorkloadId id) {
  WorkloadRec& rec = s_.recs[id];
  const QueueKey key = s_.KeyOf(id);
  pending_[EngineState::queue_index(rec.cq)].erase(key);
  const bool quota_only = rec.cq >= 0 && !rec.failed_on_placement && rec.combos.size() == 1 &&
                          (!rec.can_preempt || !s_.HasPreemptionPolicy(rec.cq));
  std::optional<ReasonPart> shortfall;
  if (quota_only) shortfall = e_.flavors.QuotaShortfall(id, rec.min_need[0]);
  if (shortfall) {
    rec.parked = Parked::kQuota;
    rec.park_fr = shortfall->fr;
    rec.park_need = shortfall->amount;
    quota_parked_[rec.cq][{rec.park_fr, rec.park_need}].insert(key);
  } else {
    rec.parked = Parked::kOther;
    rec.park_pos = static_cast<int32_t>(other_parked_.size());
    other_parked_.push_back(id);
  }
}

void PendingQueues::Unpark(WorkloadId id) {
  WorkloadRec& rec = s_.recs[id];
  if (rec.parked == Parked::kQuota) {
    auto& buckets = quota_parked_[rec.cq];
    auto it = buckets.find({rec.park_fr, rec.park_need});
    it->second.erase(s_.KeyOf(id));
    if (it->second.empty()) buckets.erase(it);
  } else if (rec.parked == Parked::kOther) {
    WorkloadId last = other_parked_.back();
    other_parked_[rec.park_pos] = last;
    s_.recs[last].park_pos = rec.park_pos;
    other_parked_.pop_back();
    rec.park_pos = -1;
  }
  rec.parked = Parked::kNo;
}

void PendingQueues::WakeParked() {
  // Quota-parked: in each tree that released something, wake, queue by queue, the earliest
  // parked workloads (in queue order) whose need the queue can give now, counting the need of
  // those already woken against it. A woken workload that then fails for another reason sends
  // the pass round again (Rounds' return), so quota is never left unused by a wrong guess.
  for (int32_t root : dirty_roots_) {
    root_dirty_[root] = false;
    for (int32_t cq : s_.cqs_by_root[root]) {
      auto& buckets = quota_parked_[cq];
      constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
      // Erasing from a btree invalidates its iterators: every step looks up again.
      for (auto fr_it = buckets.begin(); fr_it != buckets.end();) {
        const FlavorResource fr = fr_it->first.first;
        int64_t avail = s_.quota->Available(cq, fr);
        while (true) {
          std::optional<QueueKey> best;
          int64_t best_need = 0;
          for (auto it = buckets.lower_bound({fr, kMin});
               it != buckets.end() && it->first.first == fr && it->first.second <= avail; ++it) {
            if (!best || *it->second.begin() < *best) {
              best = *it->second.begin();
              best_need = it->first.second;
            }
          }
          if (!best) break;
          WorkloadId id = KeyId(*best);
          avail -= best_need;
          Unpark(id);
          Enqueue(id);
          woken_for_quota_.push_back(id);
        }
        fr_it = buckets.lower_bound({fr + 1, kMin});
      }
    }
  }
  dirty_roots_.clear();
  // Other parked: woken when the epochs they wait on moved.
  for (size_t i = 0; i < other_parked_.size();) {
    WorkloadId id = other_parked_[i];
    const WorkloadRec& rec = s_.recs[id];
    bool stale = rec.failed_release_epoch == s_.release_epoch &&
                 (!rec.can_preempt || rec.failed_admit_epoch == s_.admit_epoch);
    if (stale) {
      ++i;
      continue;
    }
    Unpark(id);  // swaps the last one into position i
    Enqueue(id);
  }
}

}  // namespace tessera
