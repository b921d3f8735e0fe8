// The dashboard in a real browser (issue 16): `tessera serve` with --api-token-file on a real
// kube-apiserver, a scripted scenario (two ClusterQueues, a gang of team-a holding 8 GPUs, a
// workload of team-b holding 2, a workload of team-a pending on quota), and headless Chromium
// driven over WebDriver (tests/k8s/webdriver.h). What is checked is what the page shows after
// its scripts ran: it asks for the token on 401, the GPU map has each workload's GPUs on the
// nodes and indices the API gives, coloured by queue, the idle ones marked; the pending
// workload's reason and the queue's usage are shown; a workload that ends leaves the map without
// a reload. Screenshots of each view are kept in the build directory (artifacts/dashboard/).
// Skipped, with the reason printed, when the API server is not built or chromium is missing.
// DashboardBrowser.ReplayReportPageRendersTheRun: the page of `sim replay --report`;
// DashboardBrowser.ReplayReportShowsWorkloadsGpuMapAndNodes: its Workloads tab, GPU map and nodes
// over time.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/kube_client.h"
#include "k8s/integration/queue_cluster_test.h"
#include "tests/k8s/test_cluster.h"
#include "tests/k8s/webdriver.h"

#ifndef TESSERA_ARTIFACT_DIR
#define TESSERA_ARTIFACT_DIR "artifacts"
#endif

namespace tessera::k8s {
namespace {

using testing::Browser;
using testing::FreePort;
using testing::json;
using testing::ReadFile;
using testing::TestCluster;

constexpr double kTimeout = 60;
constexpr const char* kToken = "dashboard-test-token";

class K8sDashboard : public testing_queues::QueueClusterTest {
 protected:
  void SetUp() override {
    if (Browser::ChromiumPath().empty() || Browser::ChromedriverPath().empty())
      GTEST_SKIP() << "SKIPPED (browser test): chromium and chromium-driver are not installed "
                      "(scripts/install-deps.sh installs them)";
    QueueClusterTest::SetUp();
  }

  void TearDown() override {
    browser_.reset();
    if (serve_pid_ > 0) TestCluster::Kill(serve_pid_);
    QueueClusterTest::TearDown();
  }

  // GET of serve's JSON API with the token; null when it does not answer 200.
  json Api(const std::string& path) {
    KubeConfig plain;
    plain.server = fmt::format("http://127.0.0.1:{}", port_);
    plain.token = kToken;
    KubeClient http(plain);
    auto r = http.Get(path);
    if (!r.ok() || r->status != 200) return nullptr;
    return json::parse(r->body, nullptr, false);
  }

  // The API's workload whose pods' names start with `prefix`, or whose name does.
  json Workload(const json& items, const std::string& prefix) {
    if (!items.is_array()) return nullptr;
    for (const json& w : items) {
      if (w.value("name", "").rfind(prefix, 0) == 0) return w;
      for (const json& p : w.value("pods", json::array()))
        if (p.value("name", "").rfind(prefix, 0) == 0) return w;
    }
    return nullptr;
  }

  // Runs `script` in the page until it returns true (the page polls the API every 5 s).
  bool WaitInPage(const std::string& script, const json& args = json::array(),
                  double timeout_s = kTimeout) {
    return TestCluster::WaitFor([&] { return browser_->Execute(script, args) == json(true); },
                                timeout_s);
  }

  std::string Shot(const std::string& name) {
    const std::string path = fmt::format("{}/{}.png", TESSERA_ARTIFACT_DIR, name);
    EXPECT_TRUE(browser_->Screenshot(path)) << path;
    std::cout << "screenshot: " << path << "\n";
    return path;
  }

  std::string ServeLog() { return ReadFile(cluster_->dir() + "/serve.log"); }

  std::unique_ptr<Browser> browser_;
  int serve_pid_ = -1;

