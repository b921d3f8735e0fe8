// What bench/k8s_bench.cc's modes share (bench/k8s_two_gangs.cc is the --two-gangs mode).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "fmt/format.h"
#include "k8s/client/informer.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::bench {

using testing::json;
using testing::TestCluster;
using Clock = std::chrono::steady_clock;

struct Flags {
  int nodes = 5000;
  int gpus = 8;
  int pods = 10000;
  int gangs = 1000;
  int gang_size = 8;
  int bind_workers = 64;
  bool kube_scheduler = true;
  bool events = true;
  bool protobuf = true;  // Tessera's pod and node informers, and the benchmark's watch
  int profile_s = 0;     // > 0: a CPU profile of the API server during Tessera's first round
  bool two_gangs = false;  // the two-gang scenario instead of the binding rates
  int two_gang_nodes = 2;
  int two_gang_size = 12;
  double wait_s = 20;  // two-gang scenario: how long each step waits
  // Not a flag: kube-scheduler's gangs go through the Workload API where the server serves it.
  bool workload_api = false;
};

std::string KubeSchedulerName();
// kube-scheduler against `c`, with the API server's feature gates; returns its pid.
int SpawnKubeScheduler(TestCluster& c, const std::string& log);
// fn(0..n-1) on `threads` threads.
void Parallel(int n, int threads, const std::function<void(int)>& fn);
// `n` Ready fake nodes of `gpus` GPUs each.
void CreateNodes(TestCluster& c, int n, int gpus);
// A gang's group objects: a scheduler-plugins PodGroup, or (workload_api) a Workload and its
// PodGroup; its pods, and their deletion.
void CreateGangObjects(TestCluster& c, const std::string& ns, const std::string& group, int size,
                       bool workload_api);
json GangPod(TestCluster& c, const std::string& ns, const std::string& group, int i,
             const std::string& scheduler, bool workload_api);
void DeleteGangObjects(TestCluster& c, const std::string& ns, const std::string& group,
                       bool workload_api);
// The --two-gangs mode (bench/k8s_two_gangs.cc).
int TwoGangs(TestCluster& c, const Flags& f);

// Counts the pods of a namespace that are bound, from a watch, with the times of the first and
// last bind seen.
class BindWatcher {
 public:
  BindWatcher(KubeClient* client, const std::string& ns, bool protobuf)
      : informer_(
            client, "bench-pods", fmt::format("/api/v1/namespaces/{}/pods", ns),
            [this](WatchEvent ev) { OnEvent(std::move(ev)); }, /*optional=*/false, protobuf) {
    informer_.Start();
  }
  ~BindWatcher() { informer_.Stop(); }

  int bound() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(bound_.size());
  }
  int seen() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(all_.size());
  }
  // The bound pods whose names start with `prefix`.
  int bound(const std::string& prefix) {
    std::lock_guard<std::mutex> l(mu_);
    int n = 0;
    for (auto it = bound_.lower_bound(prefix); it != bound_.end() && it->rfind(prefix, 0) == 0; ++it)
      ++n;
    return n;
  }
  Clock::time_point first() {
    std::lock_guard<std::mutex> l(mu_);
    return first_;
  }
  Clock::time_point last() {
    std::lock_guard<std::mutex> l(mu_);
    return last_;
  }

 private:
  void Note(const json& pod) {
    std::string name = pod["metadata"].value("name", "");
    all_.insert(name);
    if (pod["spec"].value("nodeName", "").empty() || bound_.count(name)) return;
    bound_.insert(name);
    auto now = Clock::now();
    if (bound_.size() == 1) first_ = now;
    last_ = now;
  }
  void OnEvent(WatchEvent ev) {
    std::lock_guard<std::mutex> l(mu_);
    if (ev.type == WatchEvent::Type::kReplace) {
      for (const auto& p : ev.objects) Note(p);
    } else if (ev.type == WatchEvent::Type::kDeleted) {
      std::string name = ev.object["metadata"].value("name", "");
      all_.erase(name);
      bound_.erase(name);
    } else {
      Note(ev.object);
    }
  }

  std::mutex mu_;
  std::set<std::string> bound_, all_;
  Clock::time_point first_{}, last_{};
  Informer informer_;
};

}  // namespace tessera::k8s::bench
