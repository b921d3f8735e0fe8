// The replay on elastic node pools (docs/autoscaling.md): NodePools in the manifests and CSV
// node groups, nodes over time per pool, the trend channels.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/loader.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trace/replay.h"
#include "trace/replay_testing.h"
#include "trace/report.h"
#include "trace/test_util.h"

namespace tessera::trace {
namespace {

using testing::DataFile;
using testing::Replay;
using testing::Replayed;

// An elastic NodePool in the manifests (docs/autoscaling.md): the replay's autoscaler gives the
// figures `tessera sim` gives for the same scenario (tests/scenarios/autoscaling-pod-by-pod.*).
TEST(Replay, ElasticNodePoolMatchesTheSimulator) {
  for (ScaleUpMode mode : {ScaleUpMode::kPodByPod, ScaleUpMode::kGangAware}) {
    LoadResult lr =
        LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/autoscaling-pod-by-pod.yaml"});
    ASSERT_TRUE(lr.ok());
    Trace t;
    std::vector<std::string> notes;
    auto conv = BuildModel(t, {}, lr.model, notes);
    ASSERT_TRUE(conv.ok()) << conv.status();
    ReplayOptions ro;
    ro.verify = true;
    ro.scale_up = mode;
    auto r = RunReplay(std::move(lr.model), t, *conv, ro);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->node_pools.size(), 1u);
    const PoolUsage& u = r->node_pools[0];
    EXPECT_TRUE(r->elastic);
    EXPECT_EQ(r->scale_up, mode);
    EXPECT_EQ(u.peak_nodes, mode == ScaleUpMode::kPodByPod ? 4 : 1);
    EXPECT_EQ(u.nodes_at_end, 0);
    if (mode == ScaleUpMode::kPodByPod) {
      EXPECT_DOUBLE_EQ(u.node_hours, 2.0);
      EXPECT_NEAR(u.idle_node_hours, 1.833333, 1e-6);
      EXPECT_NEAR(r->waiting_gang_gpu_hours, 13.333333, 1e-6);
      EXPECT_EQ(r->node_events, 11 + 11);
    } else {
      EXPECT_NEAR(u.node_hours, 1200.0 / 3600, 1e-9);  // one node, 2300 to 3500
      EXPECT_DOUBLE_EQ(r->waiting_gang_gpu_hours, 0);
      EXPECT_EQ(r->node_events, 2);
    }
    ASSERT_TRUE(u.cost.has_value());
    EXPECT_NEAR(*u.cost, u.node_hours * 32, 1e-9);
  }
}

// The same pool as a CSV node group (tests/data/trace/elastic_nodes.csv) and the same jobs as
// CSV rows: the figures of the NodePool above, node names `<group>-<i>`.
TEST(Replay, ElasticCsvNodeGroupMatchesTheNodePool) {
  for (ScaleUpMode mode : {ScaleUpMode::kPodByPod, ScaleUpMode::kGangAware}) {
    ReplayOptions ro;
    ro.scale_up = mode;
    Replayed run = Replay("elastic_nodes.csv", "elastic_jobs.csv", {}, "elastic_queues.yaml", ro);
    const ReplayResult& r = run.result;
    EXPECT_EQ(r.nodes, 5);  // cpu-0 and the group's 4
    ASSERT_EQ(r.node_pools.size(), 1u);
    const PoolUsage& u = r.node_pools[0];
    EXPECT_EQ(u.pool, "a100");
    EXPECT_TRUE(r.elastic);
    EXPECT_EQ(u.peak_nodes, mode == ScaleUpMode::kPodByPod ? 4 : 1);
    EXPECT_EQ(u.nodes_at_end, 0);
    if (mode == ScaleUpMode::kPodByPod) {
      EXPECT_DOUBLE_EQ(u.node_hours, 2.0);
      EXPECT_NEAR(u.idle_node_hours, 1.833333, 1e-6);
      EXPECT_NEAR(r.waiting_gang_gpu_hours, 13.333333, 1e-6);
      EXPECT_EQ(r.node_events, 11 + 11);
    } else {
      EXPECT_NEAR(u.node_hours, 1200.0 / 3600, 1e-9);
      EXPECT_EQ(r.node_events, 2);
    }
    ASSERT_TRUE(u.cost.has_value());
    EXPECT_NEAR(*u.cost, u.node_hours * 32, 1e-9);
  }
}

// A group's node named like a listed node, and a group named like a NodePool, are errors at the
// row.
TEST(Replay, ElasticCsvNodeGroupNamesMustNotCollide) {
  const std::string path = ::testing::TempDir() + "collide_nodes.csv";
  std::ofstream(path) << "name,cpu_milli,memory_mib,gpus,max_nodes\ngpu-1,1,1,1,\ngpu,1,1,8,2\n";
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(path, BadRows::kFail, t, log).ok());
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, {}, model, notes);
  ASSERT_FALSE(conv.ok());
  EXPECT_EQ(conv.status().message(),
            path +
                ":3: node gpu-1 is declared twice (in the manifests or the node lists, as a "
                "node of this group)");
  LoadResult lr =
      LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/autoscaling-pod-by-pod.yaml"});
  ASSERT_TRUE(lr.ok());
  std::ofstream(path) << "name,cpu_milli,memory_mib,gpus,max_nodes\na100,1,1,8,2\n";
  Trace t2;
  ASSERT_TRUE(ReadNodes(path, BadRows::kFail, t2, log).ok());
  conv = BuildModel(t2, {}, lr.model, notes);
  ASSERT_FALSE(conv.ok());
  EXPECT_EQ(conv.status().message(),
            path + ":2: node group a100 is also a NodePool of the manifests");
  // Rows of a few bytes each may not expand beyond 500,000 nodes in all.
  std::ofstream(path) << "name,cpu_milli,memory_mib,max_nodes\na,1,1,400000\nb,1,1,400000\n";
  Trace t3;
  ASSERT_TRUE(ReadNodes(path, BadRows::kFail, t3, log).ok());
  Model m3;
  conv = BuildModel(t3, {}, m3, notes);
  ASSERT_FALSE(conv.ok());
  EXPECT_EQ(
      conv.status().message(),
      path + ":3: node group b brings the node groups to 800000 nodes; at most 500000 in all");
}

