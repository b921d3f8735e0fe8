// Admission of one workload: flavor combinations are tried in the ClusterQueue's order; one is
// taken only when the quota for minCount pods fits and a placement of minCount pods exists
// (a gang is placed whole or not at all). A head that fits nowhere asks the Preemptor, when the
// `preempt` action is on. CanEverFit is the verdict at submission: a workload that could not
// be admitted even in an empty cluster with all the quota its queue could get is rejected.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

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

 private:
  // Tries preemption for each combination; `blocking`: the first reservation held while it was
  // tried (-1: none); `held_back` becomes true when it would fit without the reservations.
  bool Preempt(WorkloadId id, double now, WorkloadId blocking, bool& held_back,
               std::vector<Decision>& out);
  Engine& e_;
  EngineState& s_;
  bool preemption_ = true;
};

}  // namespace tessera
