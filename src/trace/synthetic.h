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

struct SyntheticOptions {
  int64_t jobs = 1000;
  int32_t nodes = 100;
  uint64_t seed = 1;
  int32_t queues = 8;           // ClusterQueues team-0..team-(n-1)
  double load = 0.9;            // offered GPU demand / GPU capacity
  double mean_duration = 3600;  // seconds
};

Trace GenerateSynthetic(const SyntheticOptions& options);

}  // namespace tessera::trace
