#include "engine_bench_util.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <utility>

namespace tessera::bench {

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int64_t HeapBytes() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  }
  return 0;
}

std::string CqName(int cq) { return fmt::format("cq-{:03d}", cq); }

namespace {

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

}  // namespace

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

Workload WorkloadMix::Next(const std::string& priority) {
  int cq = std::uniform_int_distribution<int>(0, kClusterQueues - 1)(rng_);
  return NextIn(cq, priority);
}

Workload WorkloadMix::NextIn(int cq, const std::string& priority) {
  int p = std::uniform_int_distribution<int>(0, 99)(rng_);
  if (p < 85) return Make(cq, priority, 1, DrawPodGpus(p));
  return Make(cq, priority, std::uniform_int_distribution<int>(2, 8)(rng_), kGpusPerNode);
}

Workload WorkloadMix::SinglePod(int cq, const std::string& priority, int max_gpus) {
  int gpus = DrawPodGpus(std::uniform_int_distribution<int>(0, 84)(rng_));
  while (gpus > max_gpus) gpus /= 2;
  return Make(cq, priority, 1, gpus);
}

Workload WorkloadMix::Make(int cq, const std::string& priority, int pods, int gpus_per_pod) {
  Workload w = testing::WL(fmt::format("wl-{:06d}", next_++))
                   .Queue(CqName(cq))
                   .Pods(pods, gpus_per_pod)
                   .Priority(priority)
                   .Obj();
  w.kind = pods > 1 ? "PyTorchJob" : "Job";
  return w;
}

WorkloadId SubmitNew(Scheduler& s, Workload w, double now) {
  WorkloadId id = s.AddWorkload(std::move(w));
  s.Submit(id, now);
  return id;
}

void WithdrawPending(Scheduler& s, const std::vector<WorkloadId>& ids, double now) {
  for (WorkloadId id : ids)
    if (s.status(id).state == WorkloadState::kPending) s.Finish(id, now);
}

double Percentile(std::vector<double>& samples, double p) {
  std::sort(samples.begin(), samples.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

double GpuUtilPercent(const Scheduler& s) {
  return 100.0 * static_cast<double>(s.gpus_allocated()) / static_cast<double>(s.gpus_total());
}

double RuntimeOf(int64_t i) {
  uint64_t z = kSeed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
  return std::round(600.0 * std::exp(u * std::log(60.0)));
}

bool SetBackfill(Model& model, bool on) {
#if TESSERA_BENCH_HAS_BACKFILL
  model.config.backfill.enable = on;
  return true;
#else
  (void)model;
  return !on;
#endif
}

void SetEstimate(Workload& w, double seconds) {
#if TESSERA_BENCH_HAS_BACKFILL
  w.runtime_estimate = seconds;
#else
  (void)w;
  (void)seconds;
#endif
}

std::vector<Decision> TimedCycle(benchmark::State& state, Scheduler& s, double now,
                                 std::vector<double>& samples) {
  const auto start = Clock::now();
  std::vector<Decision> decisions = s.RunCycle(now);
  const double secs = SecondsSince(start);
  state.SetIterationTime(secs);
  samples.push_back(secs);
  return decisions;
}

}  // namespace tessera::bench
