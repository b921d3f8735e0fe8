#include "trace/synthetic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "gtest/gtest.h"
#include "trace/replay.h"

namespace tessera::trace {
namespace {

SyntheticOptions Gangs(int64_t jobs, int32_t nodes, uint64_t seed) {
  SyntheticOptions o;
  o.jobs = jobs;
  o.nodes = nodes;
  o.seed = seed;
  o.queues = 1;
  o.load = 0.9;
  o.mix = SyntheticMix::kGangs;
  return o;
}

TEST(SyntheticGangs, SizesDurationsAndLoad) {
  const SyntheticOptions o = Gangs(20000, 64, 3);
  Trace t = GenerateSynthetic(o);
  ASSERT_EQ(t.nodes.size(), 64u);
  for (const auto& n : t.nodes) EXPECT_EQ(n.gpus, 8);
  ASSERT_EQ(t.jobs.size(), 20000u);
  std::map<int32_t, int64_t> by_size;
  std::vector<double> durations;
  double gpu_seconds = 0;
  for (const auto& j : t.jobs) {
    const int32_t gpus = j.pods * j.gpus;
    ++by_size[gpus];
    ASSERT_LE(j.gpus, 8);
    ASSERT_TRUE(j.pods == 1 || j.gpus == 8) << "pods of 8 GPUs once a job needs more than 8";
    ASSERT_EQ(j.gpu_milli, 0);
    ASSERT_EQ(j.priority, 0);
    ASSERT_EQ(j.gpu_models, -1);
    ASSERT_GE(j.duration, 10);
    ASSERT_LE(j.duration, o.gang_max_duration);
    durations.push_back(j.duration);
    gpu_seconds += gpus * j.duration;
  }
  EXPECT_EQ(by_size.size(), 7u);
  const std::map<int32_t, double> weights = {{1, 0.50},  {2, 0.15},  {4, 0.10}, {8, 0.10},
                                             {16, 0.07}, {32, 0.05}, {64, 0.03}};
  for (const auto& [gpus, w] : weights)
    EXPECT_NEAR(static_cast<double>(by_size[gpus]) / 20000, w, 0.015) << gpus << " GPUs";
  std::sort(durations.begin(), durations.end());
  EXPECT_NEAR(durations[durations.size() / 2], o.gang_median_duration,
              0.1 * o.gang_median_duration);
  // Heavy tail: the p99 is far above the median (e^(2.33 sigma) = 33x for sigma 1.5).
  EXPECT_GT(durations[durations.size() * 99 / 100], 15 * o.gang_median_duration);
  // Offered load: GPU-seconds asked / (GPUs x the arrival span).
  const double offered = gpu_seconds / (t.jobs.back().arrival * 64 * 8);
  EXPECT_NEAR(offered, o.load, 0.15 * o.load);
}

TEST(SyntheticGangs, SameSeedSameTrace) {
  Trace a = GenerateSynthetic(Gangs(500, 16, 9)), b = GenerateSynthetic(Gangs(500, 16, 9));
  Trace c = GenerateSynthetic(Gangs(500, 16, 10));
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  bool differs = false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].arrival, b.jobs[i].arrival);
    EXPECT_EQ(a.jobs[i].duration, b.jobs[i].duration);
    EXPECT_EQ(a.jobs[i].pods * a.jobs[i].gpus, b.jobs[i].pods * b.jobs[i].gpus);
    differs = differs || a.jobs[i].duration != c.jobs[i].duration;
  }
  EXPECT_TRUE(differs);
}

TEST(SyntheticGangs, ClampedLogNormalMean) {
  // Without clamping: median x e^(sigma^2 / 2).
  EXPECT_NEAR(ClampedLogNormalMean(1200, 1.5, 1e-12, 1e30), 1200 * std::exp(1.125), 1e-6);
  EXPECT_DOUBLE_EQ(ClampedLogNormalMean(1200, 0, 10, 100), 100);
  // Against a sample.
  std::mt19937_64 gen(1);
  std::lognormal_distribution<double> d(std::log(1200.0), 1.5);
  double sum = 0;
  constexpr int kN = 400000;
  for (int i = 0; i < kN; ++i) sum += std::clamp(d(gen), 600.0, 20000.0);
  EXPECT_NEAR(ClampedLogNormalMean(1200, 1.5, 600, 20000), sum / kN, 0.01 * sum / kN);
}

TEST(SyntheticGangs, ReplayFillsEverySizeClass) {
  Trace t = GenerateSynthetic(Gangs(300, 16, 5));
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, model, notes);
  ASSERT_TRUE(conv.ok());
  ReplayOptions ro;
  ro.verify = true;
  auto r = RunReplay(std::move(model), t, *conv, ro);
  ASSERT_TRUE(r.ok()) << r.status();
  int64_t jobs = 0, admitted = 0, finished = 0;
  double gpu_hours = 0;
  for (const auto& c : r->size_classes) {
    jobs += c.jobs;
    admitted += c.admitted;
    finished += c.finished;
    gpu_hours += c.gpu_hours;
    if (c.name != "0") {
      EXPECT_GT(c.jobs, 0) << c.name;
    }
  }
  EXPECT_EQ(r->size_classes[0].jobs, 0);  // no CPU-only job in this mix
  EXPECT_EQ(jobs, 300);
  EXPECT_EQ(admitted, r->all.admitted);
  EXPECT_EQ(finished, r->all.finished);
  EXPECT_NEAR(gpu_hours, r->all.gpu_hours, 1e-6 * r->all.gpu_hours);
}

}  // namespace
}  // namespace tessera::trace
