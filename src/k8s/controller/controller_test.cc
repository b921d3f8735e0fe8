// The controller against a scripted API server (cpp-httplib), for what a real kube-apiserver
// does not do, or not on cue:
// - refuse a protobuf Binding with 415 Unsupported Media Type, as a proxy in front of it might:
//   Tessera binds the pod with JSON instead, and keeps to JSON afterwards;
// - answer binds whose watch events never come: a gang's PodGroup status is still written once,
//   as Scheduled, from the answers alone.
// Everything else the controller does is tested against a real API server
// (tests/k8s/integration_test.cc).
#include "k8s/controller/controller.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/proto.h"
#include "k8s/observe/metrics.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

// A pending one-GPU pod of Tessera's in namespace "d", of PodGroup `group` unless empty.
json Pod(const std::string& name, const std::string& group) {
  json res = {{"cpu", "1"}, {"nvidia.com/gpu", "1"}};
  json labels = json::object();
  if (!group.empty()) labels["scheduling.x-k8s.io/pod-group"] = group;
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "d"},
        {"uid", "uid-" + name},
        {"resourceVersion", "1"},
        {"labels", labels}}},
      {"spec",
       {{"schedulerName", "tessera"},
        {"containers", {{{"name", "main"}, {"resources", {{"requests", res}, {"limits", res}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

// Serves one node and the pods given (all of PodGroup `group`, with minMember their number,
// unless `group` is empty), empty lists of the other built-in kinds, 404 for the other CRDs,
// and watches that stay quiet; pods/binding answers 201, or 415 to protobuf bodies when
// `refuse_protobuf`. Binds and PATCHes are recorded.
class ScriptedServer {
 public:
  ScriptedServer(std::vector<std::string> pods, std::string group, bool refuse_protobuf)
      : pods_(std::move(pods)), group_(std::move(group)) {
    server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("watch")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        res.set_content("", "application/json");
        return;
      }
      json items = json::array();
      if (req.path == "/api/v1/nodes") {
        items.push_back(testing::GpuNode("gpu-0"));
      } else if (req.path == "/api/v1/pods") {
        for (const auto& p : pods_) items.push_back(Pod(p, group_));
      } else if (req.path == "/apis/scheduling.x-k8s.io/v1alpha1/podgroups" && !group_.empty()) {
        items.push_back({{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                         {"kind", "PodGroup"},
                         {"metadata", {{"name", group_}, {"namespace", "d"}}},
                         {"spec", {{"minMember", pods_.size()}}}});
      } else if (req.path != "/api/v1/namespaces" &&
                 req.path != "/apis/scheduling.k8s.io/v1/priorityclasses") {
        res.status = 404;
        return;
      }
      json list = {{"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
      res.set_content(list.dump(), "application/json");
    });
    server_.Post(R"(/api/v1/namespaces/d/pods/([^/]+)/binding)",
                 [this, refuse_protobuf](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard<std::mutex> l(mu_);
                   const std::string type = req.get_header_value("Content-Type");
                   binds_.push_back({std::string(req.matches[1]), type, req.body});
                   if (refuse_protobuf && type.find("protobuf") != std::string::npos) {
                     res.status = 415;
                     return;
                   }
                   res.status = 201;
                   res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
                 });
    server_.Post(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 201;  // Events
      res.set_content("{}", "application/json");
    });
    server_.Patch(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      patches_.push_back({req.path, req.body});
      res.set_content("{}", "application/json");
    });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }

  struct Bind {
    std::string pod, content_type, body;
  };
  std::vector<Bind> binds() {
    std::lock_guard<std::mutex> l(mu_);
    return binds_;
  }
  // PATCHes whose path starts with `prefix`: (path, body).
  std::vector<std::pair<std::string, std::string>> patches(const std::string& prefix) {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& p : patches_)
      if (p.first.rfind(prefix, 0) == 0) out.push_back(p);
    return out;
  }

 private:
  const std::vector<std::string> pods_;
  const std::string group_;
  httplib::Server server_;
  std::mutex mu_;
  std::vector<Bind> binds_;
  std::vector<std::pair<std::string, std::string>> patches_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

using testing::WaitFor;

TEST(Controller, BindsWithJsonOnceAServerRefusesProtobufBindings) {
  ScriptedServer server({"p0", "p1"}, "", /*refuse_protobuf=*/true);
  Metrics metrics;
  ControllerOptions o;
  o.protobuf = true;
  o.bind_workers = 1;  // one bind at a time: the second pod's comes after the first's 415
  Controller controller(&server.client(), o, &metrics);
  controller.SetActive(true);
  controller.Start();
  ASSERT_TRUE(WaitFor([&] { return metrics.binds_ok.load() == 2; }))
      << "binds: " << server.binds().size() << ", ok " << metrics.binds_ok.load() << ", error "
      << metrics.binds_error.load();
  controller.Stop();

  auto binds = server.binds();
  ASSERT_EQ(binds.size(), 3u);  // one refused protobuf Binding, then two in JSON
  EXPECT_EQ(binds[0].content_type, proto::kMediaType);
  for (size_t i = 1; i < binds.size(); ++i) {
    EXPECT_EQ(binds[i].content_type, "application/json");
    json b = json::parse(binds[i].body);
    EXPECT_EQ(b["kind"], "Binding");
    EXPECT_EQ(b["metadata"]["name"], binds[i].pod);
    EXPECT_EQ(b["metadata"]["uid"], "uid-" + binds[i].pod);
    EXPECT_EQ(b["target"]["name"], "gpu-0");
    EXPECT_FALSE(
        b["metadata"]["annotations"]["tessera.dev/gpu-indices"].get<std::string>().empty());
  }
  EXPECT_EQ(binds[0].pod, binds[1].pod);  // the refused bind, sent again
  EXPECT_NE(binds[1].pod, binds[2].pod);
  EXPECT_EQ(metrics.binds_error.load(), 0);
}

TEST(Controller, GangStatusIsWrittenOnceFromTheBindAnswersAlone) {
  // The server answers the binds, but its watch never shows the pods bound (a watch that lags
  // behind the answers, stretched without end): the PodGroup is written Scheduled 3/3 once,
  // and never as Scheduling in between (CI saw a Pending 0/3 first once, under load).
  ScriptedServer server({"p0", "p1", "p2"}, "train", /*refuse_protobuf=*/false);
  Metrics metrics;
  ControllerOptions o;
  o.status_period_s = 0.05;  // many status rounds while the test waits
  Controller controller(&server.client(), o, &metrics);
  controller.SetActive(true);
  controller.Start();
  const std::string path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/d/podgroups/train/status";
  ASSERT_TRUE(WaitFor([&] { return !server.patches(path).empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ten more status rounds
  controller.Stop();
  EXPECT_EQ(metrics.binds_ok.load(), 3);
  auto patches = server.patches(path);
  ASSERT_FALSE(patches.empty());
  // Scheduled is written once, last; under load a status round may come before the cycle that
  // binds the gang and write it Pending (or PreScheduling, before all its pods were seen) 0/3
  // first, true then; never Scheduling in between.
  for (size_t i = 0; i + 1 < patches.size(); ++i) {
    json before = json::parse(patches[i].second)["status"];
    EXPECT_TRUE(before["phase"] == "Pending" || before["phase"] == "PreScheduling")
        << patches[i].second;
    EXPECT_EQ(before["scheduled"], 0) << patches[i].second;
  }
  json status = json::parse(patches.back().second)["status"];
  EXPECT_EQ(status["phase"], "Scheduled");
  EXPECT_EQ(status["scheduled"], 3);
}

}  // namespace
}  // namespace tessera::k8s
