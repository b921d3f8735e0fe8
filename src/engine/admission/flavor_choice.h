// Kueue's flavorFungibility over Tessera's flavor combinations: how a combination is graded
// (it fits, borrowing or not; or it fits once a preemption reclaims lent quota, or preempts in
// the workload's own ClusterQueue; or not at all), whether the search goes on past it, and
// which of two grades is preferred. Kueue's flavorassigner (isPreferred, shouldTryNextFlavor);
// Admission walks the combinations with these.
//
// Thread-safety: pure functions.
#pragma once

#include <climits>
#include <cstdint>

#include "model/queues.h"

namespace tessera {

struct ComboMode {
  // Worst to best, as Kueue ranks them.
  enum class Kind : int8_t { kNoFit, kPreempt, kReclaim, kFit };
  Kind kind = Kind::kNoFit;
  // Kueue's borrowing level: 0 within the ClusterQueue's own quota, else the height of the
  // lowest cohort that holds the workload without borrowing (after the victims are gone).
  int borrow = INT_MAX;
  bool preempts() const { return kind == Kind::kPreempt || kind == Kind::kReclaim; }
};

// Whether the search goes on past a combination graded `m` (Kueue's shouldTryNextFlavor).
bool ShouldTryNextFlavor(const ComboMode& m, const FlavorFungibility& f);
// Whether `a` is strictly better than `b` under the preference (Kueue's isPreferred):
// BorrowingOverPreemption ranks the kind first, then the borrowing level;
// PreemptionOverBorrowing the borrowing level first. A no-fit is never preferred.
bool IsPreferred(const ComboMode& a, const ComboMode& b, FungibilityPreference preference);
// Whether some preemption could still be preferred over `best` (the best grade so far, after
// every combination that fits was graded).
bool PreemptionMayWin(const ComboMode& best, FungibilityPreference preference);

}  // namespace tessera
