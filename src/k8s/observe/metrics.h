// Prometheus metrics of `tessera serve` and the HTTP endpoint that serves them with /healthz and
// /readyz. Every metric, its type, labels and meaning: docs/observability.md. Kueue's metric set
// is exported under Kueue's names and label names with the tessera_ prefix; the rest are
// Tessera's own (bind and cycle health, GPU allocation, idle nodes, reservations, cost).
//
// Two kinds of state: the counters and histograms of what the API path does (binds, evictions,
// Events), kept as atomics that the binder and the loop bump; and labelled families (Kueue's
// per-ClusterQueue gauges and counters, cost) kept in a registry by name, which the loop's
// MetricsCollector (metrics_collector.h) fills. Every family is declared once, in metrics.cc, so
// that Names() is the exporter's complete list (the Grafana dashboard's test reads it).
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace tessera::k8s {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);
  // Appends the Prometheus text of this histogram named `name`, with `labels` (`k="v",...`, may
  // be empty) before `le`. The HELP and TYPE lines are the caller's.
  void RenderSamples(const std::string& name, const std::string& labels, std::string& out) const;
  // Appends HELP, TYPE and the samples.
  void Render(const std::string& name, const std::string& help, std::string& out) const;
  int64_t count() const;
  double sum() const;
  // The smallest bucket bound below which at least fraction q of observations lie.
  double Quantile(double q) const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<int64_t> counts_;  // GUARDED_BY(mu_), one per bound plus +Inf
  double sum_ = 0;               // GUARDED_BY(mu_)
  int64_t n_ = 0;                // GUARDED_BY(mu_)
};

// Label values of one sample, in the order of its family's label names.
using LabelValues = std::vector<std::string>;

// The label value for "no such object": a workload without a ClusterQueue, a node that matches
// no ResourceFlavor. Prometheus reads an empty label value as an absent label.
inline constexpr std::string_view kNoneLabel = "(none)";

class Metrics {
 public:
  Metrics();
  ~Metrics();

  Histogram bind_latency;
  Histogram cycle_duration;
  std::atomic<int64_t> binds_ok{0}, binds_conflict{0}, binds_not_found{0}, binds_error{0};
  std::atomic<int64_t> preemptions{0};  // victim workloads (also in preempted_workloads_total)
  std::atomic<int64_t> evictions_ok{0}, evictions_error{0};
  std::atomic<int64_t> cycles{0}, rebuilds{0}, resubmits{0};
  // Scheduler::NeedCapacity runs (--provisioning-requests): only after the engine changed.
  std::atomic<int64_t> capacity_plans{0};
  // Copied from the EventRecorder's stats by the scheduling loop.
  std::atomic<int64_t> events_written{0}, events_dropped{0}, events_queued{0};

  // Labelled families by name (declared in metrics.cc; REQUIRES: `name` is one of them with as
  // many label values as it has label names).
  // A counter grows by `by` (>= 0).
  void Add(std::string_view name, const LabelValues& labels, double by = 1);
  // Counters that grow together (GPU-seconds and their dollars) grow in one step: a scrape sees
  // all of them or none, so ratios between families read in one scrape are exact.
  struct Increment {
    std::string_view name;
    LabelValues labels;
    double by = 1;
  };
  void AddAll(const std::vector<Increment>& increments);
  // A histogram observes `v`.
  void Observe(std::string_view name, const LabelValues& labels, double v);
  // A gauge family is replaced whole: samples not given disappear.
  void SetGauges(std::string_view name, std::map<LabelValues, double> samples);
  // Replaces a family's label names (the cost counters' rollup labels come from the
  // SchedulerConfig); its samples are dropped when they change.
  void SetLabelNames(std::string_view name, std::vector<std::string> labels);
  std::vector<std::string> label_names(std::string_view name) const;
  // The value of a counter or gauge sample, or a histogram's count; 0 when absent (tests).
  double Value(std::string_view name, const LabelValues& labels) const;

  std::string Render() const;
  // Every metric name Render() may write (base names: a histogram's, not its _bucket series).
  static std::vector<std::string> Names();

 private:
  struct Family;
  Family& Find(std::string_view name) const;

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Family>, std::less<>> families_;  // GUARDED_BY(mu_)
};

// Serves /metrics, /healthz and /readyz on `address:port` (port 0 picks a free one), and the
// routes others add: the read-only JSON API (api_routes.h), the dashboard's pages.
class MetricsServer {
 public:
  MetricsServer(const Metrics* metrics, std::function<bool()> healthy, std::function<bool()> ready);
  ~MetricsServer();
  // More routes: `add` registers them on the server (Get(pattern, handler), GET only: nothing
  // served here writes). Call before Start. The handlers run on the server's threads.
  void AddRoutes(const std::function<void(httplib::Server&)>& add);
  // With a non-empty token, a request whose path starts with one of `prefixes` (e.g. "/api/")
  // needs the header `Authorization: Bearer <token>`; without it, or with another token, it is
  // answered 401 with {"error": "..."} before any route runs. /metrics, /healthz and /readyz are
  // never behind it. Call before Start.
  void RequireToken(std::string token, std::vector<std::string> prefixes);
  // Binds and starts serving on a thread; returns the port, or -1 when it cannot bind.
  int Start(const std::string& address, int port);
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether `authorization` (the Authorization header's value) is "Bearer <token>" for this token,
// compared in constant time. An empty token authorizes nothing.
bool BearerTokenMatches(std::string_view authorization, std::string_view token);

}  // namespace tessera::k8s
