// Admission of one workload: flavor combinations are tried in the ClusterQueue's order; one
// fits only when the quota for minCount pods fits and a placement of minCount pods exists (a
// gang is placed whole or not at all). Which one is taken, and when the Preemptor is asked (the
// `preempt` action on), follows the queue's flavorFungibility as Kueue's flavor assigner does:
// by default the first that fits, else the best preemption (reclaiming lent quota before
// preempting in the own queue, then borrowing least, then the queue's order). CanEverFit is the
// verdict at submission: a workload that could not be admitted even in an empty cluster with all
// the quota its queue could get is rejected.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/engine_state.h"
#include "engine/preemption/preemptor.h"

namespace tessera {

struct Engine;

// What no node could serve in a pod set's request (whole GPUs and a share at once, a share by
// milli and by memory, a share above one device); empty when nothing.
std::string PodSetShapeProblem(const PodSet& ps);

class Admission {
 public:
  enum class Outcome { kAdmitted, kPending, kRejected };

  explicit Admission(Engine& e);
  void set_preemption(bool on) { preemption_ = on; }

  // One attempt for a pending workload: admits it (possibly after preempting), or leaves it
  // pending with the reason of every combination tried.
  Outcome TryAdmit(WorkloadId id, double now, std::vector<Decision>& out);
  // Commits an admission whose minCount pods the Statement holds: state, pods beyond minCount
  // as room allows, the decision.
  void Admit(WorkloadId id, const Combo& combo, double now, std::vector<Decision>& out);
  // Empty when the workload could be admitted in an empty cluster; else why never.
  std::string CanEverFit(WorkloadId id) const;
  // The tolerations the flavors of `combo` add to a pod of pod set ps (none without a
  // ClusterQueue).
  std::vector<Toleration> FlavorTolerations(WorkloadId id, const Combo& combo, int ps) const;
  // Kueue's quotaCheckStrategy BlockUndeclared: why the workload waits because it asks for a
  // resource its ClusterQueue covers in no resource group; empty when it does not.
  std::string Uncovered(WorkloadId id) const;

 private:
  // What one attempt learnt of reservations while it looked at preemption: the reservation
  // held while it was tried (-1: none) and whether it would fit without the reservations
  // (held back: it waits rather than preempt around them).
  struct PreemptionLook {
    bool blocking_known = false;
    WorkloadId blocking = -1;
    bool settled = false;  // reservations lifted for the search
    bool held_back = false;
    bool awaits_release = false;  // fits once the workloads in their grace period are gone
    bool takes_nothing = false;   // ... but only where the reservations held for it will start
  };
  // Walks the flavor combinations as Kueue's flavorFungibility says (admission/flavor_choice.h)
  // and admits the workload under the chosen one, fitting or after its preemption; false
  // (pending, with `why` for every combination) when none works.
  bool ChooseAndAdmit(WorkloadId id, double now, std::vector<ReasonPart>& why, PreemptionLook& look,
                      std::vector<Decision>& out);
  // Kueue's partial admission (admission/partial_admission.cc): for a workload with pods beyond
  // its minimums, admits the whole workload, else the largest counts that can preempt their way
  // in, when that takes a preemption (or, with per-pod-set minimums, that fit); false: try the
  // usual way.
  bool TryAdmitMorePods(WorkloadId id, bool may_preempt, double now, std::vector<ReasonPart>& why,
                        PreemptionLook& look, std::vector<Decision>& out);
  // Whether `counts` pods per pod set could start now under some combination, fitting or by
  // preempting (`by_preemption` says which); nothing is changed.
  bool CountWorks(WorkloadId id, const std::vector<int32_t>& counts, bool may_preempt, double now,
                  PreemptionLook& look, bool& by_preemption);
  std::optional<Preemptor::Found> FindPreemption(WorkloadId id, const Combo& combo, double now,
                                                 PreemptionLook& look);
  // Once a search is worth making: lifts the reservations and says whether `id` waits instead
  // (look.held_back, look.awaits_release). REQUIRES: the reservations held for `id` still held.
  void Settle(WorkloadId id, PreemptionLook& look);
  // True when quota refuses every flavor combination of `id` and nothing else would be tried
  // (no preemption, no partial admission by per-pod-set minimums): its attempt reads no node.
  bool QuotaAloneRefuses(WorkloadId id) const;
  Engine& e_;
  EngineState& s_;
  bool preemption_ = true;
};

}  // namespace tessera
