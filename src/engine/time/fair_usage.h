// Usage-based admission fair sharing (Kueue's AdmissionFairSharing; docs/time.md): inside a
// ClusterQueue whose admissionScope.admissionMode is UsageBasedAdmissionFairSharing, workloads
// are ordered first by their LocalQueue's decayed usage divided by its weight
// (spec.fairSharing.weight), lowest first, then by priority and creation as usual. A team that
// used much recently waits behind one that did not; usage fades with a half-life.
//
// Every usageSamplingInterval the usage of each LocalQueue moves towards what its admitted
// workloads hold now: u <- (1 - a) u + a * now, a = 1 - 0.5^(elapsed / usageHalfLifeTime)
// (a = 1 with a half-life of 0: no memory). What counts is resourceWeights (per GPU, CPU core,
// GiB), GPUs alone by default. The order of the queues changes at those samples only (Kueue also
// adds an entry penalty at each admission, between samples; Tessera does not).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <limits>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

class FairUsage {
 public:
  explicit FairUsage(Engine& e);
  bool enabled() const { return enabled_; }
  // At a sampling instant (`now` at or past the next one): updates every LocalQueue's usage and
  // re-orders the pending workloads of the queues that use it.
  void Sample(double now);
  // The next sampling instant after `now` while some such queue has pending workloads;
  // +infinity otherwise.
  double Next(double now) const;
  // The decayed, weighted usage of LocalQueue `lq` (index in Model::local_queues).
  double usage(int32_t lq) const { return lq < 0 ? 0 : usage_[lq]; }

 private:
  double Weighted(WorkloadId id) const;  // what the workload's placed pods count now
  void Reorder(int32_t cq);

  Engine& e_;
  EngineState& s_;
  bool enabled_ = false;
  std::vector<int32_t> cqs_;    // ClusterQueues ordered by usage
  std::vector<double> usage_;   // per LocalQueue
  std::vector<double> weight_;  // per LocalQueue
  double last_ = -1;            // last sample
  double next_ = std::numeric_limits<double>::infinity();
};

}  // namespace tessera
