// Kueue's queueing objects: ResourceFlavor, ClusterQueue, Cohort, LocalQueue, and the
// priority classes. Field names and defaults follow kueue.x-k8s.io/v1beta1.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/labels.h"
#include "model/resources.h"

namespace tessera {

struct ResourceFlavor {
  std::string name;
  Labels node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;  // added to admitted pods
  std::string topology_name;
  std::string source;
};

// kueue.x-k8s.io Topology: the node labels of each topology level, outermost first (e.g. block,
// rack, kubernetes.io/hostname). Loaded for topology-aware placement; not used by admission yet.
struct Topology {
  std::string name;
  std::vector<std::string> levels;  // spec.levels[].nodeLabel
  std::string source;
};

struct ResourceQuota {
  ResourceId resource = 0;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // absent: unlimited
  std::optional<int64_t> lending_limit;    // absent: lends everything unused
};

struct FlavorQuotas {
  std::string flavor;
  std::vector<ResourceQuota> resources;
};

struct ResourceGroup {
  std::vector<ResourceId> covered;
  std::vector<FlavorQuotas> flavors;  // tried in this order
};

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };
enum class WithinClusterQueuePolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimPolicy { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };
// Which victims of equal priority a preemptor takes (annotation tessera.dev/victim-order on the
// ClusterQueue). kLeastLostWork: the set that frees enough and loses the least work (GPU-seconds
// since each victim's last checkpoint, else since its start; then CPU-seconds), ties broken by
// fewer victims. kFewestVictims: the largest first (Tessera's order before). kKueue: Kueue's
// own order, the most recently admitted first.
enum class VictimOrder : int8_t { kLeastLostWork, kFewestVictims, kKueue };

struct PreemptionConfig {
  WithinClusterQueuePolicy within_cluster_queue = WithinClusterQueuePolicy::kNever;
  ReclaimPolicy reclaim_within_cohort = ReclaimPolicy::kNever;
  BorrowWithinCohortPolicy borrow_within_cohort = BorrowWithinCohortPolicy::kNever;
  std::optional<int32_t> max_priority_threshold;  // borrowWithinCohort.maxPriorityThreshold
  VictimOrder victim_order = VictimOrder::kLeastLostWork;  // tessera.dev/victim-order
};

// spec.stopPolicy (Kueue): a stopped ClusterQueue admits nothing new, and its pending
// workloads say so. Hold keeps the admitted workloads running; HoldAndDrain evicts them.
enum class StopPolicy { kNone, kHold, kHoldAndDrain };

// spec.flavorFungibility (Kueue): whether the search for a flavor goes on past one where the
// workload would borrow (whenCanBorrow) or preempt (whenCanPreempt), and, when every flavor
// needs one or the other, which it prefers. Kueue's defaults: MayStopSearch (old name Borrow),
// TryNextFlavor, BorrowingOverPreemption.
enum class FungibilityPolicy : int8_t { kMayStopSearch, kTryNextFlavor };
enum class FungibilityPreference : int8_t { kBorrowingOverPreemption, kPreemptionOverBorrowing };
struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FungibilityPreference preference = FungibilityPreference::kBorrowingOverPreemption;
};

// What becomes of a workload on a GPU that failed (annotation tessera.dev/gpu-failure-policy on
// the ClusterQueue; docs/gpu-failures.md). kRequeue: it is evicted whole (a gang with every pod)
// and waits in its queue again, to restart from its last checkpoint; kLeaveToController: it is
// told (an Event) and left running, for its controller to restart or end.
enum class GpuFailurePolicy : int8_t { kRequeue, kLeaveToController };

struct ClusterQueue {
  std::string name;
  std::string cohort;                // empty: none
  LabelSelector namespace_selector;  // absent matches no namespace, as in Kueue
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
  std::vector<ResourceGroup> resource_groups;
  PreemptionConfig preemption;
  double fair_weight = 1.0;
  // KAI's queue priority (annotation tessera.dev/queue-priority): a higher one's head is tried
  // before the others', ahead of fair share and of the heads' own priorities.
  int32_t queue_priority = 0;
  GpuFailurePolicy gpu_failure_policy = GpuFailurePolicy::kRequeue;
  // Defaults for the workloads of this queue (annotations tessera.dev/max-wait and
  // tessera.dev/min-runtime on the ClusterQueue, seconds): see Workload.
  std::optional<double> max_wait;
  std::optional<double> min_runtime;
  // spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing: its workloads are ordered
  // by their LocalQueue's decayed usage first (SchedulerConfig admissionFairSharing).
  bool usage_based_admission = false;
  StopPolicy stop_policy = StopPolicy::kNone;
  FlavorFungibility flavor_fungibility;
  // Annotation tessera.dev/shares-in-gpu-quota "true": a GPU share (tessera.dev/gpu-milli)
  // also counts against the queue's nvidia.com/gpu quota, as a fraction of a GPU (KAI's
  // accounting), so that reclaim and fair sharing see one GPU resource (docs/gpu-sharing.md).
  bool shares_in_gpu_quota = false;
  // Annotation tessera.dev/consolidation (engine/actions/consolidate.h): "true" lets its heads
  // move running workloads to make room even when SchedulerConfig does not list `consolidate`;
  // "false" keeps it out: its heads move nothing and its workloads are never moved. Unset: as
  // SchedulerConfig says.
  std::optional<bool> consolidation;
  std::string source;
};

struct Cohort {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<ResourceGroup> resource_groups;
  double fair_weight = 1.0;
  std::string source;
};

struct LocalQueue {
  std::string ns;
  std::string name;
  std::string cluster_queue;
  std::string source;
  double fair_weight = 1.0;  // spec.fairSharing.weight (admission fair sharing)
};

struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  bool preemption_never = false;  // preemptionPolicy: Never
  std::string source;
  // tessera.dev/preemptibility: non-preemptible: its workloads run only within their queue's
  // nominal quota and are never preempted (KAI's non-preemptible priority classes).
  bool non_preemptible = false;
};

struct WorkloadPriorityClass {
  std::string name;
  int32_t value = 0;
  std::string source;
  bool non_preemptible = false;  // as PriorityClass's
};

}  // namespace tessera
