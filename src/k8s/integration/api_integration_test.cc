// serve's JSON API and the `tessera get` / `tessera explain` CLI against the `tessera serve`
// command on a real kube-apiserver and etcd (issue 16): one ClusterQueue of 8 GPUs, a gang of 8
// running, a gang of 4 pending on quota; the API's answers (with and without the bearer token)
// and the CLI's tables are then checked value by value. Skipped, with the reason printed, when
// the API server is not built.
#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "k8s/client/kube_client.h"
#include "k8s/integration/queue_cluster_test.h"

namespace tessera::k8s {
namespace {

using testing::ReadFile;
using testing_queues::ClusterQueueObject;
using testing_queues::json;
using testing_queues::TestCluster;

constexpr double kTimeout = 60;

// Runs `tessera ARGS` (a shell line), stdout and stderr together; `code` gets the exit status.
std::string Tessera(const std::string& args, int* code) {
  FILE* p = popen((std::string(TESSERA_BINARY) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = p ? pclose(p) : -1;
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class K8sApi : public testing_queues::QueueClusterTest {
 protected:
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      if (!TestCluster::WaitFor([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, 20))
        TestCluster::Kill(pid_);
    }
    QueueClusterTest::TearDown();
  }

  // GET `path` of serve's metrics port; `token` empty: none sent. Null when it did not answer.
  json Get(const std::string& path, const std::string& token, long* status = nullptr) {
    KubeConfig plain;
    plain.server = server_;
    plain.token = token;
    KubeClient http(plain);
    auto r = http.Get(path);
    if (status) *status = r.ok() ? r->status : 0;
    if (!r.ok()) return nullptr;
    return json::parse(r->body, nullptr, false);
  }

  // serve with a token, team-a's a1 (8 GPUs) running and a2 (4) waiting for quota; `a2` gets
  // a2 as the API shows it once it says what would make it fit.
  void ServeARunningAndAPendingGang(json& a2) {
    cluster_->CreateNodes(2, 8, "gpu");
    cluster_->CreateNamespace("team-a");
    CreateFlavor();
    cluster_->Create(ClusterQueueObject("team-a", 8));
    CreateLocalQueue("team-a", "lq", "team-a");
    cluster_->Create(
        {{"apiVersion", "tessera.dev/v1alpha1"},
         {"kind", "SchedulerConfig"},
         {"metadata", {{"name", "tessera"}}},
         {"spec", {{"pricing", {{"gpuHour", {{"default", 3.6}}}, {"rollupLabels", {"team"}}}}}}});
    token_file_ = cluster_->dir() + "/api-token";
    std::ofstream(token_file_) << "s3cret\n";
    const std::string log = cluster_->dir() + "/serve-api.log";
    pid_ = TestCluster::Spawn(
        {TESSERA_BINARY, "serve", "--kubeconfig", cluster_->kubeconfig_path(), "--metrics-address",
         "127.0.0.1", "--metrics-port", "0", "--api-token-file", token_file_},
        log);
    ASSERT_GT(pid_, 0);
    // The port it picked, from its log.
    const std::regex listening(R"(/api/v1/ on 127\.0\.0\.1:([0-9]+))");
    std::smatch m;
    std::string text;
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          text = ReadFile(log);
          return std::regex_search(text, m, listening);
        },
        kTimeout))
        << text;
    server_ = "http://127.0.0.1:" + m[1].str();

    CreateGang("team-a", "a1", 8, {{"team", "alpha"}});
    ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a1-") == 8; }, kTimeout))
        << ReadFile(log);
    CreateGang("team-a", "a2", 4, {{"team", "alpha"}});  // team-a's 8 GPUs are in use: it waits
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          a2 = Get("/api/v1/workloads/team-a/a2", "s3cret");
          return a2.is_object() && a2.value("state", "") == "pending" &&
                 !a2["explain"]["wouldFitIf"].empty();
        },
        kTimeout))
        << a2.dump(2);
  }

  // The token: /api/ needs it, the probes and /metrics do not; the summary.
  void CheckTokenAndSummary() {
    // The token: /api/ needs it, the probes and /metrics do not.
    long status = 0;
    Get("/api/v1/summary", "", &status);
    EXPECT_EQ(status, 401);
    Get("/api/v1/summary", "wrong", &status);
    EXPECT_EQ(status, 401);
    for (const char* open : {"/metrics", "/healthz", "/readyz"}) {
      KubeConfig plain;
      plain.server = server_;
      auto r = KubeClient(plain).Get(open);
      ASSERT_TRUE(r.ok()) << open;
      EXPECT_EQ(r->status, 200) << open;
    }

    json summary = Get("/api/v1/summary", "s3cret");
    EXPECT_EQ(summary["schedulerName"], "tessera");
    EXPECT_EQ(summary["leader"], true);
    EXPECT_EQ(summary["nodes"], 2);
    EXPECT_EQ(summary["gpus"], 16);
    EXPECT_EQ(summary["gpusAllocated"], 8);
    EXPECT_EQ(summary["admittedWorkloads"], 1);
    EXPECT_EQ(summary["pendingWorkloads"], 1);
  }

  // The queue, a1's pods on their nodes (`gpus_by_node` gets their GPUs), a2's explanation.
  void CheckQueuesAndWorkloads(const json& a2, std::map<std::string, std::set<int>>& gpus_by_node) {
    json queues = Get("/api/v1/queues", "s3cret");
    ASSERT_EQ(queues["items"].size(), 1u) << queues.dump(2);
    const json& q = queues["items"][0];
    EXPECT_EQ(q["name"], "team-a");
    EXPECT_EQ(q["admitted"], 1);
    EXPECT_EQ(q["pending"]["active"].get<int>() + q["pending"]["inadmissible"].get<int>(), 1);
    EXPECT_EQ(q["pendingByReason"], json({{"quota", 1}}));
    for (const json& r : q["resources"]) {
      if (r["resource"] != "nvidia.com/gpu") continue;
      EXPECT_EQ(r["flavor"], "default");
      EXPECT_EQ(r["nominal"], 8);
      EXPECT_EQ(r["used"], 8);
      EXPECT_EQ(r["borrowed"], 0);
    }

    json a1 = Get("/api/v1/workloads/team-a/a1", "s3cret");
    EXPECT_EQ(a1["state"], "admitted");
    EXPECT_EQ(a1["clusterQueue"], "team-a");
    EXPECT_EQ(a1["localQueue"], "lq");
    EXPECT_EQ(a1["gpus"], 8);
    ASSERT_EQ(a1["pods"].size(), 8u);
    // No GPU given twice.
    for (const json& p : a1["pods"]) {
      ASSERT_TRUE(p["node"].is_string()) << p.dump();
      ASSERT_EQ(p["gpuIndices"].size(), 1u) << p.dump();
      EXPECT_TRUE(gpus_by_node[p["node"]].insert(p["gpuIndices"][0].get<int>()).second);
      // The node the API names is the one the pod is bound to.
      json pod = cluster_->Get("/api/v1/namespaces/team-a/pods/" + p["name"].get<std::string>());
      EXPECT_EQ(pod["spec"]["nodeName"], p["node"]);
    }
    EXPECT_EQ(a2["reason"].get<std::string>().find("ClusterQueue team-a") != std::string::npos,
              true)
        << a2["reason"];
    EXPECT_EQ(a2["explain"]["wouldFitIf"][0].get<std::string>().rfind(
                  "4 more nvidia.com/gpu of flavor default free to ClusterQueue team-a", 0),
              0u)
        << a2["explain"];
    long missing = 0;
    json nope = Get("/api/v1/workloads/team-a/nope", "s3cret", &missing);
    EXPECT_EQ(missing, 404);
    EXPECT_TRUE(nope.contains("error"));
  }

  // The GPU map names a1's GPUs; cost since start, a1's GPU-hours at $3.60, by team.
  void CheckNodesAndCost(const std::map<std::string, std::set<int>>& gpus_by_node) {
    json nodes = Get("/api/v1/nodes", "s3cret");
    ASSERT_EQ(nodes["items"].size(), 2u);
    int held = 0;
    for (const json& n : nodes["items"]) {
      EXPECT_EQ(n["gpus"], 8);
      for (const json& s : n["gpuSlots"]) {
        if (s["workload"].is_null()) continue;
        EXPECT_EQ(s["workload"], "team-a/a1");
        EXPECT_EQ(s["clusterQueue"], "team-a");
        EXPECT_TRUE(gpus_by_node.at(n["name"]).count(s["index"].get<int>())) << s.dump();
        ++held;
      }
    }
    EXPECT_EQ(held, 8);

    json cost;
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          cost = Get("/api/v1/cost?by=label:team", "s3cret");
          return cost.is_object() && cost["rows"].size() == 1 &&
                 cost["rows"][0]["gpuHours"].get<double>() > 0;
        },
        kTimeout))
        << cost.dump(2);
    EXPECT_EQ(cost["rows"][0]["key"], "alpha");
    EXPECT_EQ(cost["rows"][0]["jobs"], 1);
    EXPECT_NEAR(cost["rows"][0]["allocatedDollars"].get<double>(),
                cost["rows"][0]["gpuHours"].get<double>() * 3.6, 1e-9);
    EXPECT_TRUE(Get("/api/v1/trends", "s3cret")["points"].is_array());
  }

  // The CLI against the same serve: tables, JSON, explain, and its errors.
  void CheckCli() {
    const std::string flags = " --server " + server_ + " --token-file " + token_file_;
    int code = -1;
    std::string out = Tessera("get workloads -n team-a" + flags, &code);
    std::cout << "$ tessera get workloads -n team-a\n" << out;  // docs/observability.md's example
    EXPECT_EQ(code, 0) << out;
    EXPECT_TRUE(std::regex_search(
        out, std::regex(R"(\na1 +PodGroup/a1 +team-a +admitted +0 +8 +default +\S+ +- +- *\n)")))
        << out;
    EXPECT_TRUE(std::regex_search(
        out, std::regex(
                 R"(\na2 +PodGroup/a2 +team-a +pending +0 +4 +- +\S+ +\S+ )"
                 R"(+needs 4 nvidia.com/gpu)")))
        << out;
    out = Tessera("get workloads -o json" + flags, &code);
    EXPECT_EQ(code, 0);
    EXPECT_EQ(json::parse(out, nullptr, false)["items"].size(), 2u) << out;
    out = Tessera("get queues" + flags, &code);
    std::cout << "$ tessera get queues\n" << out;
    EXPECT_EQ(code, 0) << out;
    EXPECT_TRUE(std::regex_search(
        out, std::regex(R"(\nteam-a +- +BestEffortFIFO +[01] +[01] +1 +default:8/8 +0 )")))
        << out;
    out = Tessera("get nodes" + flags, &code);
    std::cout << "$ tessera get nodes\n" << out;
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("team-a/a1(8)"), std::string::npos) << out;
    out = Tessera("explain team-a/a2" + flags, &code);
    std::cout << "$ tessera explain team-a/a2\n" << out;
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("State:          pending"), std::string::npos) << out;
    EXPECT_NE(out.find("  - 4 more nvidia.com/gpu of flavor default free to ClusterQueue team-a"),
              std::string::npos)
        << out;
    // Errors: a clear message and a non-zero exit, never a crash.
    out = Tessera("explain team-a/nope" + flags, &code);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("no workload team-a/nope"), std::string::npos) << out;
    out = Tessera("get queues --server " + server_, &code);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("401"), std::string::npos) << out;
    out = Tessera("get queues --server http://127.0.0.1:1", &code);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("cannot reach tessera serve at http://127.0.0.1:1"), std::string::npos)
        << out;
  }

  int pid_ = -1;
  std::string token_file_;
  std::string server_;
};

TEST_F(K8sApi, ApiAndCliAfterARunningAndAPendingGang) {
  json a2;
  ASSERT_NO_FATAL_FAILURE(ServeARunningAndAPendingGang(a2));
  ASSERT_NO_FATAL_FAILURE(CheckTokenAndSummary());
  std::map<std::string, std::set<int>> gpus_by_node;
  ASSERT_NO_FATAL_FAILURE(CheckQueuesAndWorkloads(a2, gpus_by_node));
  ASSERT_NO_FATAL_FAILURE(CheckNodesAndCost(gpus_by_node));
  CheckCli();
}

}  // namespace
}  // namespace tessera::k8s
