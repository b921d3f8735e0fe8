// The dashboard's cluster snapshot of a replay (trace/cluster_snapshot.h): workloads and the GPU
// map at one instant, in serve's API shape, bounded.
#include "trace/cluster_snapshot.h"

#include <set>

#include "config/loader.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trace/readers.h"
#include "trace/replay.h"
#include "trace/report.h"
#include "trace/synthetic.h"
#include "trace/test_util.h"

namespace tessera::trace {
namespace {

using nlohmann::json;
using testing::DataFile;

// The elastic CSV group and its two jobs (tests/data/trace/elastic_*): pod-by-pod gives too-big
// four nodes at 0 (up at 300, scaled down at 900) and again at 2000 (up at 2300), where small
// starts on one of them.
ReplayResult ReplayElastic(ReplayOptions ro) {
  Trace t;
  ReadLog log;
  EXPECT_TRUE(ReadNodes(DataFile("elastic_nodes.csv"), BadRows::kFail, t, log).ok());
  EXPECT_TRUE(ReadJobs(DataFile("elastic_jobs.csv"), BadRows::kFail, t, log).ok());
  LoadResult lr = LoadManifestFiles({DataFile("elastic_queues.yaml")});
  EXPECT_TRUE(lr.ok());
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, lr.model, notes);
  EXPECT_TRUE(conv.ok()) << conv.status();
  ro.verify = true;
  ro.scale_up = ScaleUpMode::kPodByPod;
  auto r = RunReplay(std::move(lr.model), t, *conv, ro);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : ReplayResult{};
}

const json* Find(const json& items, const std::string& name) {
  for (const json& i : items)
    if (i["name"] == name) return &i;
  return nullptr;
}

TEST(ClusterSnapshot, WorkloadsAndGpuMapAtAChosenTime) {
  ReplayOptions ro;
  ro.snapshot_at = 2400;
  const ReplayResult r = ReplayElastic(ro);
  json snap = json::parse(DashboardSnapshotJson(r));
  const json& wl = snap["workloads"];
  EXPECT_EQ(wl["time"], "1970-01-01T00:40:00Z");
  EXPECT_EQ(wl["total"], 2);
  ASSERT_EQ(wl["items"].size(), 2u);
  const json* small = Find(wl["items"], "small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ((*small)["state"], "admitted");
  EXPECT_EQ((*small)["clusterQueue"], "team");
  EXPECT_EQ((*small)["localQueue"], "team");
  EXPECT_EQ((*small)["admittedAt"], "1970-01-01T00:38:20Z");  // 2300: its node came up
  EXPECT_EQ((*small)["waitSeconds"], 300);
  ASSERT_EQ((*small)["pods"].size(), 1u);
  const std::string node = (*small)["pods"][0]["node"];
  EXPECT_EQ((*small)["pods"][0]["gpuIndices"], json({0, 1, 2, 3, 4, 5, 6, 7}));
  const json* big = Find(wl["items"], "too-big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ((*big)["state"], "pending");
  EXPECT_EQ((*big)["gpus"], 40);
  EXPECT_EQ((*big)["waitSeconds"], 2400);
  EXPECT_NE((*big)["reason"].get<std::string>().find("3 of 5 pods of main fit"), std::string::npos)
      << (*big)["reason"];
  EXPECT_EQ((*big)["explain"]["reason"], (*big)["reason"]);
  ASSERT_EQ((*big)["pods"].size(), 5u);
  EXPECT_TRUE((*big)["pods"][4]["node"].is_null());
  // The GPU map: the CPU node and the four nodes up; small's GPUs on its node, the rest idle.
  const json& nodes = snap["nodes"]["items"];
  ASSERT_EQ(nodes.size(), 5u);
  int held = 0, slots = 0;
  for (const json& n : nodes) {
    for (const json& s : n["gpuSlots"]) {
      ++slots;
      if (s["workload"].is_null()) continue;
      ++held;
      EXPECT_EQ(n["name"], node);
      EXPECT_EQ(s["workload"], "default/small");
      EXPECT_EQ(s["clusterQueue"], "team");
    }
  }
  EXPECT_EQ(slots, 32);
  EXPECT_EQ(held, 8);
  // One snapshot: the cards and the queue rows are of the map's instant, not the run's end.
  const json& sum = snap["summary"];
  EXPECT_EQ(sum["time"], wl["time"]);
  EXPECT_EQ(snap["clock"]["snapshot"], wl["time"]);
  EXPECT_EQ(snap["clock"]["simulated"], true);
  EXPECT_EQ(sum["nodes"], 5);
  EXPECT_EQ(sum["gpus"], slots);
  EXPECT_EQ(sum["gpusAllocated"], held);
  EXPECT_EQ(sum["idleGpuNodes"], 3);
  EXPECT_EQ(sum["admittedWorkloads"], 1);
  EXPECT_EQ(sum["pendingWorkloads"], 1);
  const json* team = Find(snap["queues"]["items"], "team");
  ASSERT_NE(team, nullptr);
  EXPECT_EQ((*team)["admitted"], 1);
  EXPECT_EQ((*team)["pending"]["active"], 1);
  ASSERT_EQ((*team)["resources"].size(), 1u);
  EXPECT_EQ((*team)["resources"][0]["used"], 8);
}

// Without a time, `sim replay --report` takes the snapshot at the first instant of the peak
// allocation, not at the end (an empty cluster): here small's 8 GPUs from 2300 on.
TEST(ClusterSnapshot, ByDefaultTheSnapshotIsAtThePeakAllocation) {
  ReplayOptions ro;
  ro.snapshot_at_peak = true;
  const ReplayResult r = ReplayElastic(ro);
  json snap = json::parse(DashboardSnapshotJson(r));
  EXPECT_EQ(r.snapshot.time, 2300);
  EXPECT_LT(r.snapshot.time, r.end);
  EXPECT_EQ(snap["summary"]["time"], "1970-01-01T00:38:20Z");
  EXPECT_EQ(snap["summary"]["gpusAllocated"], 8);
  EXPECT_EQ(snap["summary"]["admittedWorkloads"], 1);
  int held = 0;
  for (const json& n : snap["nodes"]["items"])
    for (const json& s : n["gpuSlots"]) held += s["workload"].is_null() ? 0 : 1;
  EXPECT_EQ(held, 8);
}

// A victim in its grace period (tests/data/trace/preempt_jobs.csv, --grace-period 30: "high"
// preempts "low" at 10, "low" keeps both GPUs until 40) is shown terminating, on its GPUs.
TEST(ClusterSnapshot, AVictimInItsGracePeriodIsTerminating) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(DataFile("tiny_nodes.csv"), BadRows::kFail, t, log).ok());
  ASSERT_TRUE(ReadJobs(DataFile("preempt_jobs.csv"), BadRows::kFail, t, log).ok());
  BuildOptions bo;
  bo.grace_period = 30;
  std::vector<std::string> notes;
  Model model;
  auto conv = BuildModel(t, bo, model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ReplayOptions ro;
  ro.verify = true;
  ro.snapshot_at = 20;
  auto r = RunReplay(std::move(model), t, *conv, ro);
  ASSERT_TRUE(r.ok()) << r.status();
  json snap = json::parse(DashboardSnapshotJson(*r));
  const json* low = Find(snap["workloads"]["items"], "low");
  const json* high = Find(snap["workloads"]["items"], "high");
  ASSERT_NE(low, nullptr);
  ASSERT_NE(high, nullptr);
  EXPECT_EQ((*low)["state"], "terminating");
  EXPECT_NE((*low)["reason"].get<std::string>().find("grace period"), std::string::npos);
  ASSERT_EQ((*low)["pods"].size(), 1u);
  EXPECT_EQ((*low)["pods"][0]["node"], "node-a");
  EXPECT_EQ((*low)["pods"][0]["gpuIndices"], json({0, 1}));
  EXPECT_EQ((*high)["state"], "pending");
}

TEST(ClusterSnapshot, AtTheEndTheSummaryCountsTheNodesUp) {
  const ReplayResult r = ReplayElastic({});
  json snap = json::parse(DashboardSnapshotJson(r));
  EXPECT_EQ(snap["workloads"]["time"], snap["summary"]["time"]);
  EXPECT_EQ(snap["workloads"]["total"], 1);  // too-big never starts
  EXPECT_EQ(snap["workloads"]["items"][0]["name"], "too-big");
  // The pool scaled down to 0: only the CPU node is up.
  ASSERT_EQ(snap["nodes"]["items"].size(), 1u);
  EXPECT_EQ(snap["summary"]["nodes"], 1);
  EXPECT_EQ(snap["summary"]["gpus"], 0);
  EXPECT_EQ(snap["summary"]["idleGpuNodes"], 0);
}

// A long backlog: the snapshot lists at most snapshot_workloads, running ones first, sorted as
// serve sorts them, and says how many there were; each running one's pods are on the GPU map.
TEST(ClusterSnapshot, BoundedRunningFirst) {
  SyntheticOptions so;
  so.jobs = 400;
  so.nodes = 4;
  so.load = 3;  // a backlog
  so.mix = SyntheticMix::kGangs;
  so.queues = 1;
  Trace t = GenerateSynthetic(so);
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ReplayOptions ro;
  ro.snapshot_at = t.jobs[200].arrival;
  ro.snapshot_workloads = 6;
  ro.until = ro.snapshot_at + 1;
  auto r = RunReplay(std::move(model), t, *conv, ro);
  ASSERT_TRUE(r.ok()) << r.status();
  json snap = json::parse(DashboardSnapshotJson(*r));
  const json& items = snap["workloads"]["items"];
  ASSERT_EQ(items.size(), 6u);
  EXPECT_GT(snap["workloads"]["total"].get<int>(), 6);
  EXPECT_EQ(r->snapshot.workloads_written, 6);
  int running = 0;
  std::set<std::string> keys;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(items[i - 1]["name"], items[i]["name"]);
    }
    if (items[i]["state"] == "admitted") ++running;
    keys.insert("default/" + items[i]["name"].get<std::string>());
  }
  // Every running workload holds GPUs on the map; those listed come first.
  std::set<std::string> on_map;
  for (const json& n : snap["nodes"]["items"])
    for (const json& s : n["gpuSlots"])
      if (!s["workload"].is_null()) on_map.insert(s["workload"]);
  EXPECT_EQ(running, std::min<int>(6, static_cast<int>(on_map.size())));
  for (const json& i : items) {
    if (i["state"] == "admitted") {
      EXPECT_TRUE(on_map.count("default/" + i["name"].get<std::string>())) << i["name"];
    }
  }
}

}  // namespace
}  // namespace tessera::trace
