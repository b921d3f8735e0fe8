// Records of real runs: tests/scenarios/cost.yaml simulated and replayed, its figures worked out
// by hand in docs/cost.md ("An example"), one record per run; then through a store file and the
// report, as `tessera sim --accounting-db` and `tessera report cost` do.
#include "accounting/recorder.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "accounting/cost_report.h"
#include "accounting/sim_records.h"
#include "accounting/store.h"
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"
#include "trace/model_builder.h"
#include "trace/replay.h"

namespace tessera::accounting {
namespace {

struct Records : RecordSink {
  void Add(RunRecord r) override { all.push_back(std::move(r)); }
  std::vector<RunRecord> all;
};

std::unique_ptr<Simulator> Simulate(double until = -1) {
  LoadResult r = LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/cost.yaml"});
  EXPECT_TRUE(r.ok()) << testing::AllDiagnostics(r);
  SimOptions options;
  if (until >= 0) options.until = until;
  auto sim = Simulator::Create(std::move(r.model), options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  EXPECT_TRUE((*sim)->Run().ok());
  return std::move(*sim);
}

double Dollars(const std::vector<RunRecord>& records) {
  double sum = 0;
  for (const RunRecord& r : records) sum += r.allocated_dollars.value_or(0);
  return sum;
}

// a/low runs 0-1800 (preempted by a/high), a/high 1800-5400, b/train 0-10800, a/low again
// 5400-12600: four records, in the order the runs ended.
TEST(RunRecorderTest, SimulationGivesOneRecordPerRunWithItsCost) {
  auto sim = Simulate();
  Records out;
  EXPECT_EQ(RecordSimulation(*sim, out), 4);
  ASSERT_EQ(out.all.size(), 4u);
  const RunRecord& first = out.all[0];
  EXPECT_EQ(first.source, "sim");
  EXPECT_EQ(first.ns + "/" + first.name, "a/low");
  EXPECT_EQ(first.how, RunEnd::kPreempted);
  EXPECT_NE(first.reason.find("by high"), std::string::npos) << first.reason;
  EXPECT_EQ(first.attempt, 1);
  EXPECT_EQ(first.preemptions, 1);
  EXPECT_EQ(first.local_queue, "queue-a");
  EXPECT_EQ(first.cluster_queue, "team-a");
  EXPECT_EQ(first.cohort, "research");
  EXPECT_EQ(first.flavors, "on-demand");
  EXPECT_EQ(first.gpu_model, "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(first.priority, 10);
  EXPECT_EQ(first.pods, 1);
  EXPECT_DOUBLE_EQ(first.gpus, 4);
  EXPECT_EQ(nlohmann::json::parse(first.labels)["team"], "alpha");
  EXPECT_DOUBLE_EQ(first.submit, 0);
  EXPECT_DOUBLE_EQ(first.start, 0);
  EXPECT_DOUBLE_EQ(first.end, 1800);
  EXPECT_DOUBLE_EQ(first.gpu_hours, 2);  // 4 GPUs x 0.5 h
  // 2 GPU-h x $3 + 4 core-h x $0.05 + 32 GiB-h x $0.01
  EXPECT_NEAR(*first.allocated_dollars, 6.52, 1e-9);
  EXPECT_FALSE(first.utilization.has_value());

  EXPECT_EQ(out.all[1].name, "high");
  EXPECT_EQ(out.all[1].how, RunEnd::kFinished);
  EXPECT_EQ(out.all[1].priority, 100);
  EXPECT_NEAR(*out.all[1].allocated_dollars, 13.04, 1e-9);
  EXPECT_EQ(out.all[2].name, "train");
  EXPECT_EQ(out.all[2].flavors, "spot");
  EXPECT_EQ(out.all[2].gpu_model, "NVIDIA-H100-80GB-HBM3");
  EXPECT_DOUBLE_EQ(out.all[2].gpu_hours, 6);
  EXPECT_NEAR(*out.all[2].allocated_dollars, 12.78, 1e-9);
  const RunRecord& last = out.all[3];
  EXPECT_EQ(last.name, "low");
  EXPECT_EQ(last.attempt, 2);
  EXPECT_EQ(last.preemptions, 1);
  EXPECT_DOUBLE_EQ(last.start, 5400);
  EXPECT_DOUBLE_EQ(last.end, 12600);
  EXPECT_DOUBLE_EQ(last.gpu_hours, 8);
  EXPECT_NEAR(*last.allocated_dollars, 26.08, 1e-9);  // $24 + $0.80 + $1.28
  // The runs together are the ledger's allocated cost (docs/cost.md: $58.42).
  EXPECT_NEAR(Dollars(out.all), sim->summary().cost->allocated.allocated_dollars(), 1e-9);
  EXPECT_NEAR(Dollars(out.all), 58.42, 1e-9);
}

TEST(RunRecorderTest, RunsStillGoingAtTheEndAreRecordedAsRunning) {
  auto sim = Simulate(/*until=*/3600);
  Records out;
  RecordSimulation(*sim, out, {.source = "sim", .epoch = 1000});
  ASSERT_EQ(out.all.size(), 3u);
  EXPECT_EQ(out.all[0].how, RunEnd::kPreempted);
  EXPECT_DOUBLE_EQ(out.all[0].end, 1000 + 1800);  // the epoch shifts every time
  for (int i : {1, 2}) {
    EXPECT_EQ(out.all[i].how, RunEnd::kRunning) << out.all[i].name;
    EXPECT_DOUBLE_EQ(out.all[i].end, 1000 + 3600);
  }
  EXPECT_EQ(out.all[1].name, "high");         // in workload order
  EXPECT_DOUBLE_EQ(out.all[1].gpu_hours, 2);  // 4 GPUs x 0.5 h
  EXPECT_EQ(out.all[2].name, "train");
  EXPECT_DOUBLE_EQ(out.all[2].gpu_hours, 2);  // 2 GPUs x 1 h
}

TEST(RunRecorderTest, WithoutPricesThereAreNoDollars) {
  LoadResult r = LoadManifestFiles({testing::SourceDir() + "/examples/quickstart.yaml"});
  ASSERT_TRUE(r.ok());
  auto sim = Simulator::Create(std::move(r.model), {});
  ASSERT_TRUE(sim.ok());
  ASSERT_TRUE((*sim)->Run().ok());
  Records out;
  RecordSimulation(**sim, out);
  ASSERT_FALSE(out.all.empty());
  for (const RunRecord& rec : out.all) {
    EXPECT_FALSE(rec.allocated_dollars.has_value()) << rec.name;
    EXPECT_GE(rec.gpu_hours, 0);
  }
}

// The replay records the same runs inside its loop (ReplayOptions::accounting).
TEST(RunRecorderTest, ReplayRecordsTheSameRuns) {
  LoadResult r = LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/cost.yaml"});
  ASSERT_TRUE(r.ok());
  trace::Trace tr;
  std::vector<std::string> notes;
  auto conv = trace::BuildModel(tr, {}, r.model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  Records out;
  trace::ReplayOptions options;
  options.accounting = &out;
  auto res = trace::RunReplay(std::move(r.model), tr, *conv, options);
  ASSERT_TRUE(res.ok()) << res.status();
  ASSERT_EQ(out.all.size(), 4u);
  EXPECT_EQ(out.all[0].source, "sim replay");
  EXPECT_EQ(out.all[0].how, RunEnd::kPreempted);
  EXPECT_EQ(out.all[3].attempt, 2);
  EXPECT_NEAR(Dollars(out.all), 58.42, 1e-9);
}

// `tessera sim cost.yaml --accounting-db X` then `tessera report cost --db X`, as functions.
TEST(RunRecorderTest, SimulationThroughTheStoreToTheReport) {
  namespace fs = std::filesystem;
  const std::string path =
      (fs::temp_directory_path() / ("tessera-acct-e2e-" + std::to_string(getpid()) + ".db"))
          .string();
  fs::remove(path);
  auto sim = Simulate();
  int64_t written = 0;
  ASSERT_TRUE(WriteSimulationRecords(*sim, path, &written).ok());
  EXPECT_EQ(written, 4);
  ASSERT_TRUE(WriteSimulationRecords(*sim, path).ok());  // a second run appends
  auto store = AccountingStore::Open(path, {.read_only = true});
  ASSERT_TRUE(store.ok()) << store.status();

  ReportQuery q;
  q.from = *ParseDate("1970-01-01");
  q.to = *ParseDate("1970-01-02");
  ASSERT_TRUE(ParseGroupBy("cluster-queue", q).ok());
  auto records = (*store)->Read(q.from, q.to);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 8u);
  CostSummary rep = BuildCostReport(*records, q);
  ASSERT_EQ(rep.groups.size(), 2u);
  EXPECT_EQ(rep.groups[0].group, "team-a");
  EXPECT_NEAR(*rep.groups[0].dollars, 2 * 45.64, 1e-9);
  EXPECT_DOUBLE_EQ(rep.groups[0].gpu_hours, 2 * 14);
  EXPECT_EQ(rep.groups[0].jobs, 2);
  EXPECT_EQ(rep.groups[0].runs, 6);
  EXPECT_EQ(rep.groups[0].top_jobs[0].job, "a/low");
  EXPECT_NEAR(*rep.groups[0].top_jobs[0].dollars, 2 * 32.60, 1e-9);

  // Up to 03:00 (10800 s, excluded): a/low's first run and a/high; b/train ends at 10800.
  q.to = *ParseDate("1970-01-01T03:00:00Z");
  records = (*store)->Read(q.from, q.to);
  ASSERT_TRUE(records.ok());
  rep = BuildCostReport(*records, q);
  ASSERT_EQ(rep.groups.size(), 1u);
  EXPECT_NEAR(*rep.groups[0].dollars, 2 * (6.52 + 13.04), 1e-9);
  store->reset();
  fs::remove(path);
  fs::remove(path + "-wal");
  fs::remove(path + "-shm");
}

}  // namespace
}  // namespace tessera::accounting
