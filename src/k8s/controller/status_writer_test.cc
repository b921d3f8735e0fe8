// The status writer against a scripted API server (cpp-httplib): writes to one pod's condition
// are sent one at a time and the newest is the one that stays, even when an older write is slow
// and other workers are free. Before, an older "waiting for the gang's pods: 1 of 2 exist" could
// land after the newer "expected to start at ..." and stay on the pod (the loop does not rewrite
// a condition it believes written).
#include "k8s/controller/status_writer.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

class PodStatusServer {
 public:
  PodStatusServer() {
    server_.Patch(R"(/api/v1/namespaces/d/pods/([^/]+)/status)", [this](const httplib::Request& req,
                                                                        httplib::Response& res) {
      const json body = json::parse(req.body);
      const std::string message = body["status"]["conditions"][0].value("message", "");
      // The first write is slow: later ones would overtake it on other workers.
      if (message == "first") std::this_thread::sleep_for(std::chrono::milliseconds(400));
      {
        std::lock_guard<std::mutex> l(mu_);
        arrived_.push_back(req.matches[1].str() + ": " + message);
      }
      res.set_content("{}", "application/json");
    });
    server_.Post("/api/v1/namespaces/d/events",
                 [](const httplib::Request& req, httplib::Response& res) {
                   res.status = 201;
                   res.set_content(req.body, "application/json");
                 });
    serving_ = std::make_unique<testing::Serving>(server_);
  }

  KubeClient& client() { return serving_->client(); }
  std::vector<std::string> arrived() {
    std::lock_guard<std::mutex> l(mu_);
    return arrived_;
  }

 private:
  httplib::Server server_;
  std::unique_ptr<testing::Serving> serving_;
  std::mutex mu_;
  std::vector<std::string> arrived_;
};

PodInfo Pod(const std::string& name) {
  PodInfo p;
  p.ns = "d";
  p.name = name;
  p.uid = "uid-" + name;
  return p;
}

TEST(StatusWriter, TheNewestConditionOfAPodIsTheOneThatStays) {
  PodStatusServer server;
  std::atomic<bool> stop{false};
  ControllerOptions o;
  o.status_workers = 4;
  o.protobuf = false;
  {
    StatusWriter writer(&server.client(), o, stop);
    writer.Unschedulable(Pod("a"), "first", true);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // "first" is in flight
    writer.Unschedulable(Pod("a"), "second", true);
    writer.Unschedulable(Pod("a"), "third", true);
    writer.Unschedulable(Pod("b"), "other pod", true);
  }  // the destructor sends what is queued
  const std::vector<std::string> arrived = server.arrived();
  ASSERT_FALSE(arrived.empty());
  std::vector<std::string> a;
  for (const auto& s : arrived)
    if (s.rfind("a: ", 0) == 0) a.push_back(s);
  // "second" was replaced by "third" before it was sent.
  EXPECT_EQ(a, (std::vector<std::string>{"a: first", "a: third"}));
  EXPECT_NE(std::find(arrived.begin(), arrived.end(), "b: other pod"), arrived.end());
  // Pod b's write did not wait for pod a's slow one: it arrived before it.
  EXPECT_EQ(arrived.front(), "b: other pod");
}

}  // namespace
}  // namespace tessera::k8s
