// Metrics of `tessera serve` after a scripted scenario on a real kube-apiserver and etcd (issue
// 16): team-a borrows team-b's idle quota, team-b reclaims it by preemption, a third gang of
// team-a waits; /metrics is then scraped and read as Prometheus reads it: Kueue's names with
// their labels and values, the GPU allocation per flavor, the GPU-seconds and dollars per team.
// Skipped, with the reason printed, when the API server is not built.
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "k8s/client/kube_client.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {
namespace {

using testing_queues::ClusterQueueObject;
using testing_queues::json;
using testing_queues::TestCluster;

constexpr double kTimeout = 60;

// The samples of a Prometheus text exposition: "name{labels}" -> value.
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    const std::string v = line.substr(sp + 1);
    out[line.substr(0, sp)] = v == "+Inf" ? 1.0 / 0.0 : std::stod(v);
  }
  return out;
}

class K8sMetrics : public testing_queues::QueueClusterTest {
 protected:
  void TearDown() override {
    server_.reset();
    controller_.reset();
    QueueClusterTest::TearDown();
  }

  std::string Scrape() {
    KubeConfig plain;
    plain.server = fmt::format("http://127.0.0.1:{}", port_);
    KubeClient http(plain);
    auto r = http.Get("/metrics");
    return r.ok() && r->status == 200 ? r->body : "";
  }

  Metrics metrics_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<MetricsServer> server_;
  int port_ = -1;
};

