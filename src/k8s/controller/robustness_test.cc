// `tessera serve` when the API server misbehaves, against scripted servers (cpp-httplib):
// - a server that accepts lists, watches and Lease requests and never answers: the controller's
//   Start() and Stop(), and the leader elector's Stop(), return within a bound well under a
//   pod's grace period;
// - no server at first (a port nothing listens on), then one: the first contact retries until it
//   answers, and the controller is ready only once its caches are synced;
// - an outage mid-run: /readyz says 503 while the informers fail, 200 once they have relisted.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/leader_election.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool WaitFor(const std::function<bool()>& cond, double seconds = 20) {
  const auto t0 = Clock::now();
  while (SecondsSince(t0) < seconds) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return cond();
}

// What the issue saw: an API server that takes requests and answers none of them for 60 s (the
// client's request timeout). The handlers end early once `release` is set, so that the server
// can be stopped at the end of the test.
void Stall(const std::atomic<bool>& release) {
  const auto t0 = Clock::now();
  while (!release && SecondsSince(t0) < 60)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// The bound asserted on Stop(): correctness, not speed. Stop's own bound is about 4 s
// (stop_drain_s plus a second); the stall is 60 s.
constexpr double kStopBoundS = 10;

TEST(Shutdown, ControllerStopIsBoundedWhileTheServerStalls) {
  std::atomic<bool> release{false};
  std::atomic<int> requests{0};
  httplib::Server server;
  server.new_task_queue = [] { return new httplib::ThreadPool(32); };
  server.Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    Stall(release);
    res.status = 503;
  });
  testing::Serving serving(server);
  Metrics metrics;
  ControllerOptions options;
  Controller controller(&serving.client(), options, &metrics);
  // Start sends nothing itself and waits for nothing (it used to ask for policy/v1 first).
  const auto t_start = Clock::now();
  controller.Start();
  EXPECT_LT(SecondsSince(t_start), kStopBoundS) << "Start waited on the stalled server";
  // Every informer's first list is in flight and unanswered.
  ASSERT_TRUE(WaitFor([&] { return requests >= 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(controller.ready());
  const auto t0 = Clock::now();
  controller.Stop();
  const double took = SecondsSince(t0);
  EXPECT_LT(took, kStopBoundS) << "Stop waited on the stalled lists";
  release = true;
}

// A Lease API of one object (coordination.k8s.io/v1, namespace ns, name tessera) that stores
// what is POSTed or PUT; while `stall` is set every request hangs (Stall) until `release`.
class LeaseServer {
 public:
  LeaseServer() {
    const std::string path = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";
    server_.Get(path + "/tessera", [this](const httplib::Request&, httplib::Response& res) {
      if (stall) return Stall(release);
      std::lock_guard<std::mutex> l(mu_);
      if (lease_.empty()) {
        res.status = 404;
        return;
      }
      res.set_content(lease_, "application/json");
    });
    server_.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      Store(req, res, 201);
    });
    server_.Put(path + "/tessera", [this](const httplib::Request& req, httplib::Response& res) {
      Store(req, res, 200);
    });
  }
  httplib::Server& server() { return server_; }
  // The holder of the stored Lease.
  std::string holder() {
    std::lock_guard<std::mutex> l(mu_);
    return nlohmann::json::parse(lease_)["spec"].value("holderIdentity", "?");
  }

  std::atomic<bool> stall{false};
  std::atomic<bool> release{false};

 private:
  void Store(const httplib::Request& req, httplib::Response& res, int status) {
    if (stall) return Stall(release);
    std::lock_guard<std::mutex> l(mu_);
    auto obj = nlohmann::json::parse(req.body);
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    lease_ = obj.dump();
    res.status = status;
    res.set_content(lease_, "application/json");
  }

  httplib::Server server_;
  std::mutex mu_;
  std::string lease_;  // the stored Lease, JSON; empty: none
  int rv_ = 0;
};

LeaderElectionOptions TestElection() {
  LeaderElectionOptions le;
  le.ns = "ns";
  le.identity = "me";
  le.retry_period_s = 0.1;
  return le;
}

TEST(Shutdown, LeaderElectorStopIsBoundedWhileTheServerStalls) {
  LeaseServer leases;
  testing::Serving serving(leases.server());
  std::atomic<bool> leading{false};
  LeaderElector elector(&serving.client(), TestElection(), [&](bool l) { leading = l; });
  elector.Start();
  ASSERT_TRUE(WaitFor([&] { return leading.load(); }));
  leases.stall = true;  // from now on, the renews and the release hang
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = Clock::now();
  elector.Stop();
  const double took = SecondsSince(t0);
  EXPECT_LT(took, kStopBoundS) << "Stop waited on the stalled renew or release";
  EXPECT_FALSE(leading);
  leases.release = true;
}

TEST(Shutdown, LeaderElectorReleasesTheLeaseOnStop) {
  LeaseServer leases;
  testing::Serving serving(leases.server());
  std::atomic<bool> leading{false};
  LeaderElector elector(&serving.client(), TestElection(), [&](bool l) { leading = l; });
  elector.Start();
  ASSERT_TRUE(WaitFor([&] { return leading.load(); }));
  elector.Stop();
  EXPECT_EQ(leases.holder(), "");
}

