// Test helper: serves a scripted cpp-httplib server (routes registered beforehand) on a free
// port of 127.0.0.1 until destroyed, with a KubeClient that talks to it. Used by the unit tests
// of the informer, the Event recorder and the controller, which stand in for an API server.
//
// Thread-safety: construct and destroy on one thread; handlers run on the server's threads.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <thread>

#include "fmt/format.h"
#include "k8s/kube_client.h"

namespace tessera::k8s::testing {

class Serving {
 public:
  explicit Serving(httplib::Server& server) : server_(server) {
    server_.set_keep_alive_max_count(1);  // so that stop() need not wait for idle connections
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the listener runs would be lost, and the destructor would wait forever.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    KubeConfig kc;
    kc.server = fmt::format("http://127.0.0.1:{}", port_);
    client_ = std::make_unique<KubeClient>(kc);
  }
  ~Serving() {
    server_.stop();
    thread_.join();
  }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;

  int port() const { return port_; }
  KubeClient& client() { return *client_; }

 private:
  httplib::Server& server_;
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<KubeClient> client_;
};

}  // namespace tessera::k8s::testing
