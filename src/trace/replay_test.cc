#include "trace/replay.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "config/loader.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trace/readers.h"
#include "trace/replay_testing.h"
#include "trace/report.h"
#include "trace/synthetic.h"
#include "trace/test_util.h"
#include "ui/ui_assets.h"

namespace tessera::trace {
namespace {

using testing::DataFile;
using testing::Replay;
using testing::Replayed;

TEST(Replay, TinyTraceByHand) {
  Replayed run = Replay("tiny_nodes.csv", "tiny_jobs.csv");
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.start, 0);
  EXPECT_EQ(r.end, 150);
  EXPECT_EQ(r.gpus_total, 2);
  // Both GPUs busy for 130 s, one for the last 20 s.
  EXPECT_NEAR(r.mean_allocation_pct, (100.0 * 130 + 50.0 * 20) / 150, 1e-9);
  EXPECT_DOUBLE_EQ(r.peak_allocation_pct, 100);
  EXPECT_DOUBLE_EQ(r.final_allocation_pct, 0);
  ASSERT_EQ(r.queues.size(), 1u);
  const QueueResult& q = r.queues[0];
  EXPECT_EQ(q.name, "default");
  EXPECT_EQ(q.jobs, 3);
  EXPECT_EQ(q.admitted, 3);
  EXPECT_EQ(q.finished, 3);
  EXPECT_EQ(q.preempted, 0);
  EXPECT_DOUBLE_EQ(q.quota_gpus, 2);
  // Waits 0, 90 (j2 from 10 to 100) and 80 (j3 from 20 to 100).
  EXPECT_EQ(q.wait.count, 3);
  EXPECT_NEAR(q.wait.mean, 170.0 / 3, 1e-9);
  EXPECT_EQ(q.wait.p50, 80);
  EXPECT_EQ(q.wait.p95, 90);
  EXPECT_EQ(q.wait.p99, 90);
  // Completion: j1 100, j2 140, j3 110.
  EXPECT_NEAR(q.jct.mean, 350.0 / 3, 1e-9);
  EXPECT_EQ(q.jct.max, 140);
  // GPU time: 2 x 100 + 2 x 30 + 1 x 20 GPU-seconds.
  EXPECT_NEAR(q.gpu_hours, 280.0 / 3600, 1e-12);
  EXPECT_NEAR(q.mean_gpus, 280.0 / 150, 1e-9);
  EXPECT_EQ(q.wait_histogram[0], 1);  // 0 s
  EXPECT_EQ(q.wait_histogram[4], 2);  // (60 s, 5 min]
  EXPECT_DOUBLE_EQ(r.jain_index, 1);
}

// Allocation while anything is pending, the time that covers, and allocation up to the last
// arrival, by hand: the two strategies do the same work (mean allocation differs only by the
// end) but not with the same GPUs idle while jobs wait.
TEST(Replay, AllocationWhilePendingAndOverTheArrivalsByHand) {
  BuildOptions bo;
  bo.backfill = false;
  bo.strategy = QueueingStrategy::kStrictFIFO;
  const ReplayResult strict = Replay("tiny_nodes.csv", "pending_alloc_jobs.csv", bo).result;
  // j1 0..100 (1 GPU), j2 100..150 (2 GPUs), j3 150..180 (1 GPU); pending over [10, 150): one
  // GPU of two held for 90 s, both for 50 s.
  EXPECT_EQ(strict.end, 180);
  EXPECT_NEAR(strict.mean_allocation_pct, (50.0 * 100 + 100.0 * 50 + 50.0 * 30) / 180, 1e-9);
  EXPECT_NEAR(strict.allocation_while_pending_pct, (50.0 * 90 + 100.0 * 50) / 140, 1e-9);
  EXPECT_NEAR(strict.pending_time_pct, 100.0 * 140 / 180, 1e-9);
  EXPECT_NEAR(strict.arrival_window_allocation_pct, 50, 1e-9);  // [0, 20]: j1 alone

  bo.strategy = QueueingStrategy::kBestEffortFIFO;
  const ReplayResult best = Replay("tiny_nodes.csv", "pending_alloc_jobs.csv", bo).result;
  // j1 0..100, j3 20..50, j2 100..150; pending over [10, 100): 50% for 10 s, 100% for 30 s, 50%
  // for 50 s.
  EXPECT_EQ(best.end, 150);
  EXPECT_NEAR(best.allocation_while_pending_pct, (50.0 * 10 + 100.0 * 30 + 50.0 * 50) / 90, 1e-9);
  EXPECT_NEAR(best.pending_time_pct, 100.0 * 90 / 150, 1e-9);
  EXPECT_NEAR(best.arrival_window_allocation_pct, (50.0 * 20) / 20, 1e-9);  // j3 starts at 20

  // --until before the last arrival: the window ends there; pending time counts up to it.
  ReplayOptions ro;
  ro.until = 15;
  const ReplayResult cut = Replay("tiny_nodes.csv", "pending_alloc_jobs.csv", bo, "", ro).result;
  EXPECT_EQ(cut.end, 15);
  EXPECT_NEAR(cut.arrival_window_allocation_pct, 50, 1e-9);
  EXPECT_NEAR(cut.allocation_while_pending_pct, 50, 1e-9);
  EXPECT_NEAR(cut.pending_time_pct, 100.0 * 5 / 15, 1e-9);

  // Nothing waited by t=5 (only j1 arrived): 0 and 0.
  ro.until = 5;
  const ReplayResult none = Replay("tiny_nodes.csv", "pending_alloc_jobs.csv", bo, "", ro).result;
  EXPECT_EQ(none.allocation_while_pending_pct, 0);
  EXPECT_EQ(none.pending_time_pct, 0);
  EXPECT_NEAR(none.arrival_window_allocation_pct, 50, 1e-9);

  const std::string summary = ReportCsv(strict)[0].second;
  EXPECT_NE(summary.find("\ngpu_allocation_while_pending_pct,67.857\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("\ntime_with_pending_pct,77.778\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\ngpu_allocation_arrival_window_pct,50.000\n"), std::string::npos)
      << summary;
  const std::string html = ReportHtml(strict, "t");
  EXPECT_NE(html.find("<td>67.9% (77.8%) / 50.0%</td>"), std::string::npos);
}

TEST(Replay, PreemptionLosesTheVictimsGpuTime) {
  BuildOptions bo;  // trace jobs have no grace period unless asked: gone at once
  Replayed run = Replay("tiny_nodes.csv", "preempt_jobs.csv", bo);
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_NEAR(r.gpu_hours_lost, 2.0 * 10 / 3600, 1e-12);
  const QueueResult& q = r.queues[0];
  EXPECT_EQ(q.preempted, 1);
  EXPECT_EQ(q.admitted, 2);
  EXPECT_EQ(q.finished, 2);
  EXPECT_EQ(q.wait.max, 0);  // both first admitted on arrival
  // "high" 10..60; "low" again 60..160.
  EXPECT_EQ(r.end, 160);
  // The waits in all count the victim's wait to its re-admission (t=10..60); no spot node here.
  EXPECT_EQ(r.total_wait.max, 50);
  EXPECT_EQ(r.total_wait.count, 2);
  EXPECT_EQ(r.gpu_hours_lost_to_interruptions, 0);
  EXPECT_EQ(q.jct.max, 160);
  EXPECT_EQ(q.jct.p50, 50);
}

// --checkpoint-interval 4: the victim preempted after 10 s saved 8 s (two checkpoints), loses 2 s
// of 2 GPUs, and its second run from t=60 takes the 92 s left.
TEST(Replay, CheckpointsSaveThePreemptedJobsWork) {
  BuildOptions bo;
  bo.checkpoint_interval = 4;
  Replayed run = Replay("tiny_nodes.csv", "preempt_jobs.csv", bo);
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_NEAR(r.gpu_hours_lost, 2.0 * 2 / 3600, 1e-12);
  EXPECT_EQ(r.end, 152);
  EXPECT_EQ(r.queues[0].finished, 2);
}

// A spot node group interrupted far faster than its job can finish: the work cut short is
// counted as lost to interruptions, and ReplayOptions::max_interruption_loss_gpu_hours stops the
// replay (else it would run for ever: the job reruns from the start every time).
TEST(Replay, SpotInterruptionsLoseWorkAndTheBoundStopsTheReplay) {
  Trace trace;
  TraceNode n;
  n.name = "spot";
  n.cpu_milli = 8000;
  n.memory_mib = 8192;
  n.gpus = 8;
  n.autoscaling = NodePoolAutoscaling{1, 1, 60, 600};
  n.spot = NodePoolSpot{0.5, 60, 30};  // once a minute on average
  n.source = "test";
  trace.nodes.push_back(n);
  TraceJob j;
  j.duration = 86400;
  j.gpus = 8;
  j.cpu_milli = 1000;
  j.memory_mib = 1024;
  trace.jobs.push_back(j);
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(trace, {}, model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ReplayOptions ro;
  ro.max_interruption_loss_gpu_hours = 2;
  auto r = RunReplay(std::move(model), trace, *conv, ro);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->stopped_early.find("spot interruptions cut short"), std::string::npos)
      << r->stopped_early;
  EXPECT_GT(r->gpu_hours_lost_to_interruptions, 2);
  EXPECT_DOUBLE_EQ(r->gpu_hours_lost_to_interruptions, r->gpu_hours_lost);
  EXPECT_GT(r->preemptions, 1);
  ASSERT_EQ(r->node_pools.size(), 1u);
  EXPECT_GE(r->node_pools[0].interrupted, r->preemptions);
  // It waited again after each interruption (for the replacement node): more than its first wait.
  EXPECT_EQ(r->all.wait.max, 0);
  EXPECT_GT(r->total_wait.max, 60);
}

// With --grace-period 30 (Kubernetes' default; a replay's default is 0): the victim keeps its
// GPUs until t=40, its preemptor starts then (before the requeued victim can take them back),
// and the grace period counts as lost, as in the scenario simulator.
TEST(Replay, PreemptionWaitsForTheVictimsGracePeriod) {
  BuildOptions bo;
  bo.grace_period = 30;
  Replayed run = Replay("tiny_nodes.csv", "preempt_jobs.csv", bo);
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_NEAR(r.gpu_hours_lost, 2.0 * (10 + 30) / 3600, 1e-12);
  EXPECT_NEAR(r.gpu_hours_in_grace, 2.0 * 30 / 3600, 1e-12);
  const QueueResult& q = r.queues[0];
  EXPECT_EQ(q.preempted, 1);
  EXPECT_EQ(q.finished, 2);
  EXPECT_EQ(q.wait.max, 30);  // "high" waits for the grace period: 40..90
  EXPECT_EQ(r.end, 190);      // "low" again 90..190
  EXPECT_EQ(q.jct.max, 190);
  EXPECT_EQ(q.jct.p50, 80);
  // While "low" terminates its GPUs are held: the peak never exceeds the 2 GPUs.
  EXPECT_DOUBLE_EQ(r.peak_allocation_pct, 100);
  EXPECT_EQ(r.overbooked_shares, 0);
}

TEST(Replay, NoPreemptionMakesTheHighPriorityJobWait) {
  BuildOptions bo;
  bo.preemption = false;
  Replayed run = Replay("tiny_nodes.csv", "preempt_jobs.csv", bo);
  EXPECT_EQ(run.result.preemptions, 0);
  EXPECT_EQ(run.result.queues[0].wait.max, 90);
}

// The jobs CSV's max_wait column is the job's wait limit (tessera.dev/max-wait): an overdue
// job goes ahead of the earlier ones of its priority, and the replay counts the events.
TEST(Replay, MaxWaitColumnMovesAnOverdueJobAhead) {
  const ReplayResult with = Replay("tiny_nodes.csv", "max_wait_jobs.csv").result;
  EXPECT_EQ(with.wait_limits_exceeded, 1);  // `late` at t=50; `quick` is admitted in time
  const QueueResult& q = with.queues[0];
  EXPECT_EQ(q.finished, 4);
  EXPECT_EQ(with.end, 180);
  // Waits: hold 0, first 110 (120 - 10), late 80 (100 - 20), quick 140 (170 - 30).
  EXPECT_DOUBLE_EQ(q.wait.mean, (0 + 110 + 80 + 140) / 4.0);
  EXPECT_EQ(q.wait.max, 140);
  EXPECT_NE(ReportCsv(with)[0].second.find("\nwait_limits_exceeded,1\n"), std::string::npos);

  // The same jobs without limits, in arrival order: first 90, late 130, quick 140.
  const std::string path = ::testing::TempDir() + "no_max_wait_jobs.csv";
  std::ofstream(path) << "name,arrival,duration,gpus\nhold,0,100,2\nfirst,10,50,2\n"
                         "late,20,20,2\nquick,30,10,2\n";
  Replayed run;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(DataFile("tiny_nodes.csv"), BadRows::kFail, run.trace, log).ok());
  ASSERT_TRUE(ReadJobs(path, BadRows::kFail, run.trace, log).ok());
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(run.trace, {}, model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto without = RunReplay(std::move(model), run.trace, *conv, {});
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->wait_limits_exceeded, 0);
  EXPECT_DOUBLE_EQ(without->queues[0].wait.mean, (0 + 90 + 130 + 140) / 4.0);
}

TEST(Replay, GpuSharesShareADevice) {
  Replayed run = Replay("tiny_nodes.csv", "share_jobs.csv");
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.queues[0].admitted, 3);
  EXPECT_DOUBLE_EQ(r.peak_allocation_pct, 100);
  EXPECT_NEAR(r.queues[0].gpu_hours, 2.0 * 100 / 3600, 1e-12);
  EXPECT_EQ(r.overbooked_shares, 0);
}

// Consolidation (engine/actions/consolidate.h): the move is counted, with the work it lost, and
// the moved job's finish planned before the move is stale.
TEST(Replay, ConsolidationMovesAJobAndCountsTheWorkLost) {
  Replayed run = Replay("consolidate_nodes.csv", "consolidate_jobs.csv", {}, "consolidate.yaml");
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.moves, 1);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_NEAR(r.gpu_hours_lost_to_moves, 1.0 * 100 / 3600, 1e-12);
  EXPECT_NEAR(r.gpu_hours_lost, r.gpu_hours_lost_to_moves, 1e-12);
  EXPECT_EQ(r.queues[0].wait.max, 0);  // `big` started on arrival
  EXPECT_EQ(r.queues[0].finished, 3);
  EXPECT_EQ(r.end, 1100);
}