TEST_F(K8sMetrics, KueueMetricsAndCostAfterBorrowReclaimAndAWait) {
  cluster_->CreateNodes(2, 8, "gpu");
  for (const char* ns : {"team-a", "team-b"}) {
    cluster_->CreateNamespace(ns);
    CreateLocalQueue(ns, "lq", ns);
    cluster_->Create(ClusterQueueObject(ns, 8, "org", {{"reclaimWithinCohort", "Any"}}));
  }
  CreateFlavor();
  // $3.60 per GPU-hour: a GPU-second costs $0.001.
  cluster_->Create(
      {{"apiVersion", "tessera.dev/v1alpha1"},
       {"kind", "SchedulerConfig"},
       {"metadata", {{"name", "tessera"}}},
       {"spec", {{"pricing", {{"gpuHour", {{"default", 3.6}}}, {"rollupLabels", {"team"}}}}}}});
  ControllerOptions o;
  o.status_period_s = 0.2;
  controller_ = std::make_unique<Controller>(&cluster_->client(), o, &metrics_);
  controller_->Start();
  server_ = std::make_unique<MetricsServer>(
      &metrics_, [] { return true; }, [] { return true; });
  port_ = server_->Start("127.0.0.1", 0);
  ASSERT_GT(port_, 0);

  const json alpha = {{"team", "alpha"}};
  CreateGang("team-a", "a1", 8, alpha);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a1-") == 8; }, kTimeout));
  CreateGang("team-a", "a2", 8, alpha);  // borrows team-b's idle quota
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a2-") == 8; }, kTimeout));
  CreateGang("team-b", "b1", 8, {{"team", "beta"}});  // reclaims it: a2 is evicted whole
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-b", "b1-") == 8; }, kTimeout));
  // team-a is at its nominal quota: a3 waits, past its wait limit (0: at once).
  cluster_->Create(testing_queues::PodGroupObject("team-a", "a3", 4));
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("team-a", fmt::format("a3-{}", i), 1, "tessera",
                                       {{"team", "alpha"},
                                        {"kueue.x-k8s.io/queue-name", "lq"},
                                        {"scheduling.x-k8s.io/pod-group", "a3"}},
                                       {{"tessera.dev/max-wait", "0"}}));

  const std::string a_gpu =
      "{cohort=\"org\",cluster_queue=\"team-a\",flavor=\"default\",resource=\"nvidia.com/gpu\"}";
  std::map<std::string, double> s;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        s = Samples(Scrape());
        return s["tessera_pending_workloads{cluster_queue=\"team-a\",status=\"active\"}"] +
                       s["tessera_pending_workloads{cluster_queue=\"team-a\",status="
                         "\"inadmissible\"}"] ==
                   1 &&
               s["tessera_admitted_active_workloads{cluster_queue=\"team-a\"}"] == 1 &&
               s["tessera_gpus_allocated{flavor=\"default\"}"] == 16;
      },
      kTimeout))
      << Scrape();
  EXPECT_EQ(s["tessera_admitted_workloads_total{cluster_queue=\"team-a\"}"], 2);
  EXPECT_EQ(s["tessera_admitted_workloads_total{cluster_queue=\"team-b\"}"], 1);
  EXPECT_EQ(s["tessera_admitted_active_workloads{cluster_queue=\"team-b\"}"], 1);
  EXPECT_EQ(s["tessera_preempted_workloads_total{preempting_cluster_queue=\"team-b\",reason="
              "\"InCohortReclamation\"}"],
            1);
  EXPECT_EQ(s["tessera_evicted_workloads_total{cluster_queue=\"team-a\",reason=\"Preempted\"}"], 1);
  EXPECT_EQ(s["tessera_admission_wait_time_seconds_count{cluster_queue=\"team-a\"}"], 2);
  EXPECT_GE(s["tessera_admission_attempts_total{result=\"success\"}"], 3);
  EXPECT_EQ(s["tessera_cluster_queue_nominal_quota" + a_gpu], 8);
  EXPECT_EQ(s["tessera_cluster_queue_resource_usage" + a_gpu], 8);
  EXPECT_EQ(s["tessera_cluster_queue_weighted_share{cluster_queue=\"team-a\"}"], 0);
  EXPECT_EQ(s["tessera_gpus{flavor=\"default\"}"], 16);
  EXPECT_EQ(s["tessera_gpu_allocation_ratio{flavor=\"default\"}"], 1);
  EXPECT_EQ(s["tessera_idle_nodes{flavor=\"default\"}"], 0);
  EXPECT_EQ(s.count("tessera_idle_node_seconds_total{flavor=\"default\"}"), 1u);
  // GPU time and its cost by team, in proportion: $0.001 per GPU-second.
  const std::string a = "{cluster_queue=\"team-a\",namespace=\"team-a\",label_team=\"alpha\"}";
  const std::string b = "{cluster_queue=\"team-b\",namespace=\"team-b\",label_team=\"beta\"}";
  EXPECT_GT(s["tessera_gpu_seconds_total" + a], 0);
  EXPECT_GT(s["tessera_gpu_seconds_total" + b], 0);
  EXPECT_NEAR(s["tessera_cost_dollars_total" + a], s["tessera_gpu_seconds_total" + a] / 1000, 1e-6);
  // Every metric of the exporter's list is served, with HELP and TYPE; no empty label value.
  const std::string text = Scrape();
  for (const std::string& name : Metrics::Names())
    EXPECT_TRUE(std::regex_search(text, std::regex("\n# TYPE " + name + " ")) ||
                text.rfind("# HELP " + name, 0) == 0)
        << name;
  EXPECT_EQ(text.find("=\"\""), std::string::npos);

  // a3's wait limit could not be met: one Warning Event, the counter and the gauge say it, and
  // an engine rebuilt from a fresh snapshot (a node joins) moves it ahead again without saying
  // it again.
  EXPECT_EQ(s["tessera_wait_limit_exceeded_total{cluster_queue=\"team-a\"}"], 1);
  EXPECT_EQ(s["tessera_wait_limit_exceeded_total{cluster_queue=\"team-b\"}"], 0);
  EXPECT_EQ(s.count("tessera_wait_limit_exceeded_total{cluster_queue=\"team-b\"}"), 1u);
  EXPECT_EQ(s["tessera_pending_workloads_past_wait_limit{cluster_queue=\"team-a\"}"], 1);
  EXPECT_EQ(s["tessera_pending_workloads_past_wait_limit{cluster_queue=\"team-b\"}"], 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return EventsOf("team-a", "a3-0", "WaitLimitExceeded").size() == 1; }, kTimeout));
  const double rebuilds = s["tessera_engine_rebuilds_total"];
  const double attempts = s["tessera_admission_attempts_total{result=\"inadmissible\"}"];
  cluster_->CreateNodes(1, 8, "late");  // team-a stays at its nominal quota: a3 still waits
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        s = Samples(Scrape());
        return s["tessera_engine_rebuilds_total"] > rebuilds &&
               s["tessera_admission_attempts_total{result=\"inadmissible\"}"] > attempts &&
               s["tessera_gpus{flavor=\"default\"}"] == 24;
      },
      kTimeout))
      << Scrape();
  EXPECT_EQ(s["tessera_wait_limit_exceeded_total{cluster_queue=\"team-a\"}"], 1);
  EXPECT_EQ(s["tessera_pending_workloads_past_wait_limit{cluster_queue=\"team-a\"}"], 1);
  EXPECT_EQ(Bound("team-a", "a3-"), 0);
  const std::vector<json> events = EventsOf("team-a", "a3-0", "WaitLimitExceeded");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].value("count", 1), 1);
  EXPECT_EQ(events[0]["type"], "Warning");
}

}  // namespace
}  // namespace tessera::k8s
