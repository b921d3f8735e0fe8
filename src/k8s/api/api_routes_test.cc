// The JSON API's answers from views built over a real engine driven by hand (no API server):
// what a workload, a queue, a node's GPUs, the cost and the trends say after a scripted
// sequence, each figure computed by hand in the comments; and the HTTP handlers (status codes,
// 503 before a view, 404, 400) on a real httplib server.
#include "k8s/api/api_routes.h"

#include <httplib.h>

#include "engine/test_builders.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/api/api_cost.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;
using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

constexpr double kWallZero = 1'800'000'000;  // 2027-01-15T08:00:00Z

class ApiViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Model m = MakeModel({MakeNode("n0", 4), MakeNode("n1", 4)},
                        {CQ("team-a").Cohort("c").Gpus("gpu", 4).Obj(),
                         CQ("team-b").Cohort("c").Gpus("gpu", 4, 2).Obj()});
    m.config.pricing.present = true;
    m.config.pricing.gpu_hour.default_price = 3.6;
    m.config.pricing.rollup_labels = {"team"};
    auto s = Scheduler::Create(std::move(m));
    ASSERT_TRUE(s.ok()) << s.status();
    engine_ = std::move(*s);
  }

  WorkloadId Submit(Workload w, double now) {
    w.ns = "default";
    std::vector<std::vector<std::string>> names(w.pod_sets.size());
    for (size_t s = 0; s < w.pod_sets.size(); ++s)
      for (int i = 0; i < w.pod_sets[s].count; ++i)
        names[s].push_back(fmt::format("default/{}-{}", w.name, i));
    const std::string owner = "JobSet/" + w.name;
    WorkloadId id = engine_->AddWorkload(std::move(w));
    engine_->Submit(id, now);
    in_.workloads.push_back({id, false, names, owner});
    return id;
  }

  void Cycle(double now) {
    for (const Decision& d : engine_->RunCycle(now))
      if (d.type == Decision::Type::kAdmit)
        builder_.OnAdmit(now - engine_->status(d.workload).created);
  }

  std::shared_ptr<const ClusterView> Build(double now) {
    in_.engine = engine_.get();
    in_.engine_now = now;
    in_.wall_zero = kWallZero;
    in_.leader = in_.synced = true;
    in_.scheduler_name = "tessera";
    return builder_.Build(in_);
  }

  const json* Item(const json& list, const std::string& name) {
    for (const json& i : list.at("items"))
      if (i.at("name") == name) return &i;
    return nullptr;
  }

  std::unique_ptr<Scheduler> engine_;
  ViewBuilder builder_{60};
  ViewInput in_;
};

