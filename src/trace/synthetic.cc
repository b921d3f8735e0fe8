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
  uint64_t state() const { return state_; }
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

// Jobs of 1 to 64 GPUs (kGangs): pods of at most 8 GPUs each, so a 32-GPU job is 4 pods of 8.
struct GangSize {
  double weight;
  int32_t gpus;
};
constexpr GangSize kGangSizes[] = {{0.50, 1},  {0.15, 2},  {0.10, 4}, {0.10, 8},
                                   {0.07, 16}, {0.05, 32}, {0.03, 64}};

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// kMixed: 70% 8 x A100, 20% 4 x T4, 10% CPU-only. kGangs: every node 8 x A100.
int64_t AddNodes(const SyntheticOptions& o, Rng& rng, Trace& t) {
  t.nodes.reserve(static_cast<size_t>(o.nodes));
  int64_t total_gpus = 0;
  for (int32_t i = 0; i < o.nodes; ++i) {
    TraceNode n;
    n.name = fmt::format("node-{:05d}", i);
    double u = o.mix == SyntheticMix::kGangs ? 0 : rng.Uniform();
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
  return total_gpus;
}

// The arrival rate (jobs a second) that makes the offered GPU demand `load` times the cluster's
// GPUs: load x GPUs / (mean GPU-seconds of a job).
double ArrivalRate(const SyntheticOptions& o, int64_t total_gpus) {
  double gpu_seconds = 0;
  if (o.mix == SyntheticMix::kGangs) {
    for (const auto& g : kGangSizes) gpu_seconds += g.weight * g.gpus;
    gpu_seconds *= ClampedLogNormalMean(o.gang_median_duration, o.gang_sigma, 10,
                                        std::max(10.0, o.gang_max_duration));
  } else {
    for (const auto& s : kShapes) {
      double pods = (s.pods_lo + s.pods_hi) / 2.0;
      gpu_seconds += s.weight * pods * (s.gpus + s.gpu_milli / 1000.0) * o.mean_duration;
    }
  }
  return std::max(1e-9, o.load * static_cast<double>(std::max<int64_t>(total_gpus, 1)) /
                            std::max(gpu_seconds, 1e-9));
}

// One job of the general mix.
void MixedJob(const SyntheticOptions& o, Rng& rng, TraceJob& j) {
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
}

// One job of the gang mix: no priority (the default), any GPU model (all nodes are alike).
void GangJob(const SyntheticOptions& o, Rng& rng, TraceJob& j) {
  double u = rng.Uniform();
  int32_t gpus = kGangSizes[0].gpus;
  for (const auto& g : kGangSizes) {
    gpus = g.gpus;
    if (u < g.weight) break;
    u -= g.weight;
  }
  j.gpus = std::min(gpus, 8);
  j.pods = std::max(1, gpus / 8);
  j.cpu_milli = int64_t{j.gpus} * rng.Int(2, 10) * 1000;
  j.memory_mib = int64_t{j.gpus} * rng.Int(4, 64) * 1024;
  // Box-Muller: a standard normal from two uniforms.
  const double z = std::sqrt(-2.0 * std::log1p(-rng.Uniform())) *
                   std::cos(2.0 * 3.14159265358979323846 * rng.Uniform());
  const double d = o.gang_median_duration * std::exp(o.gang_sigma * z);
  j.duration = std::clamp(std::round(d), 10.0, std::max(10.0, o.gang_max_duration));
  j.queue = o.queues > 0 ? static_cast<int32_t>(1 + rng.Int(0, o.queues - 1)) : 0;
  j.priority = 0;
}

}  // namespace

double ClampedLogNormalMean(double median, double sigma, double lo, double hi) {
  if (!(sigma > 0)) return std::clamp(median, lo, hi);
  const double mu = std::log(median);
  const double a = (std::log(lo) - mu) / sigma, c = (std::log(hi) - mu) / sigma;
  // E[clamp(X, lo, hi)] = lo P(X < lo) + E[X; lo <= X <= hi] + hi P(X > hi).
  return lo * NormalCdf(a) +
         std::exp(mu + sigma * sigma / 2) * (NormalCdf(c - sigma) - NormalCdf(a - sigma)) +
         hi * (1 - NormalCdf(c));
}

SyntheticGenerator::SyntheticGenerator(const SyntheticOptions& o, Trace& t) : options_(o) {
  Rng rng(o.seed);
  if (o.mix == SyntheticMix::kMixed) t.gpu_model_sets = {{"A100"}};
  const int64_t total_gpus = AddNodes(o, rng, t);
  for (int32_t q = 0; q < o.queues; ++q) t.queues.push_back(fmt::format("team-{}", q));
  if (o.mix == SyntheticMix::kMixed) t.priorities = {"", "0", "100", "1000"};
  rate_ = ArrivalRate(o, total_gpus);
  rng_ = rng.state();
}

TraceJob SyntheticGenerator::Next() {
  // Arrivals are a Poisson process.
  Rng rng(rng_);
  TraceJob j;
  now_ += rng.Exponential(1.0 / rate_);
  j.arrival = std::round(now_ * 1000) / 1000;  // milliseconds, as a trace would have them
  if (options_.mix == SyntheticMix::kGangs) {
    GangJob(options_, rng, j);
  } else {
    MixedJob(options_, rng, j);
  }
  rng_ = rng.state();
  return j;
}

Trace GenerateSynthetic(const SyntheticOptions& o) {
  Trace t;
  SyntheticGenerator gen(o, t);
  t.jobs.reserve(static_cast<size_t>(std::max<int64_t>(0, o.jobs)));
  for (int64_t i = 0; i < o.jobs; ++i) t.jobs.push_back(gen.Next());
  return t;
}

}  // namespace tessera::trace