  // serve (with a token) on 3 nodes of 8 GPUs: team-a's gang `train` holds its 8 GPUs, team-b's
  // `infer` 2, team-a's `waiting` waits on quota; the three as the API shows them once it has
  // caught up (what the page must show).
  void ServeTwoTeams() {
    cluster_->CreateNodes(3, 8, "gpu");
    for (const char* ns : {"team-a", "team-b"}) {
      cluster_->CreateNamespace(ns);
      CreateLocalQueue(ns, "lq", ns);
      cluster_->Create(testing_queues::ClusterQueueObject(ns, 8));
    }
    CreateFlavor();

    const std::string token_file = cluster_->dir() + "/api-token";
    std::ofstream(token_file) << kToken << "\n";
    port_ = FreePort();
    serve_pid_ = TestCluster::Spawn(
        {TESSERA_BINARY, "serve", "--kubeconfig", cluster_->kubeconfig_path(), "--metrics-address",
         "127.0.0.1", "--metrics-port", std::to_string(port_), "--api-token-file", token_file},
        cluster_->dir() + "/serve.log");
    ASSERT_GT(serve_pid_, 0);

    // team-a's gang takes its 8 GPUs, team-b's workload 2; team-a's next one waits on quota.
    CreateGang("team-a", "train", 2, json::object(), 4);
    CreateGang("team-b", "infer", 1, json::object(), 2);
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] { return cluster_->BoundPods("team-a") == 2 && cluster_->BoundPods("team-b") == 1; },
        kTimeout))
        << ServeLog();
    CreateGang("team-a", "waiting", 1, json::object(), 4);

