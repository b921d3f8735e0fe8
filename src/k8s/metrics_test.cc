#include "k8s/metrics.h"

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

TEST(Metrics, RendersPrometheusText) {
  Metrics m;
  m.bind_latency.Observe(0.002);
  m.bind_latency.Observe(0.004);
  ++m.binds_ok;
  m.events_dropped = 7;
  m.events_queued = 3;
  m.SetGauges({{"team-a", 3}}, {{"team-a", 1}}, {{"a100", 8}});
  std::string text = m.Render();
  EXPECT_NE(text.find("tessera_pending_workloads{cluster_queue=\"team-a\"} 3"), std::string::npos);
  EXPECT_NE(text.find("tessera_gpus_allocated{flavor=\"a100\"} 8"), std::string::npos);
  EXPECT_NE(text.find("tessera_bind_latency_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("tessera_binds_total{result=\"ok\"} 1"), std::string::npos);
  EXPECT_NE(text.find("# TYPE tessera_admission_wait_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("tessera_events_total{result=\"dropped\"} 7"), std::string::npos);
  EXPECT_NE(text.find("\ntessera_events_queued 3\n"), std::string::npos);
}

TEST(Histogram, QuantileIsABucketBound) {
  Histogram h({1, 2, 4, 8});
  for (int i = 0; i < 9; ++i) h.Observe(1.5);
  h.Observe(7);
  EXPECT_EQ(h.Quantile(0.5), 2);
  EXPECT_EQ(h.Quantile(1.0), 8);
  EXPECT_EQ(h.count(), 10);
}

}  // namespace
}  // namespace tessera::k8s
