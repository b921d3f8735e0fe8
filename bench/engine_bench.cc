// Benchmarks of the scheduling engine on the synthetic cluster of the performance targets:
// 10,000 nodes x 8 GPUs, 200 ClusterQueues in 20 cohorts, 100,000 pending workloads drawn from
// a seeded mix of single pods (1, 2, 4 or 8 GPUs) and gangs (2..8 pods x 8 GPUs). Single thread.
//
//   BM_AdmitUntilFull   one RunCycle over the whole backlog; items/s = workloads admitted per
//                       second of that cycle.
//   BM_AdmitWhileCapacityLasts  the same with a backlog the size of the cluster.
//   BM_DecisionLatency  one workload submitted into a nearly full cluster, one RunCycle timed;
//                       each iteration is one sample, p50/p99/max are counters.
//   BM_PreemptGang64    a high-priority 8 x 8-GPU gang submitted into a full cluster of
//                       low-priority work; the RunCycle that preempts and admits it is timed.
//   BM_TopologyGang64   an 8 x 8-GPU gang that must (or should) sit in one rack of 32 nodes, in
//                       a cluster filled to 0, 50 or 90%; the RunCycle that places it is timed.
//   BM_Memory           heap bytes per node and per pending workload (mallinfo2).
//   BM_ReservationCycle a full cluster of workloads with runtime estimates and ~100,000 pending
//                       (gangs among them that cannot start): a series of cycles, each after a
//                       few running workloads end (at their estimated ends); every cycle plans
//                       the reservations again. p50/p99/max per cycle, backfill on vs off.
//
// BM_AdmitUntilFull and BM_ReservationCycle take a `backfill` argument
// (SchedulerConfig::backfill.enable, with Workload::runtime_estimate on every workload). The
// file also builds against an engine from before reservations (commit 618428f), for an old-vs-new
// comparison: there, backfill:1 variants skip with an error and estimates are not set.
//
// Building the model, Create() and Submit() are never inside the timed region: every benchmark
// uses manual timing around RunCycle only. The first argument of each is the node count, so a
// scaled-down run for a profiler is a --benchmark_filter away (see bench/README.md). The flag
// --slow adds the full-size BM_AdmitUntilFull with preemption (half a minute or more) and
// BM_ReservationCycle at 1,000 nodes with reservations on (a minute or more).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/scheduler.h"
#include "engine/test_builders.h"
#include "fmt/format.h"
#include "model/model.h"

// Reservations and backfill (engine/time/reservations.h, commit 847f097 and later).
#if __has_include("engine/time/reservations.h")
#define TESSERA_BENCH_HAS_BACKFILL 1
#else
#define TESSERA_BENCH_HAS_BACKFILL 0
#endif

namespace tessera {
namespace {

constexpr int kGpusPerNode = 8;
constexpr int kClusterQueues = 200;
constexpr int kCohorts = 20;
constexpr int kFullNodes = 10000;
constexpr int kFullWorkloads = 100000;
constexpr int kScaledNodes = kFullNodes / 10;  // for profilers: same queues, a tenth of the rest
constexpr int kScaledWorkloads = kFullWorkloads / 10;
constexpr uint64_t kSeed = 20240611;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of this thread, in seconds: on a shared machine the wall clock also counts the time
// other processes had the core, so the cycle benchmarks report both.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Bytes the allocator has handed out and not taken back, large mmap'ed blocks included.
int64_t HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

// A "VmRSS:"-style field of /proc/self/status, in bytes (0 when absent).
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  }
  return 0;
}

std::string CqName(int cq) { return fmt::format("cq-{:03d}", cq); }

// Nodes carry the labels a real GPU node has, so that per-node memory is not flattered.
Node MakeGpuNode(int i) {
  std::string name = fmt::format("gpu-node-{:05d}", i);
  Labels labels = {
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"node.kubernetes.io/instance-type", "p5.48xlarge"},
      {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 4)},
      {"tessera.dev/rack", fmt::format("rack-{:04d}", i / 32)},
      {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
  };
  Node n = testing::MakeNode(std::move(name), kGpusPerNode, std::move(labels));
  n.gpu_model = "NVIDIA-H100-80GB-HBM3";
  return n;
}