TEST(Replay, ManifestQueuesWithCsvJobs) {
  BuildOptions bo;
  bo.grace_period = 30;
  Replayed run = Replay("tiny_nodes.csv", "team_jobs.csv", bo, "queues.yaml");
  const ReplayResult& r = run.result;
  ASSERT_EQ(r.queues.size(), 2u);
  EXPECT_EQ(r.queues[0].name, "team-a");
  EXPECT_EQ(r.queues[1].name, "team-b");
  EXPECT_DOUBLE_EQ(r.queues[0].quota_gpus, 1);
  EXPECT_EQ(r.queues[0].jobs, 1);
  EXPECT_EQ(r.queues[1].jobs, 2);
  // team-a reclaims its GPU from team-b's borrower at t=10, and starts when the borrower's
  // grace period (--grace-period 30) ends.
  EXPECT_EQ(r.queues[1].preempted, 1);
  EXPECT_EQ(r.queues[0].wait.max, 30);
  EXPECT_LT(r.jain_index, 1);
}

TEST(Replay, UnknownQueueIsAnErrorNamingTheRow) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(DataFile("tiny_nodes.csv"), BadRows::kFail, t, log).ok());
  ASSERT_TRUE(ReadJobs(DataFile("team_jobs.csv"), BadRows::kFail, t, log).ok());
  LoadResult lr = LoadManifestFiles({DataFile("queues.yaml")});
  lr.model.local_queues.pop_back();  // LocalQueue "b" is gone
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, lr.model, notes);
  ASSERT_FALSE(conv.ok());
  EXPECT_EQ(std::string(conv.status().message()),
            DataFile("team_jobs.csv") +
                ":3: queue \"b\" is neither a LocalQueue nor a ClusterQueue of the manifests");
}

