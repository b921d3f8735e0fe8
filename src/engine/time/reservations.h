// Reservations and backfill (docs/time.md), after Slurm's backfill scheduler, in the engine's
// admit action:
//   - a head that cannot start gets a reservation: the earliest time at which, with the running
//     workloads gone in the order of their estimated ends (RuntimeEstimator), its minCount pods
//     fit (quota and placement, with every rule of its gang, topology and flavors), the nodes
//     and GPUs it would take then, and the quota; one per ClusterQueue by default
//     (BackfillConfig);
//   - while a reservation is held, the free GPUs and node resources it will take, and the quota
//     its queue's releases will not cover by then, are booked in the cluster state and the
//     quota tree as if a workload held them (a phantom), so placement routes around them;
//   - a later workload is attempted with the phantoms of every reservation that starts before
//     it would end (by its estimate; no estimate: all) and without the others: it starts now
//     only if it delays no reservation (backfill);
//   - preemption never sees a phantom: a workload that would fit but for a reservation waits
//     instead of preempting (a reservation never makes the engine preempt).
// Reservations are planned again at the start of every admit action (Begin): estimates that
// were wrong move them. Outside the admit action nothing is booked (End).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

struct Reservation {
  WorkloadId id = -1;
  double start = 0;                                      // expected start, the scheduler's clock
  double end = std::numeric_limits<double>::infinity();  // start + its estimate
  Combo combo;
  using Pod = Room;
  std::vector<Pod> pods;  // where it will start
  Need quota;             // held: its need less what its queue's releases free by `start`
  int32_t waits_for = 0;  // running workloads in its way that must end first
  std::vector<std::string> waits_for_queues;  // their ClusterQueues, most first
  // What Hold booked now (the first `nbooked`; the rest is room kept for the next Hold),
  // released exactly by Lift.
  std::vector<Reservation::Pod> booked;
  size_t nbooked = 0;
  bool held = false;      // its quota is held, and it counts as held (any_held, Blocking)
  bool on_nodes = false;  // its phantom is booked on its nodes (Hold; ApplyFor may defer it)
  // Whether ApplyFor may defer booking or unbooking it on its nodes (Reservations::Deferrable):
  // it shares no node with another reservation, and none of its GPUs is free (as of `free_gen`).
  bool shares_nodes = true;
  bool gpus_taken = false;
  int64_t free_gen = -1;
};

class Reservations {
 public:
  explicit Reservations(Engine& e);

  bool enabled() const;
  // Start of the admit action: plans again, in their order, the reservations whose workloads
  // still wait, and holds them.
  void Begin(double now);
  // Before an attempt of `id`: holds the reservations it must not delay, lifts the others.
  // Their quota is held at once; where the booking on the nodes cannot depend on when it is
  // made, it waits for BookNodes, so an attempt that quota alone refuses books nothing there.
  void ApplyFor(WorkloadId id, double now);
  // Before the nodes are read or changed: books on the nodes what ApplyFor deferred.
  void BookNodes();
  void LiftAll();
  // For a what-if in which the terminating workloads are gone (Terminations::FitsOnceGone):
  // every held reservation books, of the GPUs it will start on, those free now (its phantom
  // booked the others already); `booked` gets them, for ClusterState::Unbook.
  void BookReleased(std::vector<Room>& booked);
  // True when some reservation is held now.
  bool any_held() const { return held_ > 0; }
  // After an attempt of `id` failed: reserves for it when its ClusterQueue has room (or it goes
  // before the queue's last reservation, which then gives way).
  void OnFailed(WorkloadId id, double now);
  // `id` was admitted, ended, or its queue key is about to change: it claims no reservation.
  void Forget(WorkloadId id);
  // The reservation that made `id` wait (held while it failed, and starting before its
  // estimated end), for its reason; -1 when none.
  WorkloadId Blocking(WorkloadId id, double now) const;
  // End of the admit action: lifts every phantom; sets expected starts and time notes.
  void End(double now);
  // Workload `id` was admitted: its run joins those the plans take out in end order.
  void OnAdmitted(WorkloadId id);
  // Admitted workload `id` was preempted with a grace period: it runs until the period ends.
  void OnTerminating(WorkloadId id);
  // Pending `id` claims what it will start on once its victims are gone (Terminations::Claim):
  // the plans free it when the run it then starts would end, as if it were running.
  void OnClaim(WorkloadId id);
  // Reservations planned for the workloads of ClusterQueue `cq` (metrics).
  int Count(int32_t cq) const { return QueueCount(cq); }
  // Every reservation planned, in precedence order.
  const std::vector<Reservation>& list() const { return list_; }

