#include "k8s/metrics.h"

#include <httplib.h>

#include <algorithm>

#include "fmt/format.h"

namespace tessera::k8s {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void RenderGauge(const std::string& name, const std::string& label, const std::string& help,
                 const std::map<std::string, int64_t>& values, std::string& out) {
  out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  for (const auto& [k, v] : values)
    out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, Escape(k), v);
}

void RenderCounter(const std::string& name, const std::string& help,
                   const std::vector<std::pair<std::string, int64_t>>& values, std::string& out) {
  out += fmt::format("# HELP {} {}\n# TYPE {} counter\n", name, help, name);
  for (const auto& [labels, v] : values)
    out += fmt::format("{}{} {}\n", name, labels.empty() ? "" : "{" + labels + "}", v);
}

std::vector<double> ExpBuckets(double start, double factor, int n) {
  std::vector<double> b;
  for (int i = 0; i < n; ++i, start *= factor) b.push_back(start);
  return b;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  std::lock_guard<std::mutex> l(mu_);
  ++counts_[i];
  sum_ += v;
  ++n_;
}

int64_t Histogram::count() const {
  std::lock_guard<std::mutex> l(mu_);
  return n_;
}

double Histogram::sum() const {
  std::lock_guard<std::mutex> l(mu_);
  return sum_;
}

double Histogram::Quantile(double q) const {
  std::lock_guard<std::mutex> l(mu_);
  if (n_ == 0) return 0;
  int64_t want = static_cast<int64_t>(q * n_ + 0.5), seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= want) return i < bounds_.size() ? bounds_[i] : bounds_.back();
  }
  return bounds_.back();
}

void Histogram::Render(const std::string& name, const std::string& help, std::string& out) const {
  std::lock_guard<std::mutex> l(mu_);
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  int64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cum);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, n_, name, sum_,
                     name, n_);
}

Metrics::Metrics()
    : admission_wait(ExpBuckets(0.01, 2, 16)),
      bind_latency(ExpBuckets(0.0005, 2, 16)),
      cycle_duration(ExpBuckets(0.0001, 2, 18)) {}

void Metrics::SetGauges(std::map<std::string, int64_t> pending,
                        std::map<std::string, int64_t> admitted,
                        std::map<std::string, int64_t> gpus_by_flavor) {
  std::lock_guard<std::mutex> l(mu_);
  pending_ = std::move(pending);
  admitted_ = std::move(admitted);
  gpus_ = std::move(gpus_by_flavor);
}

std::string Metrics::Render() const {
  std::string out;
  {
    std::lock_guard<std::mutex> l(mu_);
    RenderGauge("tessera_pending_workloads", "cluster_queue",
                "Workloads waiting in each ClusterQueue (\"\": pods outside any queue).", pending_,
                out);
    RenderGauge("tessera_admitted_workloads", "cluster_queue",
                "Workloads admitted in each ClusterQueue.", admitted_, out);
    RenderGauge("tessera_gpus_allocated", "flavor",
                "GPU devices allocated, per ResourceFlavor (\"\": outside any queue).", gpus_, out);
  }
  admission_wait.Render("tessera_admission_wait_seconds",
                        "Time from a workload's submission to its admission.", out);
  bind_latency.Render("tessera_bind_latency_seconds", "Duration of one pods/binding request.", out);
  cycle_duration.Render("tessera_cycle_duration_seconds", "Duration of one engine cycle.", out);
  RenderCounter("tessera_binds_total", "Bind requests by result.",
                {{"result=\"ok\"", binds_ok.load()},
                 {"result=\"conflict\"", binds_conflict.load()},
                 {"result=\"not_found\"", binds_not_found.load()},
                 {"result=\"error\"", binds_error.load()}},
                out);
  RenderCounter("tessera_preemptions_total", "Workloads preempted.", {{"", preemptions.load()}},
                out);
  RenderCounter(
      "tessera_evictions_total", "Eviction requests by result.",
      {{"result=\"ok\"", evictions_ok.load()}, {"result=\"error\"", evictions_error.load()}}, out);
  RenderCounter("tessera_scheduling_cycles_total", "Engine cycles run.", {{"", cycles.load()}},
                out);
  RenderCounter("tessera_engine_rebuilds_total",
                "Engine rebuilds from a fresh snapshot (node or queue changes, resyncs).",
                {{"", rebuilds.load()}}, out);
  RenderCounter("tessera_workload_resubmits_total",
                "Workloads taken out of the engine and put back with their pods as they are now "
                "(a gang that grew or lost a pod), without a rebuild.",
                {{"", resubmits.load()}}, out);
  RenderCounter("tessera_events_total",
                "Event occurrences written to the API server, and dropped (Events are best "
                "effort: writes wait behind binds, at most 10,000 queued).",
                {{"result=\"written\"", events_written.load()},
                 {"result=\"dropped\"", events_dropped.load()}},
                out);
  out += fmt::format(
      "# HELP tessera_events_queued Event writes waiting for a writer.\n"
      "# TYPE tessera_events_queued gauge\ntessera_events_queued {}\n",
      events_queued.load());
  return out;
}

struct MetricsServer::Impl {
  const Metrics* metrics;
  std::function<bool()> healthy, ready;
  httplib::Server server;
  std::thread thread;
};

MetricsServer::MetricsServer(const Metrics* metrics, std::function<bool()> healthy,
                             std::function<bool()> ready)
    : impl_(std::make_unique<Impl>()) {
  impl_->metrics = metrics;
  impl_->healthy = std::move(healthy);
  impl_->ready = std::move(ready);
  Impl* impl = impl_.get();
  impl->server.Get("/metrics", [impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl->metrics->Render(), "text/plain; version=0.0.4");
  });
  impl->server.Get("/healthz", [impl](const httplib::Request&, httplib::Response& res) {
    bool ok = impl->healthy();
    res.status = ok ? 200 : 500;
    res.set_content(ok ? "ok\n" : "unhealthy\n", "text/plain");
  });
  impl->server.Get("/readyz", [impl](const httplib::Request&, httplib::Response& res) {
    bool ok = impl->ready();
    res.status = ok ? 200 : 503;
    res.set_content(ok ? "ok\n" : "not ready: caches not synced or not the leader\n", "text/plain");
  });
}

MetricsServer::~MetricsServer() { Stop(); }

int MetricsServer::Start(const std::string& address, int port) {
  int bound = port == 0 ? impl_->server.bind_to_any_port(address)
                        : (impl_->server.bind_to_port(address, port) ? port : -1);
  if (bound < 0) return -1;
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  return bound;
}

void MetricsServer::Stop() {
  if (impl_->thread.joinable()) {
    impl_->server.stop();
    impl_->thread.join();
  }
}

}  // namespace tessera::k8s
