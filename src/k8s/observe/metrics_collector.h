// MetricsCollector: turns the engine's state and the decisions the controller carries out into
// the labelled families of Metrics (metrics.h; every metric: docs/observability.md): Kueue's
// per-ClusterQueue set, GPU allocation and idle nodes per flavor, reservations and expected
// waits, and the GPU-seconds and cost counters per team.
//
// The loop calls the On* hooks as it carries decisions out, and Collect after cycles (with the
// status writes, at most once a status period). Counters that integrate over time (idle node
// seconds, GPU-seconds, dollars) grow by what held between two Collects, so their resolution is
// the status period. Nothing here keeps a workload id across calls: the engine's ids change at
// every rebuild.
//
// Thread-safety: one thread (the controller's loop); Metrics is thread-safe for the scrapes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/scheduler.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {

class MetricsCollector {
 public:
  explicit MetricsCollector(Metrics* metrics) : metrics_(metrics) {}

  // One engine RunCycle took `seconds`; `attempts_before` was engine.stats().attempts before it.
  // An admission attempt (Kueue's) when it tried or decided something.
  void OnCycle(const Scheduler& engine, int64_t attempts_before,
               const std::vector<Decision>& decisions, double seconds);
  // Workload `id` was admitted after waiting `wait` seconds since its submission.
  void OnAdmit(const Scheduler& engine, WorkloadId id, double wait);
  // A kPreempt decision, before the victim leaves the engine.
  void OnPreempt(const Scheduler& engine, const Decision& d);
  // Workload `id` waited past its wait limit (a kWaitLimitExceeded decision, the first of its
  // workload: the controller reports one per workload, across engine rebuilds).
  void OnWaitLimitExceeded(const Scheduler& engine, WorkloadId id);

  // One workload the controller has in the engine; `foreign`: bound pods of another scheduler,
  // which take capacity (allocation, idle nodes, cost) but are in no queue's figures.
  struct Tracked {
    WorkloadId id = -1;
    bool foreign = false;
    // Its GPU utilization as dcgm-exporter measures it now (utilization.h); std::nullopt when
    // not measured. What the effective GPU-seconds and cost grow by.
    std::optional<double> utilization;
    // It waited past its wait limit (a kWaitLimitExceeded decision was carried out for it).
    bool past_wait_limit = false;
  };
  // Recomputes the gauges from the engine and grows the time-integrated counters by what held
  // since the last call; `now` is the engine's clock (seconds).
  void Collect(const Scheduler& engine, const std::vector<Tracked>& workloads, double now);

 private:
  void CollectQueues(const Scheduler& engine, const std::vector<Tracked>& workloads, double now);
  void CollectQuotas(const Scheduler& engine);
  // GPUs per flavor, idle nodes; GPU-seconds and dollars over `dt`.
  void CollectCapacity(const Scheduler& engine, const std::vector<Tracked>& workloads, double dt);
  void CollectCost(const Scheduler& engine, const std::vector<Tracked>& workloads, double dt);

  Metrics* const metrics_;
  double last_now_ = -1;
};

// A Prometheus label name for a Kubernetes label key: label_ and the key with every character
// other than [a-zA-Z0-9_] as '_' (kube-state-metrics' convention).
std::string PrometheusLabelName(const std::string& key);

}  // namespace tessera::k8s