  // For the scale-up planner (elastic/elastic.cc), after the admit action of the same instant,
  // to place pending workload `id` as the next admit action would:
  //   HeadsBefore: the heads whose reservations go before `id` (none without backfill; a
  //     workload the planner placed tentatively is none: it will start);
  //   PlanHeads: their reservations, planned as the next admit action will plan them with the
  //     cluster as it is now (nodes the planner brought online count), in order; nothing held;
  //   ExtendPlan: `planned` (PlanHeads(heads), nothing held, the cluster as it was then) made
  //     PlanHeads(heads + more) by planning only `more` after it (HeadsBefore of a later
  //     workload in queue order extends that of an earlier one);
  //   HoldFor: holds those `id` must not delay (starting before its estimated end);
  //   LiftPlanned: lifts them again.
  // The engine's own reservations stay as they are. REQUIRES: none held (outside the admit
  // action).
  std::vector<WorkloadId> HeadsBefore(WorkloadId id);
  std::vector<Reservation> PlanHeads(const std::vector<WorkloadId>& heads);
  void ExtendPlan(std::vector<Reservation>& planned, const std::vector<WorkloadId>& more);
  void HoldFor(WorkloadId id, std::vector<Reservation>& planned);
  void LiftPlanned(std::vector<Reservation>& planned);

 private:
  struct Run {
    double end;  // raw: admission + estimate (capped by the deadline), +inf: none
    WorkloadId id;
    double admitted_at;  // which run: a later admission of the workload is another (a claim:
                         // its start, WorkloadRec::claim_start)
    bool claim = false;  // a preemptor's claim (Terminations::Claim), not an admission
    bool operator<(const Run& o) const { return end != o.end ? end < o.end : id < o.id; }
  };
  double RawEnd(WorkloadId id) const;
  double ClaimEnd(WorkloadId id) const;  // a claimant's: its start + its estimate
  // A raw end as the plan uses it: not before now, rounded up to the resolution.
  double Effective(double raw, double now) const;
  bool Stale(const Run& r) const;  // the run ended, or was preempted
  // True when `a` goes before `b` (priority, then FIFO): only a reservation of a workload that
  // goes before is held for another, so a later, higher-priority arrival is never held back.
  bool Before(WorkloadId a, WorkloadId b) const;
  using Evicted = std::vector<std::pair<WorkloadId, std::vector<PlacedPod>>>;
  bool Plan(WorkloadId id, double now, Reservation& out, std::string& why);
  // Who a planned reservation waits for, and the quota it holds, from the runs the plan took
  // out (`evicted`).
  void Describe(WorkloadId id, const Evicted& evicted, Reservation& out) const;
  bool FitsAt(WorkloadId id, int64_t gpus, Reservation& out);
  void RunsInEndOrder(double now);
  void Hold(Reservation& r);  // quota and nodes
  void Lift(Reservation& r);
  void HoldQuota(Reservation& r);
  void LiftQuota(Reservation& r);
  void BookOn(Reservation& r);  // its phantom on its nodes
  void UnbookOn(Reservation& r);
  // True when booking `r` on its nodes (or unbooking it) gives the same cluster state whenever it
  // is done, until the next BookNodes or LiftAll: it shares no node with another reservation
  // (MarkShared), and none of its GPUs is free, so its phantom takes only CPU, memory and a pod
  // slot on nodes no other booking touches, and no node changes its free-GPU bucket (whose
  // order placement walks).
  bool Deferrable(Reservation& r);
  void MarkShared();  // after list_ changed
  void Note(WorkloadId id, std::string note);
  int QueueCount(int32_t cq) const;
  int Limit() const;  // reservations per queue
  // The workloads to plan reservations for, in queue order: the first Limit() pending claimants
  // of every queue (claimants no longer pending are dropped).
  std::vector<WorkloadId> Heads();
  absl::btree_set<QueueKey>& Claimants(int32_t cq);
  double EndOf(WorkloadId id, double now) const;  // a pending workload's end if started now

  Engine& e_;
  EngineState& s_;
  std::vector<Reservation> list_;  // in precedence order
  int held_ = 0;
  bool deferred_ = false;  // some reservation's `on_nodes` differs from its `held`
  // Bumped wherever the cluster may change (BookNodes, LiftAll, Plan, Begin): a reservation's
  // `gpus_taken` is known for the current generation only.
  int64_t free_gen_ = 0;
  std::vector<std::pair<int64_t, int32_t>> node_mark_;  // MarkShared: per node, stamp and index
  int plans_ = 0;  // this admit action (BackfillConfig::max_job_test)
  std::vector<Run> runs_;
  std::vector<Run> added_;  // admitted since, merged in at the next plan
  bool built_ = false;
  double built_at_ = 0;
  int64_t runs_observed_ = 0;  // the estimator's count of runs seen at the last rebuild
  size_t stale_ = 0;
  std::vector<int64_t> freed_;  // per node: the plan step that last freed something on it
  int64_t stamp_ = 0;
  // Per pending queue: the workloads that failed an attempt, in queue order. The first Limit()
  // still pending get the reservations (parked or not: a parked head keeps its place).
  std::vector<absl::btree_set<QueueKey>> claimants_;
  // The instant and epochs of the last full plan (Begin): unchanged, it stands.
  double planned_now_ = -1;
  double last_now_ = 0;  // the instant of the last admit action (Begin)
  int64_t planned_admit_ = -1, planned_release_ = -1;
  // Workloads whose expected start or time note was set: End clears what is no longer true.
  std::vector<WorkloadId> noted_;
};

}  // namespace tessera
