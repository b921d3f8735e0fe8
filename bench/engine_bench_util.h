// Shared pieces of engine_bench (engine_bench*.cc): the synthetic cluster of the performance
// targets (10,000 nodes x 8 GPUs, 200 ClusterQueues in 20 cohorts), the seeded workload mix,
// timers and counters. See engine_bench.cc for the list of benchmarks.
#ifndef TESSERA_BENCH_ENGINE_BENCH_UTIL_H_
#define TESSERA_BENCH_ENGINE_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
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

// Kubernetes mode's NeedCapacity (engine/elastic/, issue 17).
#if __has_include("engine/elastic/elastic.h")
#define TESSERA_BENCH_HAS_NEED_CAPACITY 1
#else
#define TESSERA_BENCH_HAS_NEED_CAPACITY 0
#endif

namespace tessera::bench {

constexpr int kGpusPerNode = 8;
constexpr int kClusterQueues = 200;
constexpr int kCohorts = 20;
constexpr int kFullNodes = 10000;
constexpr int kFullWorkloads = 100000;
constexpr int kScaledNodes = kFullNodes / 10;  // for profilers: same queues, a tenth of the rest
constexpr int kScaledWorkloads = kFullWorkloads / 10;
constexpr uint64_t kSeed = 20240611;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start);
// CPU time of this thread, in seconds: on a shared machine the wall clock also counts the time
// other processes had the core, so the cycle benchmarks report both.
double ThreadCpuSeconds();
// Bytes the allocator has handed out and not taken back, large mmap'ed blocks included.
int64_t HeapBytes();
// A "VmRSS:"-style field of /proc/self/status, in bytes (0 when absent).
int64_t ProcStatusBytes(const std::string& field);
std::string CqName(int cq);
// `nodes` nodes in one flavor; 200 ClusterQueues whose nominal quotas add up to the cluster's
// GPUs, ten to a cohort with unlimited borrowing, so that placement and not only quota limits
// what is admitted. With `preemption`: withinClusterQueue LowerPriority, reclaimWithinCohort Any.
Model MakeClusterModel(int nodes, bool preemption);
std::unique_ptr<Scheduler> CreateOrDie(Model model);

// The seeded workload mix: 35% 1-GPU pods, 20% 2-GPU, 15% 4-GPU, 15% 8-GPU, 15% gangs of 2..8
// pods of 8 GPUs (PyTorchJob-like). 8.55 GPUs per workload on average, so 100,000 of them ask
// for about ten times what 10,000 nodes hold.
class WorkloadMix {
 public:
  explicit WorkloadMix(uint64_t seed) : rng_(seed) {}

  // A workload of the mix in a random ClusterQueue.
  Workload Next(const std::string& priority = "low");
  Workload NextIn(int cq, const std::string& priority);
  // A single pod of at most `max_gpus` GPUs, drawn from the single-pod part of the mix.
  Workload SinglePod(int cq, const std::string& priority, int max_gpus);

 private:
  static int DrawPodGpus(int p) { return p < 35 ? 1 : p < 55 ? 2 : p < 70 ? 4 : 8; }
  Workload Make(int cq, const std::string& priority, int pods, int gpus_per_pod);

  std::mt19937_64 rng_;
  int next_ = 0;
};

WorkloadId SubmitNew(Scheduler& s, Workload w, double now);
// Withdraws every pending workload among `ids`, so that no backlog is retried afterwards.
void WithdrawPending(Scheduler& s, const std::vector<WorkloadId>& ids, double now);
// Nearest-rank percentile; sorts `samples`. REQUIRES: !samples.empty().
double Percentile(std::vector<double>& samples, double p);
double GpuUtilPercent(const Scheduler& s);
// The runtime of the `i`-th workload of a benchmark, seconds: log-uniform in [10 min, 10 h],
// a hash of (seed, i), so that it does not disturb the mix's own random sequence.
double RuntimeOf(int64_t i);
// Turns reservations and backfill on or off; false when this engine has none and `on` was asked.
bool SetBackfill(Model& model, bool on);
// Tells the engine the workload's runtime (an exact estimate); nothing before reservations.
void SetEstimate(Workload& w, double seconds);

// Runs one RunCycle at `now`, times it (wall clock) for the benchmark's manual time and appends
// the seconds to `samples`. Returns the cycle's decisions.
std::vector<Decision> TimedCycle(benchmark::State& state, Scheduler& s, double now,
                                 std::vector<double>& samples);

// Benchmarks registered by --slow (engine_bench.cc's main) from other files.
void BM_ReservationCycle(benchmark::State& state);
void BM_NeedCapacity(benchmark::State& state);

}  // namespace tessera::bench

#endif  // TESSERA_BENCH_ENGINE_BENCH_UTIL_H_