// `nodes` nodes in one flavor; 200 ClusterQueues whose nominal quotas add up to the cluster's
// GPUs, ten to a cohort with unlimited borrowing, so that placement and not only quota limits
// what is admitted. With `preemption`: withinClusterQueue LowerPriority, reclaimWithinCohort Any.
Model MakeClusterModel(int nodes, bool preemption) {
  std::vector<Node> node_list;
  node_list.reserve(nodes);
  for (int i = 0; i < nodes; ++i) node_list.push_back(MakeGpuNode(i));
  const int64_t nominal = static_cast<int64_t>(nodes) * kGpusPerNode / kClusterQueues;
  std::vector<ClusterQueue> cqs;
  cqs.reserve(kClusterQueues);
  for (int q = 0; q < kClusterQueues; ++q) {
    testing::CQ cq(CqName(q));
    cq.Cohort(fmt::format("cohort-{:02d}", q / (kClusterQueues / kCohorts))).Gpus("gpu", nominal);
    if (preemption) {
      cq.WithinQueue(WithinClusterQueuePolicy::kLowerPriority).Reclaim(ReclaimPolicy::kAny);
    }
    cqs.push_back(cq.Obj());
  }
  return testing::MakeModel(std::move(node_list), std::move(cqs));
}

std::unique_ptr<Scheduler> CreateOrDie(Model model) {
  auto s = Scheduler::Create(std::move(model));
  if (!s.ok()) {
    std::fprintf(stderr, "Scheduler::Create: %s\n", s.status().ToString().c_str());
    std::abort();
  }
  return *std::move(s);
}

// The seeded workload mix: 35% 1-GPU pods, 20% 2-GPU, 15% 4-GPU, 15% 8-GPU, 15% gangs of 2..8
// pods of 8 GPUs (PyTorchJob-like). 8.55 GPUs per workload on average, so 100,000 of them ask
// for about ten times what 10,000 nodes hold.
class WorkloadMix {
 public:
  explicit WorkloadMix(uint64_t seed) : rng_(seed) {}

  // A workload of the mix in a random ClusterQueue.
  Workload Next(const std::string& priority = "low") {
    int cq = std::uniform_int_distribution<int>(0, kClusterQueues - 1)(rng_);
    return NextIn(cq, priority);
  }
  Workload NextIn(int cq, const std::string& priority) {
    int p = std::uniform_int_distribution<int>(0, 99)(rng_);
    if (p < 85) return Make(cq, priority, 1, DrawPodGpus(p));
    return Make(cq, priority, std::uniform_int_distribution<int>(2, 8)(rng_), kGpusPerNode);
  }
  // A single pod of at most `max_gpus` GPUs, drawn from the single-pod part of the mix.
  Workload SinglePod(int cq, const std::string& priority, int max_gpus) {
    int gpus = DrawPodGpus(std::uniform_int_distribution<int>(0, 84)(rng_));
    while (gpus > max_gpus) gpus /= 2;
    return Make(cq, priority, 1, gpus);
  }

 private:
  static int DrawPodGpus(int p) { return p < 35 ? 1 : p < 55 ? 2 : p < 70 ? 4 : 8; }

  Workload Make(int cq, const std::string& priority, int pods, int gpus_per_pod) {
    Workload w = testing::WL(fmt::format("wl-{:06d}", next_++))
                     .Queue(CqName(cq))
                     .Pods(pods, gpus_per_pod)
                     .Priority(priority)
                     .Obj();
    w.kind = pods > 1 ? "PyTorchJob" : "Job";
    return w;
  }

  std::mt19937_64 rng_;
  int next_ = 0;
};

WorkloadId SubmitNew(Scheduler& s, Workload w, double now) {
  WorkloadId id = s.AddWorkload(std::move(w));
  s.Submit(id, now);
  return id;
}

// Withdraws every pending workload among `ids`, so that no backlog is retried afterwards.
void WithdrawPending(Scheduler& s, const std::vector<WorkloadId>& ids, double now) {
  for (WorkloadId id : ids)
    if (s.status(id).state == WorkloadState::kPending) s.Finish(id, now);
}