TEST(Replay, UntilCutsTheReplay) {
  ReplayOptions ro;
  ro.until = 50;
  Replayed run = Replay("tiny_nodes.csv", "tiny_jobs.csv", {}, "", ro);
  const ReplayResult& r = run.result;
  EXPECT_EQ(r.end, 50);
  EXPECT_EQ(r.queues[0].pending_at_end, 2);
  EXPECT_EQ(r.queues[0].running_at_end, 1);
  EXPECT_DOUBLE_EQ(r.mean_allocation_pct, 100);
}

// Waits count from the arrival, not from tessera.dev/created (the FIFO key): late-arrival
// arrives at 2, created at 0, and is admitted at 10 when the blocker ends; early-arrival (at 1)
// waits for it until 20.
TEST(Replay, WaitsCountFromTheArrivalNotTheCreationTime) {
  LoadResult lr = LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/creation-time.yaml"});
  ASSERT_TRUE(lr.ok());
  Trace t;
  std::vector<std::string> notes;
  BuildOptions bo;
  bo.backfill = false;  // FIFO by creation alone
  auto conv = BuildModel(t, bo, lr.model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ReplayOptions ro;
  ro.verify = true;
  auto r = RunReplay(std::move(lr.model), t, *conv, ro);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->all.wait.count, 3);
  EXPECT_DOUBLE_EQ(r->all.wait.mean, (0 + 8 + 19) / 3.0);
  EXPECT_EQ(r->all.wait.max, 19);
  EXPECT_DOUBLE_EQ(r->all.jct.mean, (10 + 18 + 29) / 3.0);
}

