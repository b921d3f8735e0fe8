// Cost in money (docs/cost.md): the spec.pricing parser, which price applies, and the ledger's
// arithmetic against figures worked out by hand for tests/scenarios/cost.yaml.
#include <string>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "cost/ledger.h"
#include "cost/pricing.h"
#include "cost/report_format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/simulator.h"
#include "trace/replay.h"
#include "trace/report.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

// Four lines before the spec's first field, which is on line 5.
std::string Config(const std::string& spec) {
  return "apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfig\nmetadata: {name: s}\nspec:\n" +
         spec;
}

TEST(PricingConfigTest, ReadsEveryField) {
  LoadResult r = Load(Config(R"(  pricing:
    gpuHour: {on-demand: 3, NVIDIA-A100-SXM4-80GB: "2.5", default: 2}
    cpuHour: {default: 0.05}
    memoryGiBHour: {spot: 0.004, default: 0.01}
    spotDiscount: {spot: 0.6}
    rollupLabels: [team, project, team]
)"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const PricingConfig& p = r.model.config.pricing;
  EXPECT_TRUE(p.present);
  EXPECT_EQ(p.source, "t.yaml:6");
  EXPECT_EQ(p.gpu_hour.by_key.at("on-demand"), 3);
  EXPECT_EQ(p.gpu_hour.by_key.at("NVIDIA-A100-SXM4-80GB"), 2.5);
  EXPECT_EQ(p.gpu_hour.default_price, 2);
  EXPECT_EQ(p.cpu_hour.default_price, 0.05);
  EXPECT_TRUE(p.cpu_hour.by_key.empty());
  EXPECT_EQ(p.memory_gib_hour.by_key.at("spot"), 0.004);
  EXPECT_EQ(p.spot_discount.at("spot"), 0.6);
  EXPECT_EQ(p.rollup_labels, (std::vector<std::string>{"team", "project"}));
}

TEST(PricingConfigTest, AbsentMeansNoCost) {
  LoadResult r = Load(Config("  placement: binpack\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_FALSE(r.model.config.pricing.present);
  EXPECT_TRUE(r.model.config.pricing.gpu_hour.empty());
}

// Each bad value is an error at its own line, naming the field; the SchedulerConfig is dropped.
TEST(PricingConfigTest, BadValuesAreErrorsAtFileLineField) {
  LoadResult r = Load(Config(R"(  pricing:
    gpuHour:
      on-demand: -1
      spot: .nan
      a100: abc
      h100: {dollars: 3}
      l4: 1e400
    cpuHour: {default: .inf}
    memoryGiBHour: [1]
    spotDiscount: {spot: 1.5, preemptible: -0.1}
    gpuHours: {default: 1}
    rollupLabels: team
)"));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.model.config.pricing.present);
  for (const char* want : {
           "t.yaml:7: error: spec.pricing.gpuHour.on-demand: expected dollars per GPU-hour from "
           "0 to 1e+06, got \"-1\"",
           "t.yaml:8: error: spec.pricing.gpuHour.spot: expected dollars per GPU-hour",
           "t.yaml:9: error: spec.pricing.gpuHour.a100: expected dollars per GPU-hour from 0 to "
           "1e+06, got \"abc\"",
           "t.yaml:10: error: spec.pricing.gpuHour.h100: expected dollars per GPU-hour from 0 to "
           "1e+06, got a map",
           "t.yaml:11: error: spec.pricing.gpuHour.l4: expected dollars per GPU-hour",
           "t.yaml:12: error: spec.pricing.cpuHour.default: expected dollars per CPU core-hour",
           "t.yaml:13: error: spec.pricing.memoryGiBHour:",
           "t.yaml:14: error: spec.pricing.spotDiscount.spot: expected a fraction from 0 to 1, "
           "got \"1.5\"",
           "t.yaml:14: error: spec.pricing.spotDiscount.preemptible: expected a fraction",
           "t.yaml:15: error: spec.pricing.gpuHours: unknown field; allowed: gpuHour, cpuHour, "
           "memoryGiBHour, spotDiscount, rollupLabels",
           "t.yaml:16: error: spec.pricing.rollupLabels:",
       }) {
    EXPECT_NE(Find(r, Sev::kError, want), nullptr) << want << "\nin:\n" << AllDiagnostics(r);
  }
}

TEST(PricingConfigTest, PricingMustBeAMap) {
  LoadResult r = Load(Config("  pricing: 3\n"));
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:5: error: spec.pricing: expected a map"), nullptr)
      << AllDiagnostics(r);
}

TEST(PriceLookUpTest, FlavorOverGpuModelOverDefault) {
  PriceTable t;
  t.by_key = {{"spot", 4}, {"NVIDIA-H100-80GB-HBM3", 10}};
  t.default_price = 2;
  EXPECT_EQ(cost::LookUpPrice(t, "spot", "NVIDIA-H100-80GB-HBM3"), 4);
  EXPECT_EQ(cost::LookUpPrice(t, "on-demand", "NVIDIA-H100-80GB-HBM3"), 10);
  EXPECT_EQ(cost::LookUpPrice(t, "on-demand", "NVIDIA-L4"), 2);
  EXPECT_EQ(cost::LookUpPrice(t, "", ""), 2);
  t.default_price.reset();
  EXPECT_EQ(cost::LookUpPrice(t, "on-demand", "NVIDIA-L4"), std::nullopt);

  PricingConfig p;
  p.spot_discount = {{"spot", 0.6}};
  EXPECT_DOUBLE_EQ(cost::SpotFactor(p, "spot"), 0.4);
  EXPECT_EQ(cost::SpotFactor(p, "on-demand"), 1);
  EXPECT_EQ(cost::SpotFactor(p, ""), 1);
}

// tests/scenarios/cost.yaml, run by the simulator.
class CostScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult r = LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/cost.yaml"});
    ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
    auto sim = Simulator::Create(std::move(r.model), SimOptions{});
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = std::move(*sim);
    ASSERT_TRUE(sim_->Run().ok());
    ASSERT_TRUE(sim_->summary().cost.has_value());
  }
  const cost::CostReport& report() const { return *sim_->summary().cost; }
  std::unique_ptr<Simulator> sim_;
};

// The figures of docs/cost.md, "An example".
TEST_F(CostScenarioTest, AllocatedByWorkloadMatchesHandFigures) {
  const cost::CostReport& c = report();
  EXPECT_EQ(c.end_time, 12600);
  // a/low: 4 GPUs 0-1800 and 5400-12600 (2.5 h) on on-demand at $3; 8 cores at $0.05, 64 GiB
  // at $0.01: 10 GPU-h = $30, 20 core-h = $1, 160 GiB-h = $1.60.
  const cost::CostLine& low = c.by_workload.at("a/low");
  EXPECT_DOUBLE_EQ(low.gpu_hours, 10);
  EXPECT_DOUBLE_EQ(low.gpu_dollars, 30);
  EXPECT_DOUBLE_EQ(low.cpu_hours, 20);
  EXPECT_DOUBLE_EQ(low.cpu_dollars, 1);
  EXPECT_DOUBLE_EQ(low.memory_gib_hours, 160);
  EXPECT_DOUBLE_EQ(low.memory_dollars, 1.6);
  EXPECT_DOUBLE_EQ(low.allocated_dollars(), 32.6);
  EXPECT_EQ(low.runs, 2);
  // a/high: 4 GPUs 1800-5400: 4 GPU-h = $12, 8 core-h = $0.40, 64 GiB-h = $0.64.
  EXPECT_DOUBLE_EQ(c.by_workload.at("a/high").allocated_dollars(), 13.04);
  // b/train: 2 GPUs 0-10800 on spot: $4 (the flavor's key beats the H100's $10) less 50%.
  // 6 GPU-h = $12, 12 core-h = $0.30, 96 GiB-h = $0.48.
  const cost::CostLine& train = c.by_workload.at("b/train");
  EXPECT_DOUBLE_EQ(train.gpu_hours, 6);
  EXPECT_DOUBLE_EQ(train.gpu_dollars, 12);
  EXPECT_DOUBLE_EQ(train.cpu_dollars, 0.3);
  EXPECT_DOUBLE_EQ(train.memory_dollars, 0.48);
  EXPECT_FALSE(train.effective_dollars.has_value());  // no utilization in the simulator
}

TEST_F(CostScenarioTest, RollupsAndIdleMatchHandFigures) {
  const cost::CostReport& c = report();
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-a").gpu_hours, 14);
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-a").allocated_dollars(), 45.64);
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-b").allocated_dollars(), 12.78);
  EXPECT_DOUBLE_EQ(c.by_cohort.at("research").gpu_hours, 20);
  EXPECT_DOUBLE_EQ(c.by_cohort.at("research").allocated_dollars(), 58.42);
  EXPECT_DOUBLE_EQ(c.by_namespace.at("a").allocated_dollars(), 45.64);
  EXPECT_DOUBLE_EQ(c.by_local_queue.at("b/queue-b").allocated_dollars(), 12.78);
  EXPECT_DOUBLE_EQ(c.by_label.at("team").at("alpha").gpu_hours, 14);
  EXPECT_DOUBLE_EQ(c.by_label.at("team").at("beta").gpu_hours, 6);
  // Idle over 3.5 h: od-0 never; spot-0 8 GPU-h at $2 = $16; l4-0 7 GPU-h at its model's $1.
  EXPECT_DOUBLE_EQ(c.idle.gpu_hours, 15);
  EXPECT_DOUBLE_EQ(c.idle.dollars, 23);
  EXPECT_EQ(c.idle.unpriced_gpu_hours, 0);
  // Every GPU of the cluster is counted once: 10 GPUs x 3.5 h.
  EXPECT_DOUBLE_EQ(c.allocated.gpu_hours + c.idle.gpu_hours, 35);
  EXPECT_DOUBLE_EQ(c.total_dollars(), 81.42);
}

TEST_F(CostScenarioTest, JsonSummaryCost) {
  nlohmann::json doc = nlohmann::json::parse(sim_->ToJson());
  const nlohmann::json& cost = doc["summary"]["cost"];
  EXPECT_EQ(cost["byClusterQueue"]["team-a"]["gpuHours"], 14);
  EXPECT_EQ(cost["byClusterQueue"]["team-a"]["allocatedDollars"], 45.64);
  EXPECT_EQ(cost["byClusterQueue"]["team-b"]["allocatedDollars"], 12.78);
  EXPECT_TRUE(cost["byClusterQueue"]["team-b"]["effectiveDollars"].is_null());
  EXPECT_EQ(cost["idle"]["gpuHours"], 15);
  EXPECT_EQ(cost["idle"]["dollars"], 23);
  EXPECT_EQ(cost["total"]["dollars"], 81.42);
  EXPECT_EQ(cost["byLabel"]["team"]["alpha"]["runs"], 3);
  const std::string table = sim_->ToTable();
  EXPECT_NE(table.find("team-a                                14.00        45.64"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("idle GPUs (not shared out)            15.00        23.00"),
            std::string::npos)
      << table;
}

TEST(CostLedgerTest, NoPricingNoCost) {
  LoadResult r = LoadManifestFiles({testing::SourceDir() + "/examples/quickstart.yaml"});
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  auto sim = Simulator::Create(std::move(r.model), SimOptions{});
  ASSERT_TRUE(sim.ok());
  ASSERT_TRUE((*sim)->Run().ok());
  EXPECT_FALSE((*sim)->summary().cost.has_value());
  EXPECT_FALSE(nlohmann::json::parse((*sim)->ToJson())["summary"].contains("cost"));
}

// A GPU share counts its fraction; a run still holding is charged up to the report's end,
// and a report changes nothing; a GPU without any price is counted, not priced.
TEST(CostLedgerTest, SharesOpenRunsAndUnpricedGpus) {
  Model m;
  Node n;
  n.name = "n";
  n.allocatable[kGpu] = 2;
  n.gpu_model = "NVIDIA-A100-SXM4-80GB";
  m.nodes.push_back(n);
  Workload w;
  w.name = "share";
  PodSet ps;
  ps.name = "main";
  ps.requests[kGpuMilli] = 250;
  w.pod_sets.push_back(ps);
  m.workloads.push_back(w);
  m.config.pricing.present = true;
  m.config.pricing.gpu_hour.by_key = {{"NVIDIA-A100-SXM4-80GB", 4}};
  cost::CostLedger ledger(m);
  ledger.Release(0, 10);  // holds nothing: no-op
  ledger.Hold(0, -1, {}, {PodPlacement{0, 0, 0, {0}}}, 3600);
  cost::CostReport mid = ledger.Report(3 * 3600);
  EXPECT_DOUBLE_EQ(mid.by_workload.at("default/share").gpu_hours, 0.5);
  EXPECT_DOUBLE_EQ(mid.by_workload.at("default/share").gpu_dollars, 2);
  EXPECT_DOUBLE_EQ(mid.by_cluster_queue.at("(none)").gpu_hours, 0.5);
  EXPECT_DOUBLE_EQ(mid.idle.gpu_hours, 5.5);
  EXPECT_DOUBLE_EQ(mid.idle.dollars, 22);
  ledger.Release(0, 5 * 3600);
  cost::CostReport end = ledger.Report(5 * 3600);
  EXPECT_DOUBLE_EQ(end.allocated.gpu_hours, 1);
  EXPECT_EQ(end.allocated.runs, 1);

  m.config.pricing.gpu_hour.by_key.clear();
  cost::CostLedger unpriced(m);
  unpriced.Hold(0, -1, {}, {PodPlacement{0, 0, 0, {0}}}, 0);
  cost::CostReport u = unpriced.Report(3600);
  EXPECT_DOUBLE_EQ(u.allocated.unpriced_gpu_hours, 0.25);
  EXPECT_EQ(u.allocated.gpu_dollars, 0);
  EXPECT_DOUBLE_EQ(u.idle.unpriced_gpu_hours, 1.75);
  EXPECT_NE(cost::CostTable(u).find("2.00 GPU-hours had no price"), std::string::npos);
}

// The replay keeps the same ledger: tests/scenarios/cost.yaml replayed (its workloads at their
// arrivals, no trace jobs) gives the simulator's figures, in its summary table and report.json.
TEST(CostReplayTest, ReplayGivesTheSameFigures) {
  LoadResult r = LoadManifestFiles({testing::SourceDir() + "/tests/scenarios/cost.yaml"});
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  trace::Trace tr;
  std::vector<std::string> notes;
  auto conv = trace::BuildModel(tr, {}, r.model, notes);
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto res = trace::RunReplay(std::move(r.model), tr, *conv, {});
  ASSERT_TRUE(res.ok()) << res.status();
  ASSERT_TRUE(res->cost.has_value());
  const cost::CostReport& c = *res->cost;
  EXPECT_TRUE(c.by_workload.empty());  // rollups only
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-a").gpu_hours, 14);
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-a").allocated_dollars(), 45.64);
  EXPECT_DOUBLE_EQ(c.by_cluster_queue.at("team-b").allocated_dollars(), 12.78);
  EXPECT_DOUBLE_EQ(c.idle.gpu_hours, 15);
  EXPECT_DOUBLE_EQ(c.idle.dollars, 23);
  EXPECT_DOUBLE_EQ(c.total_dollars(), 81.42);
  nlohmann::json doc = nlohmann::json::parse(trace::ReportJson(*res));
  EXPECT_EQ(doc["summary"]["cost"]["byClusterQueue"]["team-b"]["gpuHours"], 6);
  EXPECT_EQ(doc["summary"]["cost"]["total"]["dollars"], 81.42);
  EXPECT_NE(trace::SummaryTable(*res).find("idle GPUs (not shared out)"), std::string::npos);
}

}  // namespace
}  // namespace tessera
