// Pods bound per second through a real kube-apiserver on 127.0.0.1: Tessera against the
// kube-scheduler of the same Kubernetes version (scripts/k8s/build-apiserver.sh; 1.37 unless
// TESSERA_K8S_VERSION says otherwise), on the same server, the same fake nodes and the same pods,
// one after the other in one run.
//
//   k8s_bench [--nodes 5000] [--gpus 8] [--pods 10000] [--gangs 1000] [--gang-size 8]
//             [--bind-workers 64] [--no-kube-scheduler] [--no-events] [--json]
//             [--profile-apiserver SECONDS]
//   k8s_bench --two-gangs [--two-gang-nodes 2] [--gpus 8] [--two-gang-size 12] [--wait 20]
//
// For each workload (single one-GPU pods; gangs of one-GPU pods) and each scheduler: the pods
// are created with no scheduler running, then the scheduler starts and the
// clock runs until a watch has seen every pod bound. Reported: pods/s from the scheduler's start
// (includes its cache sync) and from its first bind to its last, and where the CPU went (the
// scheduler process, kube-apiserver, etcd), read from /proc. The benchmark's own watch reads
// protobuf, as kube-scheduler's and Tessera's do (`--json`: Tessera and the watch read JSON).
// Tessera writes its Scheduled Events (and some PodGroup statuses) behind its binds, so part of
// them come after the clock stops: the round goes on until they are written, and reports when
// (`s to its Events and statuses written`); kube-scheduler writes its Events as it binds (see the
// request counts by the time all were bound).
//
// Gangs: Tessera's are scheduler-plugins PodGroups (minMember) with the pod-group label, what it
// reads today. kube-scheduler runs with the API server's feature gates (GenericWorkload=true on
// 1.37, which puts its GangScheduling plugin in the default profile); where the server serves
// the Workload API its gangs are a Workload, its PodGroup (gang minCount) and pods naming the
// PodGroup in spec.schedulingGroup. On an older server kube-scheduler has no gang notion and
// gets the scheduler-plugins PodGroups, which it ignores.
//
// --two-gangs: two gangs that each need more than half of the free GPUs (2 nodes x 8 GPUs, two
// gangs of 12 one-GPU pods), submitted together, once before the scheduler starts and once while
// it runs, for each scheduler. Reported: how many pods of each gang are bound after --wait
// seconds (both partly bound is a deadlock: neither can start, and neither gives its GPUs back),
// then, with the gang that got GPUs deleted, whether and when the other binds whole.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "k8s/client/informer.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"
#include "spdlog/spdlog.h"
#include "tests/k8s/test_cluster.h"
#include "tests/k8s/workload_api.h"
#include "bench/k8s_bench.h"

namespace tessera::k8s::bench {



std::string KubeSchedulerName() { return "kube-scheduler " + TestCluster::Version(); }

// kube-scheduler against `c`, with the API server's feature gates; returns its pid.
int SpawnKubeScheduler(TestCluster& c, const std::string& log) {
  std::vector<std::string> argv = {
      TestCluster::KubeSchedulerPath(), "--kubeconfig=" + c.kubeconfig_path(),
      "--leader-elect=false", "--secure-port=0", "--v=0",
      // scheduler_perf's client limits; the defaults (50 QPS) would measure the limiter.
      "--kube-api-qps=5000", "--kube-api-burst=5000"};
  if (const std::string gates = c.FeatureGates(); !gates.empty())
    argv.push_back("--feature-gates=" + gates);
  return TestCluster::Spawn(argv, log);
}

double CpuSecondsOf(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(in, line);
  auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string f;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> f; ++i) {
    if (i == 14) utime = std::stol(f);
    if (i == 15) stime = std::stol(f);
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

// Waits until the API server and etcd are idle (together under 15% of a core over half a
// second), at most `max_s`: each round starts on a settled server, not on the tail of the last
// round's deletions and creations. Returns the seconds waited.
double Settle(int api_pid, int etcd_pid, double max_s = 60) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const double before = CpuSecondsOf(api_pid) + CpuSecondsOf(etcd_pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const double used = CpuSecondsOf(api_pid) + CpuSecondsOf(etcd_pid) - before;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (used < 0.075 || waited >= max_s) return waited;
  }
}

double ResidentMiB(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  return 0;
}

double SelfCpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

int ReadPid(const std::string& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return pid;
}


void Parallel(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int i; (i = next++) < n;) fn(i);
    });
  for (auto& t : ts) t.join();
}