ReplayResult Synthetic(uint64_t seed) {
  SyntheticOptions so;
  so.jobs = 400;
  so.nodes = 20;
  so.seed = seed;
  so.queues = 3;
  so.load = 1.2;
  Trace t = GenerateSynthetic(so);
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, model, notes);
  EXPECT_TRUE(conv.ok());
  auto r = RunReplay(std::move(model), t, *conv, {});
  EXPECT_TRUE(r.ok());
  return *r;
}

TEST(Replay, SameSeedSameBytes) {
  ReplayResult a = Synthetic(7), b = Synthetic(7), c = Synthetic(8);
  EXPECT_GT(a.all.admitted, 0);
  EXPECT_EQ(SummaryTable(a), SummaryTable(b));
  EXPECT_EQ(ReportJson(a), ReportJson(b));
  EXPECT_EQ(ReportCsv(a), ReportCsv(b));
  EXPECT_EQ(ReportHtml(a, "t"), ReportHtml(b, "t"));
  EXPECT_EQ(DashboardSnapshotJson(a), DashboardSnapshotJson(b));
  EXPECT_NE(ReportJson(a), ReportJson(c));
}

// Letting go of the jobs that ended (ReplayOptions::let_go, Scheduler::Retire) changes no
// output: with preemptions and requeue waits, gangs, the FGD and plan placements (which learn
// their typical pods from every job), consolidation, and a snapshot in the middle. (A retired id
// read by mistake is a freed page: a crash, which ASan names.)
TEST(Replay, LettingGoOfEndedJobsChangesNoOutput) {
  struct Case {
    const char* name;
    SyntheticMix mix;
    double load;
    PlacementPolicy placement;
    bool consolidate;
  };
  for (const Case& c :
       {Case{"preemptions", SyntheticMix::kMixed, 1.2, PlacementPolicy::kBinpack, false},
        Case{"gangs", SyntheticMix::kGangs, 0.9, PlacementPolicy::kBinpack, false},
        Case{"fgd", SyntheticMix::kMixed, 0.9, PlacementPolicy::kFgd, false},
        Case{"plan", SyntheticMix::kMixed, 0.9, PlacementPolicy::kTesseraPlan, false},
        Case{"consolidation", SyntheticMix::kMixed, 1.1, PlacementPolicy::kBinpack, true}}) {
    SCOPED_TRACE(c.name);
    SyntheticOptions so;
    so.jobs = 200;
    so.nodes = 8;
    so.seed = 3;
    so.queues = 3;
    so.load = c.load;
    so.mix = c.mix;
    Trace t = GenerateSynthetic(so);
    std::string out[2];
    for (bool let_go : {false, true}) {
      Model model;
      std::vector<std::string> notes;
      auto conv = BuildModel(t, {}, model, notes);
      ASSERT_TRUE(conv.ok());
      model.config.placement = c.placement;
      if (c.consolidate) model.config.actions = {"admit", "consolidate", "preempt", "scale-up"};
      ReplayOptions o;
      o.let_go = let_go;
      o.snapshot_at = 20000;
      auto r = RunReplay(std::move(model), t, *conv, o);
      ASSERT_TRUE(r.ok()) << r.status();
      if (c.load > 1) {
        EXPECT_GT(r->preemptions + r->moves, 0);
      }
      std::string& s = out[let_go ? 1 : 0];
      s = SummaryTable(*r) + ReportJson(*r) + DashboardSnapshotJson(*r);
      for (const auto& [name, csv] : ReportCsv(*r)) s += name + csv;
    }
    EXPECT_EQ(out[0], out[1]);
  }
}

