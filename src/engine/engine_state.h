// The engine's state between calls: the model with every name resolved to a dense id, the quota
// tree and cluster state (the snapshot every decision reads), and one record per workload. The
// rooms of the engine (admission, placement, preemption, the pending queues, the actions) read
// and change it; none of them keeps a copy.
//
// Thread-safety: none; owned by one Scheduler.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "engine/cluster_state.h"
#include "engine/dra_state.h"
#include "engine/quota_tree.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace tessera {

// One flavor combination, pod set by pod set as Kueue assigns flavors: for pod set ps and
// resource group g of the ClusterQueue, entry ps * groups + g is the index of the chosen flavor
// in that group (-1: the pod set asks for nothing the group covers). Empty: no ClusterQueue, or
// nothing covered. FlavorAssigner::FlavorIndex reads it.
using Combo = std::vector<int32_t>;
// Quota per flavor-resource, sorted by flavor-resource.
using Need = std::vector<std::pair<FlavorResource, int64_t>>;

struct ResolvedGroup {
  std::vector<int32_t> flavors;  // flavor ids in order; -1 for an undefined flavor
  std::vector<std::string> flavor_names;
};

struct ResolvedQueue {
  std::vector<ResolvedGroup> groups;
  std::array<int8_t, kMaxResources> group_of;  // -1: resource not covered (no quota limit)
  int tree_node = -1;
};

// One piece of a pending workload's reason, kept as numbers and formatted only when someone
// reads the status: a backlog retried every cycle would otherwise spend most of the cycle
// formatting messages nobody reads.
struct ReasonPart {
  bool quota = false;  // a quota shortfall (the numbers below); else `text`
  FlavorResource fr = 0;
  int64_t amount = 0, usage = 0, nominal = 0, avail = 0, borrowing_limit = 0;
  std::string text;
};

// Where a pending workload waits between attempts.
enum class Parked : int8_t {
  kNo,     // in its queue's pending set (or not pending at all)
  kQuota,  // failed only on quota, one flavor combination: woken when its ClusterQueue could
           // give it `park_need` of `park_fr` (a release in its cohort tree)
  kOther,  // woken by epochs: any release (placement), or an admission in its cohort tree
           // (it may preempt)
};

// One pod placed, with what it took (needed to release it).
struct PlacedPod {
  PodPlacement placement;
  Need quota;  // charged to the ClusterQueue
};

struct WorkloadRec {
  int32_t cq = -1;  // -1: not queued
  int32_t priority = 0;
  bool can_preempt = true;
  // Never preempted, admitted only within its ClusterQueue's nominal quota (KAI's
  // non-preemptible: Workload::non_preemptible, else its priority class's).
  bool non_preemptible = false;
  std::string unresolved;  // a missing reference: pending with this reason
  // (pod set, resource group) pairs a pod set requests from: where a combination chooses
  std::vector<std::pair<int32_t, int32_t>> slots;
  std::vector<Combo> combos;   // flavor combinations, computed once at Resolve
  std::vector<Need> min_need;  // per combo: quota for minCount pods, nothing placed (at Resolve)
  int64_t gpus_placed = 0;     // GPUs held by placed pods (victim ordering)
  Combo chosen;                // the flavor combination admitted
  std::vector<PlacedPod> placed;
  std::vector<int32_t> placed_per_set;
  int32_t spread_group = -1;  // hostname anti-affinity scope (see Workload::spread_group)
  // Pods per pod set an admission attempt aims to start together, when more than the minimums
  // (Kueue's partial admission preempting for more pods, admission/partial_admission.cc);
  // empty: the minimums.
  std::vector<int32_t> target_per_set;
  // Skip a retry while nothing that could help has happened since the last failure.
  int64_t failed_release_epoch = -1;
  int64_t failed_admit_epoch = -1;
  bool failed_on_placement = false;  // some combination had quota but no placement
  Parked parked = Parked::kNo;
  FlavorResource park_fr = 0;
  int64_t park_need = 0;
  int32_t park_pos = -1;  // index in PendingQueues' other-parked list
  // The FIFO key in its queue: WorkloadStatus::created, moved ahead of its priority once it has
  // waited past its wait limit (Workload::max_wait).
  double order_created = 0;
  double afs_key = 0;     // its LocalQueue's weighted usage, at the last sample (time/fair_usage.h)
  int32_t lq = -1;        // its LocalQueue (index in Model::local_queues), -1: none
  double submitted = -1;  // when it arrived
  // Reservations (time/reservations.h): its expected start and what it waits for, or why no
  // start can be given; appended to the reason.
  std::string time_note;
  // Grace periods (preemption/termination.h). A terminating victim: when its pods are gone, the
  // preemptor that waits for it (-1: none), and the preemption's reason. A preemptor: the
  // victims it still waits for; it is not tried while any is left.
  double grace_end = -1;
  WorkloadId grace_for = -1;
  std::string preempted_reason;
  int32_t awaiting = 0;
  // A preemptor that waits holds, until its last victim is gone, what it would hold admitted
  // (Terminations::Claim): `claim` of its queue's quota, and on the nodes it would take, the
  // part of `claim_pods` that was free (`claim_room[i]` of `claim_pods[i]`, empty when nothing
  // was; whole GPUs, a share's milli and MIG slices included; empty while lifted).
  Need claim;
  std::vector<Room> claim_pods, claim_room;
  double claim_start = -1;  // when its last victim is gone (its run starts then)
  // The instant of a chain of preemptions ("an admission is final within its instant"): with
  // grace periods, what would happen in one instant spreads over several. A victim requeued,
  // or a preemptor whose victims are gone, at `cascade_at` acts in the instant `cascade` of the
  // preemption that moved it (CascadeOf); `admitted_in` is the instant its admission counts in.
  double cascade = -1, cascade_at = -1;
  double admitted_in = -1;
  // Preempted: the value of its cohort's `ends_by_root` then. While no workload of the cohort
  // has ended since, it does not preempt in order to borrow (MayBorrowByPreempting).
  int64_t preempted_at_ends = -1;
  // The pending reason, formatted lazily by status().
  std::vector<ReasonPart> why;
  mutable bool reason_stale = false;
};