    // The API's view once it has caught up: what the page must show.
    json &train = train_, &infer = infer_, &waiting = waiting_;
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          json wl = Api("/api/v1/workloads");
          if (!wl.is_object()) return false;
          train = Workload(wl["items"], "train");
          infer = Workload(wl["items"], "infer");
          waiting = Workload(wl["items"], "waiting");
          return train.is_object() && infer.is_object() && waiting.is_object() &&
                 train.value("state", "") == "admitted" &&
                 waiting.value("state", "") == "pending" && waiting["reason"].is_string();
        },
        kTimeout))
        << ServeLog();
    train_key_ = train["namespace"].get<std::string>() + "/" + train["name"].get<std::string>();
    infer_key_ = infer["namespace"].get<std::string>() + "/" + infer["name"].get<std::string>();
    waiting_key_ =
        waiting["namespace"].get<std::string>() + "/" + waiting["name"].get<std::string>();
  }

  // The page from /, which redirects to /ui/ and asks for the token on the API's 401.
  void OpenPageWithToken() {
    std::string why;
    browser_ = Browser::Start(cluster_->dir() + "/chromedriver.log", &why);
    ASSERT_TRUE(browser_) << why;
    const std::string base = fmt::format("http://127.0.0.1:{}", port_);

    // / redirects to /ui/; the API answers 401 without the token, so the page asks for it.
    ASSERT_TRUE(browser_->Navigate(base + "/#gpus"));
    EXPECT_EQ(browser_->Execute("return location.pathname"), json("/ui/"));
    ASSERT_TRUE(WaitInPage("return document.getElementById('token-dialog').open", {}, 20))
        << "no token prompt on 401\n"
        << browser_->Execute("return document.body.innerText").dump();
    Shot("dashboard-token");
    ASSERT_TRUE(browser_->Type("#token-input", kToken)) << browser_->last_error();
    ASSERT_TRUE(browser_->Click("#token-form button")) << browser_->last_error();
    // A marker that a reload would lose: the checks below see live updates of one page.
    browser_->Execute("window.__sameDocument = true; return true");
  }

  // The GPU map: 8 GPUs of team-a's gang and 2 of team-b's, on the nodes and indices the API
  // gives, coloured by their queue (the legend's colour), the other 14 GPUs idle.
  void CheckGpuMap() {
    const json &train = train_, &infer = infer_;
    const std::string &train_key = train_key_, &infer_key = infer_key_;
    ASSERT_TRUE(WaitInPage(fmt::format(
        "return document.querySelectorAll('.gpu[data-workload=\"{}\"]').length === 8 && "
        "document.querySelectorAll('.gpu[data-workload=\"{}\"]').length === 2",
        train_key, infer_key)))
        << browser_->Execute("return document.body.innerText").dump() << "\n"
        << ServeLog();
    for (const json& w : {train, infer}) {
      const std::string key =
          w["namespace"].get<std::string>() + "/" + w["name"].get<std::string>();
      for (const json& pod : w["pods"]) {
        ASSERT_TRUE(pod["node"].is_string()) << pod.dump();
        for (const json& idx : pod["gpuIndices"]) {
          json cell = browser_->Execute(
              "const c = document.querySelector(`.gpu[data-node=\"${arguments[0]}\"]"
              "[data-index=\"${arguments[1]}\"]`); return c && c.dataset.workload;",
              json::array({pod["node"], idx}));
          EXPECT_EQ(cell, json(key)) << pod["node"] << " GPU " << idx;
        }
      }
    }
    const char* kColors =
        "const q = arguments[0];"
        "const swatch = document.querySelector(`#gpu-legend [data-queue=\"${q}\"] .swatch`);"
        "const cells = [...document.querySelectorAll(`.gpu[data-queue=\"${q}\"]`)];"
        "return {legend: swatch && getComputedStyle(swatch).backgroundColor,"
        "        cells: [...new Set(cells.map(c => getComputedStyle(c).backgroundColor))]};";
    json a = browser_->Execute(kColors, json::array({"team-a"}));
    json b = browser_->Execute(kColors, json::array({"team-b"}));
    ASSERT_TRUE(a["legend"].is_string()) << a.dump();
    EXPECT_EQ(a["cells"], json::array({a["legend"]})) << a.dump();
    EXPECT_EQ(b["cells"], json::array({b["legend"]})) << b.dump();
    EXPECT_NE(a["legend"], b["legend"]);
    EXPECT_EQ(browser_->Execute("return document.querySelectorAll('.gpu.idle').length"), json(14));
    EXPECT_EQ(browser_->Execute("return document.getElementById('card-gpus').innerText"),
              json("10 / 24\nGPUs allocated"));
    Shot("dashboard-gpu-map");
  }

  // Workloads: the pending one's reason as the API gives it now (it gains the expected start's
  // explanation once the estimator has run), the gang's pods on their nodes, the explanation.
  void CheckWorkloads() {
    json &train = train_, &waiting = waiting_;
    const std::string &train_key = train_key_, &waiting_key = waiting_key_;
    browser_->Execute("location.hash = '#workloads'; return true");
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          json now = Workload(Api("/api/v1/workloads")["items"], "waiting");
          if (!now.is_object() || !now["reason"].is_string()) return false;
          waiting = now;
          return browser_->Execute(
                     fmt::format("const r = document.querySelector('tr[data-workload=\"{}\"] "
                                 "td.reason'); return !!r && r.textContent === arguments[0];",
                                 waiting_key),
                     json::array({now["reason"]})) == json(true);
        },
        kTimeout))
        << "API: " << waiting["reason"] << "\npage: "
        << browser_
               ->Execute(fmt::format("return document.querySelector('tr[data-workload=\"{}\"] "
                                     "td.reason').textContent",
                                     waiting_key))
               .dump();
    EXPECT_NE(waiting["reason"].get<std::string>().find("nvidia.com/gpu"), std::string::npos)
        << waiting["reason"];
    EXPECT_EQ(browser_->Execute(fmt::format(
                  "return document.querySelector('tr[data-workload=\"{}\"] .pill').textContent",
                  waiting_key)),
              json("pending"));
    json pods_text = browser_->Execute(fmt::format(
        "return document.querySelector('tr[data-workload=\"{}\"] td:last-child').textContent",
        train_key));
    for (const json& pod : train["pods"])
      EXPECT_NE(pods_text.get<std::string>().find(pod["node"].get<std::string>()),
                std::string::npos)
          << pods_text;
    // Its explanation, from /api/v1/workloads/NS/NAME, opens on a click.
    ASSERT_TRUE(browser_->Click(fmt::format("tr[data-workload=\"{}\"]", waiting_key)))
        << browser_->last_error();
    EXPECT_TRUE(
        WaitInPage("const e = document.getElementById('explain');"
                   "return !e.hidden && e.innerText.includes('Reason: ' + arguments[0]);",
                   json::array({waiting["reason"]}), 20))
        << browser_->Execute("return document.getElementById('explain').innerText").dump();
    Shot("dashboard-workloads");
  }

  // Queues: team-a uses its 8 GPUs and has one workload pending.
  void CheckQueues() {
    browser_->Execute("location.hash = '#queues'; return true");
    ASSERT_TRUE(
        WaitInPage("const td = document.querySelector("
                   "'tr[data-queue=\"team-a\"][data-resource=\"nvidia.com/gpu\"] td.used');"
                   "return !!td && td.textContent === '8';"))
        << browser_->Execute("return document.body.innerText").dump();
    Shot("dashboard-queues");
  }

  // Live: team-b's workload ends; its GPUs leave the map without a reload.
  void CheckLiveUpdate() {
    const std::string& infer_key = infer_key_;
    browser_->Execute("location.hash = '#gpus'; return true");
    cluster_->DeleteAllPods("team-b");
    EXPECT_TRUE(WaitInPage(fmt::format(
        "return document.querySelectorAll('.gpu[data-workload=\"{}\"]').length === 0 && "
        "document.querySelectorAll('.gpu.idle').length === 16",
        infer_key)))
        << browser_->Execute("return document.body.innerText").dump();
    EXPECT_EQ(browser_->Execute("return window.__sameDocument === true"), json(true))
        << "the page was reloaded";
  }

  json train_, infer_, waiting_;
  std::string train_key_, infer_key_, waiting_key_;
  int port_ = -1;
};

