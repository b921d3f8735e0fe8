// The scheduling engine: admits gangs of pods under ClusterQueue quotas, places them on nodes,
// preempts to make room, and explains every workload it leaves pending.
//
// Usage: build a Scheduler from a Model, Submit() workloads as they arrive, call RunCycle(now)
// whenever something changed, Finish() workloads that completed. Decisions come back as plain
// values; the caller (simulator, Kubernetes backend) carries them out.
//
// Thread-safety: not thread-safe; one Scheduler per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tessera {

// Where one pod of a workload runs.
// The devices of one of a pod's DRA claims (PodSet::claims), as DraState allocated them.
struct DraAllocation {
  std::vector<int32_t> devices;       // DraState's device ids
  std::vector<std::string> requests;  // per device: its request ("gpu", or "gpu/sub")
  // Per device, for a share of a device that allows multiple allocations: what it consumes of
  // each capacity (thousandths, by the capacity's name in the slice). Empty, or an empty map,
  // for an exclusive device.
  std::vector<std::map<std::string, int64_t>> consumed = {};
};

struct PodPlacement {
  int32_t pod_set = 0;
  int32_t index = 0;  // ordinal of the pod inside its pod set
  NodeId node = -1;
  std::vector<int32_t> gpus;  // device indices on the node
  // On a node whose MIG layout Tessera chooses (Node::mig_dynamic), a pod asking for MIG
  // profiles gets one entry in `gpus` per instance and here the first memory slice of each (0-7,
  // NVIDIA's placement start), largest profile first; empty otherwise.
  std::vector<int8_t> mig_starts = {};
  // One per PodSet::claims entry; empty when the pod set has no DRA claims.
  std::vector<DraAllocation> dra = {};
};

enum class WorkloadState {
  kInactive,  // not submitted yet
  kPending,
  kAdmitted,  // quota reserved and pods placed: running
  // Preempted and told to stop; its pods keep their nodes, GPUs and quota until its grace
  // period (Workload::GraceSeconds) ends, then it waits in its queue again (kPending).
  kTerminating,
  kFinished,
  kRejected,  // can never fit, even in an empty cluster with all quota
  kFailed,    // ended by the scheduler's caller with a reason (e.g. DeadlineExceeded)
};
const char* WorkloadStateName(WorkloadState s);

struct WorkloadStatus {
  WorkloadState state = WorkloadState::kInactive;
  int32_t cluster_queue = -1;  // resolved ClusterQueue, -1 when none
  std::string reason;          // why pending / rejected; empty otherwise
  std::vector<PodPlacement> pods;
  std::vector<int32_t> flavors;  // per pod set: chosen flavor per resource group, flattened
  double created = 0;            // submission time, the FIFO key
  double admitted_at = -1;
  int32_t preemptions = 0;  // times this workload was preempted
  // Pending: when it is expected to start (the scheduler's clock), from its reservation or the
  // estimated ends of what is in its way; -1 when none can be given (the reason says why).
  double expected_start = -1;
};

struct Decision {
  enum class Type {
    kAdmit,    // quota reserved, `pods` placed (at least minCount)
    kScaleUp,  // pods beyond minCount placed later; `pods` lists only the new ones
    kPreempt,  // `workload` evicted to make room for `preemptor`
    kReject,   // `workload` can never be admitted; `reason` says why
    // `workload` waited past its wait limit (Workload::max_wait): it now goes ahead of the
    // workloads of its priority; `reason` says how long it waited.
    kWaitLimitExceeded,
    // A preempted `workload`'s grace period ended: its pods are gone, its GPUs and quota free,
    // and it waits in its queue again. Only for victims with a grace period.
    kTerminated,
    // Consolidation (actions/consolidate.h): the running `workload` was taken off its nodes and
    // placed again at `pods` (all of them, replacing the old ones) in the same cycle, to make
    // room for `preemptor`, which is admitted by a kAdmit after it. It stays admitted; its run
    // restarts at the new place from its last checkpoint. `reason` says why.
    kMove,
  };
  Type type = Type::kAdmit;
  WorkloadId workload = -1;
  WorkloadId preemptor = -1;
  std::string reason;
  std::vector<PodPlacement> pods;
  // kPreempt: the victim's grace period (seconds; its terminationGracePeriodSeconds). While it
  // lasts the victim keeps what it holds (kTerminating) and the preemptor waits; 0: released
  // at once.
  double grace_seconds = 0;
};