// Nodes over time (issue 17): the series carries nodes up and idle per NodePool, as time-weighted
// means per bucket, so that the chart's area is the node-hours of the summary; timeseries.csv,
// index.html and the dashboard's trends carry them.
TEST(Replay, NodesOverTimePerPool) {
  for (ScaleUpMode mode : {ScaleUpMode::kPodByPod, ScaleUpMode::kGangAware}) {
    ReplayOptions ro;
    ro.scale_up = mode;
    Replayed run = Replay("elastic_nodes.csv", "elastic_jobs.csv", {}, "elastic_queues.yaml", ro);
    const ReplayResult& r = run.result;
    const auto at = [&](const std::string& name) {
      auto it = std::find(r.channels.begin(), r.channels.end(), name);
      EXPECT_NE(it, r.channels.end()) << name;
      return static_cast<int>(it - r.channels.begin());
    };
    const int up = at("nodes_up:a100"), idle = at("nodes_idle:a100");
    EXPECT_LT(idle, at("gpus_used:team"));
    double up_seconds = 0, idle_seconds = 0, peak = 0;
    // The bucket holding a time: its mean nodes up.
    const auto up_at = [&](double t) {
      return r.series.Mean(static_cast<int>((t - r.series.origin()) / r.series.width()), up);
    };
    for (int b = 0; b < r.series.size(); ++b) {
      up_seconds += r.series.Mean(b, up) * r.series.Covered(b);
      idle_seconds += r.series.Mean(b, idle) * r.series.Covered(b);
      peak = std::max(peak, r.series.Mean(b, up));
    }
    ASSERT_EQ(r.node_pools.size(), 1u);
    EXPECT_NEAR(up_seconds, r.node_pools[0].node_hours * 3600, 1e-6);
    EXPECT_NEAR(idle_seconds, r.node_pools[0].idle_node_hours * 3600, 1e-6);
    // Every pod holds GPUs: the pool's nodes with no pod are its idle GPU nodes (those not up
    // are not counted, nor the CPU node).
    double idle_gpu_seconds = 0;
    for (int b = 0; b < r.series.size(); ++b)
      idle_gpu_seconds += r.series.Mean(b, at("idle_gpu_nodes")) * r.series.Covered(b);
    EXPECT_NEAR(idle_gpu_seconds, idle_seconds, 1e-6);
    if (mode == ScaleUpMode::kGangAware) {
      // One node for small: up 2300 to 3500, busy until 2900, then idle until removed.
      EXPECT_NEAR(up_seconds, 1200, 1e-6);
      EXPECT_NEAR(idle_seconds, 600, 1e-6);
      EXPECT_DOUBLE_EQ(up_at(1000), 0);
      EXPECT_DOUBLE_EQ(up_at(2600), 1);
    } else {
      // The four nodes too-big was given stand idle from 300 to 900.
      EXPECT_DOUBLE_EQ(peak, 4);
      EXPECT_DOUBLE_EQ(up_at(600), 4);
      EXPECT_DOUBLE_EQ(r.series.Mean(static_cast<int>(600 / r.series.width()), idle), 4);
    }
    std::string csv;
    for (const auto& [name, text] : ReportCsv(r))
      if (name == "timeseries.csv") csv = text;
    EXPECT_NE(csv.find(",nodes_up:a100,nodes_idle:a100,gpus_used:team\n"), std::string::npos)
        << csv.substr(0, 200);
    EXPECT_NE(ReportHtml(r, "t").find("Nodes up and idle per NodePool over time"),
              std::string::npos);
    nlohmann::json snap = nlohmann::json::parse(DashboardSnapshotJson(r));
    double snap_up = 0;
    for (const auto& p : snap["trends"]["points"])
      snap_up = std::max(snap_up, p["nodesByPool"]["a100"]["up"].get<double>());
    EXPECT_DOUBLE_EQ(snap_up, peak);
  }
}

