// engine_bench: a 64-GPU gang preempting its way into a full cluster (BM_PreemptGang64), and
// placed in one rack (BM_TopologyGang64). See engine_bench.cc.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine_bench_util.h"

namespace tessera::bench {

namespace {

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
    std::vector<Decision> decisions = TimedCycle(state, *s, now, samples);
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
    gang.pod_sets[0].topology = {"tessera.dev/rack", 0, required, ""};
    WorkloadId id = SubmitNew(*s, std::move(gang), now += 1e-3);
    TimedCycle(state, *s, now, samples);
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

}  // namespace
}  // namespace tessera::bench
