// Kubernetes mode under faults (issue "Hard to break"), on a real kube-apiserver and etcd on
// 127.0.0.1: two `tessera serve --leader-elect` replicas schedule a steady load of one-GPU pods
// and PodGroup gangs (each deleted a few seconds after it was seen bound, as if it finished),
// while the run kills the API server with SIGKILL and starts it again, kills the leading
// replica with SIGKILL (binds in flight) and starts it again, and hands the lease over with
// SIGTERM, and kills etcd with SIGKILL and starts it again on its data. Counted, and printed as a
// table (docs/kubernetes.md keeps the figures):
//   pods lost       pods that never got bound although the cluster had room for them by the end
//   GPUs twice      a GPU index of a node held by two bound pods at the same time
//   gangs partial   a PodGroup seen with some but not all of its minMember pods bound, for longer
//                   than the settle time (a gang stuck half-placed, holding GPUs)
//   recovery        per fault: seconds from the fault until the next bind
//
//   k8s_faults TESSERA_BINARY [--seconds 90] [--nodes 4] [--gpus 8] [--rounds 2]
//              [--per-tick 1] [--life 3]
//
// Exits 0 when the counts are 0, 0, 0; 1 otherwise; 2 when no cluster could be started.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string tessera;
  double seconds = 90;
  int nodes = 4;
  int gpus = 8;
  int rounds = 2;    // each round: API server SIGKILL, leader SIGKILL, hand-over, etcd SIGKILL
  int per_tick = 1;  // workloads created every 0.4 s
  double life = 3;   // seconds a bound pod runs before the run deletes it (it "finished")
};

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int ReadPid(const std::string& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return pid;
}

// One `tessera serve` replica.
struct Replica {
  std::string identity;
  std::string log;
  int pid = -1;
};

class FaultRun {
 public:
  FaultRun(TestCluster& c, const Flags& f) : cluster_(c), flags_(f) {}

  int Run();

 private:
  void StartReplica(Replica& r);
  std::string Leader();
  void Observe();  // one look at the pods: binds, double-booked GPUs, partial gangs
  void CreateLoad(int tick);
  void FinishSome();
  void Fault(const std::string& what, const std::function<void()>& act);

  TestCluster& cluster_;
  const Flags& flags_;
  std::vector<Replica> replicas_;
  Clock::time_point t0_ = Clock::now();
  int next_ = 0;
  std::map<std::string, Clock::time_point> created_at_;  // pod -> created
  std::map<std::string, Clock::time_point> bound_at_;    // pod -> first seen bound
  int restarts_ = 0;
  std::set<std::string> deleted_;
  std::map<std::string, int> gang_size_;                    // PodGroup -> minMember
  std::map<std::string, Clock::time_point> partial_since_;  // PodGroup -> first seen partial
  std::set<std::string> gangs_stuck_;
  int gpus_twice_ = 0;
  std::vector<std::pair<std::string, Clock::time_point>> faults_;  // what, when
  std::vector<double> recovery_;                                   // per fault, -1: none
  static constexpr double kSettle = 20;  // a gang partial for longer than this is stuck
};

void FaultRun::StartReplica(Replica& r) {
  // A restarted process is a new holder (serve's default identity is host_pid): it waits for
  // the lease its predecessor held to expire, as a restarted pod would.
  if (r.pid > 0) r.identity = fmt::format("replica-{}", restarts_ + 2);
  if (r.pid > 0) ++restarts_;
  r.pid = TestCluster::Spawn(
      {flags_.tessera, "serve", "--kubeconfig", cluster_.kubeconfig_path(), "--leader-elect",
       "--lease-namespace", "default", "--identity", r.identity, "--metrics-port", "0"},
      r.log);
}

std::string FaultRun::Leader() {
  json lease = cluster_.Get("/apis/coordination.k8s.io/v1/namespaces/default/leases/tessera");
  return lease.is_object() ? lease.value("/spec/holderIdentity"_json_pointer, std::string()) : "";
}

