// k8s_bench --two-gangs (see bench/k8s_bench.cc): two gangs that each need more than half of
// the free GPUs, submitted together, to Tessera and to kube-scheduler; deadlock or partial binds.
#include <algorithm>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "bench/k8s_bench.h"
#include "fmt/format.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s::bench {
namespace {

struct TwoGangResult {
  std::string scheduler, order;
  int size = 0;
  int a = 0, b = 0;     // bound after wait_s
  double whole_s = -1;  // when the first gang was seen whole, from the scheduler's start or the
                        // gangs' submission, whichever came later (-1: never)
  std::string first;    // the gang deleted: the one with more pods bound
  int second = 0;       // the other's pods bound, at most wait_s after the deletion
  double second_whole_s = -1;
  std::string outcome;
};

// Two gangs of f.two_gang_size one-GPU pods, each more than half of the free GPUs, submitted
// together (two clients creating one pod each in turn) to one scheduler, before it starts
// (`scheduler_first` false) or while it runs. kube-scheduler's gangs are Workload API gangs
// where the server serves them, unless `plain`: then they are scheduler-plugins PodGroups, which
// it ignores (the gang-blind scheduler, for contrast).
TwoGangResult RunTwoGangs(TestCluster& c, const Flags& f, bool tessera, bool scheduler_first,
                          bool plain = false) {
  TwoGangResult r;
  const bool workload_api = !tessera && !plain && f.workload_api;
  r.scheduler = tessera        ? "tessera"
                : workload_api ? KubeSchedulerName() + " (Workload API gangs)"
                               : KubeSchedulerName() + " (no gang notion)";
  r.order = scheduler_first ? "while it runs" : "before it starts";
  r.size = f.two_gang_size;
  static int round = 0;
  const std::string ns = fmt::format("two-gangs-{}", round++);
  const std::string scheduler = tessera ? "tessera" : "default-scheduler";
  const std::string pods_path = fmt::format("/api/v1/namespaces/{}/pods", ns);
  c.CreateNamespace(ns);
  BindWatcher watcher(&c.client(), ns, f.protobuf);
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<Controller> controller;
  int ks_pid = -1;
  auto start_scheduler = [&] {
    if (tessera) {
      metrics = std::make_unique<Metrics>();
      ControllerOptions o;
      o.bind_workers = f.bind_workers;
      o.protobuf = f.protobuf;
      controller = std::make_unique<Controller>(&c.client(), o, metrics.get());
      controller->Start();
    } else {
      ks_pid = SpawnKubeScheduler(c, c.dir() + "/kube-scheduler-two-gangs.log");
    }
  };
  auto submit = [&] {
    for (const char* g : {"a", "b"}) CreateGangObjects(c, ns, g, f.two_gang_size, workload_api);
    Parallel(2, 2, [&](int g) {
      const std::string group = g == 0 ? "a" : "b";
      for (int i = 0; i < f.two_gang_size; ++i)
        (void)c.client().Post(pods_path,
                              GangPod(c, ns, group, i, scheduler, workload_api).dump());
    });
  };
  if (scheduler_first) {
    start_scheduler();
    // Running and synced: it has bound a probe pod (the same signal for both schedulers), whose
    // deletion it has then had a second to see.
    (void)c.client().Post(pods_path, c.PodSpec(ns, "probe", 1, scheduler).dump());
    if (!TestCluster::WaitFor([&] { return watcher.bound("probe") == 1; }, 120))
      std::cerr << "  the probe pod was not bound in 120 s\n";
    (void)c.client().Delete(pods_path + "/probe", R"({"gracePeriodSeconds":0})");
    TestCluster::WaitFor([&] { return watcher.seen() == 0; }, 60);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    submit();
  } else {
    submit();
    TestCluster::WaitFor([&] { return watcher.seen() == 2 * f.two_gang_size; }, 60);
    start_scheduler();
  }
  const auto t0 = Clock::now();
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  while (since(t0) < f.wait_s) {
    if (r.whole_s < 0 && std::max(watcher.bound("a-"), watcher.bound("b-")) == f.two_gang_size)
      r.whole_s = since(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.a = watcher.bound("a-");
  r.b = watcher.bound("b-");
  const int n = f.two_gang_size;
  if (r.a > 0 && r.a < n && r.b > 0 && r.b < n)
    r.outcome = "DEADLOCK: both gangs partly bound";
  else if ((r.a > 0 && r.a < n) || (r.b > 0 && r.b < n))
    r.outcome = "one gang PARTLY bound";
  else if (r.a + r.b == 0)
    r.outcome = "neither bound";
  else
    r.outcome = "one gang whole, the other none";
  r.first = r.a >= r.b ? "a" : "b";
  const std::string second = r.first == "a" ? "b" : "a";
  const auto t1 = Clock::now();
  Parallel(n, 4, [&](int i) {
    (void)c.client().Delete(fmt::format("{}/{}-{}", pods_path, r.first, i),
                            R"({"gracePeriodSeconds":0})");
  });
  DeleteGangObjects(c, ns, r.first, workload_api);
  if (TestCluster::WaitFor([&] { return watcher.bound(second + "-") == n; }, f.wait_s))
    r.second_whole_s = since(t1);
  r.second = watcher.bound(second + "-");
  if (controller) controller->Stop();
  TestCluster::Kill(ks_pid);
  Parallel(n, 4, [&](int i) {
    (void)c.client().Delete(fmt::format("{}/{}-{}", pods_path, second, i),
                            R"({"gracePeriodSeconds":0})");
  });
  DeleteGangObjects(c, ns, second, workload_api);
  TestCluster::WaitFor([&] { return watcher.seen() == 0; }, 60);
  std::cerr << fmt::format(
      "  {}, gangs submitted {}: after {:.0f} s a {} / b {} of {} bound ({}); gang {} deleted, "
      "gang {} then {} of {} bound{}\n",
      r.scheduler, r.order, f.wait_s, r.a, r.b, n, r.outcome, r.first, second, r.second, n,
      r.second_whole_s >= 0 ? fmt::format(" after {:.1f} s", r.second_whole_s) : "");
  return r;
}

}  // namespace

int TwoGangs(TestCluster& c, const Flags& f) {
  CreateNodes(c, f.two_gang_nodes, f.gpus);
  std::vector<TwoGangResult> results;
  for (bool scheduler_first : {false, true}) {
    results.push_back(RunTwoGangs(c, f, true, scheduler_first));
    if (f.kube_scheduler) results.push_back(RunTwoGangs(c, f, false, scheduler_first));
  }
  // The gang-blind kube-scheduler, for contrast (kube-scheduler v1.20's case).
  if (f.kube_scheduler && f.workload_api)
    for (bool scheduler_first : {false, true})
      results.push_back(RunTwoGangs(c, f, false, scheduler_first, /*plain=*/true));
  std::cout << fmt::format(
      "\n{} nodes x {} GPUs ({} free), two gangs of {} one-GPU pods; kube-apiserver {} on "
      "127.0.0.1, {} cores; Tessera's gangs: scheduler-plugins PodGroups (minMember)\n",
      f.two_gang_nodes, f.gpus, f.two_gang_nodes * f.gpus, f.two_gang_size,
      TestCluster::Version(), std::thread::hardware_concurrency());
  std::cout << fmt::format(
      "| scheduler | gangs submitted | bound after {:.0f} s: a / b | outcome | first gang whole "
      "after | the other, after the first is deleted |\n|---|---|---|---|---|---|\n",
      f.wait_s);
  for (const auto& r : results)
    std::cout << fmt::format(
        "| {} | {} | {} / {} | {} | {} | {} of {}{} |\n", r.scheduler, r.order, r.a, r.b,
        r.outcome, r.whole_s >= 0 ? fmt::format("{:.1f} s", r.whole_s) : "never", r.second, r.size,
        r.second_whole_s >= 0 ? fmt::format(" after {:.1f} s", r.second_whole_s)
                              : fmt::format(" (not whole in {:.0f} s)", f.wait_s));
  return 0;
}

}  // namespace tessera::k8s::bench