// Nearest-rank percentile; sorts `samples`. REQUIRES: !samples.empty().
double Percentile(std::vector<double>& samples, double p) {
  std::sort(samples.begin(), samples.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

double GpuUtilPercent(const Scheduler& s) {
  return 100.0 * static_cast<double>(s.gpus_allocated()) / static_cast<double>(s.gpus_total());
}

// The runtime of the `i`-th workload of a benchmark, seconds: log-uniform in [10 min, 10 h],
// a hash of (seed, i), so that it does not disturb the mix's own random sequence.
double RuntimeOf(int64_t i) {
  uint64_t z = kSeed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
  return std::round(600.0 * std::exp(u * std::log(60.0)));
}

// Turns reservations and backfill on or off; false when this engine has none and `on` was asked.
bool SetBackfill(Model& model, bool on) {
#if TESSERA_BENCH_HAS_BACKFILL
  model.config.backfill.enable = on;
  return true;
#else
  (void)model;
  return !on;
#endif
}

// Tells the engine the workload's runtime (an exact estimate); nothing before reservations.
void SetEstimate(Workload& w, double seconds) {
#if TESSERA_BENCH_HAS_BACKFILL
  w.runtime_estimate = seconds;
#else
  (void)w;
  (void)seconds;
#endif
}

// --- 1. Throughput.
// Submits `workloads` workloads of the mix (or, with `workloads` < 0, only as many as the cluster's
// GPUs could hold) and times the one RunCycle that admits all that fit.
// `backfill` < 0 leaves the engine's default (reservations on, from commit 847f097) and sets no
// runtime estimate, as before; 0 or 1 sets SchedulerConfig::backfill.enable and gives every
// workload an exact runtime estimate (RuntimeOf), in both cases.
void RunAdmitCycle(benchmark::State& state, int nodes, int workloads, bool preemption,
                   PlacementPolicy placement = PlacementPolicy::kBinpack, bool topology = false,
                   int backfill = -1) {
  int64_t admitted = 0, attempts = 0, preempted = 0, submitted = 0;
  double util = 0, bytes_per_workload = 0, cpu_seconds = 0;
  for (auto _ : state) {
    Model model = MakeClusterModel(nodes, preemption);
    model.config.placement = placement;
    if (backfill >= 0 && !SetBackfill(model, backfill != 0)) {
      state.SkipWithError("this engine has no reservations or backfill");
      return;
    }
    auto s = CreateOrDie(std::move(model));
    const int64_t heap_engine = HeapBytes();
    WorkloadMix mix(kSeed);
    int n = 0;
    // With `topology`, every gang must sit in one rack (32 nodes).
    auto next = [&] {
      Workload w = mix.Next();
      if (topology && w.pod_sets[0].count > 1)
        w.pod_sets[0].topology = {"tessera.dev/rack", 0, true};
      if (backfill >= 0) SetEstimate(w, RuntimeOf(n));
      return w;
    };
    if (workloads >= 0) {
      for (; n < workloads; ++n) SubmitNew(*s, next(), n * 1e-3);
    } else {
      for (int64_t gpus = 0;; ++n) {
        Workload w = next();
        gpus += w.pod_sets[0].count * w.pod_sets[0].requests[kGpu];
        if (gpus > s->gpus_total()) break;
        SubmitNew(*s, std::move(w), n * 1e-3);
      }
    }
    {
      const auto start = Clock::now();
      const double cpu_start = ThreadCpuSeconds();
      std::vector<Decision> decisions = s->RunCycle(n * 1e-3);
      state.SetIterationTime(SecondsSince(start));
      cpu_seconds += ThreadCpuSeconds() - cpu_start;
      benchmark::DoNotOptimize(decisions.data());
    }  // the decisions are the caller's memory, not the engine's
    submitted += n;
    admitted += s->stats().admitted;
    attempts += s->stats().attempts;
    preempted += s->stats().preempted;
    util = GpuUtilPercent(*s);
    bytes_per_workload = static_cast<double>(HeapBytes() - heap_engine) / n;
  }
  const double iters = static_cast<double>(state.iterations());
  state.SetItemsProcessed(admitted);  // items_per_second: admissions per second of the cycle
  state.counters["submitted"] = static_cast<double>(submitted) / iters;
  state.counters["admitted"] = static_cast<double>(admitted) / iters;
  state.counters["preempted"] = static_cast<double>(preempted) / iters;
  state.counters["attempts_per_s"] =
      benchmark::Counter(static_cast<double>(attempts), benchmark::Counter::kIsRate);
  state.counters["gpu_util_pct"] = util;
  state.counters["heap_B_per_wl_after_cycle"] = bytes_per_workload;
  state.counters["cycle_cpu_ms"] = cpu_seconds / iters * 1e3;
  state.counters["admitted_per_cpu_s"] = static_cast<double>(admitted) / cpu_seconds;
}

// The setup: 100,000 pending, ten times what fits, all tried in one cycle. Args: nodes,
// workloads, preemption policies (0: Never, 1: withinClusterQueue LowerPriority + reclaim Any),
// and with a fourth, backfill (RunAdmitCycle: -1 the engine's default without estimates, 0 off,
// 1 on, both with exact estimates). With preemption at full size one run takes half a minute or
// more, so it is registered only with --slow.
void BM_AdmitUntilFull(benchmark::State& state) {
  RunAdmitCycle(state, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                state.range(2) != 0, PlacementPolicy::kBinpack, false,
                static_cast<int>(state.range(3)));
}
// backfill:-1 is the setup as it was before issue 14 (the engine's default, no estimates); 0 and
// 1 compare admissions per second with reservations and backfill off and on (issue 14).
BENCHMARK(BM_AdmitUntilFull)
    ->ArgNames({"nodes", "workloads", "preempt", "backfill"})
    ->Args({kFullNodes, kFullWorkloads, 0, -1})
    ->Args({kScaledNodes, kScaledWorkloads, 0, -1})
    ->Args({kScaledNodes, kScaledWorkloads, 1, -1})
    ->Args({kFullNodes, kFullWorkloads, 0, 0})
    ->Args({kFullNodes, kFullWorkloads, 0, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// "While capacity lasts": the backlog is cut where the mix's GPUs reach the cluster's, so the
// cycle is mostly admissions. Args: nodes, preemption policies.
// A third argument is backfill, as for BM_AdmitUntilFull (-1: the engine's default).
void BM_AdmitWhileCapacityLasts(benchmark::State& state) {
  RunAdmitCycle(state, static_cast<int>(state.range(0)), -1, state.range(1) != 0,
                PlacementPolicy::kBinpack, false, static_cast<int>(state.range(2)));
}
BENCHMARK(BM_AdmitWhileCapacityLasts)
    ->ArgNames({"nodes", "preempt", "backfill"})
    ->Args({kFullNodes, 0, -1})
    ->Args({kFullNodes, 1, -1})
    ->Args({kFullNodes, 0, 0})
    ->Args({kFullNodes, 0, 1})
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

// The same with gangs that must sit in one rack and the placement policy FGD or TesseraFGD
// (issue 3: the throughput target still holds with topology and FGD on). Args: nodes, workloads
// (-1: while capacity lasts), placement (0 binpack, 1 FGD, 2 TesseraFGD), topology.
void BM_AdmitWithPlacement(benchmark::State& state) {
  static constexpr PlacementPolicy kPolicies[] = {PlacementPolicy::kBinpack, PlacementPolicy::kFgd,
                                                  PlacementPolicy::kTesseraFgd};
  RunAdmitCycle(state, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), false,
                kPolicies[state.range(2)], state.range(3) != 0);
}
BENCHMARK(BM_AdmitWithPlacement)
    ->ArgNames({"nodes", "workloads", "placement", "topology"})
    ->Args({kFullNodes, -1, 0, 1})
    ->Args({kFullNodes, -1, 1, 1})
    ->Args({kFullNodes, -1, 2, 0})
    ->Args({kFullNodes, kFullWorkloads, 1, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// --- 2. Latency of one decision: RunCycle with one newly submitted workload.
// Args: nodes, preemption policies, backlog (0: none, the cluster filled to ~97% and every
// leftover withdrawn; 1: the whole 10x-oversubscribed backlog stays pending). Each iteration is
// one sample: submit one workload of the mix, time RunCycle, then Finish it (and withdraw any
// victim it preempted) untimed, so that the cluster stays as full.
void BM_DecisionLatency(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool preemption = state.range(1) != 0;
  const bool backlog = state.range(2) != 0;
  Model model = MakeClusterModel(nodes, preemption);
  // A fourth argument, backfill 0, turns reservations off (no estimates are given either way).
  if (state.range(3) >= 0 && !SetBackfill(model, state.range(3) != 0)) {
    state.SkipWithError("this engine has no reservations or backfill");
    return;
  }
  auto s = CreateOrDie(std::move(model));
  WorkloadMix mix(kSeed);
  double now = 0;
  const int workloads = nodes * kFullWorkloads / kFullNodes;
  if (backlog) {
    for (int i = 0; i < workloads; ++i) SubmitNew(*s, mix.Next(), now += 1e-3);
    s->RunCycle(now);
  } else {
    // Batches of a few hundred, each cycle's leftovers withdrawn, until ~97% of GPUs are used.
    // Preemption victims requeued by later batches are withdrawn at the end.
    const int batch = std::max(50, nodes / 40);
    std::vector<WorkloadId> ids;
    for (int round = 0; round < 200 && GpuUtilPercent(*s) < 97.0; ++round) {
      const size_t first = ids.size();
      for (int i = 0; i < batch; ++i) ids.push_back(SubmitNew(*s, mix.Next(), now += 1e-3));
      s->RunCycle(now);
      WithdrawPending(*s, {ids.begin() + first, ids.end()}, now);
    }
    WithdrawPending(*s, ids, now);
  }
  const double util_before = GpuUtilPercent(*s);
  std::vector<double> samples;
  samples.reserve(state.max_iterations);
  int64_t admitted = 0, preempted = 0;
  for (auto _ : state) {
    WorkloadId id = SubmitNew(*s, mix.Next(), now += 1e-3);
    const auto start = Clock::now();
    std::vector<Decision> decisions = s->RunCycle(now);
    const double secs = SecondsSince(start);
    state.SetIterationTime(secs);
    samples.push_back(secs);
    if (s->status(id).state == WorkloadState::kAdmitted) ++admitted;
    s->Finish(id, now);
    for (const Decision& d : decisions) {
      if (d.type != Decision::Type::kPreempt) continue;
      ++preempted;
      if (!backlog) s->Finish(d.workload, now);
    }
  }
  state.counters["p50_us"] = Percentile(samples, 0.50) * 1e6;
  state.counters["p99_us"] = Percentile(samples, 0.99) * 1e6;
  state.counters["max_us"] = samples.back() * 1e6;
  state.counters["admitted_pct"] = 100.0 * admitted / static_cast<double>(samples.size());
  state.counters["preempted"] = static_cast<double>(preempted);
  state.counters["gpu_util_pct"] = util_before;
}
BENCHMARK(BM_DecisionLatency)
    ->ArgNames({"nodes", "preempt", "backlog", "backfill"})
    ->Args({kFullNodes, 0, 0, -1})
    ->Args({kFullNodes, 1, 0, -1})
    ->UseManualTime()
    ->Iterations(1000)
    ->Unit(benchmark::kMicrosecond);
// With a backlog every sample's cycle retries all of it (the sample's Finish releases capacity),
// so a sample costs about a BM_AdmitUntilFull cycle; with preemption only the scaled-down size.
// backfill:-1 is the engine's default (reservations on from commit 847f097), 0 turns them off.
BENCHMARK(BM_DecisionLatency)
    ->ArgNames({"nodes", "preempt", "backlog", "backfill"})
    ->Args({kFullNodes, 0, 1, -1})
    ->Args({kFullNodes, 0, 1, 0})
    ->Args({kScaledNodes, 0, 1, -1})
    ->Args({kScaledNodes, 1, 1, -1})
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

// --- 3. Preemption: a 64-GPU gang (8 pods x 8 GPUs, priority "high") into a full cluster of
// low-priority pods of 1 to 8 GPUs, every ClusterQueue at exactly its nominal quota. The gang
// borrows, so only its own queue's lower-priority workloads are candidates.
// Args: nodes; fill (1: queue by queue, so a queue's pods share nodes; 0: all queues in one
// cycle, so nodes mix queues); the largest filler pod in GPUs (8: whole-node pods of the queue
// are the easy victims; 4: whole nodes come free only by evicting several pods, and with a mixed
// fill perhaps never, which makes the search try every candidate).
// Each iteration targets another queue; untimed afterwards, the gang finishes and its victims
// are readmitted.
void BM_PreemptGang64(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool grouped = state.range(1) != 0;
  const int max_pod_gpus = static_cast<int>(state.range(2));
  auto s = CreateOrDie(MakeClusterModel(nodes, /*preemption=*/true));
  const int64_t nominal = static_cast<int64_t>(nodes) * kGpusPerNode / kClusterQueues;
  WorkloadMix mix(kSeed);
  double now = 0;
  std::vector<WorkloadId> filler;
  for (int q = 0; q < kClusterQueues; ++q) {
    for (int64_t left = nominal; left > 0;) {
      Workload w = mix.SinglePod(q, "low", static_cast<int>(std::min<int64_t>(left, max_pod_gpus)));
      left -= w.pod_sets[0].requests[kGpu];
      filler.push_back(SubmitNew(*s, std::move(w), now += 1e-3));
    }
    if (grouped) s->RunCycle(now);
  }
  if (!grouped) s->RunCycle(now);
  WithdrawPending(*s, filler, now);
  const double util_before = GpuUtilPercent(*s);
  int64_t admitted = 0, victims = 0, iteration = 0;
  std::vector<double> samples;
  for (auto _ : state) {
    const int cq = static_cast<int>((iteration++ * 37) % kClusterQueues);
    Workload gang = testing::WL(fmt::format("gang-{:04d}", iteration))
                        .Queue(CqName(cq))
                        .Pods(8, kGpusPerNode)
                        .Priority("high")
                        .Obj();
    WorkloadId id = SubmitNew(*s, std::move(gang), now += 1e-3);
    const auto start = Clock::now();
    std::vector<Decision> decisions = s->RunCycle(now);
    const double secs = SecondsSince(start);
    state.SetIterationTime(secs);
    samples.push_back(secs);
    if (s->status(id).state == WorkloadState::kAdmitted) ++admitted;
    std::vector<WorkloadId> evicted;
    for (const Decision& d : decisions)
      if (d.type == Decision::Type::kPreempt) evicted.push_back(d.workload);
    victims += static_cast<int64_t>(evicted.size());
    s->Finish(id, now);
    s->RunCycle(now);
    WithdrawPending(*s, evicted, now);
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["admitted_pct"] = 100.0 * static_cast<double>(admitted) / iters;
  state.counters["victims_per_gang"] = static_cast<double>(victims) / iters;
  state.counters["p99_ms"] = Percentile(samples, 0.99) * 1e3;
  state.counters["max_ms"] = samples.back() * 1e3;
  state.counters["gpu_util_pct"] = util_before;
}
BENCHMARK(BM_PreemptGang64)
    ->ArgNames({"nodes", "grouped", "max_pod_gpus"})
    ->Args({kFullNodes, 1, 8})
    ->Args({kFullNodes, 0, 8})
    ->Args({kFullNodes, 1, 4})
    ->Args({kFullNodes, 0, 4})
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMillisecond);

// --- 3b. Topology: a 64-GPU gang (8 pods x 8 GPUs) that must sit in one rack (32 nodes, label
// tessera.dev/rack) of a cluster filled to `fill_pct` % by the mix's single pods; the RunCycle
// that places it is timed, then it finishes (untimed). Args: nodes, fill percent, required (1)
// or preferred (0).
void BM_TopologyGang64(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int fill_pct = static_cast<int>(state.range(1));
  const bool required = state.range(2) != 0;
  auto s = CreateOrDie(MakeClusterModel(nodes, /*preemption=*/false));
  WorkloadMix mix(kSeed);
  double now = 0;
  std::vector<WorkloadId> filler;
  const int64_t target = s->gpus_total() * fill_pct / 100;
  for (int64_t gpus = 0; gpus < target;) {
    Workload w = mix.SinglePod(static_cast<int>(filler.size() % kClusterQueues), "low", 8);
    gpus += w.pod_sets[0].requests[kGpu];
    filler.push_back(SubmitNew(*s, std::move(w), now += 1e-6));
  }
  s->RunCycle(now);
  WithdrawPending(*s, filler, now);
  const double util_before = GpuUtilPercent(*s);
  int64_t admitted = 0, iteration = 0;
  std::vector<double> samples;
  for (auto _ : state) {
    Workload gang = testing::WL(fmt::format("tgang-{:04d}", iteration))
                        .Queue(CqName(static_cast<int>((iteration * 37) % kClusterQueues)))
                        .Pods(8, kGpusPerNode)
                        .Obj();
    ++iteration;
    gang.pod_sets[0].topology = {"tessera.dev/rack", 0, required};
    WorkloadId id = SubmitNew(*s, std::move(gang), now += 1e-3);
    const auto start = Clock::now();
    std::vector<Decision> decisions = s->RunCycle(now);
    const double secs = SecondsSince(start);
    state.SetIterationTime(secs);
    samples.push_back(secs);
    if (s->status(id).state == WorkloadState::kAdmitted) ++admitted;
    s->Finish(id, now);
  }
  state.counters["admitted_pct"] =
      100.0 * static_cast<double>(admitted) / static_cast<double>(state.iterations());
  state.counters["p99_us"] = Percentile(samples, 0.99) * 1e6;
  state.counters["max_us"] = samples.back() * 1e6;
  state.counters["gpu_util_pct"] = util_before;
}
BENCHMARK(BM_TopologyGang64)
    ->ArgNames({"nodes", "fill_pct", "required"})
    ->Args({kFullNodes, 0, 1})
    ->Args({kFullNodes, 50, 1})
    ->Args({kFullNodes, 90, 1})
    ->Args({kFullNodes, 90, 0})
    ->UseManualTime()
    ->Iterations(200)
    ->Unit(benchmark::kMicrosecond);

// --- 4. Memory: heap bytes held per node (engine with no workloads: model copy, cluster state,
// pools) and per pending workload (AddWorkload + Submit, before any cycle). RSS deltas are
// reported too, though they include freed-but-kept pages. The timed part is empty.
// Args: nodes, workloads.
void BM_Memory(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    state.SetIterationTime(0);
    const int64_t heap0 = HeapBytes(), rss0 = ProcStatusBytes("VmRSS");
    auto s = CreateOrDie(MakeClusterModel(nodes, /*preemption=*/true));
    const int64_t heap1 = HeapBytes(), rss1 = ProcStatusBytes("VmRSS");
    WorkloadMix mix(kSeed);
    for (int i = 0; i < workloads; ++i) SubmitNew(*s, mix.Next(), i * 1e-3);
    const int64_t heap2 = HeapBytes(), rss2 = ProcStatusBytes("VmRSS");
    state.counters["heap_B_per_node"] = static_cast<double>(heap1 - heap0) / nodes;
    state.counters["heap_B_per_pending_wl"] = static_cast<double>(heap2 - heap1) / workloads;
    state.counters["rss_B_per_node"] = static_cast<double>(rss1 - rss0) / nodes;
    state.counters["rss_B_per_pending_wl"] = static_cast<double>(rss2 - rss1) / workloads;
  }
}
BENCHMARK(BM_Memory)
    ->ArgNames({"nodes", "workloads"})
    ->Args({kFullNodes, kFullWorkloads})
    ->UseManualTime()
    ->Iterations(1);

// --- 5. Reservations and backfill (issue 14): one RunCycle at a time on a full cluster with a
// backlog, as a running scheduler sees it. Every workload has an exact runtime estimate
// (RuntimeOf: 10 min to 10 h). Setup (untimed): `workloads` of the mix submitted, one cycle
// fills the cluster (with 110,000 about 100,000 stay pending, gangs of up to 64 GPUs among
// them that cannot start). Each iteration then ends the `finish` running workloads whose
// estimated ends come first, at the latest of those ends (estimates hold), and times the
// RunCycle at that instant: with backfill on it plans the reservations again (something ended)
// and admits what fits without delaying them; with backfill off it admits what fits.
// Args: nodes, workloads, backfill, reservations per queue (1: the default, one head per
// ClusterQueue; 0: every pending workload that cannot start, up to maxJobTest a cycle),
// finish (workloads ending before each cycle).
void BM_ReservationCycle(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  const bool backfill = state.range(2) != 0;
  const int per_queue = static_cast<int>(state.range(3));
  const int finish = static_cast<int>(state.range(4));
  Model model = MakeClusterModel(nodes, /*preemption=*/false);
  if (!SetBackfill(model, backfill)) {
    state.SkipWithError("this engine has no reservations or backfill");
    return;
  }
#if TESSERA_BENCH_HAS_BACKFILL
  model.config.backfill.reservations_per_queue = per_queue;
#else
  (void)per_queue;
#endif
  auto s = CreateOrDie(std::move(model));
  WorkloadMix mix(kSeed);
  std::vector<double> runtime;  // by WorkloadId
  runtime.reserve(workloads);
  for (int i = 0; i < workloads; ++i) {
    Workload w = mix.Next();
    runtime.push_back(RuntimeOf(i));
    SetEstimate(w, runtime.back());
    const WorkloadId id = SubmitNew(*s, std::move(w), 0);
    if (id != i) std::abort();  // ids are dense, in order of AddWorkload
  }
  double now = 0;
  // Running workloads by their end (admission + runtime), earliest first.
  using End = std::pair<double, WorkloadId>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  auto note_admissions = [&](const std::vector<Decision>& decisions) {
    int64_t n = 0;
    for (const Decision& d : decisions) {
      if (d.type != Decision::Type::kAdmit) continue;
      ends.push({now + runtime[d.workload], d.workload});
      ++n;
    }
    return n;
  };
  const auto fill_start = Clock::now();
  note_admissions(s->RunCycle(now));
  const double fill_seconds = SecondsSince(fill_start);
  int64_t pending = 0, pending_gangs = 0;
  for (WorkloadId id = 0; id < s->num_workloads(); ++id) {
    if (s->status(id).state != WorkloadState::kPending) continue;
    ++pending;
    if (s->model().workloads[id].pod_sets[0].count > 1) ++pending_gangs;
  }
  const double util_before = GpuUtilPercent(*s);
  std::vector<double> samples, cpu_samples;
  int64_t admitted = 0, expected_starts = 0;
  const int64_t attempts_before = s->stats().attempts;
  for (auto _ : state) {
    for (int k = 0; k < finish && !ends.empty(); ++k) {
      const auto [end, id] = ends.top();
      ends.pop();
      now = std::max(now, end);
      s->Finish(id, now);
    }
    const auto start = Clock::now();
    const double cpu_start = ThreadCpuSeconds();
    std::vector<Decision> decisions = s->RunCycle(now);
    const double secs = SecondsSince(start);
    cpu_samples.push_back(ThreadCpuSeconds() - cpu_start);
    state.SetIterationTime(secs);
    samples.push_back(secs);
    admitted += note_admissions(decisions);
  }
#if TESSERA_BENCH_HAS_BACKFILL
  for (WorkloadId id = 0; id < s->num_workloads(); ++id)
    if (s->status(id).state == WorkloadState::kPending && s->status(id).expected_start >= 0)
      ++expected_starts;
#endif
  const double cycles = static_cast<double>(samples.size());
  double total = 0;
  for (double x : samples) total += x;
  state.counters["fill_cycle_ms"] = fill_seconds * 1e3;
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["pending_gangs"] = static_cast<double>(pending_gangs);
  state.counters["gpu_util_pct"] = util_before;
  state.counters["p50_ms"] = Percentile(samples, 0.50) * 1e3;
  state.counters["p99_ms"] = Percentile(samples, 0.99) * 1e3;
  state.counters["max_ms"] = samples.back() * 1e3;
  state.counters["cpu_p50_ms"] = Percentile(cpu_samples, 0.50) * 1e3;
  state.counters["cpu_p99_ms"] = Percentile(cpu_samples, 0.99) * 1e3;
  state.counters["cpu_max_ms"] = cpu_samples.back() * 1e3;
  state.counters["admitted_per_cycle"] = static_cast<double>(admitted) / cycles;
  state.counters["attempts_per_cycle"] =
      static_cast<double>(s->stats().attempts - attempts_before) / cycles;
  state.counters["admitted_per_s"] = static_cast<double>(admitted) / total;
  state.counters["with_expected_start"] = static_cast<double>(expected_starts);
  state.counters["sim_hours"] = now / 3600;
}
BENCHMARK(BM_ReservationCycle)
    ->ArgNames({"nodes", "workloads", "backfill", "per_queue", "finish"})
    ->Args({kFullNodes, 110000, 0, 1, 5})
    ->Args({kScaledNodes, 11000, 0, 1, 5})
    ->UseManualTime()
    ->Iterations(100)
    ->Unit(benchmark::kMillisecond);
// At full size with reservations a cycle takes seconds at commit 847f097
// (docs/time-measurements.md), so only 20 cycles: p99 of 20 samples (nearest rank) is the max.
BENCHMARK(BM_ReservationCycle)
    ->ArgNames({"nodes", "workloads", "backfill", "per_queue", "finish"})
    ->Args({kFullNodes, 110000, 1, 1, 5})
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

// The full-size backlog with preemption: half a minute or more on a 2-core machine.
// Also BM_ReservationCycle at 1,000 nodes with reservations on.
void RegisterSlowBenchmarks() {
  // Reservations at 1,000 nodes (for profilers): 100 cycles of about half a second each.
  benchmark::RegisterBenchmark("BM_ReservationCycle", &BM_ReservationCycle)
      ->ArgNames({"nodes", "workloads", "backfill", "per_queue", "finish"})
      ->Args({kScaledNodes, 11000, 1, 1, 5})
      ->Args({kScaledNodes, 11000, 1, 0, 5})
      ->UseManualTime()
      ->Iterations(100)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_AdmitUntilFull", &BM_AdmitUntilFull)
      ->ArgNames({"nodes", "workloads", "preempt", "backfill"})
      ->Args({kFullNodes, kFullWorkloads, 1, -1})
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace tessera

// BENCHMARK_MAIN plus one flag of ours: --slow also runs BM_AdmitUntilFull at full size with
// preemption, and BM_ReservationCycle at 1,000 nodes with reservations on.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  int kept = 1;
  bool slow = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--slow") {
      slow = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (slow) tessera::RegisterSlowBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
