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
  // The key a pending workload of a fair-sharing ClusterQueue is ordered by (WorkloadRec::
  // afs_key): its LocalQueue's usage / weight at the last sample; for one that waited past its
  // wait limit (time/wait_limits.h), that of the least-used LocalQueue with pending workloads in
  // its ClusterQueue, so that it goes ahead of every workload of its priority and priority still
  // orders it among that LocalQueue's workloads. 0 elsewhere. Called as the workload enters its
  // queue (PendingQueues::Enqueue: an arrival, a requeue, a move).
  double EntryKey(WorkloadId id);

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
  // Its LocalQueue's usage / weight.
  double LocalKey(WorkloadId id) const;

  Engine& e_;
  EngineState& s_;
  bool enabled_ = false;
  std::vector<int32_t> cqs_;   // ClusterQueues ordered by usage
  std::vector<double> usage_;  // per LocalQueue: the weighted sum of consumed_
  std::vector<Term> terms_;
  std::vector<std::vector<double>> consumed_;  // per LocalQueue, per term (Kubernetes units)
  std::vector<std::pair<int32_t, LocalQueueUsage>> seeds_;
  std::vector<double> weight_;  // per LocalQueue
  // Per ClusterQueue: the least LocalKey of its pending workloads at the last sample, and of
  // those that entered since (an overdue workload's key).
  std::vector<double> floor_;
  double last_ = -1;  // last sample
  double next_ = std::numeric_limits<double>::infinity();
};

}  // namespace tessera
