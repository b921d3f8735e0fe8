#include "trace/size_classes.h"

#include "gtest/gtest.h"
#include "trace/replay.h"
#include "trace/report.h"

namespace tessera::trace {
namespace {

TEST(SizeClass, BoundariesByTotalGpus) {
  EXPECT_EQ(SizeClassOf(0), 0);  // CPU only
  EXPECT_EQ(SizeClassOf(1), 1);
  EXPECT_EQ(SizeClassOf(500), 1);  // half a GPU
  EXPECT_EQ(SizeClassOf(1000), 1);
  EXPECT_EQ(SizeClassOf(1001), 2);
  EXPECT_EQ(SizeClassOf(1500), 2);  // three half-GPU pods
  EXPECT_EQ(SizeClassOf(2000), 2);
  EXPECT_EQ(SizeClassOf(7999), 2);
  EXPECT_EQ(SizeClassOf(8000), 3);
  EXPECT_EQ(SizeClassOf(15999), 3);
  EXPECT_EQ(SizeClassOf(16000), 4);
  EXPECT_EQ(SizeClassOf(64000), 4);
  EXPECT_STREQ(SizeClassName(0), "0");
  EXPECT_STREQ(SizeClassName(1), "1");
  EXPECT_STREQ(SizeClassName(2), "2-7");
  EXPECT_STREQ(SizeClassName(3), "8-15");
  EXPECT_STREQ(SizeClassName(4), "16+");
}

TEST(SizeClass, BoundedSlowdownIsFeitelsons) {
  EXPECT_DOUBLE_EQ(BoundedSlowdown(100, 100), 1);  // no wait
  EXPECT_DOUBLE_EQ(BoundedSlowdown(150, 50), 3);
  EXPECT_DOUBLE_EQ(BoundedSlowdown(95, 5), 9.5);  // a 5 s run counts as 10 s
  EXPECT_DOUBLE_EQ(BoundedSlowdown(3, 1), 1);     // never below 1
  EXPECT_DOUBLE_EQ(BoundedSlowdown(0, 0), 1);
}

TEST(SizeClass, MetricsStreamAndSummarize) {
  SizeClassMetrics m;
  for (int i = 1; i <= 100; ++i) {
    m.Arrived(4);
    m.FirstAdmitted(4, i);
    m.Finished(4, i + 100, 100);
  }
  m.Arrived(1);
  m.PendingAtEnd(1, 30);
  m.Arrived(1);
  m.PendingAtEnd(1, 70);
  m.Hold(4, 16000);
  m.Advance(3600);
  m.Hold(4, -16000);
  m.Advance(3600);
  auto r = m.Results(7200);
  ASSERT_EQ(r.size(), static_cast<size_t>(kSizeClasses));
  EXPECT_EQ(r[4].name, "16+");
  EXPECT_EQ(r[4].jobs, 100);
  EXPECT_EQ(r[4].wait.p50, 50);
  EXPECT_EQ(r[4].wait.p95, 95);
  EXPECT_EQ(r[4].wait.p99, 99);
  EXPECT_EQ(r[4].wait.max, 100);
  EXPECT_EQ(r[4].jct.p50, 150);
  EXPECT_DOUBLE_EQ(r[4].slowdown.p99, 1.99);
  EXPECT_DOUBLE_EQ(r[4].gpu_hours, 16);
  EXPECT_DOUBLE_EQ(r[4].mean_gpus, 8);
  EXPECT_EQ(r[1].pending_at_end, 2);
  EXPECT_EQ(r[1].pending_max_wait, 70);
  EXPECT_EQ(r[1].wait.count, 0);
  EXPECT_EQ(r[0].jobs, 0);
}

// One node of 8 GPUs; j1 holds all of them for 100 s while four jobs of 1, 2, half and 4 GPUs
// queue behind it; they all start at 100. A CPU-only job starts on arrival.
Trace HandMade() {
  Trace t;
  TraceNode n;
  n.name = "node-a";
  n.cpu_milli = 64000;
  n.memory_mib = 65536;
  n.gpus = 8;
  n.gpu_model = "A100";
  n.source = "test";
  t.nodes.push_back(n);
  auto job = [&](const char* name, double at, double duration, int32_t gpus, int32_t milli) {
    TraceJob j;
    j.name = name;
    j.arrival = at;
    j.duration = duration;
    j.gpus = gpus;
    j.gpu_milli = milli;
    j.cpu_milli = 1000;
    j.memory_mib = 1024;
    t.jobs.push_back(j);
  };
  job("j1", 0, 100, 8, 0);    // 8-15: wait 0, JCT 100
  job("j2", 10, 5, 1, 0);     // 1: wait 90, JCT 95, slowdown 95 / 10
  job("j3", 20, 20, 2, 0);    // 2-7: wait 80, JCT 100, slowdown 5
  job("j4", 30, 30, 0, 500);  // 1 (half a GPU): wait 70, JCT 100, slowdown 100 / 30
  job("j5", 40, 60, 4, 0);    // 2-7: wait 60, JCT 120, slowdown 2
  job("j6", 50, 10, 0, 0);    // 0 (CPU only): wait 0, JCT 10
  return t;
}

ReplayResult ReplayHandMade(ReplayOptions ro = {}) {
  Trace t = HandMade();
  Model model;
  std::vector<std::string> notes;
  BuildOptions bo;
  bo.backfill = false;  // plain FIFO order: every wait above is capacity alone
  auto conv = BuildModel(t, bo, model, notes);
  EXPECT_TRUE(conv.ok()) << conv.status();
  ro.verify = true;
  auto r = RunReplay(std::move(model), t, *conv, ro);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : ReplayResult{};
}

TEST(SizeClass, HandMadeTraceByHand) {
  ReplayResult r = ReplayHandMade();
  EXPECT_EQ(r.end, 160);
  ASSERT_EQ(r.size_classes.size(), static_cast<size_t>(kSizeClasses));
  const SizeClassResult &cpu = r.size_classes[0], &one = r.size_classes[1],
                        &few = r.size_classes[2], &eight = r.size_classes[3],
                        &big = r.size_classes[4];
  EXPECT_EQ(cpu.jobs, 1);
  EXPECT_EQ(cpu.wait.max, 0);
  EXPECT_EQ(cpu.jct.p50, 10);
  EXPECT_DOUBLE_EQ(cpu.gpu_hours, 0);

  EXPECT_EQ(one.jobs, 2);
  EXPECT_EQ(one.admitted, 2);
  EXPECT_EQ(one.finished, 2);
  EXPECT_EQ(one.wait.p50, 70);  // nearest rank of {70, 90}
  EXPECT_EQ(one.wait.p95, 90);
  EXPECT_EQ(one.wait.p99, 90);
  EXPECT_EQ(one.wait.max, 90);
  EXPECT_DOUBLE_EQ(one.slowdown.mean, (9.5 + 100.0 / 30) / 2);
  EXPECT_DOUBLE_EQ(one.slowdown.p99, 9.5);
  EXPECT_EQ(one.jct.p50, 95);
  EXPECT_EQ(one.jct.p95, 100);
  EXPECT_NEAR(one.gpu_hours, (1 * 5 + 0.5 * 30) / 3600.0, 1e-12);  // the share as its half

  EXPECT_EQ(few.jobs, 2);
  EXPECT_EQ(few.wait.p50, 60);
  EXPECT_EQ(few.wait.max, 80);
  EXPECT_DOUBLE_EQ(few.slowdown.mean, 3.5);
  EXPECT_EQ(few.jct.p95, 120);
  EXPECT_NEAR(few.gpu_hours, (2 * 20 + 4 * 60) / 3600.0, 1e-12);

  EXPECT_EQ(eight.jobs, 1);
  EXPECT_EQ(eight.wait.max, 0);
  EXPECT_DOUBLE_EQ(eight.slowdown.max, 1);
  EXPECT_NEAR(eight.gpu_hours, 800 / 3600.0, 1e-12);
  EXPECT_NEAR(eight.mean_gpus, 800.0 / 160, 1e-9);
  EXPECT_EQ(big.jobs, 0);

  // The classes add up to the whole.
  double gpu_hours = 0;
  int64_t jobs = 0;
  for (const auto& c : r.size_classes) {
    gpu_hours += c.gpu_hours;
    jobs += c.jobs;
  }
  EXPECT_EQ(jobs, r.all.jobs);
  EXPECT_NEAR(gpu_hours, r.all.gpu_hours, 1e-12);
}

TEST(SizeClass, JobsStillPendingShowTheirWaitSoFar) {
  ReplayOptions ro;
  ro.until = 50;
  ReplayResult r = ReplayHandMade(ro);
  EXPECT_EQ(r.size_classes[1].pending_at_end, 2);
  EXPECT_EQ(r.size_classes[1].pending_max_wait, 40);  // j2, since 10
  EXPECT_EQ(r.size_classes[1].wait.count, 0);
  EXPECT_EQ(r.size_classes[2].pending_max_wait, 30);  // j3, since 20
  EXPECT_EQ(r.size_classes[3].running_at_end, 1);
  EXPECT_EQ(r.size_classes[0].running_at_end, 1);
}

TEST(SizeClass, InEveryReport) {
  ReplayResult r = ReplayHandMade();
  const std::string table = SummaryTable(r);
  EXPECT_NE(table.find("jobs by size"), std::string::npos);
  EXPECT_NE(table.find("\n2-7 "), std::string::npos);
  EXPECT_EQ(table.find("\n16+ "), std::string::npos);  // no job of that size: no row
  const std::string json = ReportJson(r);
  EXPECT_NE(json.find("\"sizeClasses\""), std::string::npos);
  EXPECT_NE(json.find("\"boundedSlowdown\""), std::string::npos);
  std::string csv;
  for (const auto& [name, text] : ReportCsv(r))
    if (name == "size_classes.csv") csv = text;
  ASSERT_FALSE(csv.empty());
  EXPECT_NE(csv.find("\n1,2,2,2,0,0,0,0,80.000,70.000,90.000,90.000,90.000,0.000,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\n16+,0,"), std::string::npos);  // every class in the CSV
  EXPECT_NE(ReportHtml(r, "t").find("<h2>Jobs by size</h2>"), std::string::npos);
}

}  // namespace
}  // namespace tessera::trace
