// Preemption for a head that does not fit: candidates by its ClusterQueue's policy
// (withinClusterQueue; reclaimWithinCohort from queues that borrow what it needs, classed by
// borrowWithinCohort), a cheap bound, then Kueue's attempts (with borrowing, and within nominal
// quota, in Kueue's order): each a victim search (VictimSearch plugin) that evicts until the
// preemptor fits, then every victim it can do without given back (a minimal set). Victims are
// whole workloads and return to their queue.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine_state.h"
#include "engine/preemption/victim_search.h"

namespace tessera {

struct Engine;

// KAI's non-preemptible: the workload's own preemptibility, else its WorkloadPriorityClass's,
// else its PriorityClass's (the globalDefault one when it names none).
bool NonPreemptible(const Model& model, const Workload& w);

// Whether pending workload `id` may preempt in order to borrow (Kueue's attempts that allow
// borrowing). Not while it is non-preemptible (it runs within nominal quota only), nor once it
// was preempted until a run of its cohort ends (with fair sharing too: a within-queue
// preemption is not held to the share strategies). Otherwise a victim borrows back by evicting
// its own queue's lower-priority workloads, a lender reclaims that, its victims do the same, and
// queues evict one another's fresh starts at every cycle with nothing gained (docs/time.md,
// "Chains of preemptions").
bool MayBorrowByPreempting(const EngineState& s, WorkloadId id);

// The work an eviction of admitted workload `v` at `now` throws away, in seconds of its run:
// the time since its last checkpoint (tessera.dev/checkpoint-interval), else all of its run.
double WorkLost(const EngineState& s, WorkloadId v, double now);

class Preemptor {
 public:
  explicit Preemptor(Engine& e);
  ~Preemptor();
  void Init(const SchedulerConfig& config);

  // Evicts the cheapest set of victims that lets `id` fit under `combo` and admits it; false
  // (nothing changed) when no allowed set does.
  // `may_search`, when given, is asked once the cheap bounds pass and before any victim is
  // tried; false: no preemption (the caller's veto, e.g. reservations; it may change the state
  // the search reads, e.g. lift them).
  bool TryPreempt(WorkloadId id, const Combo& combo, double now, std::vector<Decision>& out,
                  const std::function<bool(const Combo&)>& may_search = nullptr);

  // A preemption found and given back (Kueue's preemption oracle): its victims, whether they
  // are all other queues' (reclaim, which Kueue's flavor choice prefers over preempting in the
  // preemptor's own queue), and the preemptor's borrowing level once they are gone.
  struct Found {
    std::vector<WorkloadId> victims;
    bool reclaim = true;
    int borrow = 0;
  };
  // The victims TryPreempt would evict; nothing is changed on return (except what
  // `may_search` changes). Empty when no allowed set lets `id` fit under `combo`.
  std::optional<Found> Find(WorkloadId id, const Combo& combo, double now,
                            const std::function<bool(const Combo&)>& may_search = nullptr);
  // Evicts `found`'s victims and admits `id` under `combo`; victims with a grace period keep
  // their pods for it (preemption/termination.h) and `id` waits for them.
  // REQUIRES: the state Find saw (no change since, other than tentative placements undone).
  void Apply(WorkloadId id, const Combo& combo, const Found& found, double now,
             std::vector<Decision>& out);
  // The workloads the preemptor's policy allows it to evict at `now`, in the order they are
  // tried. Workloads admitted at `now` are not among them.
  std::vector<WorkloadId> Candidates(WorkloadId id, const Combo& combo, double now) const;

  // Kueue's classical preemption tries up to two attempts over the candidates: one where the
  // preemptor may borrow once its victims are gone, and one where it must then fit within its
  // nominal quota (which may take more of the other queues' borrowers).
  struct Plan {
    std::vector<WorkloadId> candidates;  // every candidate, in the order they are tried
    // Per candidate: may it be taken while the preemptor borrows? (its own queue's always; other
    // queues' when the preemptor fits its nominal quota, or under borrowWithinCohort)
    std::vector<bool> while_borrowing;
    std::vector<bool> attempts;  // allow borrowing, per attempt, in order
  };
  Plan MakePlan(WorkloadId id, const Combo& combo, double now) const;
  // Find's cheap bounds: `id` has some candidate under `combo`, and even every candidate gone
  // would cover its quota gap and the GPUs it needs. True exactly when MakePlan's candidates are
  // not empty and cover that, but walks only as many candidates as it takes, and sorts none.
  bool Coverable(WorkloadId id, const Combo& combo, double now) const;
  // True when Find's search surely fails on quota alone: in every attempt, the state where its
  // walk ends (every candidate it would evict gone, taken off the quota tree) leaves the
  // preemptor's quota short. Then it makes and undoes the search's evictions, in its order, so
  // that everything is left as the search leaves it, without sorting every candidate or trying
  // a fit between evictions. False when unsure (the fair-sharing search, a required topology).
  bool QuotaHopeless(WorkloadId id, const Combo& combo, double now);

 private:
  // Gives back every victim the preemptor can do without.
  void Minimize(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
                Evicted& evicted);
  // Under the victim order LeastLostWork, after Minimize: one candidate that alone lets the
  // preemptor fit, no nearer the front of the order than the set (another queue's when all of
  // the set are; no higher priority than its lowest) and losing no more work than the whole
  // set, replaces it (least lost work, then fewest victims). At most 16 such fits are tried.
  void PreferOneVictim(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
                       const std::vector<WorkloadId>& candidates, double now, Evicted& evicted);
  // The preempt decisions: victims in `evicted` requeued, those in `graced` terminating for
  // their grace period; the preemptor admitted, or, while any victim terminates, waiting.
  void Commit(WorkloadId id, const Combo& combo, const Evicted& evicted,
              const std::vector<WorkloadId>& graced, double now, std::vector<Decision>& out);
  // Where `id` would start under `combo` once its terminating victims `graced` are gone (its
  // minimum pods; empty when it would not fit).
  std::vector<Room> PlacementAfter(WorkloadId id, const Combo& combo,
                                   const std::vector<WorkloadId>& graced);
  // Why `v` is preempted for `id`.
  std::string VictimReason(WorkloadId id, WorkloadId v) const;

  Engine& e_;
  EngineState& s_;
  std::unique_ptr<VictimSearch> search_;
  struct HopelessCand {
    WorkloadId v;
    int32_t cq;
    bool while_borrowing;
  };
  std::vector<HopelessCand> hopeless_cands_;  // QuotaHopeless's, kept for its capacity
};

}  // namespace tessera
