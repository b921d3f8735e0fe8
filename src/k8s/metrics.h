// Prometheus metrics of `tessera serve` and the HTTP endpoint that serves them with /healthz and
// /readyz. Metric names (all prefixed tessera_):
//   pending_workloads{cluster_queue}        gauge
//   admitted_workloads{cluster_queue}       gauge
//   gpus_allocated{flavor}                  gauge ("" flavor: pods outside any queue)
//   admission_wait_seconds                  histogram, submission to admission
//   bind_latency_seconds                    histogram, one pods/binding request
//   binds_total{result}                     counter (ok, conflict, not_found, error)
//   preemptions_total                       counter, victim workloads
//   evictions_total{result}                 counter
//   scheduling_cycles_total, engine_rebuilds_total   counters
//   workload_resubmits_total                counter, one workload updated in place
//   cycle_duration_seconds                  histogram, one engine RunCycle
//   events_total{result}                    counter, Event occurrences (written, dropped)
//   events_queued                           gauge, Event writes waiting for a writer
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera::k8s {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  // Appends the Prometheus text of this histogram named `name`.
  void Render(const std::string& name, const std::string& help, std::string& out) const;
  int64_t count() const;
  double sum() const;
  // The smallest bucket bound below which at least fraction q of observations lie.
  double Quantile(double q) const;

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<int64_t> counts_;  // GUARDED_BY(mu_), one per bound plus +Inf
  double sum_ = 0;               // GUARDED_BY(mu_)
  int64_t n_ = 0;                // GUARDED_BY(mu_)
};

class Metrics {
 public:
  Metrics();

  Histogram admission_wait;
  Histogram bind_latency;
  Histogram cycle_duration;
  std::atomic<int64_t> binds_ok{0}, binds_conflict{0}, binds_not_found{0}, binds_error{0};
  std::atomic<int64_t> preemptions{0};
  std::atomic<int64_t> evictions_ok{0}, evictions_error{0};
  std::atomic<int64_t> cycles{0}, rebuilds{0}, resubmits{0};
  // Copied from the EventRecorder's stats by the scheduling loop.
  std::atomic<int64_t> events_written{0}, events_dropped{0}, events_queued{0};

  // Replaces the per-queue and per-flavor gauges (the scheduling loop sets them after a cycle).
  void SetGauges(std::map<std::string, int64_t> pending, std::map<std::string, int64_t> admitted,
                 std::map<std::string, int64_t> gpus_by_flavor);
  std::string Render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> pending_, admitted_, gpus_;  // GUARDED_BY(mu_)
};

// Serves /metrics, /healthz and /readyz on `address:port` (port 0 picks a free one).
class MetricsServer {
 public:
  MetricsServer(const Metrics* metrics, std::function<bool()> healthy, std::function<bool()> ready);
  ~MetricsServer();
  // Binds and starts serving on a thread; returns the port, or -1 when it cannot bind.
  int Start(const std::string& address, int port);
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::k8s
