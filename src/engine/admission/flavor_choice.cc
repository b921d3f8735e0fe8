#include "engine/admission/flavor_choice.h"

namespace tessera {

bool ShouldTryNextFlavor(const ComboMode& m, const FlavorFungibility& f) {
  if (m.kind == ComboMode::Kind::kNoFit) return true;
  if (m.preempts() && f.when_can_preempt == FungibilityPolicy::kTryNextFlavor) return true;
  return m.borrow > 0 && f.when_can_borrow == FungibilityPolicy::kTryNextFlavor;
}

bool IsPreferred(const ComboMode& a, const ComboMode& b, FungibilityPreference preference) {
  if (a.kind == ComboMode::Kind::kNoFit) return false;
  if (b.kind == ComboMode::Kind::kNoFit) return true;
  if (preference == FungibilityPreference::kPreemptionOverBorrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.kind > b.kind;
  }
  if (a.kind != b.kind) return a.kind > b.kind;
  return a.borrow < b.borrow;
}

bool PreemptionMayWin(const ComboMode& best, FungibilityPreference preference) {
  switch (best.kind) {
    case ComboMode::Kind::kNoFit:
      return true;
    case ComboMode::Kind::kFit:
      // A fit is beaten only by a preemption that borrows less, and only when that counts first.
      return preference == FungibilityPreference::kPreemptionOverBorrowing && best.borrow > 0;
    case ComboMode::Kind::kReclaim:
      return best.borrow > 0;  // reclaim without borrowing is the best a preemption can be
    case ComboMode::Kind::kPreempt:
      return true;
  }
  return true;
}

}  // namespace tessera
