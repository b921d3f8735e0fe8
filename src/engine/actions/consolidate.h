// The `consolidate` action (KAI's consolidation): a pending head whose quota fits but that fits
// on no node, while the GPUs it needs sit idle in pieces, gets room by moving running workloads.
// For each such head (those whose attempt in this cycle failed on placement, in queue order),
// the nodes nearest to fitting it are tried: running workloads there are taken off (smallest
// first) through the Statement until the head fits, the head is placed, then every workload
// taken off is placed again elsewhere under its own flavors and quota; when any of them finds no
// place, everything is rolled back exactly. A success is reported as one kMove decision per
// moved workload (its new pods; `preemptor` is the head), then the head's kAdmit.
//
// The nodes tried are those where the movable workloads hold what is missing: GPU milli, and
// the CPU and memory that can keep a head off a node whose GPUs are free (a CPU-only workload is
// moved for that too). A one-pod workload taken off that fits nowhere as things are gets room by
// one more move (two levels, PlaceByMove), a few times per head. Whether a pod may fit at all is
// asked of a per-shape list of nodes first, which spares the placement plugin's search over
// every node for the many that fit nowhere (the cost of the action on a full cluster).
//
// Only workloads that lose little are moved: admitted (not in a grace period) with exactly their
// minimum pods, preemptible (not KAI's non-preemptible), past their minimum runtime, not
// admitted in this instant, and losing at most spec.consolidation.maxLostWork of work (the time
// since their last checkpoint, tessera.dev/checkpoint-interval, else since their start). A moved
// workload's run restarts at its new place: its admission time and minimum runtime start again
// (which also keeps it from being moved back and forth). The search is bounded by
// spec.consolidation: heads per cycle, nodes per head, moves per cycle.
//
// On for every ClusterQueue when SchedulerConfig's spec.actions lists `consolidate`; a
// ClusterQueue's tessera.dev/consolidation annotation turns it on ("true") or off ("false") for
// its heads and its workloads. It runs after `admit`, so a head that can preempt does so first.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <cstdint>
#include <deque>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/actions/action.h"
#include "engine/engine_state.h"

namespace tessera {

class ConsolidateAction : public Action {
 public:
  // `listed`: SchedulerConfig's spec.actions names it (else only opted-in queues use it).
  ConsolidateAction(Engine& e, bool listed);
  std::string_view name() const override { return "consolidate"; }
  void Execute(double now, std::vector<Decision>& out) override;

 private:
  struct Taken {
    WorkloadId id;
    std::vector<PlacedPod> pods;  // where it was
  };
  // Whether `head` may move others, and whether `v` may be moved, by their queues.
  bool QueueAllows(WorkloadId id) const;
  bool Movable(WorkloadId v, double now);
  // GPU milli that workload `v` holds on node n; what its pods there request.
  int64_t MilliOn(WorkloadId v, NodeId n) const;
  Resources HeldOn(WorkloadId v, NodeId n) const;
  // The running workloads on every node, and the per-shape lists cleared (after a move, and
  // when a cycle finds the epochs moved).
  void IndexNodes();
  // Admits `head` by moving others; true when it did (decisions appended).
  bool TryHead(WorkloadId head, double now, std::vector<Decision>& out);
  // The eligible nodes nearest to fitting one pod of pod set `ps` (not `skip`), at most
  // maxNodesPerHead, nearest first, each where the movable workloads hold enough GPU milli,
  // CPU and memory to close its gaps.
  std::vector<NodeId> NearestNodes(WorkloadId head, int ps, const Combo& combo, double now,
                                   NodeId skip = -1);
  // Takes movable workloads off `nodes` in turn (only `only` when >= 0) until `head` fits,
  // places it, then the taken ones elsewhere; commits and reports, or undoes everything and
  // returns false. `fitted`, when given: whether the head fitted once they were taken off.
  bool Attempt(WorkloadId head, int ps, const Combo& combo, const std::vector<NodeId>& nodes,
               double now, std::vector<Decision>& out, WorkloadId only = -1,
               bool* fitted = nullptr);
  // The second level: places `v` (a one-pod workload taken off for a head, that fits nowhere as
  // things are) on a node nearest to fitting it (not `room`, where the head went) by taking one
  // more movable workload off there and placing that one elsewhere as things are; appends it to
  // `taken`. At most kSecondNodes nodes and kSecondSingles tries per node where `v` then fits.
  bool PlaceByMove(WorkloadId v, NodeId room, double now, std::vector<Taken>& taken);
  // Whether one-pod workload `v` may fit somewhere: on `freed` (where room was just made) or
  // on a node where its request fitted at the first ask since the last index (a cheap test
  // that spares the placement plugin's search for a pod that fits nowhere; true for gangs).
  bool MayFit(WorkloadId v, NodeId freed);
  struct FitNodes {
    Resources req;
    std::vector<NodeId> nodes;  // at most kFitNodes
    bool more = false;          // more nodes fitted
  };
  const FitNodes& NodesFitting(const Resources& req);
  // Per request shape, since the last index: the nodes that do not fit it by numbers, as
  // (GPU milli missing, CPU and memory missing in thousandths, node), sorted up to `sorted`.
  struct Near {
    Resources req;
    std::vector<std::tuple<int64_t, int64_t, NodeId>> near;
    size_t sorted = 0;
  };
  Near& NearOf(const Resources& req);
  void Undo(size_t mark, std::vector<Taken>& taken);
  void Report(WorkloadId head, std::vector<Taken>& taken, double now, std::vector<Decision>& out);

  static constexpr int kSecondNodes = 4;
  static constexpr int kSecondSingles = 2;
  static constexpr int kSecondPerHead = 4;  // second-level searches for one head
  static constexpr size_t kFitNodes = 8;

  Engine& e_;
  EngineState& s_;
  const bool listed_;
  int32_t moves_left_ = 0;
  std::vector<std::vector<WorkloadId>> on_node_;
  int64_t indexed_admit_ = -1, indexed_release_ = -1;  // the epochs on_node_ was built at
  // Per workload judged in this cycle: movable or not (by the workloads looked at, not by every
  // id the engine has given: a replay of millions retires what ended).
  absl::flat_hash_map<WorkloadId, bool> movable_;
  int32_t second_left_ = 0;  // second-level searches left for this head
  std::deque<FitNodes> fit_nodes_;
  std::deque<Near> near_;  // per request shape, since the last IndexNodes
};

}  // namespace tessera