// t=0: a1 (1 pod x 4 GPUs, team=alpha) is admitted to team-a; b1 (2 x 3) asks team-b for 6 GPUs
// where it may have its 4 (it could borrow 2, but team-a uses its 4): pending on quota, 2 short.
// w1's gang is incomplete.
// t=3600: a1 has held 4 GPUs for an hour at $3.6, the other node idle as long.
TEST_F(ApiViewTest, WorkloadsQueuesNodesCostAndTrends) {
  Workload a1 = WL("a1").Queue("team-a").Pods(1, 4).Priority("high").Obj();
  a1.labels["team"] = "alpha";
  Submit(a1, 0);
  Submit(WL("b1").Queue("team-b").Pods(2, 3).Obj(), 0);
  Cycle(0);
  in_.waiting.push_back(
      {"default", "w1", "waiting for 2 more pods", 0, {"default/w1-0"}, "LeaderWorkerSet/w"});
  Build(0);
  std::shared_ptr<const ClusterView> v = Build(3600);

  json summary = SummaryJson(*v);
  EXPECT_EQ(summary["time"], "2027-01-15T09:00:00Z");
  EXPECT_EQ(summary["nodes"], 2);
  EXPECT_EQ(summary["gpus"], 8);
  EXPECT_EQ(summary["gpusAllocated"], 4);
  EXPECT_EQ(summary["idleGpuNodes"], 1);
  EXPECT_EQ(summary["pendingWorkloads"], 2);  // b1 and w1
  EXPECT_EQ(summary["admittedWorkloads"], 1);

  json workloads = WorkloadsJson(*v, "", "");
  ASSERT_EQ(workloads["items"].size(), 3u);
  const json& a = workloads["items"][0];
  EXPECT_EQ(a["name"], "a1");
  EXPECT_EQ(a["owner"], "JobSet/a1");
  EXPECT_EQ(a["state"], "admitted");
  EXPECT_EQ(a["clusterQueue"], "team-a");
  EXPECT_EQ(a["localQueue"], "team-a");
  EXPECT_EQ(a["priority"], 100);
  EXPECT_EQ(a["priorityClass"], "high");
  EXPECT_EQ(a["gpus"], 4);
  EXPECT_EQ(a["flavor"], "gpu");
  EXPECT_EQ(a["created"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(a["admittedAt"], "2027-01-15T08:00:00Z");
  EXPECT_TRUE(a["reason"].is_null());
  ASSERT_EQ(a["pods"].size(), 1u);
  EXPECT_EQ(a["pods"][0]["name"], "a1-0");
  const std::string a_node = a["pods"][0]["node"];
  EXPECT_EQ(a["pods"][0]["gpuIndices"], json({0, 1, 2, 3}));

  const json& b = workloads["items"][1];
  EXPECT_EQ(b["name"], "b1");
  EXPECT_EQ(b["state"], "pending");
  EXPECT_EQ(b["waitSeconds"], 3600);
  EXPECT_NE(b["reason"].get<std::string>().find("ClusterQueue team-b"), std::string::npos)
      << b["reason"];
  EXPECT_EQ(b["pods"].size(), 2u);
  EXPECT_TRUE(b["pods"][0]["node"].is_null());
  const json& w = workloads["items"][2];
  EXPECT_EQ(w["state"], "waiting-for-pods");
  EXPECT_EQ(w["reason"], "waiting for 2 more pods");
  EXPECT_EQ(w["owner"], "LeaderWorkerSet/w");

  EXPECT_EQ(WorkloadsJson(*v, "default", "admitted")["items"].size(), 1u);
  EXPECT_EQ(WorkloadsJson(*v, "other", "")["items"].size(), 0u);

  // b1 needs 6 GPUs; team-b may use its 4 (team-a's are in use, nothing to borrow): 2 short.
  const ViewWorkload* b1 = v->Find("default", "b1");
  ASSERT_NE(b1, nullptr);
  json explain = WorkloadJson(*v, *b1, true)["explain"];
  EXPECT_EQ(explain["reason"], b["reason"]);
  ASSERT_FALSE(explain["wouldFitIf"].empty());
  EXPECT_EQ(explain["wouldFitIf"][0].get<std::string>().rfind(
                "2 more nvidia.com/gpu of flavor gpu free to ClusterQueue team-b", 0),
            0u)
      << explain["wouldFitIf"];

  json queues = QueuesJson(*v);
  const json* qa = Item(queues, "team-a");
  ASSERT_NE(qa, nullptr);
  EXPECT_EQ((*qa)["cohort"], "c");
  EXPECT_EQ((*qa)["strategy"], "BestEffortFIFO");
  EXPECT_EQ((*qa)["admitted"], 1);
  ASSERT_EQ((*qa)["resources"].size(), 1u);
  EXPECT_EQ((*qa)["resources"][0]["resource"], "nvidia.com/gpu");
  EXPECT_EQ((*qa)["resources"][0]["used"], 4);
  EXPECT_EQ((*qa)["resources"][0]["nominal"], 4);
  EXPECT_EQ((*qa)["resources"][0]["borrowed"], 0);
  EXPECT_TRUE((*qa)["resources"][0]["borrowingLimit"].is_null());
  const json* qb = Item(queues, "team-b");
  ASSERT_NE(qb, nullptr);
  EXPECT_EQ((*qb)["resources"][0]["borrowingLimit"], 2);
  EXPECT_EQ((*qb)["pending"]["active"].get<int>() + (*qb)["pending"]["inadmissible"].get<int>(), 1);
  EXPECT_EQ((*qb)["pendingByReason"], json({{"quota", 1}}));
  EXPECT_EQ((*qb)["admitted"], 0);

  json nodes = NodesJson(*v);
  const json* n = Item(nodes, a_node);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ((*n)["gpus"], 4);
  EXPECT_EQ((*n)["flavor"], "gpu");
  ASSERT_EQ((*n)["gpuSlots"].size(), 4u);
  for (const json& s : (*n)["gpuSlots"]) {
    EXPECT_EQ(s["workload"], "default/a1");
    EXPECT_EQ(s["clusterQueue"], "team-a");
    EXPECT_TRUE(s["utilization"].is_null());
  }
  const json* other = Item(nodes, a_node == "n0" ? "n1" : "n0");
  ASSERT_NE(other, nullptr);
  for (const json& s : (*other)["gpuSlots"]) EXPECT_TRUE(s["workload"].is_null());

  // 4 GPUs for an hour at $3.6: 4 GPU-hours, $14.40, per queue, namespace and team; the idle
  // node's 4 GPUs as long: 4 GPU-hours, $14.40.
  absl::StatusOr<json> cost = CostJson(*v, "cluster-queue");
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ((*cost)["from"], "2027-01-15T08:00:00Z");
  EXPECT_EQ((*cost)["to"], "2027-01-15T09:00:00Z");
  ASSERT_EQ((*cost)["rows"].size(), 1u);
  EXPECT_EQ((*cost)["rows"][0]["key"], "team-a");
  EXPECT_DOUBLE_EQ((*cost)["rows"][0]["gpuHours"].get<double>(), 4);
  EXPECT_DOUBLE_EQ((*cost)["rows"][0]["allocatedDollars"].get<double>(), 14.4);
  EXPECT_EQ((*cost)["rows"][0]["jobs"], 1);
  EXPECT_DOUBLE_EQ((*cost)["idle"]["gpuHours"].get<double>(), 4);
  EXPECT_DOUBLE_EQ((*cost)["idle"]["dollars"].get<double>(), 14.4);
  absl::StatusOr<json> by_team = CostJson(*v, "label:team");
  ASSERT_TRUE(by_team.ok()) << by_team.status();
  EXPECT_EQ((*by_team)["rows"][0]["key"], "alpha");
  EXPECT_EQ(CostJson(*v, "namespace")->at("rows")[0]["key"], "default");
  EXPECT_FALSE(CostJson(*v, "label:project").ok());
  EXPECT_FALSE(CostJson(*v, "color").ok());

  // One trend point: half the GPUs allocated, a1 admitted at once, one node idle an hour.
  json trends = TrendsJson(*v);
  EXPECT_EQ(trends["interval"], 60);
  ASSERT_EQ(trends["points"].size(), 1u);
  EXPECT_EQ(trends["points"][0]["gpuAllocation"], 0.5);
  EXPECT_EQ(trends["points"][0]["waitP95Seconds"], 0);
  EXPECT_EQ(trends["points"][0]["idleNodeSeconds"], 3600);
  EXPECT_EQ(trends["points"][0]["pendingWorkloads"], 2);
}

TEST_F(ApiViewTest, TheTrendsRingIsBounded) {
  std::shared_ptr<const ClusterView> v;
  for (int i = 0; i <= 2000; ++i) v = Build(60.0 * i);
  EXPECT_EQ(v->trends.size(), ViewBuilder::kMaxTrendPoints);
  EXPECT_EQ(TrendsJson(*v)["points"].back()["time"], TimeJson(kWallZero + 60.0 * 2000));
  EXPECT_TRUE(TrendsJson(*v)["points"].back()["waitP95Seconds"].is_null());  // none admitted
}

// A head that cannot start before a1 ends gets a reservation: its queue names it, and the
// workload says when (a1's estimate: an hour).
TEST_F(ApiViewTest, ReservationsAndExpectedStarts) {
  Workload a1 = WL("a1").Queue("team-a").Pods(2, 4).Obj();
  a1.runtime_estimate = 3600;
  Submit(a1, 0);
  Cycle(0);
  Workload a2 = WL("a2").Queue("team-a").Pods(1, 4).Obj();
  Submit(a2, 10);
  Cycle(10);
  std::shared_ptr<const ClusterView> v = Build(10);
  const ViewWorkload* w = v->Find("default", "a2");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->state, "pending");
  json j = WorkloadJson(*v, *w, true);
  EXPECT_EQ(j["expectedStart"], TimeJson(kWallZero + 3600)) << j.dump(2);
  EXPECT_EQ(j["explain"]["expectedStart"], j["expectedStart"]);
  json queues = QueuesJson(*v);
  const json* qa = Item(queues, "team-a");
  ASSERT_NE(qa, nullptr);
  ASSERT_FALSE((*qa)["reservation"].is_null()) << qa->dump(2);
  EXPECT_EQ((*qa)["reservation"]["workload"], "default/a2");
  EXPECT_EQ((*qa)["reservation"]["expectedStart"], j["expectedStart"]);
  EXPECT_TRUE((*Item(queues, "team-b"))["reservation"].is_null());
}

// The handlers on a real server: 503 before the first view, then the documented answers; 404 for
// an unknown workload or path, 400 for a bad parameter; every error is {"error": ...}.
TEST_F(ApiViewTest, HandlersOnARealServer) {
  Submit(WL("a1").Queue("team-a").Pods(1, 4).Obj(), 0);
  Cycle(0);
  ViewHolder holder;
  Metrics metrics;
  MetricsServer server(
      &metrics, [] { return true; }, [] { return true; });
  server.AddRoutes([&](httplib::Server& s) {
    ApiOptions o;
    o.view = [&holder] { return holder.Get(); };
    AddApiRoutes(s, std::move(o));
  });
  int port = server.Start("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/api/v1/summary");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_TRUE(json::parse(r->body).contains("error"));
  holder.Set(Build(0));
  for (const char* path :
       {"/api/v1/summary", "/api/v1/queues", "/api/v1/workloads",
        "/api/v1/workloads?namespace=default&state=admitted", "/api/v1/workloads/default/a1",
        "/api/v1/nodes", "/api/v1/cost",
        "/api/v1/cost?by=namespace&from=2027-01-01&to=2027-02-01T00:00:00Z", "/api/v1/trends"}) {
    r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json") << path;
    EXPECT_TRUE(json::parse(r->body).is_object()) << path;
  }
  r = c.Get("/api/v1/workloads/default/a1");
  EXPECT_EQ(json::parse(r->body)["explain"]["reason"], "admitted to ClusterQueue team-a");
  for (auto [path, status] :
       std::vector<std::pair<const char*, int>>{{"/api/v1/workloads/default/nope", 404},
                                                {"/api/v1/nope", 404},
                                                {"/api/v1/workloads?state=running", 400},
                                                {"/api/v1/cost?by=color", 400},
                                                {"/api/v1/cost?from=yesterday", 400}}) {
    r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, status) << path;
    EXPECT_TRUE(json::parse(r->body).contains("error")) << path << ": " << r->body;
  }
  server.Stop();
}