TEST_F(K8sDashboard, ShowsQueuesWorkloadsAndTheGpuMapOfARunningServe) {
  ASSERT_NO_FATAL_FAILURE(ServeTwoTeams());
  ASSERT_NO_FATAL_FAILURE(OpenPageWithToken());
  ASSERT_NO_FATAL_FAILURE(CheckGpuMap());
  ASSERT_NO_FATAL_FAILURE(CheckWorkloads());
  ASSERT_NO_FATAL_FAILURE(CheckQueues());
  CheckLiveUpdate();
}

// The same page as `sim replay --report` writes it (dashboard.html, a snapshot of the run): no
// server at all, so it runs wherever chromium does. The queues the report lists are the page's
// rows, the allocation trend is drawn, and the tabs a replay has no data for are left out.
TEST(DashboardBrowser, ReplayReportPageRendersTheRun) {
  if (Browser::ChromiumPath().empty() || Browser::ChromedriverPath().empty())
    GTEST_SKIP() << "SKIPPED (browser test): chromium and chromium-driver are not installed "
                    "(scripts/install-deps.sh installs them)";
  const std::string dir = ::testing::TempDir() + "dashboard-report";
  const std::string log = ::testing::TempDir() + "dashboard-report.log";
  int pid =
      TestCluster::Spawn({TESSERA_BINARY, "sim", "replay", "--synthetic-jobs", "300",
                          "--synthetic-nodes", "8", "--synthetic-queues", "3", "--report", dir},
                         log);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 120))
      << "sim replay did not finish";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
  json report = json::parse(ReadFile(dir + "/report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());

  std::string why;
  std::unique_ptr<Browser> browser = Browser::Start(dir + "/chromedriver.log", &why);
  ASSERT_TRUE(browser) << why;
  ASSERT_TRUE(browser->Navigate("file://" + dir + "/dashboard.html#queues"));
  json names = json::array();
  for (const json& q : report["queues"])
    if (q["name"] != "(none)") names.push_back(q["name"]);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return browser->Execute(
                   "return [...document.querySelectorAll('td[data-queue]')]"
                   ".map(td => td.dataset.queue)") == names;
      },
      20))
      << browser->Execute("return document.body.innerText").dump();
  EXPECT_EQ(browser->Execute("return document.getElementById('card-nodes').innerText"),
            json(fmt::format("{}\nnodes", report["summary"]["nodes"].get<int>())));
  EXPECT_EQ(browser->Execute("return [...document.querySelectorAll('#tabs a')]"
                             ".filter(a => !a.hidden).map(a => a.textContent)"),
            json({"Queues", "Workloads", "GPU map", "Trends"}));
  EXPECT_TRUE(browser->Screenshot(fmt::format("{}/report-queues.png", TESSERA_ARTIFACT_DIR)));
  browser->Execute("location.hash = '#trends'; return true");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        return browser->Execute(
                   "const l = document.querySelector('#chart-allocation polyline');"
                   "return !!l && l.getAttribute('points').split(' ').length > 1") == json(true);
      },
      20));
  EXPECT_TRUE(browser->Screenshot(fmt::format("{}/report-trends.png", TESSERA_ARTIFACT_DIR)));
  // A series of one sample (serve's first trend point) is drawn as a level line, with its dashed
  // second series too.
  EXPECT_EQ(browser->Execute("const c = lineChart('one', [0], [5], String, 'one-point', 0, [2]);"
                             "return [...c.querySelectorAll('polyline')]"
                             ".map(l => l.getAttribute('points').split(' ').length)"),
            json({2, 2}));
}

