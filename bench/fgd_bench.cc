// FGD benchmarks on the openb cluster (../shared/traces/openb; skipped when absent):
//   BM_FgdScoreOnePod: FGD scores of one pod against all 1,213 nodes of a cluster filled to
//     about 60% by random placements (filter + score of every node, every iteration; the nodes'
//     fragmentation cached as the experiment keeps it, no score kept). ...WholeGpu,
//     ...TwoGpus, ...CpuOnly: the same for the other kinds of pods.
//   BM_FgdExperimentRun: one whole FGD-experiment run (default trace, FGD, seed 42); per_pod is
//     the run's time per pod.
#include <algorithm>
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

// The openb cluster filled to about 60% by random placements (the same every run), and the
// fragmentation of every node as the experiment caches it.
struct FilledCluster {
  std::vector<NodeGpuState> nodes;
  std::vector<double> frag;
};

const FilledCluster& Filled(const Openb& o) {
  static const FilledCluster filled = [&] {
    FilledCluster c;
    c.nodes = o.cluster.nodes;
    Rng rng(1);
    const Scorer best(Policy::kGpuPacking, nullptr);
    int64_t used = 0;
    while (used < o.cluster.total_gpus * 600) {
      const PodRequest pod =
          PodRequest::Of(o.workload->pods[static_cast<size_t>(rng.Below(o.workload->pods.size()))]);
      NodeGpuState& n = c.nodes[static_cast<size_t>(rng.Below(c.nodes.size()))];
      if (!Fits(n, pod)) continue;
      Place(n, pod, best.PickGpus(n, pod, rng));
      used += pod.TotalGpuMilli();
    }
    for (const NodeGpuState& n : c.nodes) c.frag.push_back(o.workload->measure->Evaluate(n));
    return c;
  }();
  return filled;
}

// Filter and FGD score of `pod` on every node, every iteration (no score is kept between
// iterations). Counters: the nodes, the feasible ones, and the GPUs whose placement is measured
// (a sharing pod: the distinct free values among the GPUs that fit).
void ScoreAllNodes(benchmark::State& state, const PodRequest& pod) {
  const Openb* o = LoadOpenb();
  if (o == nullptr) {
    state.SkipWithError("../shared/traces/openb is absent");
    return;
  }
  const FilledCluster& c = Filled(*o);
  const Scorer fgd(Policy::kFgd, o->workload->measure.get());
  for (auto _ : state) {
    int64_t best_score = -1;
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (!Fits(c.nodes[i], pod)) continue;
      best_score = std::max(best_score, fgd.Score(NodeView{&c.nodes[i], 0, c.frag[i]}, pod).score);
    }
    benchmark::DoNotOptimize(best_score);
  }
  int64_t feasible = 0;
  int64_t tried = 0;
  for (const NodeGpuState& n : c.nodes) {
    if (!Fits(n, pod)) continue;
    ++feasible;
    if (!pod.IsShare()) {
      ++tried;
      continue;
    }
    std::vector<int32_t> values;
    for (int g = 0; g < n.num_gpus; ++g) {
      const int32_t free = n.gpu_free_milli[static_cast<size_t>(g)];
      if (free >= pod.gpu_milli && std::find(values.begin(), values.end(), free) == values.end()) {
        values.push_back(free);
      }
    }
    tried += static_cast<int64_t>(values.size());
  }
  state.counters["nodes"] = static_cast<double>(c.nodes.size());
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["tried"] = static_cast<double>(tried);
}

// A typical GPU-sharing pod of the trace: 8 cores, 32 GiB, 470 milli of one GPU.
void BM_FgdScoreOnePod(benchmark::State& state) { ScoreAllNodes(state, {8000, 32768, 1, 470, 0}); }
BENCHMARK(BM_FgdScoreOnePod)->Unit(benchmark::kMicrosecond);

// The other kinds of pods: one whole GPU, two whole GPUs, no GPU.
void BM_FgdScoreOnePodWholeGpu(benchmark::State& state) {
  ScoreAllNodes(state, {12000, 32768, 1, 1000, 0});
}
BENCHMARK(BM_FgdScoreOnePodWholeGpu)->Unit(benchmark::kMicrosecond);
void BM_FgdScoreOnePodTwoGpus(benchmark::State& state) {
  ScoreAllNodes(state, {16000, 65536, 2, 1000, 0});
}
BENCHMARK(BM_FgdScoreOnePodTwoGpus)->Unit(benchmark::kMicrosecond);
void BM_FgdScoreOnePodCpuOnly(benchmark::State& state) {
  ScoreAllNodes(state, {4000, 8192, 0, 0, 0});
}
BENCHMARK(BM_FgdScoreOnePodCpuOnly)->Unit(benchmark::kMicrosecond);

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