// Admission fair sharing (docs/time.md): one LocalQueue's decayed usage, per resource, as Kueue
// keeps it in the LocalQueue's status.fairSharing.admissionFairSharingStatus.
struct LocalQueueUsage {
  // Resource name -> decayed amount, in Kubernetes units (GPUs with shares as fractions, CPU
  // cores, memory bytes); only the resources the usage counts (resourceWeights).
  std::vector<std::pair<std::string, double>> consumed;
  double at = -1;  // the scheduler's clock at the last sample; -1: none yet
};

// Elastic clusters (docs/autoscaling.md): what an autoscaler may add, and what it is told to.
struct NodeGroupOffer {
  std::vector<NodeId> addable;  // offline nodes it may add, in the order it adds them
  double node_price = 0;        // per node-hour: among groups that serve a gang, the cheapest
};
struct NodeRequest {
  WorkloadId workload = -1;   // the pending workload the nodes are for
  int32_t group = -1;         // index into the offers
  std::vector<NodeId> nodes;  // nodes to add (a prefix of the group's addable ones)
  bool whole_gang = true;     // pod-by-pod: false when the nodes place only part of its gang
};

// One action of the cycle (SchedulerConfig.actions): how often it ran and, with
// SchedulerConfig::time_actions, its wall time.
struct ActionStats {
  std::string name;
  int64_t runs = 0;
  double seconds = 0;
};

// One ClusterQueue as it stands, for metrics (docs/observability.md).
struct ClusterQueueStats {
  int64_t pending_active = 0;  // pending in its queue, to be tried (Kueue's "active")
  // Pending but set aside after a failed attempt until something that could help happens
  // (Kueue's "inadmissible").
  int64_t pending_inadmissible = 0;
  int64_t reservations = 0;  // reservations planned for its heads (docs/time.md)
  // The first of them in precedence order: its workload and expected start (the scheduler's
  // clock); -1 when none.
  WorkloadId first_reservation = -1;
  double first_reservation_start = -1;
  // Kueue's weighted share: the largest ratio of usage above its nominal quota to what its
  // cohort tree can lend, x 1000, over its weight; 0 within nominal quota, +inf when it borrows
  // with weight 0.
  double weighted_share = 0;
};

struct CycleStats {
  int64_t attempts = 0;
  int64_t admitted = 0;
  int64_t preempted = 0;
  int64_t moved = 0;                 // workloads moved by consolidation (Decision::Type::kMove)
  std::vector<ActionStats> actions;  // in the order they run
};

