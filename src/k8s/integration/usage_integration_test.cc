// What workloads use, on a real kube-apiserver and etcd (issue 16):
// - GPU utilization from dcgm-exporter: a local HTTP server serves the recorded exposition
//   (tests/k8s/testdata/dcgm-exporter-a100.txt) to a running controller; the workload whose pod
//   the exposition shows at 2-3 % is reported underused (the metric, an Event on its PodGroup,
//   the per-GPU figures of the accessor), and its effective cost is counted;
// - the accounting store of `tessera serve --accounting-db`: two replicas (only the leader
//   writes), both stopped mid-run, one workload ending while none runs, a new serve carrying
//   the other on; the records read with the store API and `tessera report cost`.
// Skipped, with the reason printed, when the API server is not built.
#include <httplib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "accounting/store.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/dcgm_scraper.h"
#include "k8s/observe/metrics.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::ReadFile;
using testing::TestCluster;
using testing_queues::ReadRepoFile;

constexpr double kTimeout = 60;

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

// In cohort "org", reclaiming what it lent.
json ClusterQueue(const std::string& name, int gpus) {
  return testing_queues::ClusterQueueObject(name, gpus, "org", {{"reclaimWithinCohort", "Any"}});
}

class K8sUsage : public testing_queues::QueueClusterTest {
 protected:
  void SetUp() override {
    QueueClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cluster_->CreateNamespace("team-a");
    CreateLocalQueue("team-a", "lq", "team-a");
    cluster_->Create(ClusterQueue("team-a", 4));  // in cohort "org", which team-b joins
    CreateFlavor();
    // $3.60 per GPU-hour: a GPU-second costs $0.001.
    cluster_->Create({{"apiVersion", "tessera.dev/v1alpha1"},
                      {"kind", "SchedulerConfig"},
                      {"metadata", {{"name", "tessera"}}},
                      {"spec", {{"pricing", {{"gpuHour", {{"default", 3.6}}}}}}}});
  }

  void TearDown() override {
    server_.reset();
    controller_.reset();
    QueueClusterTest::TearDown();
  }

