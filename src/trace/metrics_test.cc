#include "trace/metrics.h"

#include "gtest/gtest.h"

namespace tessera::trace {
namespace {

TEST(Summarize, NearestRankQuantiles) {
  std::vector<double> v = {90, 0, 80};
  Distribution d = Summarize(v);
  EXPECT_EQ(d.count, 3);
  EXPECT_NEAR(d.mean, 170.0 / 3, 1e-9);
  EXPECT_EQ(d.p50, 80);
  EXPECT_EQ(d.p95, 90);
  EXPECT_EQ(d.p99, 90);
  EXPECT_EQ(d.max, 90);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  d = Summarize(hundred);
  EXPECT_EQ(d.p50, 50);
  EXPECT_EQ(d.p95, 95);
  EXPECT_EQ(d.p99, 99);
  std::vector<double> none;
  EXPECT_EQ(Summarize(none).count, 0);
}

TEST(JainIndex, EqualIsOneAndOneTakerIsOneOverN) {
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{2, 2, 2}), 1.0);
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{1, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{}), 1.0);
}

TEST(TimeSeries, TimeWeightedMeansPerBucket) {
  TimeSeries ts(0, 1, 4, 10);
  double v = 2;
  ts.Integrate(0, 5, {&v, 1});
  v = 4;
  ts.Integrate(5, 20, {&v, 1});
  ASSERT_EQ(ts.size(), 2);
  EXPECT_DOUBLE_EQ(ts.Mean(0, 0), 3);  // 5 s at 2, 5 s at 4
  EXPECT_DOUBLE_EQ(ts.Mean(1, 0), 4);
}

TEST(TimeSeries, MergesWhenTheReplayOutgrowsItsBuckets) {
  TimeSeries ts(100, 2, 4, 10);
  double v[2] = {1, 10};
  ts.Integrate(100, 140, v);  // fills the four buckets
  v[0] = 3;
  ts.Integrate(140, 180, v);  // needs eight: the width doubles
  EXPECT_DOUBLE_EQ(ts.width(), 20);
  ASSERT_EQ(ts.size(), 4);
  EXPECT_DOUBLE_EQ(ts.Mean(0, 0), 1);
  EXPECT_DOUBLE_EQ(ts.Mean(2, 0), 3);
  EXPECT_DOUBLE_EQ(ts.Mean(3, 1), 10);
  EXPECT_DOUBLE_EQ(ts.Covered(1), 20);
}

}  // namespace
}  // namespace tessera::trace
