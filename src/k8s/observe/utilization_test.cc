// The join of DCGM readings to workloads and the underuse rule (utilization.h), on the recorded
// exposition and on hand-made readings with times chosen by hand.
#include "k8s/observe/utilization.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

std::string Fixture() {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  std::ifstream in(std::string(dir ? dir : TESSERA_REPO_DIR) +
                   "/tests/k8s/testdata/dcgm-exporter-a100.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// team-a's train (pod train-0 on gpu-node-1, GPUs 0 and 1) and team-b's infer (pod infer-0,
// GPU 2, bound by Tessera with tessera.dev/gpu-indices "2").
std::vector<HeldGpus> Running() {
  HeldGpus train{
      "Job:team-a/train", "team-a", "train", "cq-a", 2, {{"train-0", "gpu-node-1", {0, 1}}}};
  HeldGpus infer{
      "Pod:team-b/infer", "team-b", "infer", "cq-b", 1, {{"infer-0", "gpu-node-1", {2}}}};
  return {train, infer};
}

TEST(Utilization, RecordedExpositionJoinedByPodLabelsAndByHostnameAndIndex) {
  auto readings = ParseDcgmExposition(Fixture());
  ASSERT_TRUE(readings.ok()) << readings.status();
  UtilizationTracker t({.threshold = 0.1, .for_s = 600});
  t.Update(*readings, Running(), 0);
  auto w = t.workloads();
  ASSERT_EQ(w.size(), 2u);
  // By its pod labels: mean of GPU 0 (0.021) and GPU 1 (0.014).
  EXPECT_EQ(w["Job:team-a/train"].measured_gpus, 2);
  EXPECT_DOUBLE_EQ(*w["Job:team-a/train"].utilization, (0.021 + 0.014) / 2);
  // GPU 2 has empty pod labels: joined by Hostname and index to infer-0.
  EXPECT_EQ(w["Pod:team-b/infer"].measured_gpus, 1);
  EXPECT_DOUBLE_EQ(*w["Pod:team-b/infer"].utilization, 0.934);
  auto gpus = t.gpus();
  ASSERT_EQ(gpus.size(), 4u);
  using Gpu = std::pair<std::string, int32_t>;
  EXPECT_EQ(gpus[Gpu("gpu-node-1", 0)].workload, "Job:team-a/train");
  EXPECT_EQ(gpus[Gpu("gpu-node-1", 2)].workload, "Pod:team-b/infer");
  EXPECT_EQ(gpus[Gpu("gpu-node-1", 3)].workload, "");  // idle: no workload holds it
  EXPECT_DOUBLE_EQ(*gpus[Gpu("gpu-node-1", 3)].fb_free_mib, 81150);
  EXPECT_DOUBLE_EQ(*t.gpu_utilization("gpu-node-1", 2), 0.934);
  EXPECT_FALSE(t.gpu_utilization("gpu-node-2", 0).has_value());
  EXPECT_EQ(t.unjoined(), 0);
}

TEST(Utilization, ReadingsThatCannotBeJoinedAreCountedOrLeftOut) {
  std::vector<GpuReading> r(3);
  r[0].gpu_util = 0.5;  // no pod, no Hostname: cannot be joined
  r[1].ns = "other";    // a pod of another scheduler's
  r[1].pod = "web-0";
  r[1].hostname = "gpu-node-1";
  r[1].gpu = 3;
  r[1].gpu_util = 0.9;
  r[2].hostname = "gpu-node-9";  // a node Tessera has no pod on
  r[2].gpu = 0;
  r[2].gpu_util = 0.2;
  UtilizationTracker t({});
  t.Update(r, Running(), 0);
  EXPECT_EQ(t.unjoined(), 1);
  for (const auto& [k, w] : t.workloads()) EXPECT_FALSE(w.utilization.has_value()) << k;
  EXPECT_EQ(t.gpus().size(), 1u);  // gpu-node-9's GPU 0, held by none of Tessera's
}

GpuReading Train(double util) {
  GpuReading r;
  r.ns = "team-a";
  r.pod = "train-0";
  r.hostname = "gpu-node-1";
  r.gpu = 0;
  r.engine_active = util;
  return r;
}

// Threshold 10 %, period 600 s. By hand: low from t=100 (5 %); a reading at 12 % at t=400 ends
// the stretch; low again from t=500; no reading at t=900 and t=1000 (an exporter down); at
// t=1100, 600 s after t=500, it is underused, said once; at t=1200 it still is (not said
// again); at t=1300 it reads 50 %: not underused any more; it stops running at t=1400 and is
// forgotten.
TEST(Utilization, UnderuseNeedsEveryReadingLowForThePeriod) {
  UtilizationTracker t({.threshold = 0.1, .for_s = 600});
  std::vector<HeldGpus> running = {Running()[0]};
  auto at = [&](double now, std::optional<double> util) {
    std::vector<GpuReading> r;
    if (util) r.push_back(Train(*util));
    return t.Update(r, running, now);
  };
  const std::string key = "Job:team-a/train";
  EXPECT_TRUE(at(0, 0.5).empty());
  EXPECT_TRUE(at(100, 0.05).empty());
  EXPECT_TRUE(at(400, 0.12).empty());
  EXPECT_EQ(t.workloads()[key].low_since, -1);
  EXPECT_TRUE(at(500, 0.05).empty());
  EXPECT_TRUE(at(800, 0.0).empty());
  EXPECT_TRUE(at(900, std::nullopt).empty());
  EXPECT_TRUE(at(1000, std::nullopt).empty());
  EXPECT_FALSE(t.workloads()[key].underused);
  EXPECT_EQ(at(1100, 0.09), std::vector<std::string>{key});
  EXPECT_TRUE(t.workloads()[key].underused);
  EXPECT_TRUE(t.gpu_underused("gpu-node-1", 0));
  EXPECT_TRUE(at(1200, 0.02).empty());  // said once
  EXPECT_TRUE(t.workloads()[key].underused);
  EXPECT_TRUE(at(1300, 0.5).empty());
  EXPECT_FALSE(t.workloads()[key].underused);
  running.clear();
  at(1400, std::nullopt);
  EXPECT_TRUE(t.workloads().empty());
}

// Without a reading before the period has passed from the first low one, nothing is said: the
// evidence is the readings, and a gap does not make the period pass sooner.
TEST(Utilization, AWorkloadNeverMeasuredIsNeverUnderused) {
  UtilizationTracker t({.threshold = 0.1, .for_s = 60});
  for (double now : {0.0, 100.0, 1000.0}) EXPECT_TRUE(t.Update({}, Running(), now).empty());
  for (const auto& [k, w] : t.workloads()) {
    EXPECT_FALSE(w.underused) << k;
    EXPECT_FALSE(w.utilization.has_value()) << k;
  }
}

}  // namespace
}  // namespace tessera::k8s
