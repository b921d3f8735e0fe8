// engine_bench: reservations and backfill planned cycle after cycle (BM_ReservationCycle, issue
// 14), and the capacity a backlog asks of an autoscaler (BM_NeedCapacity, issue 17). See
// engine_bench.cc.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "engine_bench_util.h"

namespace tessera::bench {

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

// --- 6. Kubernetes mode's ProvisioningRequests (issue 17): Scheduler::NeedCapacity on the same
// full cluster and backlog as BM_ReservationCycle, as serve calls it after every cycle (and at
// most every status period): `finish` workloads end, one RunCycle admits what fits (untimed),
// then NeedCapacity(max_requests) is timed. It scans every workload, sorts the pending ones into
// queue order and tries each (a trial placement, beside the reservations of the heads before it
// with backfill on) until `max_requests` need capacity; what the earlier ones would take counts
// against the later ones. Args: nodes, workloads, backfill, max_requests (serve's
// --provisioning-max-requests, 64 by default).
void BM_NeedCapacity(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  const bool backfill = state.range(2) != 0;
  const int max_requests = static_cast<int>(state.range(3));
  constexpr int kFinish = 5;
#if !TESSERA_BENCH_HAS_NEED_CAPACITY
  state.SkipWithError("this engine has no NeedCapacity");
  (void)max_requests;
  return;
#endif
  Model model = MakeClusterModel(nodes, /*preemption=*/false);
  if (!SetBackfill(model, backfill)) {
    state.SkipWithError("this engine has no reservations or backfill");
    return;
  }
  auto s = CreateOrDie(std::move(model));
  WorkloadMix mix(kSeed);
  std::vector<double> runtime;
  for (int i = 0; i < workloads; ++i) {
    Workload w = mix.Next();
    runtime.push_back(RuntimeOf(i));
    SetEstimate(w, runtime.back());
    SubmitNew(*s, std::move(w), 0);
  }
  double now = 0;
  using End = std::pair<double, WorkloadId>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  auto note_admissions = [&](const std::vector<Decision>& decisions) {
    for (const Decision& d : decisions)
      if (d.type == Decision::Type::kAdmit) ends.push({now + runtime[d.workload], d.workload});
  };
  note_admissions(s->RunCycle(now));
  int64_t pending = 0;
  for (WorkloadId id = 0; id < s->num_workloads(); ++id)
    if (s->status(id).state == WorkloadState::kPending) ++pending;
  std::vector<double> samples, cpu_samples;
  int64_t needing = 0;
  for (auto _ : state) {
    for (int k = 0; k < kFinish && !ends.empty(); ++k) {
      const auto [end, id] = ends.top();
      ends.pop();
      now = std::max(now, end);
      s->Finish(id, now);
    }
    note_admissions(s->RunCycle(now));
    const auto start = Clock::now();
    const double cpu_start = ThreadCpuSeconds();
#if TESSERA_BENCH_HAS_NEED_CAPACITY
    const std::vector<WorkloadId> need = s->NeedCapacity(max_requests);
#else
    const std::vector<WorkloadId> need;  // not reached: skipped above
#endif
    const double secs = SecondsSince(start);
    cpu_samples.push_back(ThreadCpuSeconds() - cpu_start);
    state.SetIterationTime(secs);
    samples.push_back(secs);
    needing += static_cast<int64_t>(need.size());
  }
  state.counters["pending"] = static_cast<double>(pending);
  state.counters["need_capacity"] = static_cast<double>(needing) / samples.size();
  state.counters["p50_ms"] = Percentile(samples, 0.50) * 1e3;
  state.counters["p99_ms"] = Percentile(samples, 0.99) * 1e3;
  state.counters["cpu_p50_ms"] = Percentile(cpu_samples, 0.50) * 1e3;
  state.counters["cpu_max_ms"] = cpu_samples.back() * 1e3;
}

}  // namespace tessera::bench
