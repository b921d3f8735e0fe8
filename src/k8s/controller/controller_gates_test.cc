// Scheduling gates through the controller, against a scripted API server: a PodGroup gang with a
// gated member is not bound, its pods and `tessera explain` (the JSON API's view) say which gate
// holds it; when the watch brings the pod without its gate, the whole gang is bound. (On a real
// API server: integration/podspec_integration_test.cc.)
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

// A one-GPU pod of PodGroup "train", with a gate when `gated`.
json Pod(int i, bool gated, const std::string& rv = "1") {
  json res = {{"cpu", "1"}, {"nvidia.com/gpu", "1"}};
  json spec = {{"schedulerName", "tessera"},
               {"containers", {{{"name", "main"}, {"resources", {{"requests", res}}}}}}};
  if (gated) spec["schedulingGates"] = {{{"name", "example.com/data-ready"}}};
  const std::string name = fmt::format("p{}", i);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "d"},
            {"uid", "uid-" + name},
            {"resourceVersion", rv},
            {"labels", {{"scheduling.x-k8s.io/pod-group", "train"}}}}},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

// Serves one node, PodGroup d/train (minMember 3) and pods p0..p2, p2 gated; Ungate() makes
// the next pods watch bring p2 without its gate. Binds and pod status PATCHes are recorded.
class GateServer {
 public:
  GateServer() {
    server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("watch")) {
        if (req.path == "/api/v1/pods" && ungate_ && !ungate_sent_.exchange(true)) {
          json ev = {{"type", "MODIFIED"}, {"object", Pod(2, false, "2")}};
          res.set_content(ev.dump() + "\n", "application/json");
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        res.set_content("", "application/json");
        return;
      }
      json items = json::array();
      if (req.path == "/api/v1/nodes") {
        items.push_back(testing::GpuNode());
      } else if (req.path == "/api/v1/pods") {
        for (int i = 0; i < 3; ++i) items.push_back(Pod(i, i == 2));
      } else if (req.path == "/apis/scheduling.x-k8s.io/v1alpha1/podgroups") {
        items.push_back({{"metadata", {{"name", "train"}, {"namespace", "d"}}},
                         {"spec", {{"minMember", 3}}}});
      } else if (req.path != "/api/v1/namespaces" &&
                 req.path != "/apis/scheduling.k8s.io/v1/priorityclasses") {
        res.status = 404;
        return;
      }
      json list = {{"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
      res.set_content(list.dump(), "application/json");
    });
    server_.Post(R"(/api/v1/namespaces/d/pods/([^/]+)/binding)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard<std::mutex> l(mu_);
                   binds_.push_back(req.matches[1]);
                   res.status = 201;
                   res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
                 });
    server_.Post(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.status = 201;  // Events
      res.set_content("{}", "application/json");
    });
    server_.Patch(R"(/api/v1/namespaces/d/pods/([^/]+)/status)",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    std::lock_guard<std::mutex> l(mu_);
                    conditions_[req.matches[1]] = json::parse(req.body);
                    res.set_content("{}", "application/json");
                  });
    server_.Patch(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }
  void Ungate() { ungate_ = true; }
  size_t binds() {
    std::lock_guard<std::mutex> l(mu_);
    return binds_.size();
  }
  // The PodScheduled condition last written on the pod (null: none).
  json Condition(const std::string& pod) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = conditions_.find(pod);
    if (it == conditions_.end()) return nullptr;
    return it->second["status"]["conditions"][0];
  }

 private:
  httplib::Server server_;
  std::atomic<bool> ungate_{false}, ungate_sent_{false};
  std::mutex mu_;
  std::vector<std::string> binds_;
  std::map<std::string, json> conditions_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

using testing::WaitFor;

TEST(ControllerGates, GangWithAGatedMemberIsBoundWholeOnceTheGateGoes) {
  GateServer server;
  Metrics metrics;
  ControllerOptions o;
  o.status_period_s = 0.05;  // the JSON API's view, published often
  Controller controller(&server.client(), o, &metrics);
  controller.SetActive(true);
  controller.Start();
  ASSERT_TRUE(WaitFor([&] {
    json gated = server.Condition("p2"), waiting = server.Condition("p0");
    return gated.is_object() && waiting.is_object();
  }));
  EXPECT_EQ(server.Condition("p2")["reason"], "SchedulingGated");
  EXPECT_EQ(server.Condition("p2")["message"], "held by scheduling gates: example.com/data-ready");
  EXPECT_EQ(server.Condition("p0")["reason"], "Unschedulable");
  EXPECT_EQ(server.Condition("p0")["message"],
            "waiting for the gang's pods: 2 of 3 exist without gates; held by scheduling gates: "
            "d/p2 (example.com/data-ready)");
  EXPECT_EQ(server.binds(), 0u);
  // What `tessera explain d/train` reads (the JSON API's view) names the gate too.
  ASSERT_TRUE(WaitFor([&] {
    auto view = controller.view();
    return view && !view->workloads.empty();
  }));
  const ViewWorkload& w = controller.view()->workloads.front();
  EXPECT_EQ(w.name, "train");
  EXPECT_EQ(w.state, "waiting-for-pods");
  EXPECT_NE(w.reason.find("held by scheduling gates: d/p2 (example.com/data-ready)"),
            std::string::npos)
      << w.reason;

  server.Ungate();
  ASSERT_TRUE(WaitFor([&] { return server.binds() == 3; })) << "binds: " << server.binds();
  controller.Stop();
  EXPECT_EQ(metrics.binds_ok.load(), 3);
}

}  // namespace
}  // namespace tessera::k8s