// The instant workload `r` acts in at `now`: that of the preemption that moved it, when it was
// requeued (or its victims were gone) at `now`; else `now`.
inline double CascadeOf(const WorkloadRec& r, double now) {
  return r.cascade_at == now ? r.cascade : now;
}

// The order inside a pending queue: (LocalQueue usage, -priority, created, id). The usage is 0
// except in a ClusterQueue with usage-based admission fair sharing (time/fair_usage.h).
using QueueKey = std::tuple<double, int32_t, double, int32_t>;
inline WorkloadId KeyId(const QueueKey& k) { return std::get<3>(k); }

struct EngineState {
  Model model;
  absl::flat_hash_map<std::string, int32_t> flavor_ids, cq_ids, cohort_ids;
  absl::flat_hash_map<std::string, int32_t> local_queues;     // "ns/name" -> cq (-1: CQ missing)
  absl::flat_hash_map<std::string, int32_t> local_queue_ids;  // "ns/name" -> index
  absl::flat_hash_map<std::string, int32_t> priority_classes, workload_priority_classes;
  std::vector<std::string> cohort_names;
  std::vector<ResolvedQueue> queues;
  std::unique_ptr<QuotaTree> quota;
  std::unique_ptr<ClusterState> cluster;
  std::unique_ptr<DraState> dra;           // devices of Dynamic Resource Allocation (docs/dra.md)
  std::vector<std::vector<NodeId>> pools;  // pool 0: all schedulable nodes; f+1: flavor f
  // Nodes that take no new pods (a spot node under its interruption notice, docs/autoscaling.md);
  // empty until the first is cordoned.
  std::vector<bool> cordoned;
  int32_t default_priority = 0;
  bool default_preempt_never = false;

  // Per workload, by id (a retired id is not read: Scheduler::Retire).
  mutable IdPages<WorkloadStatus> status;  // reasons formatted lazily
  IdPages<WorkloadRec> recs;
  std::vector<WorkloadId> rejected_unreported;
  std::set<WorkloadId> partial;  // admitted with pods still to place
  // Pending workloads whose attempt in this cycle failed on placement while their quota fitted,
  // for the `consolidate` action (actions/consolidate.h), which takes them; collected only
  // while that action is configured.
  bool collect_placement_failures = false;
  std::vector<WorkloadId> placement_failures;
  // Preemption candidates by queue, lowest priority first: a preemptor walks only the prefix
  // below its own priority, and skips a queue that borrows nothing it needs.
  std::vector<absl::btree_set<std::pair<int32_t, WorkloadId>>> admitted_by_cq;
  // Admitted workloads without a ClusterQueue (no queue-name): no preemption candidates, but
  // runs that end, which the reservations plan with (time/reservations.h).
  absl::btree_set<WorkloadId> admitted_without_queue;
  std::vector<std::vector<int32_t>> cqs_by_root;  // per quota-tree root node
  // Epochs: a failed workload is retried only after one of them moved.
  int64_t release_epoch = 0;  // capacity or quota released
  int64_t admit_epoch = 0;    // something admitted (a preemptor may now find victims)
  // Per quota-tree root: admitted workloads that ended there (their runs finished or failed;
  // evictions do not count). WorkloadRec::preempted_at_ends.
  std::vector<int64_t> ends_by_root;
  // The last instant at which a preemption search passed over a workload admitted in it; the
  // first cycle after it moves admit_epoch (those workloads are candidates now), and
  // Scheduler::NextRetry asks for that cycle. Set by the search (which reads the state const).
  mutable double held_back_at = -1;
  absl::flat_hash_map<std::string, int32_t> spread_group_ids;
  std::vector<absl::flat_hash_map<NodeId, int32_t>> group_nodes;  // per spread group
  CycleStats stats;

  static int queue_index(int32_t cq) { return cq + 1; }  // queue 0: workloads without a queue
  bool HasPreemptionPolicy(int32_t cq) const {
    const PreemptionConfig& pc = model.cluster_queues[cq].preemption;
    return pc.within_cluster_queue != WithinClusterQueuePolicy::kNever ||
           pc.reclaim_within_cohort != ReclaimPolicy::kNever ||
           pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
  }
  // The pods of pod set `ps` an admission must start together: its minimum
  // (Workload::MinOfSet), or the attempt's target.
  int32_t MinOfSet(WorkloadId id, size_t ps) const {
    const auto& t = recs[id].target_per_set;
    return t.empty() ? model.workloads[id].MinOfSet(ps) : t[ps];
  }
  // Hostname anti-affinity: pods of the workload's spread group on node n.
  bool GroupOnNode(WorkloadId id, NodeId n) const {
    int32_t g = recs[id].spread_group;
    auto it = group_nodes[g].find(n);
    return it != group_nodes[g].end() && it->second > 0;
  }
  // Its state, kFinished once retired: a timer or list dropped lazily may name a retired id.
  WorkloadState StateOf(WorkloadId id) const {
    return recs.retired(static_cast<size_t>(id)) ? WorkloadState::kFinished : status[id].state;
  }
  QueueKey KeyOf(WorkloadId id) const {
    return {recs[id].afs_key, -recs[id].priority, recs[id].order_created, id};
  }
};

}  // namespace tessera