void CreateNodes(TestCluster& c, int n, int gpus) {
  auto& client = c.client();
  Parallel(n, 16, [&](int i) {
    const std::string name = fmt::format("node-{}", i);
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}}};
    (void)client.Post("/api/v1/nodes", node.dump());
    json cap = {{"cpu", "96"},
                {"memory", "1024Gi"},
                {"pods", "110"},
                {"nvidia.com/gpu", std::to_string(gpus)}};
    json status = {{"status",
                    {{"capacity", cap},
                     {"allocatable", cap},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    (void)client.Patch(fmt::format("/api/v1/nodes/{}/status", name), status.dump());
  });
}

// Creates gang `group` of `size` one-GPU pods named GROUP-i in `ns` for `scheduler`, with its
// group objects: the Workload API's (Workload and PodGroup; the pods name the PodGroup) when
// `workload_api`, else a scheduler-plugins PodGroup and the pod-group label.
void CreateGangObjects(TestCluster& c, const std::string& ns, const std::string& group, int size,
                       bool workload_api) {
  auto& client = c.client();
  std::vector<json> objs;
  if (workload_api) {
    objs = {testing::WorkloadObject(ns, group, size),
            testing::WorkloadPodGroupObject(ns, group, size)};
  } else {
    objs = {{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
             {"kind", "PodGroup"},
             {"metadata", {{"name", group}, {"namespace", ns}}},
             {"spec", {{"minMember", size}}}}};
  }
  for (const auto& o : objs) {
    auto r = client.Post(TestCluster::CollectionPath(o), o.dump());
    if (!r.ok() || r->status != 201)
      std::cerr << fmt::format("  creating {} {}/{} failed: {}\n", o.value("kind", ""), ns, group,
                               r.ok() ? r->body.substr(0, 300) : std::string(r.status().message()));
  }
}

json GangPod(TestCluster& c, const std::string& ns, const std::string& group, int i,
             const std::string& scheduler, bool workload_api) {
  const std::string name = fmt::format("{}-{}", group, i);
  if (workload_api) {
    json pod = c.PodSpec(ns, name, 1, scheduler);
    testing::JoinWorkloadPodGroup(pod, group);
    return pod;
  }
  return c.PodSpec(ns, name, 1, scheduler, {{"scheduling.x-k8s.io/pod-group", group}});
}

// Deletes the gang's group objects (the pods go separately). A Workload API PodGroup keeps a
// finalizer that kube-controller-manager would remove: without it, it only stays Terminating.
void DeleteGangObjects(TestCluster& c, const std::string& ns, const std::string& group,
                       bool workload_api) {
  auto& client = c.client();
  if (workload_api) {
    (void)client.Delete(
        fmt::format("/apis/scheduling.k8s.io/v1beta1/namespaces/{}/podgroups/{}", ns, group));
    (void)client.Delete(
        fmt::format("/apis/scheduling.k8s.io/v1beta1/namespaces/{}/workloads/{}", ns, group));
  } else {
    (void)client.Delete(
        fmt::format("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{}/podgroups/{}", ns, group));
  }
}

// Creates the workload's pods (and gang objects) in `ns` for scheduler `scheduler`; returns the
// pods' names.
std::vector<std::string> CreateWorkload(TestCluster& c, const std::string& ns,
                                        const std::string& scheduler, int singles, int gangs,
                                        int gang_size, bool workload_api) {
  std::vector<std::string> names;
  for (int i = 0; i < singles; ++i) names.push_back(fmt::format("p-{}", i));
  for (int g = 0; g < gangs; ++g)
    for (int i = 0; i < gang_size; ++i) names.push_back(fmt::format("g-{}-{}", g, i));
  c.CreateNamespace(ns);
  auto& client = c.client();
  const std::string pods_path = fmt::format("/api/v1/namespaces/{}/pods", ns);
  if (singles > 0) {
    Parallel(singles, 16, [&](int i) {
      json pod = c.PodSpec(ns, fmt::format("p-{}", i), 1, scheduler);
      (void)client.Post(pods_path, pod.dump());
    });
  }
  if (gangs > 0) {
    Parallel(gangs, 16, [&](int g) {
      const std::string group = fmt::format("g-{}", g);
      CreateGangObjects(c, ns, group, gang_size, workload_api);
      for (int i = 0; i < gang_size; ++i)
        (void)client.Post(pods_path, GangPod(c, ns, group, i, scheduler, workload_api).dump());
    });
  }
  return names;
}

