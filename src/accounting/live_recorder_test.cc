// tessera serve's records (LiveRecorder) on a real SQLite store: a run kept open while it runs,
// its figures against hand-computed ones (GPU-hours, allocated and effective dollars, the
// GPU-hour-weighted utilization), a preemption and the next attempt, and a restart: a run that
// goes on across it is carried on (not lost, not counted twice), one that ended meanwhile is
// closed at its last checkpoint.
#include "accounting/live_recorder.h"

#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"

namespace tessera::accounting {
namespace {

namespace fs = std::filesystem;

class LiveRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera-live-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "acct.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<AccountingStore> Open() {
    auto s = AccountingStore::Open(path_);
    EXPECT_TRUE(s.ok()) << s.status();
    return std::move(*s);
  }

  fs::path dir_;
  std::string path_;
};

// A workload of `gpus` GPUs at $2 per GPU-hour, admitted at `start`.
LiveRun MakeRun(const std::string& name, double gpus, double start, std::optional<double> util) {
  LiveRun r;
  r.record.ns = "team-a";
  r.record.name = name;
  r.record.cluster_queue = "cq-a";
  r.record.run_key = "Job:team-a/" + name;
  r.record.gpus = gpus;
  r.record.pods = 1;
  r.record.submit = start - 60;
  r.start = start;
  r.dollars_per_hour = 2 * gpus;
  r.utilization = util;
  return r;
}

TEST_F(LiveRecorderTest, FiguresOfARunAgainstHandComputedOnes) {
  auto store = Open();
  LiveRecorder rec(store.get(), /*checkpoint_s=*/0);
  ASSERT_TRUE(rec.Resume().ok());
  const double t0 = 1'700'000'000;
  // 4 GPUs from t0; no measurement for the first hour, then 25 % for an hour, then 75 % for
  // half an hour; it ends at t0 + 2.5 h.
  ASSERT_TRUE(rec.Observe({MakeRun("train", 4, t0, std::nullopt)}, t0).ok());
  ASSERT_TRUE(rec.Observe({MakeRun("train", 4, t0, std::nullopt)}, t0 + 3600).ok());
  ASSERT_TRUE(rec.Observe({MakeRun("train", 4, t0, 0.25)}, t0 + 7200).ok());
  auto open = store->ReadOpen("serve");
  ASSERT_EQ(open->size(), 1u);  // written while it runs
  EXPECT_DOUBLE_EQ((*open)[0].gpu_hours, 8);
  ASSERT_TRUE(rec.Observe({MakeRun("train", 4, t0, 0.75)}, t0 + 9000).ok());
  ASSERT_TRUE(rec.Observe({}, t0 + 9000).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 1u);
  const RunRecord& r = (*all)[0];
  EXPECT_EQ(r.how, RunEnd::kFinished);
  EXPECT_EQ(r.source, "serve");
  EXPECT_DOUBLE_EQ(r.start, t0);
  EXPECT_DOUBLE_EQ(r.end, t0 + 9000);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 10);           // 4 GPUs x 2.5 h
  EXPECT_DOUBLE_EQ(*r.allocated_dollars, 20);  // 10 GPU-h x $2
  // Effective: hour 2 at 25 % ($8 x 0.25 = $2) + half an hour at 75 % ($4 x 0.75 = $3).
  EXPECT_DOUBLE_EQ(*r.effective_dollars, 5);
  // Utilization over the measured 6 GPU-hours: (4 x 0.25 + 2 x 0.75) / 6.
  EXPECT_DOUBLE_EQ(*r.utilization, (4 * 0.25 + 2 * 0.75) / 6);
  EXPECT_TRUE(store->ReadOpen("serve")->empty());
}

TEST_F(LiveRecorderTest, PreemptedRunAndItsNextAttempt) {
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  const double t0 = 1000;
  ASSERT_TRUE(rec.Observe({MakeRun("job", 2, t0, std::nullopt)}, t0 + 1800).ok());
  ASSERT_TRUE(
      rec.Observe({}, t0 + 3600,
                  {{"Job:team-a/job", {RunEnd::kPreempted, "preempted by team-b/big", -1, {}}}})
          .ok());
  ASSERT_TRUE(rec.Observe({MakeRun("job", 2, t0 + 7200, std::nullopt)}, t0 + 7200).ok());
  ASSERT_TRUE(rec.Observe({}, t0 + 10800).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].how, RunEnd::kPreempted);
  EXPECT_EQ((*all)[0].reason, "preempted by team-b/big");
  EXPECT_EQ((*all)[0].preemptions, 1);
  EXPECT_DOUBLE_EQ((*all)[0].gpu_hours, 2);  // 2 GPUs x 1 h
  EXPECT_EQ((*all)[1].attempt, 2);
  EXPECT_EQ((*all)[1].preemptions, 1);
  EXPECT_DOUBLE_EQ((*all)[1].gpu_hours, 2);
  EXPECT_DOUBLE_EQ(*(*all)[1].allocated_dollars, 4);
  EXPECT_FALSE((*all)[1].effective_dollars.has_value());  // never measured
}

