#include "model/id_pages.h"

#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

TEST(IdPages, ReadsAsAVectorUntilRetired) {
  using V = std::vector<int>;
  IdPages<V> v = {V{1}, V{2}};
  v.push_back(V{3});
  EXPECT_EQ(v.emplace_back(3, 4), (V{4, 4, 4}));
  ASSERT_EQ(v.size(), 4u);
  std::vector<V> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::vector<V>{{1}, {2}, {3}, {4, 4, 4}}));
  EXPECT_EQ(v.front(), V{1});
  EXPECT_EQ(v.back(), (V{4, 4, 4}));
  IdPages<V> copy = v;
  copy[0] = V{9};
  EXPECT_EQ(v[0], V{1});
  EXPECT_EQ(copy[0], V{9});
  // Moved from, it is empty and can grow again from id 0.
  IdPages<V> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 4u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move)
  copy.push_back(V{5});
  EXPECT_EQ(copy[0], V{5});
  moved = std::move(copy);
  EXPECT_EQ(moved.size(), 1u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(IdPages, RetiringEveryIdOfAPageFreesIt) {
  constexpr size_t kPage = IdPages<std::vector<int>>::kPage;
  IdPages<std::vector<int>> v;
  for (size_t i = 0; i < 3 * kPage; ++i) v.push_back(std::vector<int>(100, static_cast<int>(i)));
  // Retiring resets the value at once (what it held is freed), and ids are never reused.
  v.Retire(1);
  EXPECT_TRUE(v.retired(1));
  EXPECT_FALSE(v.retired(0));
  v.Retire(1);  // twice: nothing more
  EXPECT_EQ(v.retired_count(), 1u);
  // The whole second page, out of order: it is gone; the others still read.
  for (size_t i = 2 * kPage; i-- > kPage;) v.Retire(i);
  for (size_t i = kPage; i < 2 * kPage; ++i) EXPECT_TRUE(v.retired(i));
  EXPECT_EQ(v[0][0], 0);
  EXPECT_EQ(v[2 * kPage][99], static_cast<int>(2 * kPage));
  EXPECT_EQ(v.size(), 3 * kPage);
  EXPECT_EQ(v.retired_count(), kPage + 1);
  // Growing on after a freed page, and copying it, keep the ids where they were.
  v.push_back({7});
  EXPECT_EQ(v[3 * kPage][0], 7);
  IdPages<std::vector<int>> copy = v;
  EXPECT_TRUE(copy.retired(kPage + 3));
  EXPECT_EQ(copy[3 * kPage][0], 7);
}

}  // namespace
}  // namespace tessera