// DCGM's readings on the GPU map: the slots a1 holds carry their utilization and the underuse
// mark; a GPU without a reading stays null.
TEST_F(ApiViewTest, GpuSlotsCarryDcgmReadings) {
  Submit(WL("a1").Queue("team-a").Pods(1, 2).Obj(), 0);
  Cycle(0);
  std::string node;
  in_.gpu_reading = [&](const std::string& n,
                        int32_t index) -> std::optional<ViewInput::GpuReading> {
    if (index > 1) return std::nullopt;
    node = n;
    return ViewInput::GpuReading{0.02, true};
  };
  std::shared_ptr<const ClusterView> v = Build(0);
  const ViewWorkload* a1 = v->Find("default", "a1");
  ASSERT_NE(a1, nullptr);
  json nodes = NodesJson(*v);
  const json* n = Item(nodes, a1->pods[0].node);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ((*n)["gpuSlots"][0]["utilization"], 0.02);
  EXPECT_EQ((*n)["gpuSlots"][0]["underused"], true);
  EXPECT_TRUE((*n)["gpuSlots"][2]["utilization"].is_null());
  EXPECT_EQ((*n)["gpuSlots"][2]["underused"], false);
}

// /api/v1/cost from the accounting store's records (serve --accounting-db): grouped as the
// report groups them, a job counted once over its runs, the period by the runs' ends.
TEST(ApiCost, FromTheAccountingStoresRecords) {
  auto run = [](std::string ns, std::string name, std::string cq, double end, double gpu_hours,
                std::optional<double> dollars) {
    accounting::RunRecord r;
    r.ns = std::move(ns);
    r.name = std::move(name);
    r.cluster_queue = std::move(cq);
    r.start = end - 3600;
    r.end = end;
    r.gpu_hours = gpu_hours;
    r.allocated_dollars = dollars;
    return r;
  };
  const std::vector<accounting::RunRecord> records = {
      run("ml", "a", "team-a", kWallZero + 3600, 4, 14.4),
      run("ml", "a", "team-a", kWallZero + 7200, 2, 7.2),  // its second run
      run("web", "b", "team-b", kWallZero + 3600, 2, std::nullopt)};
  absl::StatusOr<json> j =
      CostFromRecordsJson(records, "cluster-queue", std::nullopt, std::nullopt);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["source"], "accounting");
  ASSERT_EQ((*j)["rows"].size(), 2u) << j->dump(2);
  EXPECT_EQ((*j)["rows"][0]["key"], "team-a");
  EXPECT_DOUBLE_EQ((*j)["rows"][0]["gpuHours"].get<double>(), 6);
  EXPECT_DOUBLE_EQ((*j)["rows"][0]["allocatedDollars"].get<double>(), 21.6);
  EXPECT_EQ((*j)["rows"][0]["jobs"], 1);
  EXPECT_EQ((*j)["rows"][1]["key"], "team-b");
  EXPECT_TRUE((*j)["rows"][1]["allocatedDollars"].is_null());
  EXPECT_TRUE((*j)["idle"]["gpuHours"].is_null());
  // From the second hour on: only a's second run.
  j = CostFromRecordsJson(records, "namespace", kWallZero + 3601, std::nullopt);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ((*j)["rows"].size(), 1u) << j->dump(2);
  EXPECT_EQ((*j)["rows"][0]["key"], "ml");
  EXPECT_DOUBLE_EQ((*j)["rows"][0]["gpuHours"].get<double>(), 2);
  EXPECT_EQ((*j)["from"], "2027-01-15T09:00:01Z");
  EXPECT_TRUE(absl::IsInvalidArgument(
      CostFromRecordsJson(records, "color", std::nullopt, std::nullopt).status()));
}

}  // namespace
}  // namespace tessera::k8s
