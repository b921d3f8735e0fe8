// CPU per job against backlog depth: the synthetic mixed trace (trace/synthetic.h) on a small
// cluster, replayed end to end at rising offered load, so that the jobs waiting at any time
// (the backlog) grow while the jobs stay the same. Each run reports the process CPU seconds per
// job and the mean backlog (Little's law: jobs x mean wait / the replay's span). Without a
// backlog a job costs some microseconds; every parked workload that is tried again after each
// admission (engine/pending_queues.h, engine/preemption/) makes the cost grow with the backlog.
// The full case (50,000 jobs on 500 nodes, load 0.9) runs with --slow; the same number
// comes from `tessera sim replay --synthetic-jobs 50000 --synthetic-nodes 500 --seed 1`.
#include <sys/resource.h>

#include <cstring>

#include "benchmark/benchmark.h"
#include "trace/model_builder.h"
#include "trace/replay.h"
#include "trace/synthetic.h"

namespace tessera::trace {
namespace {

double ProcessCpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void BM_BacklogCpuPerJob(benchmark::State& state) {
  SyntheticOptions so;
  so.jobs = state.range(0);
  so.nodes = static_cast<int32_t>(state.range(1));
  so.load = static_cast<double>(state.range(2)) / 100.0;
  so.seed = 1;
  const Trace t = GenerateSynthetic(so);
  double cpu = 0, backlog = 0, preemptions = 0;
  for (auto _ : state) {
    Model model;
    std::vector<std::string> notes;
    auto conv = BuildModel(t, {}, model, notes);
    const double start = ProcessCpuSeconds();
    auto r = RunReplay(std::move(model), t, *conv, {});
    cpu = ProcessCpuSeconds() - start;
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    const double span = r->end - r->start;
    backlog = span > 0 ? static_cast<double>(r->jobs) * r->all.wait.mean / span : 0;
    preemptions = static_cast<double>(r->preemptions);
  }
  state.SetItemsProcessed(state.iterations() * so.jobs);
  state.counters["cpu_us_per_job"] = cpu * 1e6 / static_cast<double>(so.jobs);
  state.counters["mean_backlog_jobs"] = backlog;
  state.counters["preemptions"] = preemptions;
}

// jobs, nodes, load in percent: the same 10,000 jobs on 100 nodes, from no backlog to a short
// one (the deep one, load 0.9, takes minutes: --slow).
BENCHMARK(BM_BacklogCpuPerJob)
    ->Args({10000, 100, 50})
    ->Args({10000, 100, 70})
    ->Args({10000, 100, 80})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void Slow() {
  benchmark::RegisterBenchmark("BM_BacklogCpuPerJob", BM_BacklogCpuPerJob)
      ->Args({10000, 100, 90})
      ->Args({50000, 500, 90})
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
