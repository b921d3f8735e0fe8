// FGD benchmarks on the openb cluster (../shared/traces/openb; skipped when absent):
//   BM_FgdScoreOnePod: FGD scores of one pod against all 1,213 nodes of a cluster filled to
//     about 60% by random placements (filter + score of every node, fragmentation cached).
//   BM_FgdExperimentRun: one whole FGD-experiment run (default trace, FGD, seed 42); per_pod is
//     the run's time per pod.
#include <filesystem>

#include "benchmark/benchmark.h"
#include "fgd/experiment.h"
#include "fgd/trace_csv.h"

namespace tessera::fgd {
namespace {

const std::string kDir = "../shared/traces/openb/";

struct Openb {
  GpuModelTable models;
  Cluster cluster;
  std::unique_ptr<Workload> workload;
};

const Openb* LoadOpenb() {
  static const Openb* openb = []() -> const Openb* {
    for (const std::string& prefix : {std::string(), std::string("../"), std::string("../../")}) {
      const std::string dir = prefix + kDir;
      if (!std::filesystem::exists(dir + "openb_pod_list_default.csv")) continue;
      auto* o = new Openb;
      o->cluster = MakeCluster(ReadNodesCsv(dir + "openb_node_list_gpu_node.csv", o->models)->rows);
      o->workload = std::make_unique<Workload>(
          MakeWorkload("openb_pod_list_default",
                       ReadPodsCsv(dir + "openb_pod_list_default.csv", o->models)->rows));
      return o;
    }
    return nullptr;
  }();
  return openb;
}

void BM_FgdScoreOnePod(benchmark::State& state) {
  const Openb* o = LoadOpenb();
  if (o == nullptr) {
    state.SkipWithError("../shared/traces/openb is absent");
    return;
  }
  const FragmentationMeasure& measure = *o->workload->measure;
  std::vector<NodeGpuState> nodes = o->cluster.nodes;
  Rng rng(1);
  const Scorer best(Policy::kGpuPacking, nullptr);
  int64_t used = 0;
  while (used < o->cluster.total_gpus * 600) {
    const PodRequest pod =
        PodRequest::Of(o->workload->pods[static_cast<size_t>(rng.Below(o->workload->pods.size()))]);
    NodeGpuState& n = nodes[static_cast<size_t>(rng.Below(nodes.size()))];
    if (!Fits(n, pod)) continue;
    Place(n, pod, best.PickGpus(n, pod, rng));
    used += pod.TotalGpuMilli();
  }
  std::vector<double> frag(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) frag[i] = measure.Evaluate(nodes[i]);
  const Scorer fgd(Policy::kFgd, &measure);
  const PodRequest pod{8000, 32768, 1, 470, 0};  // a typical GPU-sharing pod of the trace
  for (auto _ : state) {
    int64_t best_score = -1;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!Fits(nodes[i], pod)) continue;
      best_score = std::max(best_score, fgd.Score(NodeView{&nodes[i], 0, frag[i]}, pod).score);
    }
    benchmark::DoNotOptimize(best_score);
  }
  state.counters["nodes"] = static_cast<double>(nodes.size());
}
BENCHMARK(BM_FgdScoreOnePod)->Unit(benchmark::kMicrosecond);

void BM_FgdExperimentRun(benchmark::State& state) {
  const Openb* o = LoadOpenb();
  if (o == nullptr) {
    state.SkipWithError("../shared/traces/openb is absent");
    return;
  }
  int64_t pods = 0;
  for (auto _ : state) {
    RunResult r = RunFgdExperiment(o->cluster, *o->workload, Policy::kFgd, 42);
    pods = r.pods_arrived;
    benchmark::DoNotOptimize(r);
  }
  // Seconds per pod (filter, FGD scores of all nodes, placement, cluster fragmentation).
  state.counters["per_pod"] =
      benchmark::Counter(static_cast<double>(pods), benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}
BENCHMARK(BM_FgdExperimentRun)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace tessera::fgd

BENCHMARK_MAIN();
