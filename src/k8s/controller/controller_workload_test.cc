// The controller against a scripted API server that serves the Workload API as Kubernetes 1.36
// does (scheduling.k8s.io/v1alpha2 only; no 1.36 control plane is built for the integration
// tests): the informer finds that version, the gang waits for its PodGroup's minCount, binds
// whole, and what the PodGroup sets that Tessera does not act on is said in a Warning Event.
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

// A pending one-GPU pod of Tessera's in namespace "d" naming PodGroup "train".
json Pod(const std::string& name) {
  json res = {{"nvidia.com/gpu", "1"}};
  return {{"metadata",
           {{"name", name}, {"namespace", "d"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
          {"spec",
           {{"schedulerName", "tessera"},
            {"schedulingGroup", {{"podGroupName", "train"}}},
            {"containers", {{{"name", "main"}, {"resources", {{"requests", res}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

// A 1.36 PodGroup (v1alpha2: podGroupTemplateRef, disruptionMode a string) of gang `min_count`,
// with a topology constraint Tessera does not act on.
json PodGroupV1alpha2(int min_count) {
  return {{"metadata", {{"name", "train"}, {"namespace", "d"}, {"uid", "uid-train"}}},
          {"spec",
           {{"podGroupTemplateRef",
             {{"workload", {{"workloadName", "job"}, {"podGroupTemplateName", "workers"}}}}},
            {"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}},
            {"schedulingConstraints", {{"topology", {{{"key", "example.com/rack"}}}}}},
            {"disruptionMode", "PodGroup"}}}};
}

// Serves a node, two pods and PodGroup d/train at /apis/scheduling.k8s.io/v1alpha2 only; 404
// for the other versions and CRDs; quiet watches. Records binds, Events and pod status patches.
class Server136 {
 public:
  explicit Server136(int min_count) {
    server_.Get(R"(/.*)", [min_count](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("watch")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        res.set_content("", "application/json");
        return;
      }
      json items = json::array();
      if (req.path == "/api/v1/nodes") {
        items.push_back(testing::GpuNode());
      } else if (req.path == "/api/v1/pods") {
        items = {Pod("w-0"), Pod("w-1")};
      } else if (req.path == "/apis/scheduling.k8s.io/v1alpha2/podgroups") {
        items.push_back(PodGroupV1alpha2(min_count));
      } else if (req.path != "/api/v1/namespaces" &&
                 req.path != "/apis/scheduling.k8s.io/v1/priorityclasses") {
        res.status = 404;
        return;
      }
      res.set_content(json({{"metadata", {{"resourceVersion", "1"}}}, {"items", items}}).dump(),
                      "application/json");
    });
    server_.Post(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      posts_.push_back({req.path, req.body});
      res.status = 201;
      res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
    });
    server_.Patch(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      posts_.push_back({req.path, req.body});
      res.set_content("{}", "application/json");
    });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }
  // Bodies of the POSTs and PATCHes whose path ends with `suffix`.
  std::vector<json> Writes(const std::string& suffix) {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<json> out;
    for (const auto& [path, body] : posts_)
      if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(),
                                                       suffix) == 0)
        out.push_back(json::parse(body, nullptr, false));
    return out;
  }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> posts_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

using testing::WaitFor;

TEST(ControllerWorkloadApi, GangOfA136PodGroupBindsWholeAndItsTopologyIsSaidNotRead) {
  Server136 server(/*min_count=*/2);
  Metrics metrics;
  ControllerOptions o;
  o.protobuf = false;
  Controller controller(&server.client(), o, &metrics);
  controller.SetActive(true);
  controller.Start();
  ASSERT_TRUE(WaitFor([&] { return metrics.binds_ok.load() == 2; }));
  auto unsupported = [&] {
    std::vector<json> out;
    for (const json& e : server.Writes("/events"))
      if (e.is_object() && e.value("reason", "") == "UnsupportedField") out.push_back(e);
    return out;
  };
  ASSERT_TRUE(WaitFor([&] { return !unsupported().empty(); }));
  controller.Stop();
  const json e = unsupported()[0];
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["involvedObject"]["kind"], "PodGroup");
  EXPECT_EQ(e["involvedObject"]["name"], "train");
  EXPECT_EQ(e["message"].get<std::string>().rfind(
                "spec.schedulingConstraints.topology (example.com/rack): not read by Tessera", 0),
            0u)
      << e["message"];
  EXPECT_EQ(unsupported().size(), 1u);  // once, not at every cycle
}

TEST(ControllerWorkloadApi, GangWaitsForItsMinCountNotThePodsThatExist) {
  Server136 server(/*min_count=*/3);
  Metrics metrics;
  ControllerOptions o;
  o.protobuf = false;
  Controller controller(&server.client(), o, &metrics);
  controller.SetActive(true);
  controller.Start();
  auto said = [&] {
    for (const json& p : server.Writes("/pods/w-0/status"))
      if (p.dump().find("waiting for the gang's pods: 2 of 3 exist") != std::string::npos)
        return true;
    return false;
  };
  ASSERT_TRUE(WaitFor(said));
  controller.Stop();
  EXPECT_EQ(metrics.binds_ok.load(), 0);
}

}  // namespace
}  // namespace tessera::k8s