  // A PodGroup of `pods` pods of `gpus` GPUs each, GROUP-0 ..., in LocalQueue "lq".
  void Gang(const std::string& group, int pods, int gpus, const std::string& ns = "team-a") {
    CreateGang(ns, group, pods, json::object(), gpus);
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

// The recorded exposition, served by a local HTTP server as dcgm-exporter would serve it, with
// its Hostname made the test's node name.
TEST_F(K8sUsage, DcgmExporterReadingsMakeAnUnderusedWorkloadAndItsEffectiveCost) {
  cluster_->CreateNodes(1, 4, "gpu");  // gpu-0
  std::string exposition = ReadRepoFile("tests/k8s/testdata/dcgm-exporter-a100.txt");
  ASSERT_FALSE(exposition.empty());
  for (size_t at; (at = exposition.find("gpu-node-1")) != std::string::npos;)
    exposition.replace(at, 10, "gpu-0");
  httplib::Server exporter;
  exporter.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(exposition, "text/plain; version=0.0.4; charset=utf-8");
  });
  const int exporter_port = exporter.bind_to_any_port("127.0.0.1");
  std::thread exporter_thread([&] { exporter.listen_after_bind(); });
  while (!exporter.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  DcgmScraperOptions so;
  so.urls = {fmt::format("http://127.0.0.1:{}/metrics", exporter_port)};
  so.interval_s = 0.2;
  DcgmScraper scraper(so, &metrics_);
  scraper.Start();
  ControllerOptions o;
  o.status_period_s = 0.2;
  o.dcgm = &scraper;
  o.underuse = {.threshold = 0.1, .for_s = 1};
  controller_ = std::make_unique<Controller>(&cluster_->client(), o, &metrics_);
  controller_->Start();
  // Whatever fails below: the loop stops before the scraper it reads goes, the exporter's
  // thread is joined.
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] {
    controller_->Stop();
    exporter.stop();
    if (exporter_thread.joinable()) exporter_thread.join();
  }};
  server_ = std::make_unique<MetricsServer>(
      &metrics_, [] { return true; }, [] { return true; });
  port_ = server_->Start("127.0.0.1", 0);
  ASSERT_GT(port_, 0);

  // The exposition shows pod team-a/train-0 on GPUs 0 and 1 at 2.1 % and 1.4 % engine activity.
  Gang("train", 1, 2);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "train-") == 1; }, kTimeout));
  const std::string team = "{cluster_queue=\"team-a\",namespace=\"team-a\"}";
  std::map<std::string, double> s;
  const bool underused = TestCluster::WaitFor(
      [&] {
        s = Samples(Scrape());
        return s["tessera_underused_workloads" + team] == 1;
      },
      kTimeout);
  ASSERT_TRUE(underused) << Scrape();
  EXPECT_EQ(s["tessera_underused_gpus" + team], 2);

  // Per GPU, for the JSON API: GPUs 0 and 1 of gpu-0 (the exposition's labels), underused.
  const UtilizationTracker& u = controller_->utilization();
  EXPECT_DOUBLE_EQ(u.gpu_utilization("gpu-0", 0).value_or(-1), 0.021);
  EXPECT_DOUBLE_EQ(u.gpu_utilization("gpu-0", 1).value_or(-1), 0.014);
  EXPECT_TRUE(u.gpu_underused("gpu-0", 0));
  EXPECT_FALSE(u.gpu_underused("gpu-0", 3));

  // The Event, on the PodGroup.
  json event;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json list = cluster_->Get("/api/v1/namespaces/team-a/events");
        for (const json& e : list.value("items", json::array()))
          if (e.value("reason", "") == "Underused") event = e;
        return !event.is_null();
      },
      kTimeout));
  EXPECT_EQ(event["involvedObject"].value("kind", ""), "PodGroup");
  EXPECT_EQ(event["involvedObject"].value("name", ""), "train");
  EXPECT_EQ(event.value("type", ""), "Warning");
  const std::string message = event.value("message", "");
  EXPECT_NE(message.find("GPU utilization 2% on 2 of its 2 GPUs, below 10% for at least 1s"),
            std::string::npos)
      << message;

  // The counters, once the loop has stopped (a scrape between two of their updates would see
  // one grown and not yet the other).
  controller_->Stop();
  scraper.Stop();
  const std::string scraped = Scrape();
  s = Samples(scraped);
  EXPECT_GE(s["tessera_dcgm_scrapes_total{result=\"success\"}"], 1);
  EXPECT_EQ(s["tessera_dcgm_scrapes_total{result=\"error\"}"], 0);
  // Effective cost: the allocated cost x 1.75 % over the time it was measured, never more.
  const double gpu_s = s["tessera_gpu_seconds_total" + team];
  const double dollars = s["tessera_cost_dollars_total" + team];
  const double eff_s = s["tessera_effective_gpu_seconds_total" + team];
  const double eff_dollars = s["tessera_effective_cost_dollars_total" + team];
  EXPECT_GT(eff_s, 0) << scraped;
  EXPECT_LE(eff_s, gpu_s * 0.0175 + 1e-9);
  EXPECT_NEAR(eff_dollars, eff_s / 1000, 1e-9);  // $0.001 a GPU-second
  EXPECT_NEAR(dollars, gpu_s / 1000, 1e-9);
}