TEST(Report, WritesEveryFile) {
  Replayed run = Replay("tiny_nodes.csv", "tiny_jobs.csv");
  std::string dir = ::testing::TempDir() + "replay-report";
  ASSERT_TRUE(WriteReport(run.result, dir, "tiny").ok());
  for (const char* f :
       {"report.json", "summary.csv", "queues.csv", "timeseries.csv", "delay_histogram.csv",
        "typical_pods.csv", "index.html", "dashboard.html"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / f)) << f;
  }
  std::string html = ReportHtml(run.result, "tiny");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no other URL
  auto csv = ReportCsv(run.result);
  EXPECT_NE(csv[0].second.find("queueing_delay_p50_s,80.000\n"), std::string::npos);
  EXPECT_NE(csv[0].second.find("mean_gpu_allocation_pct,93.333\n"), std::string::npos);
}

// The dashboard's snapshot of a replay: the API's documents a replay can fill, with the run's
// figures (docs/observability.md, "Dashboard").
TEST(Report, DashboardSnapshotHasTheRunsEndState) {
  Replayed run = Replay("tiny_nodes.csv", "tiny_jobs.csv");
  const ReplayResult& r = run.result;
  nlohmann::json snap = nlohmann::json::parse(DashboardSnapshotJson(r));
  EXPECT_EQ(snap["summary"]["nodes"], r.nodes);
  EXPECT_EQ(snap["summary"]["gpus"], r.gpus_total);
  const int end = static_cast<int>(r.end);  // simulated seconds: times since the epoch
  ASSERT_LT(end, 86400);
  EXPECT_EQ(snap["summary"]["time"],
            fmt::format("1970-01-01T{:02}:{:02}:{:02}Z", end / 3600, end / 60 % 60, end % 60));
  // Every job finished: no workload left; the GPU map has the node (trace/cluster_snapshot.h).
  EXPECT_EQ(snap["workloads"]["total"], 0);
  EXPECT_EQ(snap["nodes"]["items"].size(), 1u);
  EXPECT_EQ(snap["summary"]["idleGpuNodes"], 1);
  ASSERT_EQ(snap["queues"]["items"].size(), r.queues.size());
  for (size_t i = 0; i < r.queues.size(); ++i) {
    EXPECT_EQ(snap["queues"]["items"][i]["name"], r.queues[i].name);
    EXPECT_EQ(snap["queues"]["items"][i]["pending"]["active"], r.queues[i].pending_at_end);
    EXPECT_EQ(snap["queues"]["items"][i]["admitted"], r.queues[i].running_at_end);
  }
  // The allocation trend, weighted by the time each point covers, is the run's mean.
  double weighted = 0, covered = 0;
  for (int b = 0; b < r.series.size(); ++b) covered += r.series.Covered(b);
  const auto& points = snap["trends"]["points"];
  ASSERT_FALSE(points.empty());
  int p = 0;
  for (int b = 0; b < r.series.size(); ++b) {
    if (r.series.Covered(b) <= 0) continue;
    weighted += points[p++]["gpuAllocation"].get<double>() * r.series.Covered(b);
  }
  EXPECT_NEAR(100 * weighted / covered, r.mean_allocation_pct, 0.01);
  const std::string page = ui::DashboardPage(DashboardSnapshotJson(r));
  EXPECT_NE(page.find(R"("gpus":)" + std::to_string(r.gpus_total)), std::string::npos);
}

