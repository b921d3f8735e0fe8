#include "engine/quota_tree.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr FlavorResource kFr = kGpu;  // flavor 0, nvidia.com/gpu

// Two queues in one cohort: a (nominal 10, lends at most 4), b (nominal 6).
class QuotaTreeTest : public ::testing::Test {
 protected:
  QuotaTreeTest() : tree_(2, 1, 1) {
    tree_.SetQuota(0, kFr, 10, kUnlimited, 4);
    tree_.SetQuota(1, kFr, 6, kUnlimited, kUnlimited);
    tree_.SetParent(0, tree_.cohort_node(0));
    tree_.SetParent(1, tree_.cohort_node(0));
    EXPECT_TRUE(tree_.Finalize().ok());
  }
  QuotaTree tree_;
};

TEST_F(QuotaTreeTest, SubtreeQuotaCountsOnlyWhatChildrenLend) {
  EXPECT_EQ(tree_.guaranteed(0, kFr), 6);
  EXPECT_EQ(tree_.subtree_quota(tree_.cohort_node(0), kFr), 4 + 6);
  EXPECT_EQ(tree_.Available(0, kFr), 16);  // its own 6 kept + 10 in the cohort
  EXPECT_EQ(tree_.Available(1, kFr), 10);  // only what a lends (4) + its own 6
}

TEST_F(QuotaTreeTest, LendingLimitCapsWhatOthersBorrow) {
  tree_.AddUsage(1, kFr, 10);  // b uses its 6 and borrows 4
  EXPECT_EQ(tree_.Available(1, kFr), 0);
  EXPECT_TRUE(tree_.IsBorrowing(1, kFr));
  EXPECT_EQ(tree_.Available(0, kFr), 6);  // a keeps its guaranteed 6
  tree_.AddUsage(1, kFr, -10);
  EXPECT_EQ(tree_.Available(1, kFr), 10);
}

TEST(QuotaTreeBorrowing, BorrowingLimitCapsWhatAQueueTakes) {
  QuotaTree tree(2, 1, 1);
  tree.SetQuota(0, kFr, 8, /*borrowing_limit=*/2, kUnlimited);
  tree.SetQuota(1, kFr, 8, kUnlimited, kUnlimited);
  tree.SetParent(0, tree.cohort_node(0));
  tree.SetParent(1, tree.cohort_node(0));
  ASSERT_TRUE(tree.Finalize().ok());
  EXPECT_EQ(tree.Available(0, kFr), 10);
  EXPECT_EQ(tree.MaxPossible(0, kFr), 10);
  EXPECT_EQ(tree.MaxPossible(1, kFr), 16);
}

TEST(QuotaTreeHierarchy, NestedCohortsLendUpAndDown) {
  // cq0 under cohort child (node 3), child under root (node 2); cq1 directly under root.
  QuotaTree tree(2, 2, 1);
  tree.SetQuota(0, kFr, 4, kUnlimited, kUnlimited);
  tree.SetQuota(1, kFr, 4, kUnlimited, kUnlimited);
  tree.SetQuota(tree.cohort_node(0), kFr, 2, kUnlimited, kUnlimited);  // root's own quota
  tree.SetParent(0, tree.cohort_node(1));
  tree.SetParent(tree.cohort_node(1), tree.cohort_node(0));
  tree.SetParent(1, tree.cohort_node(0));
  ASSERT_TRUE(tree.Finalize().ok());
  EXPECT_EQ(tree.subtree_quota(tree.cohort_node(0), kFr), 10);
  EXPECT_EQ(tree.Available(0, kFr), 10);
  tree.AddUsage(1, kFr, 7);
  EXPECT_EQ(tree.Available(0, kFr), 3);
  EXPECT_EQ(tree.usage(tree.cohort_node(0), kFr), 7);
}

TEST(QuotaTreeCycle, ParentCycleIsAnError) {
  QuotaTree tree(0, 2, 1);
  tree.SetParent(0, 1);
  tree.SetParent(1, 0);
  EXPECT_FALSE(tree.Finalize().ok());
}

}  // namespace
}  // namespace tessera
