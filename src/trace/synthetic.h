// A seeded generator of synthetic clusters and job streams, so that replay speed can be measured
// at any size (`tessera sim replay --synthetic-jobs N --synthetic-nodes M --seed S`). The mix is
// fixed and documented in docs/trace-replay.md; the same options give the same trace on every
// platform (no std:: distributions, whose output differs between standard libraries).
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>

#include "trace/trace.h"

namespace tessera::trace {

// kMixed: the general mix (CPU-only pods, GPU shares, 1-8 GPU pods, a few gangs) on a mixed
// cluster. kGangs: jobs of 1 to 64 GPUs, many more small than big, with heavy-tailed durations,
// on 8-GPU nodes (issue 14: reservations and backfill). docs/trace-replay.md gives both.
enum class SyntheticMix { kMixed, kGangs };

struct SyntheticOptions {
  int64_t jobs = 1000;
  int32_t nodes = 100;
  uint64_t seed = 1;
  int32_t queues = 8;  // ClusterQueues team-0..team-(n-1)
  double load = 0.9;   // offered GPU demand / GPU capacity
  SyntheticMix mix = SyntheticMix::kMixed;
  double mean_duration = 3600;  // kMixed: seconds, exponential
  // kGangs: log-normal durations of this median and sigma (of the log), within [10 s, max].
  double gang_median_duration = 1200;
  double gang_sigma = 1.5;
  double gang_max_duration = 2 * 86400;
};

Trace GenerateSynthetic(const SyntheticOptions& options);

// GenerateSynthetic one job at a time: the constructor makes the cluster (nodes, queues,
// priorities, GPU model sets; no jobs) into `cluster`, then Next() makes the trace's jobs in
// order, the same as GenerateSynthetic's. A copy goes on from where the original was.
class SyntheticGenerator {
 public:
  SyntheticGenerator(const SyntheticOptions& options, Trace& cluster);
  TraceJob Next();

 private:
  SyntheticOptions options_;
  uint64_t rng_ = 0;  // the splitmix64 state
  double rate_ = 1;   // arrivals a second
  double now_ = 0;
};

// The mean of the kGangs durations: a log-normal of `median` and `sigma` clamped to [lo, hi].
double ClampedLogNormalMean(double median, double sigma, double lo, double hi);

}  // namespace tessera::trace