// The dashboard's trends (issue 16) as serve defines them: per bucket, the node-seconds of GPU
// nodes with no GPU held and the p95 of the waits of the jobs first admitted in it. Four buckets
// at most, so that they merge twice (12 s, 24 s, then 48 s wide): [0,48) [48,96) [96,144).
TEST(Replay, TrendsIdleNodeSecondsAndWaitP95ByHand) {
  ReplayOptions ro;
  ro.max_buckets = 4;
  Replayed run = Replay("trend_nodes.csv", "trend_jobs.csv", {}, "", ro);
  const ReplayResult& r = run.result;
  ASSERT_EQ(r.end, 120);
  ASSERT_EQ(r.series.width(), 48);
  ASSERT_EQ(r.series.size(), 3);
  EXPECT_EQ(r.queues[0].wait.max, 35);
  nlohmann::json points = nlohmann::json::parse(DashboardSnapshotJson(r))["trends"]["points"];
  ASSERT_EQ(points.size(), 3u);
  // node-b idle 0-30, node-a 100-120; the CPU node never counts.
  EXPECT_DOUBLE_EQ(points[0]["idleNodeSeconds"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(points[1]["idleNodeSeconds"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(points[2]["idleNodeSeconds"].get<double>(), 20);
  // Admitted at 0 and 30 without waiting; at 50 (waited 10) and 80 (35); none after 96.
  EXPECT_EQ(points[0]["waitP95Seconds"], 0);
  EXPECT_EQ(points[1]["waitP95Seconds"], 35);
  EXPECT_TRUE(points[2]["waitP95Seconds"].is_null());
  EXPECT_EQ(r.admission_waits.Count(0), 2);
  EXPECT_EQ(r.admission_waits.Count(1), 2);
  std::string csv;
  for (const auto& [name, text] : ReportCsv(r))
    if (name == "timeseries.csv") csv = text;
  EXPECT_NE(csv.find(",running_jobs,idle_gpu_nodes,gpus_used:default\n"), std::string::npos)
      << csv.substr(0, 200);
}

// Without NodePools the series and its files are as before: no node channels, no nodesByPool.
TEST(Replay, NoNodeChannelsWithoutNodePools) {
  Replayed run = Replay("tiny_nodes.csv", "tiny_jobs.csv");
  EXPECT_EQ(run.result.channels,
            (std::vector<std::string>{"gpu_allocation_pct", "fragmentation_pct", "pending_jobs",
                                      "running_jobs", "idle_gpu_nodes", "gpus_used:default"}));
  nlohmann::json snap = nlohmann::json::parse(DashboardSnapshotJson(run.result));
  EXPECT_FALSE(snap["trends"]["points"][0].contains("nodesByPool"));
}

}  // namespace
}  // namespace tessera::trace
