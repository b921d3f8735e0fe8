// flavor_choice: Kueue's flavorFungibility rules (isPreferred, shouldTryNextFlavor) over
// Tessera's grades, each case from how Kueue's flavorassigner decides.
#include "engine/admission/flavor_choice.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

using Kind = ComboMode::Kind;
constexpr FungibilityPolicy kStop = FungibilityPolicy::kMayStopSearch;
constexpr FungibilityPolicy kNext = FungibilityPolicy::kTryNextFlavor;
constexpr FungibilityPreference kBorrowing = FungibilityPreference::kBorrowingOverPreemption;
constexpr FungibilityPreference kPreemption = FungibilityPreference::kPreemptionOverBorrowing;

FlavorFungibility Fungibility(FungibilityPolicy borrow, FungibilityPolicy preempt) {
  FlavorFungibility f;
  f.when_can_borrow = borrow;
  f.when_can_preempt = preempt;
  return f;
}

TEST(FlavorChoice, DefaultsAreKueues) {
  const FlavorFungibility f;
  EXPECT_EQ(f.when_can_borrow, kStop);
  EXPECT_EQ(f.when_can_preempt, kNext);
  EXPECT_EQ(f.preference, kBorrowing);
}

TEST(FlavorChoice, NoFitAlwaysTriesTheNextFlavor) {
  for (auto b : {kStop, kNext})
    for (auto p : {kStop, kNext})
      EXPECT_TRUE(ShouldTryNextFlavor({Kind::kNoFit, INT_MAX}, Fungibility(b, p)));
}

TEST(FlavorChoice, AFitWithinNominalQuotaEndsTheSearch) {
  for (auto b : {kStop, kNext})
    for (auto p : {kStop, kNext})
      EXPECT_FALSE(ShouldTryNextFlavor({Kind::kFit, 0}, Fungibility(b, p)));
}

TEST(FlavorChoice, BorrowingEndsTheSearchOnlyWithMayStopSearch) {
  EXPECT_FALSE(ShouldTryNextFlavor({Kind::kFit, 1}, Fungibility(kStop, kNext)));
  EXPECT_TRUE(ShouldTryNextFlavor({Kind::kFit, 1}, Fungibility(kNext, kNext)));
}

TEST(FlavorChoice, PreemptionEndsTheSearchOnlyWithMayStopSearch) {
  for (Kind k : {Kind::kPreempt, Kind::kReclaim}) {
    EXPECT_TRUE(ShouldTryNextFlavor({k, 0}, Fungibility(kStop, kNext)));
    EXPECT_FALSE(ShouldTryNextFlavor({k, 0}, Fungibility(kStop, kStop)));
    // A preemption that borrows: whenCanBorrow TryNextFlavor goes on even so.
    EXPECT_TRUE(ShouldTryNextFlavor({k, 1}, Fungibility(kNext, kStop)));
    EXPECT_FALSE(ShouldTryNextFlavor({k, 1}, Fungibility(kStop, kStop)));
  }
}

TEST(FlavorChoice, NoFitIsNeverPreferredAndAnythingElseBeatsIt) {
  for (auto pref : {kBorrowing, kPreemption}) {
    EXPECT_FALSE(IsPreferred({Kind::kNoFit, 0}, {Kind::kNoFit, INT_MAX}, pref));
    EXPECT_FALSE(IsPreferred({Kind::kNoFit, 0}, {Kind::kPreempt, 3}, pref));
    EXPECT_TRUE(IsPreferred({Kind::kPreempt, 3}, {Kind::kNoFit, 0}, pref));
  }
}

TEST(FlavorChoice, BorrowingOverPreemptionRanksTheKindFirst) {
  // Kueue's "prefer reclamation over cq priority based preemption": reclaim beats preempting in
  // the own queue, a fit beats both, even when the fit borrows more.
  EXPECT_TRUE(IsPreferred({Kind::kReclaim, 0}, {Kind::kPreempt, 0}, kBorrowing));
  EXPECT_FALSE(IsPreferred({Kind::kPreempt, 0}, {Kind::kReclaim, 0}, kBorrowing));
  EXPECT_TRUE(IsPreferred({Kind::kFit, 2}, {Kind::kReclaim, 0}, kBorrowing));
  EXPECT_TRUE(IsPreferred({Kind::kReclaim, 2}, {Kind::kPreempt, 0}, kBorrowing));
  // Same kind: the lower borrowing level.
  EXPECT_TRUE(IsPreferred({Kind::kFit, 0}, {Kind::kFit, 1}, kBorrowing));
  EXPECT_FALSE(IsPreferred({Kind::kFit, 1}, {Kind::kFit, 0}, kBorrowing));
}

TEST(FlavorChoice, PreemptionOverBorrowingRanksTheBorrowingLevelFirst) {
  EXPECT_TRUE(IsPreferred({Kind::kPreempt, 0}, {Kind::kFit, 1}, kPreemption));
  EXPECT_FALSE(IsPreferred({Kind::kFit, 1}, {Kind::kPreempt, 0}, kPreemption));
  // Same level: the better kind.
  EXPECT_TRUE(IsPreferred({Kind::kFit, 1}, {Kind::kPreempt, 1}, kPreemption));
  EXPECT_TRUE(IsPreferred({Kind::kReclaim, 1}, {Kind::kPreempt, 1}, kPreemption));
}

TEST(FlavorChoice, EqualGradesAreNotPreferredSoTheEarlierCombinationStays) {
  for (auto pref : {kBorrowing, kPreemption})
    for (Kind k : {Kind::kPreempt, Kind::kReclaim, Kind::kFit})
      EXPECT_FALSE(IsPreferred({k, 1}, {k, 1}, pref));
}

TEST(FlavorChoice, PreemptionMayWinOnlyWhereAPreemptionCouldBeBetter) {
  for (auto pref : {kBorrowing, kPreemption}) {
    EXPECT_TRUE(PreemptionMayWin({Kind::kNoFit, INT_MAX}, pref));
    EXPECT_TRUE(PreemptionMayWin({Kind::kPreempt, 0}, pref));  // a reclaim would be better
    EXPECT_FALSE(PreemptionMayWin({Kind::kFit, 0}, pref));
    EXPECT_FALSE(PreemptionMayWin({Kind::kReclaim, 0}, pref));
    EXPECT_TRUE(PreemptionMayWin({Kind::kReclaim, 1}, pref));  // one that borrows less
  }
  // A fit that borrows loses to a preemption that borrows less only when borrowing counts first.
  EXPECT_FALSE(PreemptionMayWin({Kind::kFit, 1}, kBorrowing));
  EXPECT_TRUE(PreemptionMayWin({Kind::kFit, 1}, kPreemption));
}

// Whether every grade the rules could ever prefer over `best` is allowed by PreemptionMayWin:
// a preemption grade (any kind, any level) preferred over `best` means it must say true.
TEST(FlavorChoice, PreemptionMayWinNeverMissesABetterPreemption) {
  for (auto pref : {kBorrowing, kPreemption})
    for (Kind bk : {Kind::kNoFit, Kind::kPreempt, Kind::kReclaim, Kind::kFit})
      for (int bb : {0, 1, 2})
        for (Kind k : {Kind::kPreempt, Kind::kReclaim})
          for (int b : {0, 1, 2})
            if (IsPreferred({k, b}, {bk, bb}, pref)) {
              EXPECT_TRUE(PreemptionMayWin({bk, bb}, pref))
                  << "best kind " << static_cast<int>(bk) << " level " << bb;
            }
}

}  // namespace
}  // namespace tessera
