#include "trace/estimates.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cli/command.h"
#include "config/loader.h"
#include "gtest/gtest.h"
#include "trace/model_builder.h"
#include "trace/test_util.h"

namespace tessera::trace {
namespace {

using Kind = EstimateOptions::Kind;

TEST(Estimates, ParsesEveryMode) {
  auto none = ParseEstimates("none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->kind, Kind::kNone);
  auto exact = ParseEstimates("exact");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->kind, Kind::kExact);
  auto half = ParseEstimates("x0.5");
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->kind, Kind::kFactor);
  EXPECT_EQ(half->factor, 0.5);
  auto three = ParseEstimates("x3");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->factor, 3);
  auto random = ParseEstimates("random:0.5-3");
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->kind, Kind::kRandom);
  EXPECT_EQ(random->lo, 0.5);
  EXPECT_EQ(random->hi, 3);
  for (const char* text : {"none", "exact", "x0.5", "x3", "random:0.5-3", "random:1-1"}) {
    auto o = ParseEstimates(text);
    ASSERT_TRUE(o.ok()) << text;
    EXPECT_EQ(FormatEstimates(*o), text);
  }
}

TEST(Estimates, BadSyntaxIsAClearError) {
  for (const char* text : {"",
                           "x",
                           "x-1",
                           "x0",
                           "x0.0001",
                           "x1001",
                           "x1e3",
                           "xinf",
                           "xnan",
                           "x0x10",
                           "x.",
                           "x1..2",
                           "x 2",
                           " exact",
                           "EXACT",
                           "exactly",
                           "random",
                           "random:",
                           "random:1",
                           "random:-1-3",
                           "random:0.5-",
                           "random:0.5-3-4",
                           "random:a-b",
                           "random:0-3",
                           "random:0.5-inf",
                           "2"}) {
    auto o = ParseEstimates(text);
    ASSERT_FALSE(o.ok()) << "\"" << text << "\" was accepted";
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(o.status().message()).find("is not an estimate mode: none, exact"),
              std::string::npos)
        << o.status();
  }
  auto reversed = ParseEstimates("random:3-0.5");
  ASSERT_FALSE(reversed.ok());
  EXPECT_EQ(std::string(reversed.status().message()),
            "\"random:3-0.5\": the low factor 3 is above the high one 0.5");
}

TEST(Estimates, ExactAndFactorScaleTheDuration) {
  EstimateOptions o;
  EXPECT_FALSE(RuntimeEstimate(o, 100, 0).has_value());  // none: the engine learns
  o = *ParseEstimates("exact");
  EXPECT_EQ(RuntimeEstimate(o, 100, 0), 100);
  EXPECT_FALSE(RuntimeEstimate(o, -1, 0).has_value());  // no duration, no estimate
  o = *ParseEstimates("x0.5");
  EXPECT_EQ(RuntimeEstimate(o, 100, 7), 50);
  o = *ParseEstimates("x3");
  EXPECT_EQ(RuntimeEstimate(o, 100, 7), 300);
}

TEST(Estimates, RandomIsLogUniformAndReproducible) {
  EstimateOptions o = *ParseEstimates("random:0.5-3");
  o.seed = 7;
  std::vector<double> f;
  for (int64_t i = 0; i < 20000; ++i) f.push_back(EstimateFactor(o, i));
  for (double v : f) {
    ASSERT_GE(v, 0.5);
    ASSERT_LE(v, 3);
  }
  // The same (seed, job) gives the same factor, whatever was drawn before.
  EXPECT_EQ(EstimateFactor(o, 12345), f[12345]);
  EXPECT_EQ(RuntimeEstimate(o, 200, 3), 200 * f[3]);
  EXPECT_NE(f[0], f[1]);
  EstimateOptions other = o;
  other.seed = 8;
  EXPECT_NE(EstimateFactor(other, 0), f[0]);
  // Log-uniform: the median is the geometric mean sqrt(0.5 x 3), and a quarter of the draws lie
  // below 0.5 x 6^(1/4).
  std::vector<double> sorted = f;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NEAR(sorted[sorted.size() / 2], std::sqrt(1.5), 0.03);
  EXPECT_NEAR(sorted[sorted.size() / 4], 0.5 * std::pow(6.0, 0.25), 0.03);
}