// The report's Workloads tab and GPU map (the cluster at --report-at) and its nodes-over-time
// chart, on the elastic CSV node group of tests/data/trace (pod-by-pod: at 2400 s small runs on
// one of the four nodes given to too-big, which waits with 3 of its 5 pods fitting).
TEST(DashboardBrowser, ReplayReportShowsWorkloadsGpuMapAndNodes) {
  if (Browser::ChromiumPath().empty() || Browser::ChromedriverPath().empty())
    GTEST_SKIP() << "SKIPPED (browser test): chromium and chromium-driver are not installed "
                    "(scripts/install-deps.sh installs them)";
  const std::string data = TestCluster::RepoRoot() + "/tests/data/trace/";
  const std::string dir = ::testing::TempDir() + "dashboard-report-elastic";
  const std::string log = ::testing::TempDir() + "dashboard-report-elastic.log";
  int pid = TestCluster::Spawn(
      {TESSERA_BINARY, "sim", "replay", "--nodes", data + "elastic_nodes.csv", "--jobs",
       data + "elastic_jobs.csv", "--manifests", data + "elastic_queues.yaml", "--scale-up",
       "pod-by-pod", "--report-at", "2400", "--report", dir},
      log);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_TRUE(TestCluster::WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 120))
      << "sim replay did not finish";
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);

  std::string why;
  std::unique_ptr<Browser> browser = Browser::Start(dir + "/chromedriver.log", &why);
  ASSERT_TRUE(browser) << why;
  ASSERT_TRUE(browser->Navigate("file://" + dir + "/dashboard.html#workloads"));
  const auto rows = [&] {
    return browser->Execute(
        "return [...document.querySelectorAll('#workloads tr[data-workload]')].map(tr => "
        "[tr.dataset.workload, tr.querySelector('.pill').textContent, "
        "tr.querySelector('.reason').textContent, tr.lastChild.innerText])");
  };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return rows().size() == 2; }, 20))
      << browser->Execute("return document.body.innerText").dump();
  const json r = rows();
  EXPECT_EQ(r[0][0], "default/small");
  EXPECT_EQ(r[0][1], "admitted");
  EXPECT_NE(r[0][3].get<std::string>().find("1 pod → a100-"), std::string::npos) << r[0][3];
  EXPECT_NE(r[0][3].get<std::string>().find("GPU 0,1,2,3,4,5,6,7"), std::string::npos) << r[0][3];
  EXPECT_EQ(r[1][0], "default/too-big");
  EXPECT_EQ(r[1][1], "pending");
  EXPECT_NE(r[1][2].get<std::string>().find("3 of 5 pods of main fit"), std::string::npos)
      << r[1][2];
  EXPECT_NE(browser->Execute("return document.getElementById('wl-snapshot').textContent")
                .get<std::string>()
                .find("The cluster at +40m: 2 of 2"),
            std::string::npos);
  // One clock: simulated time is elapsed time, never a 1970 date.
  EXPECT_EQ(browser->Execute("return document.body.innerText").get<std::string>().find("1970"),
            std::string::npos);
  // One snapshot: the cards are of the map's instant (8 GPUs of small held, 32 up).
  EXPECT_EQ(browser->Execute("return document.getElementById('card-gpus').innerText")
                .get<std::string>()
                .find("8 / 32"),
            0u);
  EXPECT_NE(browser->Execute("return document.getElementById('card-time').innerText")
                .get<std::string>()
                .find("+40m"),
            std::string::npos);
  // A click explains from the snapshot.
  browser->Execute(
      "document.querySelector('tr[data-workload=\"default/too-big\"]').click(); "
      "return true");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        return browser->Execute("return document.getElementById('explain').innerText")
                   .get<std::string>()
                   .find("Would fit if") != std::string::npos;
      },
      20));
  EXPECT_TRUE(browser->Screenshot(fmt::format("{}/report-workloads.png", TESSERA_ARTIFACT_DIR)));

  browser->Execute("location.hash = '#gpus'; return true");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return browser->Execute("return document.querySelectorAll('#gpu-map .node').length") ==
               json(5);
      },
      20))
      << browser->Execute("return document.body.innerText").dump();
  EXPECT_EQ(browser->Execute("return [...document.querySelectorAll('#gpu-map .gpu')]"
                             ".filter(g => g.dataset.workload === 'default/small').length"),
            json(8));
  EXPECT_EQ(browser->Execute("return document.querySelectorAll('#gpu-map .gpu.idle').length"),
            json(24));
  EXPECT_TRUE(browser->Screenshot(fmt::format("{}/report-gpu-map.png", TESSERA_ARTIFACT_DIR)));

  browser->Execute("location.hash = '#trends'; return true");
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        return browser->Execute(
                   "const c = document.getElementById('chart-nodes-0');"
                   "return !!c && c.querySelector('h3').textContent.endsWith('a100') && "
                   "c.querySelectorAll('polyline').length === 2") == json(true);
      },
      20));
  EXPECT_TRUE(browser->Screenshot(fmt::format("{}/report-nodes.png", TESSERA_ARTIFACT_DIR)));
}

}  // namespace
}  // namespace tessera::k8s