void FaultRun::CreateLoad(int tick) {
  // Mostly single one-GPU pods; every fifth tick a gang of 2 to 4 pods of 2 GPUs.
  if (tick % 5 == 4) {
    const int n = 2 + tick % 3;
    const std::string g = fmt::format("g{}", next_++);
    cluster_.Create({{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                     {"kind", "PodGroup"},
                     {"metadata", {{"name", g}, {"namespace", "default"}}},
                     {"spec", {{"minMember", n}}}});
    gang_size_[g] = n;
    for (int i = 0; i < n; ++i) {
      const std::string pod = fmt::format("{}-{}", g, i);
      cluster_.Create(
          cluster_.PodSpec("default", pod, 2, "tessera", {{"scheduling.x-k8s.io/pod-group", g}}));
      created_at_[pod] = Clock::now();
    }
  } else {
    const std::string pod = fmt::format("p{}", next_++);
    cluster_.Create(cluster_.PodSpec("default", pod, 1));
    created_at_[pod] = Clock::now();
  }
}

void FaultRun::Observe() {
  std::map<std::string, std::multiset<int>> held;  // node -> GPU indices of bound pods
  std::map<std::string, int> gang_bound;
  for (const json& p : cluster_.Pods("default")) {
    const std::string name = p["metadata"].value("name", "");
    const std::string node = p["spec"].value("nodeName", "");
    if (node.empty()) continue;
    if (!bound_at_.count(name)) bound_at_[name] = Clock::now();
    const json ann = p["metadata"].value("annotations", json::object());
    if (ann.is_object() && ann.contains("tessera.dev/gpu-indices")) {
      std::stringstream ss(ann["tessera.dev/gpu-indices"].get<std::string>());
      for (std::string part; std::getline(ss, part, ',');)
        held[node].insert(std::atoi(part.c_str()));
    }
    const json labels = p["metadata"].value("labels", json::object());
    if (labels.is_object() && labels.contains("scheduling.x-k8s.io/pod-group"))
      ++gang_bound[labels["scheduling.x-k8s.io/pod-group"].get<std::string>()];
  }
  for (const auto& [node, ids] : held)
    for (int id : std::set<int>(ids.begin(), ids.end()))
      if (ids.count(id) > 1) {
        ++gpus_twice_;
        std::cerr << fmt::format("t={:.1f}s: GPU {} of {} held by {} pods\n", Since(t0_), id, node,
                                 ids.count(id));
      }
  for (const auto& [g, size] : gang_size_) {
    const int b = gang_bound.count(g) ? gang_bound[g] : 0;
    // Pods of a finished gang are deleted one by one: partial on the way out is not stuck.
    bool finishing = false;
    for (int i = 0; i < size; ++i) finishing |= deleted_.count(fmt::format("{}-{}", g, i)) > 0;
    if (b > 0 && b < size && !finishing) {
      auto [it, first] = partial_since_.try_emplace(g, Clock::now());
      if (!first && std::chrono::duration<double>(Clock::now() - it->second).count() > kSettle)
        gangs_stuck_.insert(g);
    } else {
      partial_since_.erase(g);
    }
  }
  // Recovery: the first bind of a pod created after the fault (a bind seen late, made before
  // the fault, does not count).
  for (size_t i = 0; i < faults_.size(); ++i) {
    if (recovery_[i] >= 0) continue;
    for (const auto& [name, t] : bound_at_) {
      auto c = created_at_.find(name);
      if (c != created_at_.end() && c->second > faults_[i].second) {
        recovery_[i] = std::chrono::duration<double>(t - faults_[i].second).count();
        break;
      }
    }
  }
}

void FaultRun::FinishSome() {
  for (const auto& [name, t] : bound_at_) {
    if (deleted_.count(name) ||
        std::chrono::duration<double>(Clock::now() - t).count() < flags_.life)
      continue;
    cluster_.DeletePod("default", name);
    deleted_.insert(name);
  }
}

void FaultRun::Fault(const std::string& what, const std::function<void()>& act) {
  std::cerr << fmt::format("t={:.1f}s: {}\n", Since(t0_), what);
  faults_.emplace_back(what, Clock::now());
  recovery_.push_back(-1);
  act();
}

int FaultRun::Run() {
  for (int i = 0; i < 2; ++i) {
    replicas_.push_back(
        {fmt::format("replica-{}", i), fmt::format("{}/serve-{}.log", cluster_.dir(), i), -1});
    StartReplica(replicas_.back());
  }
  // The faults, spread over the run: per round, the API server killed, the leader killed, the
  // lease handed over.
  std::vector<std::pair<double, std::function<void()>>> plan;
  const double step = flags_.seconds / (4.0 * flags_.rounds + 1);
  for (int r = 0; r < flags_.rounds; ++r) {
    const double base = step * (4 * r + 1);
    plan.emplace_back(base, [this] {
      Fault("kube-apiserver killed (SIGKILL) and started again", [this] {
        kill(ReadPid(cluster_.dir() + "/apiserver.pid"), SIGKILL);
        std::this_thread::sleep_for(std::chrono::seconds(1));
        cluster_.StartApiServer();
      });
    });
    plan.emplace_back(base + 3 * step, [this] {
      Fault("etcd killed (SIGKILL) and started again on its data", [this] {
        const std::string cmd =
            fmt::format("'{}/scripts/k8s/cluster.sh' restart-etcd '{}' >> '{}' 2>&1",
                        TestCluster::RepoRoot(), cluster_.dir(), cluster_.dir() + "/faults.log");
        if (std::system(cmd.c_str()) != 0) std::cerr << "restart-etcd failed: " << cmd << "\n";
      });
    });
    plan.emplace_back(base + step, [this] {
      const std::string leader = Leader();
      Fault(fmt::format("the leader ({}) killed (SIGKILL) mid-run and started again", leader),
            [this, leader] {
              for (Replica& rep : replicas_)
                if (rep.identity == leader || leader.empty()) {
                  kill(rep.pid, SIGKILL);
                  waitpid(rep.pid, nullptr, 0);
                  StartReplica(rep);
                  break;
                }
            });
    });
    plan.emplace_back(base + 2 * step, [this] {
      const std::string leader = Leader();
      Fault(fmt::format("the leader ({}) stopped (SIGTERM: hands the lease over)", leader),
            [this, leader] {
              for (Replica& rep : replicas_)
                if (rep.identity == leader) {
                  kill(rep.pid, SIGTERM);
                  waitpid(rep.pid, nullptr, 0);
                  StartReplica(rep);
                  break;
                }
            });
    });
  }
  std::stable_sort(plan.begin(), plan.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t next_fault = 0;
  for (int tick = 0; Since(t0_) < flags_.seconds; ++tick) {
    if (next_fault < plan.size() && Since(t0_) >= plan[next_fault].first)
      plan[next_fault++].second();
    for (int k = 0; k < flags_.per_tick; ++k) CreateLoad(tick * flags_.per_tick + k);
    Observe();
    FinishSome();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  // No more load: everything created must get bound (the finished ones make room).
  const auto drain = Clock::now();
  int pending = 0;
  while (std::chrono::duration<double>(Clock::now() - drain).count() < 90) {
    Observe();
    FinishSome();
    pending = 0;
    for (const json& p : cluster_.Pods("default"))
      if (p["spec"].value("nodeName", "").empty()) ++pending;
    if (pending == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  for (Replica& r : replicas_) {
    kill(r.pid, SIGTERM);
    waitpid(r.pid, nullptr, 0);
  }
  std::cout << fmt::format(
      "{} nodes x {} GPUs, {:.0f} s of load, {} workloads created ({} gangs), {} pods bound\n",
      flags_.nodes, flags_.gpus, flags_.seconds, next_, gang_size_.size(), bound_at_.size());
  for (size_t i = 0; i < faults_.size(); ++i)
    std::cout << fmt::format(
        "  {:<68} next bind after {}\n", faults_[i].first,
        recovery_[i] < 0 ? std::string("(none)") : fmt::format("{:.1f} s", recovery_[i]));
  std::cout << fmt::format("pods lost {}, GPUs given twice {}, gangs left partly bound {}\n",
                           pending, gpus_twice_, gangs_stuck_.size());
  for (const auto& g : gangs_stuck_) std::cout << "  partly bound: " << g << "\n";
  return pending == 0 && gpus_twice_ == 0 && gangs_stuck_.empty() ? 0 : 1;
}

}  // namespace
}  // namespace tessera::k8s

int main(int argc, char** argv) {
  using tessera::k8s::testing::TestCluster;
  tessera::k8s::Flags f;
  CLI::App app{
      "Kubernetes mode under faults: two serve replicas, API server, leader and etcd "
      "killed in rounds (docs/kubernetes.md)"};
  app.add_option("tessera", f.tessera, "the tessera binary to run as serve")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--seconds", f.seconds, "how long the load runs")->check(CLI::PositiveNumber);
  app.add_option("--nodes", f.nodes, "fake nodes")->check(CLI::Range(1, 100000));
  app.add_option("--gpus", f.gpus, "GPUs per node")->check(CLI::Range(1, 64));
  app.add_option("--rounds", f.rounds, "rounds of faults")->check(CLI::Range(0, 100));
  app.add_option("--per-tick", f.per_tick, "workloads created every 0.4 s")
      ->check(CLI::Range(1, 10000));
  app.add_option("--life", f.life, "seconds a bound pod runs")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::string why;
  bool not_built = false;
  auto cluster = TestCluster::Start(&why, &not_built);
  if (!cluster) {
    std::cerr << "k8s_faults: no cluster: " << why << "\n";
    return 2;
  }
  cluster->ApplyRepoFile("deploy/crds/scheduling.x-k8s.io_podgroups.yaml");
  cluster->CreateNodes(f.nodes, f.gpus, "gpu");
  TestCluster::WaitFor(
      [&] {
        auto r = cluster->client().Get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
        return r.ok() && r->status == 200;
      },
      30);
  tessera::k8s::FaultRun run(*cluster, f);
  return run.Run();
}