TEST(Shutdown, AReplicaStoppingTakesNoLeaseButALeaderStillRenews) {
  LeaseServer leases;
  testing::Serving serving(leases.server());
  std::atomic<bool> leading{false};
  LeaderElector follower(&serving.client(), TestElection(), [&](bool l) { leading = l; });
  follower.StopAcquiring();  // the signal came before it ever led
  follower.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // five retry periods
  EXPECT_FALSE(leading) << "a replica shutting down took the free lease";
  follower.Stop();

  LeaderElector leader(&serving.client(), TestElection(), [&](bool l) { leading = l; });
  leader.Start();
  ASSERT_TRUE(WaitFor([&] { return leading.load(); }));
  leader.StopAcquiring();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(leading) << "a leader draining its binds gave the lease up before Stop";
  EXPECT_EQ(leases.holder(), "me");
  leader.Stop();
  EXPECT_EQ(leases.holder(), "");
}

// A minimal API server: every list is empty, every watch ends after a while with nothing, and
// while `down` is set everything is answered 500 (watches end at once).
class EmptyApiServer {
 public:
  explicit EmptyApiServer(int port) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
      if (down) {
        res.status = 500;
        res.set_content(R"({"kind":"Status","code":500,"message":"down"})", "application/json");
        return;
      }
      if (req.path == "/version") {
        res.set_content(R"({"major":"1","minor":"20"})", "application/json");
        return;
      }
      if (req.has_param("watch")) {
        const auto t0 = Clock::now();
        while (!down && !closing && SecondsSince(t0) < 0.3)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        res.set_content("", "application/json");
        return;
      }
      res.set_content(R"({"kind":"List","metadata":{"resourceVersion":"7"},"items":[]})",
                      "application/json");
    });
    serving_ = std::make_unique<testing::Serving>(server_, port);
  }
  ~EmptyApiServer() {
    closing = true;
    serving_.reset();
  }
  std::atomic<bool> down{false};

 private:
  std::atomic<bool> closing{false};
  httplib::Server server_;
  std::unique_ptr<testing::Serving> serving_;
};

TEST(StartUp, WaitForApiServerRetriesUntilItAnswers) {
  const int port = testing::FreePort();
  KubeConfig kc;
  kc.server = fmt::format("http://127.0.0.1:{}", port);
  KubeClient client(kc);
  std::atomic<bool> stop{false};
  std::atomic<bool> reached{false};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    RetryBackoff backoff;
    backoff.initial = std::chrono::milliseconds(20);
    backoff.max = std::chrono::milliseconds(200);
    reached = WaitForApiServer(client, stop, backoff);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(done) << "gave up on an unreachable server instead of retrying";
  {
    EmptyApiServer api(port);
    EXPECT_TRUE(WaitFor([&] { return done.load(); }));
    EXPECT_TRUE(reached);
  }
  waiter.join();

  // A signal while waiting ends the wait.
  done = false;
  std::thread waiter2([&] {
    reached = WaitForApiServer(client, stop);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  EXPECT_TRUE(WaitFor([&] { return done.load(); }, 3));
  EXPECT_FALSE(reached);
  waiter2.join();
}

long Probe(int port, const char* path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  auto r = c.Get(path);
  return r ? r->status : -1;
}

TEST(Readiness, NotReadyUntilSyncedAndWhileTheServerIsDown) {
  const int port = testing::FreePort();
  KubeConfig kc;
  kc.server = fmt::format("http://127.0.0.1:{}", port);
  KubeClient client(kc);
  Metrics metrics;
  Controller controller(&client, ControllerOptions{}, &metrics);
  MetricsServer probes(
      &metrics, [] { return true; }, [&] { return controller.ready(); });
  const int probe_port = probes.Start("127.0.0.1", 0);
  ASSERT_GT(probe_port, 0);

  // Nothing listens yet: alive, not ready.
  controller.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(Probe(probe_port, "/healthz"), 200);
  EXPECT_EQ(Probe(probe_port, "/readyz"), 503);
  {
    auto api = std::make_unique<EmptyApiServer>(port);
    EXPECT_TRUE(WaitFor([&] { return Probe(probe_port, "/readyz") == 200; }))
        << "not ready once the server came up";

    // The server answers errors: not ready; then it recovers: ready again after the relists.
    api->down = true;
    EXPECT_TRUE(WaitFor([&] { return Probe(probe_port, "/readyz") == 503; }))
        << "/readyz stayed 200 while the informers failed";
    EXPECT_EQ(Probe(probe_port, "/healthz"), 200);
    api->down = false;
    EXPECT_TRUE(WaitFor([&] { return Probe(probe_port, "/readyz") == 200; }));

    // The server goes away (connections refused), then comes back on the same port.
    api.reset();
    EXPECT_TRUE(WaitFor([&] { return Probe(probe_port, "/readyz") == 503; }));
    api = std::make_unique<EmptyApiServer>(port);
    EXPECT_TRUE(WaitFor([&] { return Probe(probe_port, "/readyz") == 200; }));
    controller.Stop();
  }
  probes.Stop();
}

}  // namespace
}  // namespace tessera::k8s