// serve observes every status period; a run that began and ended between two (admitted, then
// preempted a moment later) is recorded from what the caller saw at its end, and charged up to
// that end, not to the next Observe.
TEST_F(LiveRecorderTest, RunThatBeganAndEndedBetweenTwoObservesIsRecorded) {
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  const double t0 = 1000;
  ASSERT_TRUE(rec.Observe({}, t0).ok());
  LiveRecorder::Ending e{RunEnd::kPreempted, "preempted by team-b/b1", t0 + 1800,
                         MakeRun("job", 4, t0 + 900, std::nullopt)};
  ASSERT_TRUE(rec.Observe({}, t0 + 3600, {{"Job:team-a/job", e}}).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 1u);
  const RunRecord& r = (*all)[0];
  EXPECT_EQ(r.how, RunEnd::kPreempted);
  EXPECT_EQ(r.reason, "preempted by team-b/b1");
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_DOUBLE_EQ(r.start, t0 + 900);
  EXPECT_DOUBLE_EQ(r.end, t0 + 1800);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 1);  // 4 GPUs x 15 min
}

// Preempted and admitted again within one status period: the first run ends at its preemption,
// the second is open from its own start.
TEST_F(LiveRecorderTest, PreemptedAndReadmittedWithinOnePeriodMakesTwoRuns) {
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  const double t0 = 1000;
  ASSERT_TRUE(rec.Observe({MakeRun("job", 2, t0, std::nullopt)}, t0).ok());
  LiveRecorder::Ending e{RunEnd::kPreempted, "preempted", t0 + 1800,
                         MakeRun("job", 2, t0, std::nullopt)};
  ASSERT_TRUE(
      rec.Observe({MakeRun("job", 2, t0 + 2700, std::nullopt)}, t0 + 3600, {{"Job:team-a/job", e}})
          .ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].how, RunEnd::kPreempted);
  EXPECT_DOUBLE_EQ((*all)[0].end, t0 + 1800);
  EXPECT_DOUBLE_EQ((*all)[0].gpu_hours, 1);  // 2 GPUs x 30 min
  EXPECT_EQ((*all)[1].how, RunEnd::kRunning);
  EXPECT_EQ((*all)[1].attempt, 2);
  EXPECT_DOUBLE_EQ((*all)[1].start, t0 + 2700);
  EXPECT_DOUBLE_EQ((*all)[1].gpu_hours, 0.5);  // 2 GPUs x 15 min so far
}

// serve stops (the recorder and the store are gone), then a new one resumes: `long` still runs
// and is carried on, with the time it ran while no serve was up; `short` ended meanwhile and is
// closed at its last checkpoint.
TEST_F(LiveRecorderTest, RestartCarriesRunningRunsOnAndClosesTheOthers) {
  const double t0 = 5000;
  {
    auto store = Open();
    LiveRecorder rec(store.get(), 0);
    ASSERT_TRUE(rec.Resume().ok());
    ASSERT_TRUE(
        rec.Observe({MakeRun("long", 1, t0, std::nullopt), MakeRun("short", 1, t0, 0.5)}, t0 + 3600)
            .ok());
  }
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  ASSERT_TRUE(rec.Observe({MakeRun("long", 1, t0 + 7000, std::nullopt)}, t0 + 7200).ok());
  ASSERT_TRUE(rec.Observe({}, t0 + 10800).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 2u);  // one row per run: none added by the restart
  for (const RunRecord& r : *all) {
    EXPECT_EQ(r.how, RunEnd::kFinished) << r.name;
    if (r.name == "long") {
      EXPECT_DOUBLE_EQ(r.start, t0);  // its real start, not the restart's
      EXPECT_DOUBLE_EQ(r.end, t0 + 10800);
      EXPECT_DOUBLE_EQ(r.gpu_hours, 3);  // the hour without a serve included
      EXPECT_DOUBLE_EQ(*r.allocated_dollars, 6);
      EXPECT_EQ(r.attempt, 1);
    } else {
      EXPECT_DOUBLE_EQ(r.end, t0 + 3600);  // its last checkpoint
      EXPECT_DOUBLE_EQ(r.gpu_hours, 1);
      EXPECT_DOUBLE_EQ(*r.effective_dollars, 1);  // $2 x 0.5
      EXPECT_DOUBLE_EQ(*r.utilization, 0.5);
    }
  }
}

