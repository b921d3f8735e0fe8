#include "trace/trend_stats.h"

#include <vector>

#include "gtest/gtest.h"

namespace tessera::trace {
namespace {

Node GpuNode(int gpus) {
  Node n;
  n.allocatable[kGpu] = gpus;
  return n;
}

TEST(IdleGpuNodes, CountsOnlineGpuNodesWithoutGpuPods) {
  IdleGpuNodes idle({GpuNode(2), GpuNode(2), GpuNode(0), GpuNode(8)}, {true, true, true, false});
  EXPECT_EQ(idle.count(), 2);  // the CPU node and the node not up are not counted
  idle.Hold(0, 1);
  idle.Hold(0, 1);
  EXPECT_EQ(idle.count(), 1);
  idle.Hold(0, -1);
  EXPECT_EQ(idle.count(), 1);  // one pod still holds a GPU there
  idle.Hold(0, -1);
  EXPECT_EQ(idle.count(), 2);
  idle.SetOnline(3, true);
  EXPECT_EQ(idle.count(), 3);
  idle.Hold(3, 1);
  idle.SetOnline(3, false);  // interrupted while busy, then its pod goes
  idle.Hold(3, -1);
  EXPECT_EQ(idle.count(), 2);
  idle.Hold(99, 1);  // out of range: ignored
  EXPECT_EQ(idle.count(), 2);
}

TEST(BucketQuantiles, NearestRankWithinABinAndExactAtTheEnds) {
  TimeSeries series(0, 1, 4, 10);
  BucketQuantiles q(series);
  for (int i = 1; i <= 100; ++i) q.Add(series, 5, i);
  q.Add(series, 15, 7);
  EXPECT_EQ(q.Count(0), 100);
  const double p95 = *q.Quantile(0, 0.95);
  EXPECT_GE(p95, 95);
  EXPECT_LE(p95, 95 * BucketQuantiles::kRatio);
  EXPECT_EQ(*q.Quantile(0, 1), 100);
  EXPECT_EQ(*q.Quantile(0, 0.01), 1);
  EXPECT_EQ(*q.Quantile(1, 0.95), 7);
  EXPECT_FALSE(q.Quantile(2, 0.95).has_value());
  // Zero waits and waits above the last bin's edge.
  q.Add(series, 25, 0);
  q.Add(series, 25, 0);
  q.Add(series, 25, 1e9);
  EXPECT_EQ(*q.Quantile(2, 0.5), 0);
  EXPECT_EQ(*q.Quantile(2, 0.95), 1e9);
}

TEST(BucketQuantiles, MergesWhenTheSeriesMerges) {
  TimeSeries series(100, 1, 4, 10);  // buckets [100,110) ... [130,140)
  BucketQuantiles q(series);
  q.Add(series, 105, 1);
  q.Add(series, 115, 50);
  series.Reach(140);  // now 20 s wide: [100,120) holds both
  EXPECT_EQ(series.width(), 20);
  q.Add(series, 145, 3);
  EXPECT_EQ(q.Count(0), 2);
  EXPECT_EQ(*q.Quantile(0, 0.95), 50);
  EXPECT_EQ(q.Count(2), 1);
  series.Integrate(100, 200, std::vector<double>{1});  // 40 s wide
  q.Follow(series);
  EXPECT_EQ(q.Count(0), 2);
  EXPECT_EQ(q.Count(1), 1);
  EXPECT_EQ(*q.Quantile(1, 0.95), 3);
}

}  // namespace
}  // namespace tessera::trace
