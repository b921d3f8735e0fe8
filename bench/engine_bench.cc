// Benchmarks of the scheduling engine (this file: throughput, decision latency, memory;
// engine_bench_gangs.cc: preemption and topology of a 64-GPU gang; engine_bench_time.cc:
// reservations and backfill; engine_bench_util.*: the shared cluster, mix and timers) on the
// synthetic cluster of the performance targets: 10,000 nodes x 8 GPUs, 200 ClusterQueues in 20
// cohorts, 100,000 pending workloads drawn from a seeded mix of single pods (1, 2, 4 or 8 GPUs) and
// gangs (2..8 pods x 8 GPUs). Single thread.
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
//   BM_NeedCapacity     the same cluster and backlog; after each cycle, Scheduler::NeedCapacity
//                       (serve's ProvisioningRequests, issue 17) is timed. Only with --slow.
//
// BM_AdmitUntilFull and BM_ReservationCycle take a `backfill` argument
// (SchedulerConfig::backfill.enable, with Workload::runtime_estimate on every workload). The
// files also build against an engine from before reservations (commit 618428f), for an old-vs-new
// comparison (copy all four engine_bench* files): there, backfill:1 variants skip with an error and
// estimates are not set.
//
// Building the model, Create() and Submit() are never inside the timed region: every benchmark
// uses manual timing around RunCycle only. The first argument of each is the node count, so a
// scaled-down run for a profiler is a --benchmark_filter away (see bench/README.md). The flag
// --slow adds the full-size BM_AdmitUntilFull with preemption (half a minute or more) and
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_bench_util.h"

namespace tessera::bench {

namespace {

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
        w.pod_sets[0].topology = {"tessera.dev/rack", 0, true, ""};
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
    std::vector<Decision> decisions = TimedCycle(state, *s, now, samples);
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

// The full-size backlog with preemption: half a minute or more on a 2-core machine.
// Also BM_ReservationCycle at 1,000 nodes with reservations on, and BM_NeedCapacity
// (engine_bench_time.cc).
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
  // ProvisioningRequests' question on the full backlog (issue 17), each after a cycle.
  benchmark::RegisterBenchmark("BM_NeedCapacity", &BM_NeedCapacity)
      ->ArgNames({"nodes", "workloads", "backfill", "max_requests"})
      ->Args({kFullNodes, 110000, 0, 64})
      ->Args({kFullNodes, 110000, 1, 64})
      ->Args({kScaledNodes, 11000, 1, 64})
      ->UseManualTime()
      ->Iterations(20)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace tessera::bench

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
  if (slow) tessera::bench::RegisterSlowBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