// Compacts etcd to its current revision and defragments it (etcd's gRPC gateway), as the API
// server's own compaction would every 5 minutes: the next round does not pay for the history of
// this one's 10,000 created, bound and deleted pods.
void CompactEtcd(TestCluster& c) {
  std::ifstream env(c.dir() + "/env");
  std::string line, port;
  while (std::getline(env, line))
    if (line.rfind("ETCD_PORT=", 0) == 0) port = line.substr(10);
  if (port.empty()) return;
  KubeConfig cfg;
  cfg.server = "http://127.0.0.1:" + port;
  KubeClient etcd(cfg);
  auto range = etcd.Post("/v3/kv/range", R"({"key":"AA==","count_only":true})");
  if (!range.ok() || range->status != 200) return;
  json r = json::parse(range->body, nullptr, false);
  if (!r.is_object() || !r.contains("header")) return;
  const std::string rev = r["header"].value("revision", "");
  auto compact =
      etcd.Post("/v3/kv/compaction", fmt::format(R"({{"revision":"{}","physical":true}})", rev));
  auto defrag = etcd.Post("/v3/maintenance/defragment", "{}");
  std::cerr << fmt::format("  etcd compacted to revision {} ({}), defragmented ({})\n", rev,
                           compact.ok() ? compact->status : 0, defrag.ok() ? defrag->status : 0);
}

// The API server's request counts (apiserver_request_total from /metrics) by verb, resource
// and subresource: what a round asked of the server.
std::map<std::string, double> RequestCounts(KubeClient& client) {
  std::map<std::string, double> out;
  auto resp = client.Get("/metrics");
  if (!resp.ok() || resp->status != 200) return out;
  std::istringstream in(resp->body);
  std::string line;
  auto label = [](const std::string& l, const std::string& name) {
    auto at = l.find(name + "=\"");
    if (at == std::string::npos) return std::string();
    at += name.size() + 2;
    return l.substr(at, l.find('"', at) - at);
  };
  while (std::getline(in, line)) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    std::string key = label(line, "verb") + " " + label(line, "resource");
    if (auto sub = label(line, "subresource"); !sub.empty()) key += "/" + sub;
    out[key] += std::atof(line.substr(line.rfind(' ') + 1).c_str());
  }
  return out;
}

// The requests of the round, largest first, as "8000 POST pods/binding, ...".
std::string RequestDelta(const std::map<std::string, double>& before,
                         const std::map<std::string, double>& after) {
  std::vector<std::pair<double, std::string>> d;
  for (const auto& [k, v] : after) {
    auto it = before.find(k);
    const double n = v - (it == before.end() ? 0 : it->second);
    if (n >= 1) d.emplace_back(n, k);
  }
  std::sort(d.rbegin(), d.rend());
  std::string s;
  for (const auto& [n, k] : d) s += fmt::format("{}{:.0f} {}", s.empty() ? "" : ", ", n, k);
  return s;
}

struct Result {
  std::string scheduler, workload;
  int pods = 0;
  double total_s = 0, binding_s = 0;
  double writes_s = 0;  // Tessera: start to its deferred Event and status writes done (0: n/a)
  double sched_cpu = 0, apiserver_cpu = 0, etcd_cpu = 0;
  std::string notes;
};