// `tessera serve --accounting-db`: two replicas with leader election; only the leader writes.
// Both are stopped mid-run; `short` ends while none runs; a new serve carries `long` on (the
// same record, its real start, the GPU-hours of the time without a serve) and closes `short`.
TEST_F(K8sUsage, ServeAccountingRecordsSurviveARestartAndOnlyTheLeaderWrites) {
  cluster_->CreateNodes(1, 8, "gpu");
  const std::string db = cluster_->dir() + "/acct.db";
  auto serve = [&](const std::string& id) {
    return TestCluster::Spawn({TESSERA_BINARY, "serve", "--kubeconfig", cluster_->kubeconfig_path(),
                               "--leader-elect", "--lease-namespace", "default", "--identity", id,
                               "--metrics-port", "-1", "--accounting-db", db},
                              cluster_->dir() + "/serve-" + id + ".log");
  };
  auto log = [&](const std::string& id) {
    return ReadFile(cluster_->dir() + "/serve-" + id + ".log");
  };
  auto stop = [&](int pid) {
    kill(pid, SIGTERM);
    int status = 0;
    if (!TestCluster::WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 30))
      TestCluster::Kill(pid);
  };
  int a = serve("a");
  ASSERT_GT(a, 0);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json l = cluster_->Get("/apis/coordination.k8s.io/v1/namespaces/default/leases/tessera");
        return l.is_object() && l["spec"].value("holderIdentity", "") == "a";
      },
      kTimeout))
      << log("a");
  int f = serve("f");  // the follower
  ASSERT_GT(f, 0);
  Gang("long", 2, 1);
  Gang("short", 1, 1);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return Bound("team-a", "long-") == 2 && Bound("team-a", "short-") == 1; }, kTimeout))
      << log("a");
  auto store = accounting::AccountingStore::Open(db, {.read_only = true});
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<accounting::RunRecord> open;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto r = (*store)->ReadOpen("serve");
        if (r.ok()) open = *r;
        return open.size() == 2;
      },
      kTimeout))
      << log("a");
  std::map<std::string, accounting::RunRecord> before;
  for (const auto& r : open) before[r.name] = r;
  ASSERT_EQ(before.count("long"), 1u);
  EXPECT_EQ(before["long"].run_key, "PodGroup:team-a/long");
  EXPECT_EQ(before["long"].gpus, 2);
  EXPECT_EQ(before["long"].cluster_queue, "team-a");

  // serve is restarted: both replicas stop; `short` ends while none runs.
  const double stop_sent =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  stop(a);
  stop(f);
  // A follower that wrote would have added rows of its own.
  EXPECT_EQ((*store)->Read()->size(), 2u) << log("f");
  // The leader wrote its open runs as it stopped (not only every 10 s): `short`, closed at its
  // last checkpoint, keeps all the time it ran under a leader.
  auto stopped = (*store)->ReadOpen("serve");
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  for (const accounting::RunRecord& r : *stopped)
    EXPECT_GE(r.end, stop_sent) << r.name << "\n" << log("a");
  cluster_->DeletePod("team-a", "short-0");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "short-") == 0; }, kTimeout));
  int b = serve("b");
  ASSERT_GT(b, 0);
  // `short` is closed (at its last checkpoint), `long` carried on.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto r = (*store)->ReadOpen("serve");
        return r.ok() && r->size() == 1 && (*r)[0].name == "long";
      },
      kTimeout))
      << log("b");
  cluster_->DeletePod("team-a", "long-0");
  cluster_->DeletePod("team-a", "long-1");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto r = (*store)->ReadOpen("serve");
        return r.ok() && r->empty();
      },
      kTimeout))
      << log("b");
  stop(b);

  auto all = (*store)->Read();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u) << log("b");  // one record per run: the restart added none
  double total_gpu_hours = 0;
  for (const accounting::RunRecord& r : *all) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.source, "serve");
    EXPECT_EQ(r.how, accounting::RunEnd::kFinished);
    EXPECT_EQ(r.id, before[r.name].id);               // the same row, carried on
    EXPECT_DOUBLE_EQ(r.start, before[r.name].start);  // its real start
    EXPECT_GE(r.end, before[r.name].end);
    // Held all along (through the restart too): GPUs x its span. `long`'s two pods are deleted
    // one after the other, and between the two it holds one GPU: a moment, not the restart's
    // seconds (2 GPU-seconds at most).
    EXPECT_LE(r.gpu_hours, r.gpus * (r.end - r.start) / 3600 + 1e-9);
    EXPECT_GE(r.gpu_hours, r.gpus * (r.end - r.start - 2) / 3600);
    ASSERT_TRUE(r.allocated_dollars.has_value());
    // $3.60 a GPU-hour, every one of them (once `long`'s dollars came 1.2 GPU-seconds short:
    // serve `b`'s first engine was built before the SchedulerConfig's list was applied, so its
    // first period charged GPU-hours without a price; see Controller::Impl::Loop).
    EXPECT_NEAR(*r.allocated_dollars, r.gpu_hours * 3.6, 1e-9);
    EXPECT_FALSE(r.effective_dollars.has_value());  // no dcgm-exporter: not measured
    total_gpu_hours += r.gpu_hours;
  }

  // The report reads the same records.
  const std::string out = cluster_->dir() + "/report.json";
  const std::string cmd = fmt::format(
      "'{}' report cost --db '{}' --by namespace --output json > '{}'", TESSERA_BINARY, db, out);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  json report = json::parse(ReadFile(out));
  ASSERT_EQ(report["groups"].size(), 1u) << report.dump();
  EXPECT_EQ(report["groups"][0]["group"], "team-a");
  EXPECT_EQ(report["groups"][0]["jobs"], 2);
  EXPECT_EQ(report["groups"][0]["runs"], 2);
  EXPECT_NEAR(report["groups"][0]["gpuHours"].get<double>(), total_gpu_hours, 1e-5);
}