// How long after an instant a cycle retries a preemption held back in it (Scheduler::NextRetry),
// in the simulator when nothing else comes sooner: about when serve's next cycle runs, after the
// binds of the instant's admissions.
inline constexpr double kHeldBackRetrySeconds = 1;

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Builds an engine for `model`. Fails only on inconsistencies the loader should have caught
  // (e.g. a cohort cycle). Unresolved references (queue, flavor, priority class) do not fail:
  // the workload stays pending with that reason.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Scheduler>> Create(Model model);

  virtual const Model& model() const = 0;

  // Adds a workload that was not in the model; it starts kInactive.
  virtual WorkloadId AddWorkload(Workload w) = 0;
  // The workload arrives at time `now` and waits in its queue.
  virtual void Submit(WorkloadId id, double now) = 0;
  // The workload completed or was deleted, in any state: an admitted (or terminating) one
  // releases its pods and quota, a pending one leaves its queue. A caller that learns a
  // preempted workload's pods are gone before its grace period ends (Kubernetes) calls this.
  virtual void Finish(WorkloadId id, double now) = 0;
  // As Finish, but the workload ends kFailed with `reason` (e.g. "DeadlineExceeded: ..."), and
  // its run teaches the runtime estimator nothing.
  virtual void Fail(WorkloadId id, double now, std::string reason) = 0;
  // The caller is done with a workload that ended (finished, failed, or rejected and reported
  // by a cycle): the engine frees what it held for it, its model().workloads entry included,
  // and keeps only what its later decisions need (the runtime it taught the estimator). Its id
  // is not reused, and is not read again: no call may name it, and model().workloads[id] is
  // gone; retired(id) says so. A long replay retires each job once it has counted it, so that
  // memory grows with the jobs in flight rather than with the trace. A workload that has not
  // ended is not retired (nothing happens).
  virtual void Retire(WorkloadId id) = 0;
  virtual bool retired(WorkloadId id) const = 0;
  virtual int32_t num_retired() const = 0;  // of num_workloads()
  // Marks a not-yet-admitted workload as admitted at placements that already exist (pods bound
  // before a restart, or by another scheduler). Charges node resources, the given GPU devices
  // (or the lowest free ones when a placement lists none) and the quota of the first flavor
  // combination whose node labels hold on every node used. Nothing changes on error:
  // InvalidArgument for placements that do not match the workload, FailedPrecondition when a
  // node, device or the quota cannot hold them. Pods beyond those restored are placed by later
  // cycles (kScaleUp), as for any workload admitted with fewer than all its pods; fewer than
  // its minimum: the missing ones together, else it is evicted whole after
  // SchedulerConfig::stale_gang_grace_seconds (engine/stale_gangs.h).
  [[nodiscard]] virtual absl::Status Restore(WorkloadId id, std::vector<PodPlacement> pods,
                                             double now) = 0;
  // One scheduling pass over every pending workload.
  virtual std::vector<Decision> RunCycle(double now) = 0;
  // The first instant after `now` at which a cycle would decide something even if nothing
  // arrived or ended (a wait limit running out); +infinity when none.
  virtual double NextTimer(double now) const = 0;
  // After the cycles at `now`: when a preemption search at `now` passed over a workload
  // admitted at `now` (an admission is final within its instant), the instant at which a cycle
  // may take it, `now + kHeldBackRetrySeconds`; +infinity otherwise. Not part of NextTimer: a
  // caller that has no other reason for a cycle soon (the simulator, when nothing else is due)
  // runs one then. Policies that preempt in a circle hold something back at every instant;
  // the caller bounds the chain (the simulator stops when the running set repeats).
  virtual double NextRetry(double now) const = 0;
  // When the next grace period of a preempted workload ends (a kTerminated decision is due);
  // +infinity when none runs. Part of NextTimer.
  virtual double NextGraceEnd() const = 0;

  // Admission fair sharing: LocalQueue `lq`'s usage at the last sample (index in
  // model().local_queues). REQUIRES: 0 <= lq < model().local_queues.size().
  virtual LocalQueueUsage local_queue_usage(int32_t lq) const = 0;
  // Before the first cycle: LocalQueue `lq` had used `u.consumed` at `u.at` (the scheduler's
  // clock, before or at the first cycle's now): the first cycle starts from it, decayed by the
  // half-life for the time between (a restart, docs/time.md). Unknown resource names are
  // ignored. REQUIRES: 0 <= lq < model().local_queues.size().
  virtual void SeedLocalQueueUsage(int32_t lq, LocalQueueUsage u) = 0;

  virtual const WorkloadStatus& status(WorkloadId id) const = 0;
  // The priority it was resolved to (its priority class's value, or the default).
  virtual int32_t priority(WorkloadId id) const = 0;
  virtual int32_t num_workloads() const = 0;
  virtual const CycleStats& stats() const = 0;

  // Cluster-wide GPU accounting, for summaries.
  virtual int64_t gpus_total() const = 0;
  virtual int64_t gpus_allocated() const = 0;
  // Resources in use by admitted workloads of ClusterQueue `cq` in flavor `flavor`.
  virtual Resources ClusterQueueUsage(int32_t cq, int32_t flavor) const = 0;
  // REQUIRES: 0 <= cq < model().cluster_queues.size().
  virtual ClusterQueueStats cluster_queue_stats(int32_t cq) const = 0;

  // Elastic clusters (engine/elastic/elastic.h, docs/autoscaling.md). A node that is not
  // provisioned (Node::provisioned false) starts offline.
  // Brings node n online or takes it offline. REQUIRES for offline: WorkloadsOnNode(n) empty.
  virtual void SetNodeOnline(NodeId n, bool online) = 0;
  virtual bool node_online(NodeId n) const = 0;
  // Online with nothing placed on it.
  virtual bool node_empty(NodeId n) const = 0;
  // A cordoned node takes no new pods; what runs on it stays.
  virtual void SetNodeCordoned(NodeId n, bool cordoned) = 0;
  // Admitted workloads with a pod on node n.
  virtual std::vector<WorkloadId> WorkloadsOnNode(NodeId n) const = 0;
  // The caller takes an admitted workload's pods away (its node is interrupted): it returns to
  // its queue pending, as a preemption victim does. Returns the kPreempt decision to report.
  virtual Decision EvictForNode(WorkloadId id, std::string reason) = 0;

  // GPUs that fail (engine/elastic/gpu_health.h, docs/gpu-failures.md). Marks device `gpu` of
  // node n (an index as in PodPlacement::gpus; on a time-sliced node every replica slot of its
  // physical GPU) failed, or repaired. A failed device is given to nobody: not free, not counted
  // in gpus_total() or gpus_allocated(), no share or MIG instance lands on it. Pods already on
  // it keep it (nothing is evicted here): the caller evicts their workloads (WorkloadsOnGpu,
  // then EvictForNode for each: a gang leaves whole and waits in its queue again) or leaves them
  // to their controller; when the last one leaves, the device stays out. Repair gives it back
  // (and parked workloads retry). Verify holds throughout. n or gpu out of range: nothing.
  virtual void SetGpuFailed(NodeId n, int32_t gpu, bool failed) = 0;
  virtual bool gpu_failed(NodeId n, int32_t gpu) const = 0;
  // Admitted (or terminating) workloads with a pod on device `gpu` of node n (any replica slot
  // of its physical GPU), in id order; empty when out of range.
  virtual std::vector<WorkloadId> WorkloadsOnGpu(NodeId n, int32_t gpu) const = 0;
  // Failed devices now (replica slots on time-sliced nodes), with pods on them or not.
  virtual int64_t failed_gpus() const = 0;
  // Which nodes to add for which pending workloads (elastic.h's PlanScaleUp); changes nothing.
  virtual std::vector<NodeRequest> PlanScaleUp(const std::vector<NodeGroupOffer>& groups,
                                               const std::vector<NodeId>& coming, ScaleUpMode mode,
                                               int32_t max_workloads) = 0;

  // Kubernetes mode's ProvisioningRequests (elastic.h's NeedCapacity): the workloads, in queue
  // order, at most `max_workloads`, that their queue's quota admits but the nodes up cannot
  // hold; changes nothing.
  virtual std::vector<WorkloadId> NeedCapacity(int32_t max_workloads) = 0;

  // What would let pending workload `id` start, one sentence each, from the parts of its reason
  // (reasons.h FitHints); empty when it is not pending or nothing is known.
  virtual std::vector<std::string> fit_hints(WorkloadId id) const = 0;

  // Checks every invariant (capacity, GPU booking, quota, gangs); returns the first broken one.
  // Tests and the simulator's --verify call it after each cycle.
  virtual absl::Status Verify() const = 0;
};

}  // namespace tessera