// A trace of three jobs, one without a duration.
Trace ThreeJobs() {
  Trace t;
  TraceNode n;
  n.name = "n";
  n.cpu_milli = 8000;
  n.memory_mib = 8192;
  n.gpus = 8;
  n.source = "test";
  t.nodes.push_back(n);
  for (double d : {100.0, 40.0, -1.0}) {
    TraceJob j;
    j.duration = d;
    j.gpus = 1;
    t.jobs.push_back(j);
  }
  return t;
}

TEST(Estimates, TheConverterSetsTheWorkloadsEstimate) {
  Trace t = ThreeJobs();
  for (const char* mode : {"none", "exact", "x0.5", "random:0.5-3"}) {
    BuildOptions bo;
    bo.estimates = *ParseEstimates(mode);
    bo.estimates.seed = 42;
    Model model;
    std::vector<std::string> notes;
    auto conv = BuildModel(t, bo, model, notes);
    ASSERT_TRUE(conv.ok());
    for (int64_t i = 0; i < 3; ++i) {
      const TraceJob& j = t.jobs[static_cast<size_t>(i)];
      Workload w = conv->Make(j, i);
      EXPECT_EQ(w.runtime_estimate, RuntimeEstimate(bo.estimates, j.duration, i)) << mode;
      EXPECT_EQ(w.runtime_estimate.has_value(), std::string(mode) != "none" && j.duration >= 0)
          << mode;
    }
  }
}

TEST(BuildOptions, StrategyAndBackfillOverrideEveryQueue) {
  Trace t = ThreeJobs();
  t.queues = {"", "a", "b"};
  t.jobs[0].queue = 1;
  t.jobs[1].queue = 2;
  BuildOptions bo;
  bo.strategy = QueueingStrategy::kStrictFIFO;
  bo.backfill = false;
  Model model;
  std::vector<std::string> notes;
  ASSERT_TRUE(BuildModel(t, bo, model, notes).ok());
  ASSERT_EQ(model.cluster_queues.size(), 3u);  // "default", a, b
  for (const auto& cq : model.cluster_queues)
    EXPECT_EQ(cq.strategy, QueueingStrategy::kStrictFIFO) << cq.name;
  EXPECT_FALSE(model.config.backfill.enable);

  // Unset: the manifests' (or the defaults') values stay.
  Model plain;
  ASSERT_TRUE(BuildModel(t, {}, plain, notes).ok());
  EXPECT_EQ(plain.cluster_queues[0].strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(plain.config.backfill.enable, SchedulerConfig{}.backfill.enable);

  // Manifest queues too.
  LoadResult lr = LoadManifestFiles({testing::DataFile("queues.yaml")});
  ASSERT_TRUE(lr.ok());
  Trace none = ThreeJobs();
  bo.strategy = QueueingStrategy::kBestEffortFIFO;
  for (auto& cq : lr.model.cluster_queues) cq.strategy = QueueingStrategy::kStrictFIFO;
  ASSERT_TRUE(BuildModel(none, bo, lr.model, notes).ok());
  for (const auto& cq : lr.model.cluster_queues)
    EXPECT_EQ(cq.strategy, QueueingStrategy::kBestEffortFIFO) << cq.name;
}

// The replay command's flags: bad values are parse errors naming what is expected.
TEST(ReplayFlags, BadValuesAreClearErrors) {
  auto parse = [](const std::string& args) -> std::string {
    CLI::App app;
    CLI::App* sim = app.add_subcommand("sim");
    // The command's flags live in its run function: keep it while parsing.
    cli::Command replay = cli::AddReplayCommand(*sim);
    try {
      app.parse("sim replay " + args, false);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(parse("--estimates x0.5 --backfill off --strategy StrictFIFO"), "");
  EXPECT_EQ(parse("--estimates random:0.5-3 --synthetic-mix gangs"), "");
  EXPECT_NE(parse("--estimates x-1").find("is not an estimate mode"), std::string::npos);
  EXPECT_NE(parse("--estimates random:3-1").find("above the high one"), std::string::npos);
  EXPECT_NE(parse("--backfill yes").find("{on,off}"), std::string::npos);
  EXPECT_NE(parse("--strategy strict").find("StrictFIFO"), std::string::npos);
  EXPECT_NE(parse("--synthetic-mix big").find("gangs"), std::string::npos);
}

}  // namespace
}  // namespace tessera::trace
