// The controller against a scripted API server (cpp-httplib), for what a real kube-apiserver
// never does: refuse a protobuf Binding with 415 Unsupported Media Type, as a proxy in front of it
// might. Tessera binds the pod with JSON instead, and keeps to JSON afterwards. Everything else
// the controller does is tested against a real API server (tests/k8s/integration_test.cc).
#include "k8s/controller.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/http_testing.h"
#include "k8s/metrics.h"
#include "k8s/proto.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

json Node(const std::string& name) {
  json cap = {{"cpu", "96"}, {"memory", "1024Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status",
           {{"capacity", cap},
            {"allocatable", cap},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json Pod(const std::string& name) {
  json res = {{"cpu", "1"}, {"nvidia.com/gpu", "1"}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", "d"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
      {"spec",
       {{"schedulerName", "tessera"},
        {"containers", {{{"name", "main"}, {"resources", {{"requests", res}, {"limits", res}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

// Serves one node and the pods given, empty lists of the other built-in kinds, 404 for the
// CRDs, watches that stay quiet, and pods/binding that refuses protobuf bodies.
class ProxyLikeServer {
 public:
  explicit ProxyLikeServer(std::vector<std::string> pods) : pods_(std::move(pods)) {
    server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("watch")) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        res.set_content("", "application/json");
        return;
      }
      json items = json::array();
      if (req.path == "/api/v1/nodes") {
        items.push_back(Node("gpu-0"));
      } else if (req.path == "/api/v1/pods") {
        for (const auto& p : pods_) items.push_back(Pod(p));
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
                   const std::string type = req.get_header_value("Content-Type");
                   binds_.push_back({std::string(req.matches[1]), type, req.body});
                   if (type.find("protobuf") != std::string::npos) {
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
    server_.Patch(R"(/.*)", [](const httplib::Request&, httplib::Response& res) {
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

 private:
  const std::vector<std::string> pods_;
  httplib::Server server_;
  std::mutex mu_;
  std::vector<Bind> binds_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 200; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

TEST(Controller, BindsWithJsonOnceAServerRefusesProtobufBindings) {
  ProxyLikeServer server({"p0", "p1"});
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

}  // namespace
}  // namespace tessera::k8s