// A run ended by a preemption on the real API server: team-a's gang borrows team-b's quota,
// team-b's gang reclaims it; the record of team-a's run says preempted, with the reason, and
// team-b's run is open.
//
// It ran for well under serve's status period here: a run that begins and ends between two
// observations is recorded too (LiveRecorder's Ending carries what it held).
TEST_F(K8sUsage, ServeAccountingRecordsAPreemptionAsPreempted) {
  cluster_->CreateNodes(1, 8, "gpu");
  cluster_->Apply(R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: tessera.dev/v1alpha1
kind: LocalQueue
metadata: {name: lq, namespace: team-b}
spec: {clusterQueue: team-b}
)");
  cluster_->Create(ClusterQueue("team-b", 4));
  const std::string db = cluster_->dir() + "/acct.db";
  auto store = accounting::AccountingStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  ControllerOptions o;
  o.status_period_s = 0.2;
  o.accounting = store->get();
  controller_ = std::make_unique<Controller>(&cluster_->client(), o, &metrics_);
  controller_->Start();
  Gang("a1", 8, 1);  // borrows team-b's 4 GPUs
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a1-") == 8; }, kTimeout));
  Gang("b1", 4, 1, "team-b");  // reclaims them: a1 is preempted whole
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-b", "b1-") == 4; }, kTimeout));
  std::vector<accounting::RunRecord> all;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        all = *(*store)->Read();
        return all.size() == 2 && all[0].how == accounting::RunEnd::kPreempted;
      },
      kTimeout))
      << [&] {
           std::string s = fmt::format("{} records:", all.size());
           for (const auto& r : all)
             s += fmt::format(" [{} how={} preemptions={} end={}]", r.name, static_cast<int>(r.how),
                              r.preemptions, r.end);
           return s;
         }();
  controller_->Stop();
  EXPECT_EQ(all[0].name, "a1");
  EXPECT_EQ(all[0].preemptions, 1);
  EXPECT_EQ(all[0].gpus, 8);
  EXPECT_FALSE(all[0].reason.empty());
  EXPECT_EQ(all[1].name, "b1");
  EXPECT_EQ(all[1].how, accounting::RunEnd::kRunning);
  EXPECT_EQ(all[1].cluster_queue, "team-b");
}

}  // namespace
}  // namespace tessera::k8s
