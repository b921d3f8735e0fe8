// The pending queues: one set per ClusterQueue in queue order (priority, then creation), kept
// incrementally, and the parking of workloads that failed until something that could help has
// happened. A workload that failed only on quota, with one flavor combination, is parked under
// (flavor-resource, amount) and woken, earliest first, by a release in its quota tree that its
// queue can give it; others are parked on the release and admission epochs.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_set.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class PendingQueues {
 public:
  explicit PendingQueues(Engine& e);
  void Init(int num_cluster_queues, int quota_tree_nodes);

  // The pending set of queue index q (EngineState::queue_index).
  const absl::btree_set<QueueKey>& queue(int q) const { return pending_[q]; }
  int num_queues() const { return static_cast<int>(pending_.size()); }
  // Counts every Enqueue: a caller that walks only the non-empty queues knows when to look again.
  int64_t enqueued() const { return enqueued_; }
  // Every workload waiting in queue q, in its pending set or parked.
  const absl::flat_hash_set<WorkloadId>& members(int q) const { return members_[q]; }

  void SetPending(WorkloadId id, std::string reason);
  void Enqueue(WorkloadId id);
  // Takes a pending workload out of wherever it waits (queue or parking).
  void Dequeue(WorkloadId id);
  // After a failed attempt: out of the queue until something could help (not for StrictFIFO
  // queues, whose head blocks the queue).
  void Park(WorkloadId id);
  // Moves parked workloads that could now be admitted back into their queues.
  void WakeParked();
  // A release in the quota tree of ClusterQueue `cq`: quota-parked workloads there may wake.
  void MarkRootReleased(int32_t cq);
  // The workloads woken for quota since the last call, which is the end of a pass.
  std::vector<WorkloadId> TakeWokenForQuota();

 private:
  void Unpark(WorkloadId id);

  Engine& e_;
  EngineState& s_;
  std::vector<absl::btree_set<QueueKey>> pending_;        // per queue index
  std::vector<absl::flat_hash_set<WorkloadId>> members_;  // per queue index
  // Parking: per ClusterQueue, (flavor-resource, amount needed) -> the workloads in queue order.
  std::vector<absl::btree_map<std::pair<FlavorResource, int64_t>, absl::btree_set<QueueKey>>>
      quota_parked_;
  std::vector<WorkloadId> other_parked_;
  std::vector<bool> root_dirty_;  // a release in this quota tree since the last wake
  std::vector<int32_t> dirty_roots_;
  std::vector<WorkloadId> woken_for_quota_;  // this pass
  int64_t enqueued_ = 0;
};

}  // namespace tessera
