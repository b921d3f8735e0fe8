// Replay throughput: synthetic traces (trace/synthetic.h) replayed through the engine end to end
// (model build, every cycle, metrics), jobs per second of wall time, and the process's peak RSS.
// The full-size target (1,000,000 jobs on 10,000 nodes in under 60 s) runs with --slow; the
// same number comes from `tessera sim replay --synthetic-jobs 1000000 --synthetic-nodes 10000`.
#include <sys/resource.h>

#include <cstring>

#include "benchmark/benchmark.h"
#include "trace/job_source.h"
#include "trace/model_builder.h"
#include "trace/replay.h"
#include "trace/synthetic.h"

namespace tessera::trace {
namespace {

void BM_ReplaySynthetic(benchmark::State& state) {
  SyntheticOptions so;
  so.jobs = state.range(0);
  so.nodes = static_cast<int32_t>(state.range(1));
  so.load = static_cast<double>(state.range(2)) / 100.0;
  so.seed = 1;
  // The jobs as `tessera sim replay --synthetic-jobs` replays them: made as the replay reaches
  // each (trace/job_source.h), `t` holds the cluster only.
  Trace t;
  const SyntheticGenerator cluster(so, t);
  const SyntheticJobs jobs(so, /*limit=*/-1, /*ignore_times=*/false);
  int64_t cycles = 0;
  double wait_p99 = 0;
  for (auto _ : state) {
    Model model;
    std::vector<std::string> notes;
    auto conv = BuildModel(t, jobs, {}, model, notes);
    auto r = RunReplay(std::move(model), t, jobs, *conv, {});
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    cycles = r->cycles;
    wait_p99 = r->all.wait.p99;
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  state.SetItemsProcessed(state.iterations() * so.jobs);
  state.counters["cycles"] = static_cast<double>(cycles);
  state.counters["wait_p99_s"] = wait_p99;
  state.counters["peak_rss_MiB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// jobs, nodes, load in percent
BENCHMARK(BM_ReplaySynthetic)
    ->Args({100000, 1000, 90})
    ->Args({100000, 1000, 120})
    ->Args({100000, 10000, 90})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void Slow() {
  benchmark::RegisterBenchmark("BM_ReplaySynthetic", BM_ReplaySynthetic)
      ->Args({1000000, 10000, 90})
      ->Args({1000000, 10000, 110})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
}

}  // namespace
}  // namespace tessera::trace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--slow") == 0) {
      tessera::trace::Slow();
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
