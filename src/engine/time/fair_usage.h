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
  double usage(int32_t lq) const { return lq < 0 || usage_.empty() ? 0 : usage_[lq]; }
  // Its decayed usage per resource (Scheduler::local_queue_usage).
  LocalQueueUsage Consumed(int32_t lq) const;
  // Scheduler::SeedLocalQueueUsage: applied, decayed, at the first Sample.
  void Seed(int32_t lq, LocalQueueUsage u) { seeds_.emplace_back(lq, std::move(u)); }

 private:
  // One resource the usage counts: `weight` per `scale` of its amount in Kubernetes units.
  struct Term {
    ResourceId r;
    double weight;
    double scale;
  };
  // What the workload's placed pods hold now, per term.
  void Holds(WorkloadId id, std::vector<double>& into) const;
  void Setup(double now);
  void ApplySeeds(double now);
  double WeightedOf(const std::vector<double>& per_term) const;
  void Reorder(int32_t cq);

  Engine& e_;
  EngineState& s_;
  bool enabled_ = false;
  std::vector<int32_t> cqs_;   // ClusterQueues ordered by usage
  std::vector<double> usage_;  // per LocalQueue: the weighted sum of consumed_
  std::vector<Term> terms_;
  std::vector<std::vector<double>> consumed_;  // per LocalQueue, per term (Kubernetes units)
  std::vector<std::pair<int32_t, LocalQueueUsage>> seeds_;
  std::vector<double> weight_;  // per LocalQueue
  double last_ = -1;            // last sample
  double next_ = std::numeric_limits<double>::infinity();
};

}  // namespace tessera