// The openb traces are optional (../shared/traces/openb); the replay of their first pods must run.
TEST(Replay, OpenbSmoke) {
  const std::string dir = testing::SourceDir() + "/../shared/traces/openb/";
  if (!std::filesystem::exists(dir + "openb_pod_list_default.csv"))
    GTEST_SKIP() << "no openb traces at " << dir << " (they are optional)";
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(dir + "openb_node_list_gpu_node.csv", BadRows::kFail, t, log).ok());
  ASSERT_TRUE(ReadJobs(dir + "openb_pod_list_gpuspec33.csv", BadRows::kFail, t, log).ok());
  EXPECT_EQ(t.nodes.size(), 1213u);
  EXPECT_EQ(t.jobs.size(), 8152u);
  t.jobs.resize(1000);
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, model, notes);
  ASSERT_TRUE(conv.ok());
  auto r = RunReplay(std::move(model), t, *conv, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs, 1000);
  EXPECT_GT(r->all.admitted, 900);
  EXPECT_GT(r->peak_allocation_pct, 0);
  EXPECT_EQ(r->gpus_total, 6212);
}

}  // namespace
}  // namespace tessera::trace

namespace tessera::trace {
namespace {

// ceil(t / S) * S lands below t for some t (0.7 and t = 63: 62.99999999999999), and the replay
// never reached the event (100% CPU forever). The next cycle is always at or after t.
TEST(NextCycleTime, IsNeverBeforeTheEventAndAMultipleAfterIt) {
  for (double s : {0.3, 0.6, 0.7, 0.1, 1e-3, 1.0 / 3, 3600.0}) {
    for (int i = 0; i < 200000; ++i) {
      for (double t : {static_cast<double>(i), i * 0.1, i * 0.7, i * s, i * 1.37 + 0.05}) {
        const double next = NextCycleTime(t, s);
        ASSERT_GE(next, t) << "t=" << t << " s=" << s;
        ASSERT_LE(next - t, s * (1 + 1e-9) + 1e-9 * std::abs(t)) << "t=" << t << " s=" << s;
      }
    }
  }
  EXPECT_EQ(NextCycleTime(63, 0.7), 91 * 0.7);  // not 90 * 0.7 = 62.99999999999999
  EXPECT_GE(NextCycleTime(0.9, 0.3), 0.9);
  EXPECT_EQ(NextCycleTime(5, 0), 5);
  EXPECT_EQ(NextCycleTime(-1.2, 0.5), -1.0);
  // Where multiples are not representable, or not finite: the event's own time.
  EXPECT_EQ(NextCycleTime(1e300, 1e-300), 1e300);
  EXPECT_EQ(NextCycleTime(1e17, 1e-3), 1e17);
  EXPECT_EQ(NextCycleTime(7, std::numeric_limits<double>::infinity()), 7);
  EXPECT_EQ(NextCycleTime(7, std::nan("")), 7);
}

// The shipped example with --cycle-interval 0.7 (and 0.3, 0.6) used to spin forever.
TEST(Replay, CycleIntervalsThatRoundBelowTheEventTerminate) {
  const std::string dir = testing::SourceDir() + "/examples/traces/";
  for (double s : {0.3, 0.6, 0.7}) {
    Trace trace;
    ReadLog log;
    ASSERT_TRUE(ReadNodes(dir + "nodes.csv", BadRows::kFail, trace, log).ok());
    ASSERT_TRUE(ReadJobs(dir + "jobs.csv", BadRows::kFail, trace, log).ok());
    LoadResult lr = LoadManifestFiles({dir + "queues.yaml"});
    ASSERT_TRUE(lr.ok());
    std::vector<std::string> notes;
    auto conv = BuildModel(trace, {}, lr.model, notes);
    ASSERT_TRUE(conv.ok()) << conv.status();
    ReplayOptions ro;
    ro.cycle_interval = s;
    auto r = RunReplay(std::move(lr.model), trace, *conv, ro);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->all.jobs, static_cast<int64_t>(trace.jobs.size())) << s;
  }
}

}  // namespace
}  // namespace tessera::trace
