// Test helper: serves a scripted cpp-httplib server (routes registered beforehand) on a free
// port of 127.0.0.1 (or the port given: a server started again where one was) until destroyed,
// with a KubeClient that talks to it. FreePort() finds a port nothing listens on. Used by the unit
// tests of the informer, the Event recorder and the controller, which stand in for an API server.
//
// Thread-safety: construct and destroy on one thread; handlers run on the server's threads.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "fmt/format.h"
#include "k8s/client/kube_client.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s::testing {

// Polls `cond` every 50 ms for up to 10 s; returns its last value.
inline bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 200; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

// A Ready node with 96 CPUs, 1 TiB and 8 GPUs, as a scripted server lists it.
inline nlohmann::json GpuNode(const std::string& name = "gpu-0") {
  nlohmann::json cap = {
      {"cpu", "96"}, {"memory", "1024Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
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

class Serving {
 public:
  explicit Serving(httplib::Server& server, int port = 0) : server_(server) {
    server_.set_keep_alive_max_count(1);  // so that stop() need not wait for idle connections
    if (port > 0) {
      for (int i = 0; i < 100 && !server_.bind_to_port("127.0.0.1", port); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      port_ = port;
    } else {
      port_ = server_.bind_to_any_port("127.0.0.1");
    }
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

// A port of 127.0.0.1 that nothing listens on (it was free a moment ago); -1 if none was given.
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace tessera::k8s::testing