Result RunOne(TestCluster& c, const Flags& f, bool tessera, int singles, int gangs) {
  Result r;
  const bool workload_api = !tessera && f.workload_api;
  r.scheduler = tessera ? "tessera" : KubeSchedulerName();
  r.workload = singles > 0 ? fmt::format("{} one-GPU pods", singles)
                           : fmt::format("{} gangs of {} ({})", gangs, f.gang_size,
                                         workload_api ? "Workload API PodGroup"
                                         : tessera    ? "scheduler-plugins PodGroup"
                                                      : "no gang notion");
  r.pods = singles + gangs * f.gang_size;
  static int round = 0;
  const std::string ns = fmt::format("bench-{}", round++);
  auto t_create = Clock::now();
  std::vector<std::string> names =
      CreateWorkload(c, ns, tessera ? "tessera" : "default-scheduler", singles, gangs, f.gang_size,
                     workload_api);
  std::cerr << fmt::format("  {}: created {} pods in {:.1f} s\n", r.scheduler, r.pods,
                           std::chrono::duration<double>(Clock::now() - t_create).count());
  BindWatcher watcher(&c.client(), ns, f.protobuf);
  TestCluster::WaitFor([&] { return watcher.seen() == r.pods; }, 120);

  const int api_pid = ReadPid(c.dir() + "/apiserver.pid");
  const int etcd_pid = ReadPid(c.dir() + "/etcd.pid");
  std::cerr << fmt::format("  server settled in {:.1f} s; API server resident {:.0f} MiB\n",
                           Settle(api_pid, etcd_pid), ResidentMiB(api_pid));
  const auto requests0 = RequestCounts(c.client());
  const double api0 = CpuSecondsOf(api_pid), etcd0 = CpuSecondsOf(etcd_pid);
  double sched0 = 0;
  int ks_pid = -1;
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<Controller> controller;
  std::thread profiler;
  static bool profiled = false;
  if (tessera && f.profile_s > 0 && !profiled) {
    profiled = true;
    // The API server's own profiler (cluster.sh runs it with --profiling when
    // TESSERA_K8S_PROFILING=true): read it with `go tool pprof -top BINARY FILE`.
    profiler = std::thread([&c, &f] {
      auto resp = c.client().Get(fmt::format("/debug/pprof/profile?seconds={}", f.profile_s));
      const std::string path = "/tmp/tessera-k8s-bench-apiserver.pprof";
      if (resp.ok() && resp->status == 200) {
        std::ofstream(path) << resp->body;
        std::cerr << "  API server CPU profile: " << path << "\n";
      } else {
        std::cerr << "  API server CPU profile failed\n";
      }
    });
  }
  auto t0 = Clock::now();
  if (tessera) {
    sched0 = SelfCpuSeconds();
    metrics = std::make_unique<Metrics>();
    ControllerOptions o;
    o.bind_workers = f.bind_workers;
    o.scheduled_events = f.events;
    o.protobuf = f.protobuf;
    controller = std::make_unique<Controller>(&c.client(), o, metrics.get());
    controller->Start();
  } else {
    ks_pid = SpawnKubeScheduler(c, c.dir() + "/kube-scheduler-bench.log");
  }
  double sync_s = -1;  // Tessera: when its caches were synced (to the 50 ms the wait polls at)
  bool done = TestCluster::WaitFor(
      [&] {
        if (controller && sync_s < 0 && controller->synced())
          sync_s = std::chrono::duration<double>(Clock::now() - t0).count();
        return watcher.bound() == r.pods;
      },
      600);
  auto t1 = Clock::now();
  if (profiler.joinable()) profiler.join();
  r.total_s = std::chrono::duration<double>(t1 - t0).count();
  r.binding_s = std::chrono::duration<double>(watcher.last() - watcher.first()).count();
  r.apiserver_cpu = CpuSecondsOf(api_pid) - api0;
  r.etcd_cpu = CpuSecondsOf(etcd_pid) - etcd0;
  const std::string requests = RequestDelta(requests0, RequestCounts(c.client()));
  std::string requests_after;  // Tessera: by the time its deferred writes were done
  if (tessera) {
    r.sched_cpu = SelfCpuSeconds() - sched0;  // includes this driver's watch: small
    auto snap = controller->snapshot();
    const int64_t events_by_clock = snap.events_written;
    r.notes = fmt::format(
        "caches synced after {:.2f} s, first pod seen bound after {:.2f} s; engine (rebuilds + "
        "cycles) {:.2f} s, {} cycles, {} rebuilds; bind p50 {:.1f} ms p99 {:.1f} ms over {} "
        "workers; Events: {} of {} occurrences written by the time all were bound",
        sync_s, std::chrono::duration<double>(watcher.first() - t0).count(), snap.decision_seconds,
        snap.cycles, snap.rebuilds, metrics->bind_latency.Quantile(0.5) * 1000,
        metrics->bind_latency.Quantile(0.99) * 1000, f.bind_workers, events_by_clock,
        snap.events_recorded);
    // Tessera writes its Scheduled Events (and the PodGroup statuses of gangs whose binds were in
    // flight) behind the binds: the round's remaining writes run after the clock. Wait for them,
    // so that they are measured rather than dropped by Stop, and the next round does not pay
    // for them. A status write is queued at most one status period after the binds settle.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    bool drained = TestCluster::WaitFor(
        [&] {
          auto s = controller->snapshot();
          return s.events_queued == 0 && s.status_writes_queued == 0 &&
                 s.events_recorded == s.events_written + s.events_dropped;
        },
        300);
    snap = controller->snapshot();
    // The last write's time: the waits above poll, so this is an upper bound of up to 1.2 s
    // when the writes were done before it.
    r.writes_s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.notes += fmt::format(
        "; its remaining writes done {:.1f} s after the clock ({}: {} Events written, {} "
        "dropped; API server CPU by then {:.1f} s)",
        r.writes_s - r.total_s, drained ? "drained" : "NOT DRAINED in 300 s",
        snap.events_written - events_by_clock, snap.events_dropped, CpuSecondsOf(api_pid) - api0);
    requests_after = RequestDelta(requests0, RequestCounts(c.client()));
    controller->Stop();
  } else {
    r.sched_cpu = CpuSecondsOf(ks_pid);
    TestCluster::Kill(ks_pid);
  }
  if (!done) r.notes += fmt::format(" INCOMPLETE: {} of {} bound", watcher.bound(), r.pods);
  std::cerr << fmt::format("  {} / {}: {:.1f} s, {:.0f} pods/s; {}\n", r.scheduler, r.workload,
                           r.total_s, r.pods / r.total_s, r.notes);
  std::cerr << fmt::format(
      "  requests by the time all were bound (every client, this driver's "
      "included): {}\n",
      requests);
  if (!requests_after.empty())
    std::cerr << fmt::format(
        "  requests by the time Tessera's Events and statuses were written: {}\n", requests_after);
  // Clean up: the next round needs the GPUs. One DELETE per pod, many at once (a
  // deletecollection of 10,000 pods is much slower).
  Parallel(static_cast<int>(names.size()), 16, [&](int i) {
    (void)c.client().Delete(fmt::format("/api/v1/namespaces/{}/pods/{}", ns, names[i]),
                            R"({"gracePeriodSeconds":0})");
  });
  TestCluster::WaitFor([&] { return watcher.seen() == 0; }, 300);
  // The round's Events (a Scheduled Event per pod from either scheduler) go too, so that the
  // next round starts on a server that carries nothing of this one.
  (void)c.client().Delete(fmt::format("/api/v1/namespaces/{}/events", ns));
  CompactEtcd(c);
  return r;
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Pods bound per second on fake nodes, Tessera against kube-scheduler"};
  app.add_option("--nodes", f.nodes, "fake nodes")->check(CLI::Range(1, 100000));
  app.add_option("--gpus", f.gpus, "GPUs per node")->check(CLI::Range(1, 64));
  app.add_option("--pods", f.pods, "single pods of the first round")->check(CLI::Range(0, 1000000));
  app.add_option("--gangs", f.gangs, "gangs of the second round")->check(CLI::Range(0, 100000));
  app.add_option("--gang-size", f.gang_size, "pods per gang")->check(CLI::Range(1, 1000));
  app.add_option("--bind-workers", f.bind_workers, "Tessera's bind workers")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--no-kube-scheduler{false}", f.kube_scheduler, "measure Tessera only");
  app.add_flag("--no-events{false}", f.events, "Tessera writes no Scheduled Events");
  app.add_flag("--json{false}", f.protobuf, "informers and watch in JSON, not protobuf");
  app.add_option("--profile-apiserver", f.profile_s,
                 "seconds of an API server CPU profile during Tessera's first round")
      ->check(CLI::Range(0, 3600));
  app.add_flag("--two-gangs", f.two_gangs,
               "two gangs each needing more than half of the free GPUs, instead of the rates");
  app.add_option("--two-gang-nodes", f.two_gang_nodes, "--two-gangs: nodes")
      ->check(CLI::Range(1, 1000));
  app.add_option("--two-gang-size", f.two_gang_size, "--two-gangs: pods per gang")
      ->check(CLI::Range(1, 10000));
  app.add_option("--wait", f.wait_s, "--two-gangs: seconds each step waits")
      ->check(CLI::Range(1.0, 3600.0));
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  if (f.kube_scheduler && TestCluster::KubeSchedulerPath().empty()) {
    std::cerr << "k8s_bench: kube-scheduler is not built (scripts/k8s/build-apiserver.sh "
                 "--with-scheduler); measuring Tessera only\n";
    f.kube_scheduler = false;
  }
  if (f.profile_s > 0) setenv("TESSERA_K8S_PROFILING", "true", 1);
  std::string why;
  bool not_built = false;
  auto cluster = TestCluster::Start(&why, &not_built);
  if (!cluster) {
    std::cerr << "k8s_bench: " << why << "\n";
    return 1;
  }
  cluster->ApplyRepoFile("deploy/crds/scheduling.x-k8s.io_podgroups.yaml");
  // A CRD just created answers 429 ("storage is (re)initializing") for a moment: Tessera's first
  // round would otherwise count a second or two of its informer's retries as cache sync.
  if (!TestCluster::WaitFor(
          [&] {
            auto r = cluster->client().Get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups?limit=1");
            return r.ok() && r->status == 200;
          },
          60))
    std::cerr << "k8s_bench: the PodGroup CRD is not served after 60 s\n";
  f.workload_api = testing::ServesWorkloadApi(*cluster) &&
                   cluster->FeatureGates().find("GenericWorkload=true") != std::string::npos;
  if (f.two_gangs) return TwoGangs(*cluster, f);
  auto t = Clock::now();
  CreateNodes(*cluster, f.nodes, f.gpus);
  std::cerr << fmt::format("k8s_bench: {} nodes of {} GPUs created in {:.1f} s (server {})\n",
                           f.nodes, f.gpus, std::chrono::duration<double>(Clock::now() - t).count(),
                           cluster->config().server);
  std::vector<Result> results;
  for (bool singles : {true, false}) {
    int n_singles = singles ? f.pods : 0, n_gangs = singles ? 0 : f.gangs;
    if (n_singles + n_gangs == 0) continue;
    results.push_back(RunOne(*cluster, f, true, n_singles, n_gangs));
    if (f.kube_scheduler) results.push_back(RunOne(*cluster, f, false, n_singles, n_gangs));
  }
  std::cout << fmt::format(
      "\n{} nodes x {} GPUs, kube-apiserver {} on 127.0.0.1 (feature gates: {}), {} cores\n",
      f.nodes, f.gpus, TestCluster::Version(),
      cluster->FeatureGates().empty() ? "none" : cluster->FeatureGates(),
      std::thread::hardware_concurrency());
  std::cout
      << "| scheduler | workload | pods | s (start to all bound) | pods/s | pods/s first "
         "to last bind | s to its Events and statuses written | CPU s: scheduler / apiserver / "
         "etcd |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results)
    std::cout << fmt::format(
        "| {} | {} | {} | {:.1f} | {:.0f} | {:.0f} | {} | {:.1f} / {:.1f} / {:.1f} |\n",
        r.scheduler, r.workload, r.pods, r.total_s, r.pods / r.total_s,
        r.pods / std::max(r.binding_s, 1e-9),
        r.writes_s > 0 ? fmt::format("{:.1f}", r.writes_s) : "as it goes", r.sched_cpu,
        r.apiserver_cpu, r.etcd_cpu);
  for (const auto& r : results)
    if (!r.notes.empty())
      std::cout << fmt::format("- {} / {}: {}\n", r.scheduler, r.workload, r.notes);
  return 0;
}

}  // namespace tessera::k8s::bench

int main(int argc, char** argv) { return tessera::k8s::bench::Main(argc, argv); }
