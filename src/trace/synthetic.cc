#include "trace/synthetic.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"

namespace tessera::trace {
namespace {

// splitmix64: small, fast and specified exactly, so a seed means the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  uint64_t state_;
};

struct JobShape {
  double weight;
  int32_t pods_lo, pods_hi;
  int32_t gpus;
  int32_t gpu_milli;
  int32_t model_set;  // -1 any
};

// The job mix: CPU-only pods, GPU shares, 1-8 GPU pods and gangs of 8-GPU pods.
constexpr JobShape kShapes[] = {
    {0.15, 1, 1, 0, 0, -1},    // CPU only
    {0.10, 1, 1, 0, 250, -1},  // a quarter of a GPU
    {0.10, 1, 1, 0, 500, -1},  // half a GPU
    {0.25, 1, 1, 1, 0, -1},   {0.10, 1, 1, 2, 0, -1},
    {0.10, 1, 1, 4, 0, -1},   {0.15, 1, 1, 8, 0, 0},  // one A100 node
    {0.05, 2, 4, 8, 0, 0},                            // a gang of 2-4 A100 nodes
};

}  // namespace

Trace GenerateSynthetic(const SyntheticOptions& o) {
  Trace t;
  Rng rng(o.seed);
  t.gpu_model_sets = {{"A100"}};
  t.nodes.reserve(o.nodes);
  int64_t total_gpus = 0;
  for (int32_t i = 0; i < o.nodes; ++i) {
    TraceNode n;
    n.name = fmt::format("node-{:05d}", i);
    double u = rng.Uniform();
    if (u < 0.7) {
      n.cpu_milli = 96000, n.memory_mib = 786432, n.gpus = 8, n.gpu_model = "A100";
    } else if (u < 0.9) {
      n.cpu_milli = 48000, n.memory_mib = 196608, n.gpus = 4, n.gpu_model = "T4";
    } else {
      n.cpu_milli = 64000, n.memory_mib = 262144;
    }
    n.source = "synthetic";
    total_gpus += n.gpus;
    t.nodes.push_back(std::move(n));
  }
  for (int32_t q = 0; q < o.queues; ++q) t.queues.push_back(fmt::format("team-{}", q));
  t.priorities = {"", "0", "100", "1000"};

  // Arrivals are a Poisson process whose rate makes the offered GPU demand `load` times the
  // cluster's GPUs.
  double gpu_seconds = 0;
  for (const auto& s : kShapes) {
    double pods = (s.pods_lo + s.pods_hi) / 2.0;
    gpu_seconds += s.weight * pods * (s.gpus + s.gpu_milli / 1000.0) * o.mean_duration;
  }
  double rate =
      std::max(1e-9, o.load * static_cast<double>(std::max<int64_t>(total_gpus, 1)) / gpu_seconds);
  t.jobs.reserve(o.jobs);
  double now = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    TraceJob j;
    now += rng.Exponential(1.0 / rate);
    j.arrival = std::round(now * 1000) / 1000;  // milliseconds, as a trace would have them
    double u = rng.Uniform();
    const JobShape* shape = &kShapes[0];
    for (const auto& s : kShapes) {
      shape = &s;
      if (u < s.weight) break;
      u -= s.weight;
    }
    j.pods = static_cast<int32_t>(rng.Int(shape->pods_lo, shape->pods_hi));
    j.gpus = shape->gpus;
    j.gpu_milli = shape->gpu_milli;
    j.gpu_models = shape->model_set;
    int64_t gpu_units = j.gpus > 0 ? j.gpus : 1;
    j.cpu_milli = gpu_units * rng.Int(2, 10) * 1000;
    j.memory_mib = gpu_units * rng.Int(4, 64) * 1024;
    j.duration = std::max(10.0, std::round(rng.Exponential(o.mean_duration)));
    j.queue = o.queues > 0 ? static_cast<int32_t>(1 + rng.Int(0, o.queues - 1)) : 0;
    double p = rng.Uniform();
    j.priority = p < 0.7 ? 1 : (p < 0.9 ? 2 : 3);
    t.jobs.push_back(std::move(j));
  }
  return t;
}

}  // namespace tessera::trace