// A run's dollars cover all its GPU-hours. A period without a price in the middle of a priced
// run (the first period of a new leader whose engine had not read the SchedulerConfig yet: the
// K8sUsage restart test once saw `long`'s dollars 1.2 GPU-seconds short; or spec.pricing removed
// while it runs) is charged at the run's last price, and said.
TEST_F(LiveRecorderTest, APeriodWithoutAPriceIsChargedAtTheRunsLastPriceAndSaid) {
  const double t0 = 5000;
  {
    auto store = Open();
    LiveRecorder rec(store.get(), 0);
    ASSERT_TRUE(rec.Resume().ok());
    ASSERT_TRUE(rec.Observe({MakeRun("long", 2, t0, std::nullopt)}, t0 + 3600).ok());
  }
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  LiveRun unpriced = MakeRun("long", 2, t0 + 5000, std::nullopt);
  unpriced.dollars_per_hour.reset();
  // The half hour without a serve, observed without a price: carried on at $2 a GPU-hour (the
  // row's dollars over its GPU-hours).
  ASSERT_TRUE(rec.Observe({unpriced}, t0 + 5400).ok());
  std::vector<LiveRecorder::PriceGap> gaps = rec.TakePriceGaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].run_key, "Job:team-a/long");
  EXPECT_DOUBLE_EQ(gaps[0].gpu_hours, 1);  // 2 GPUs x 30 min
  EXPECT_FALSE(gaps[0].backfilled);
  ASSERT_TRUE(rec.Observe({unpriced}, t0 + 6300).ok());
  EXPECT_TRUE(rec.TakePriceGaps().empty());  // said once per run
  ASSERT_TRUE(rec.Observe({MakeRun("long", 2, t0 + 5000, std::nullopt)}, t0 + 7200).ok());
  ASSERT_TRUE(rec.Observe({}, t0 + 7200).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_DOUBLE_EQ((*all)[0].gpu_hours, 4);           // 2 GPUs x 2 h
  EXPECT_DOUBLE_EQ(*(*all)[0].allocated_dollars, 8);  // all of them at $2
}

// A run first seen without a price (spec.pricing given while it runs): its GPU-hours so far are
// charged at its first price once one is known, and said; a run never priced has no dollars.
TEST_F(LiveRecorderTest, GpuHoursBeforeARunsFirstPriceAreChargedAtItAndSaid) {
  auto store = Open();
  LiveRecorder rec(store.get(), 0);
  ASSERT_TRUE(rec.Resume().ok());
  const double t0 = 1000;
  LiveRun unpriced = MakeRun("job", 2, t0, 0.5);
  unpriced.dollars_per_hour.reset();
  LiveRun never = MakeRun("never", 1, t0, std::nullopt);
  never.dollars_per_hour.reset();
  ASSERT_TRUE(rec.Observe({unpriced, never}, t0 + 3600).ok());
  EXPECT_TRUE(rec.TakePriceGaps().empty());  // nothing priced yet: nothing to say
  ASSERT_TRUE(rec.Observe({MakeRun("job", 2, t0, std::nullopt), never}, t0 + 7200).ok());
  std::vector<LiveRecorder::PriceGap> gaps = rec.TakePriceGaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].run_key, "Job:team-a/job");
  EXPECT_DOUBLE_EQ(gaps[0].gpu_hours, 2);  // the first hour
  EXPECT_TRUE(gaps[0].backfilled);
  ASSERT_TRUE(rec.Observe({}, t0 + 7200).ok());
  auto all = store->Read();
  ASSERT_EQ(all->size(), 2u);
  for (const RunRecord& r : *all) {
    SCOPED_TRACE(r.name);
    if (r.name == "never") {
      EXPECT_DOUBLE_EQ(r.gpu_hours, 2);
      EXPECT_FALSE(r.allocated_dollars.has_value());
      continue;
    }
    EXPECT_DOUBLE_EQ(r.gpu_hours, 4);
    EXPECT_DOUBLE_EQ(*r.allocated_dollars, 8);
    // Measured at 50 % in the first hour, before its price: $4 x 0.5 once priced.
    EXPECT_DOUBLE_EQ(*r.effective_dollars, 2);
  }
}

// Open runs are rewritten at most every checkpoint; a crash loses at most that much.
TEST_F(LiveRecorderTest, OpenRunsAreRewrittenOnlyAtCheckpoints) {
  auto store = Open();
  LiveRecorder rec(store.get(), /*checkpoint_s=*/600);
  ASSERT_TRUE(rec.Resume().ok());
  ASSERT_TRUE(rec.Observe({MakeRun("a", 1, 0, std::nullopt)}, 0).ok());  // new: written
  ASSERT_TRUE(rec.Observe({MakeRun("a", 1, 0, std::nullopt)}, 300).ok());
  EXPECT_DOUBLE_EQ(store->ReadOpen("serve")->at(0).gpu_hours, 0);
  ASSERT_TRUE(rec.Observe({MakeRun("a", 1, 0, std::nullopt)}, 720).ok());
  EXPECT_DOUBLE_EQ(store->ReadOpen("serve")->at(0).gpu_hours, 0.2);
  // serve stopping while it leads: written now, checkpoint or not.
  ASSERT_TRUE(rec.Observe({MakeRun("a", 1, 0, std::nullopt)}, 900).ok());
  EXPECT_DOUBLE_EQ(store->ReadOpen("serve")->at(0).gpu_hours, 0.2);
  rec.CheckpointNext();
  ASSERT_TRUE(rec.Observe({MakeRun("a", 1, 0, std::nullopt)}, 1080).ok());
  EXPECT_DOUBLE_EQ(store->ReadOpen("serve")->at(0).gpu_hours, 0.3);
  EXPECT_DOUBLE_EQ(store->ReadOpen("serve")->at(0).end, 1080);
}

}  // namespace
}  // namespace tessera::accounting
