#include "k8s/observe/metrics.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

// A sample value as Prometheus reads it.
std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
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

// Kueue's buckets for waits (generateExponentialBuckets(14)): 1, then 2.5 doubling.
std::vector<double> WaitBuckets() {
  std::vector<double> b = {1};
  for (double v : ExpBuckets(2.5, 2, 13)) b.push_back(v);
  return b;
}

// client_golang's DefBuckets, which Kueue's admission_attempt_duration_seconds uses.
std::vector<double> DefaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

enum class Type { kCounter, kGauge, kHistogram };

struct Declared {
  const char* name;
  Type type;
  std::vector<std::string> labels;
  const char* help;
  std::vector<double> buckets = {};  // histograms
};

const std::vector<std::string> kQuotaLabels = {"cohort", "cluster_queue", "flavor", "resource"};

// Every labelled family, in the order Render writes them (docs/observability.md).
const std::vector<Declared>& Declarations() {
  static const std::vector<Declared> d = {
      // Kueue's names and labels.
      {"tessera_admission_attempts_total",
       Type::kCounter,
       {"result"},
       "Engine cycles that attempted to admit workloads: success when at least one was admitted, "
       "inadmissible otherwise (Kueue's admission_attempts_total)."},
      {"tessera_admission_attempt_duration_seconds",
       Type::kHistogram,
       {"result"},
       "Duration of an admission attempt (one engine cycle), by result.",
       DefaultBuckets()},
      {"tessera_pending_workloads",
       Type::kGauge,
       {"cluster_queue", "status"},
       "Pending workloads per ClusterQueue: active (to be tried) or inadmissible (set aside after "
       "a failed attempt until something changes)."},
      {"tessera_admitted_active_workloads",
       Type::kGauge,
       {"cluster_queue"},
       "Admitted workloads that are running, per ClusterQueue."},
      {"tessera_admitted_workloads_total",
       Type::kCounter,
       {"cluster_queue"},
       "Workloads admitted, per ClusterQueue (a workload admitted again after a preemption counts "
       "again)."},
      {"tessera_admission_wait_time_seconds",
       Type::kHistogram,
       {"cluster_queue"},
       "Time from a workload's submission to its admission, per ClusterQueue.",
       WaitBuckets()},
      {"tessera_evicted_workloads_total",
       Type::kCounter,
       {"cluster_queue", "reason"},
       "Admitted workloads evicted, per ClusterQueue and reason (Preempted, ClusterQueueStopped)."},
      {"tessera_preempted_workloads_total",
       Type::kCounter,
       {"preempting_cluster_queue", "reason"},
       "Workloads preempted, per ClusterQueue of the preemptor and reason (InClusterQueue, "
       "InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing)."},
      {"tessera_cluster_queue_resource_usage", Type::kGauge, kQuotaLabels,
       "Resources in use by the ClusterQueue's admitted workloads, per flavor (base units: cores, "
       "bytes, devices)."},
      {"tessera_cluster_queue_nominal_quota", Type::kGauge, kQuotaLabels,
       "The ClusterQueue's nominal quota, per flavor and resource (base units)."},
      {"tessera_cluster_queue_borrowing_limit", Type::kGauge, kQuotaLabels,
       "The ClusterQueue's borrowing limit, per flavor and resource (base units; absent: "
       "unlimited)."},
      {"tessera_cluster_queue_lending_limit", Type::kGauge, kQuotaLabels,
       "The ClusterQueue's lending limit, per flavor and resource (base units; absent: lends "
       "all)."},
      {"tessera_cluster_queue_weighted_share",
       Type::kGauge,
       {"cluster_queue"},
       "Kueue's weighted share: the largest ratio of usage above nominal quota to what the cohort "
       "can lend, x 1000, over the fair-sharing weight; 0 within nominal quota."},
      // Tessera's own.
      {"tessera_gpus",
       Type::kGauge,
       {"flavor"},
       "GPU devices of schedulable nodes, per ResourceFlavor of the node."},
      {"tessera_gpus_allocated",
       Type::kGauge,
       {"flavor"},
       "GPUs held by running pods (Tessera's and other schedulers'), per ResourceFlavor of the "
       "node; a share counts its fraction."},
      {"tessera_gpu_allocation_ratio",
       Type::kGauge,
       {"flavor"},
       "tessera_gpus_allocated / tessera_gpus, per ResourceFlavor of the node."},
      {"tessera_idle_nodes",
       Type::kGauge,
       {"flavor"},
       "Nodes with GPUs on which no running pod holds a GPU, per ResourceFlavor of the node."},
      {"tessera_idle_node_seconds_total",
       Type::kCounter,
       {"flavor"},
       "Seconds GPU nodes spent with no running pod holding a GPU, summed over nodes, per "
       "ResourceFlavor of the node."},
      {"tessera_reservations",
       Type::kGauge,
       {"cluster_queue"},
       "Reservations held for waiting workloads (docs/time.md), per ClusterQueue."},
      {"tessera_wait_limit_exceeded_total",
       Type::kCounter,
       {"cluster_queue"},
       "Workloads that waited past their wait limit (tessera.dev/max-wait, Volcano's "
       "sla-waiting-time, the ClusterQueue's default) and were moved ahead of their priority, per "
       "ClusterQueue; once per workload (docs/time.md)."},
      {"tessera_pending_workloads_past_wait_limit",
       Type::kGauge,
       {"cluster_queue"},
       "Pending workloads that have waited past their wait limit and are still not admitted, per "
       "ClusterQueue."},
      {"tessera_expected_wait_seconds",
       Type::kGauge,
       {"cluster_queue", "quantile"},
       "Seconds until the expected start of pending workloads that have one, per ClusterQueue: "
       "median (0.5), 0.9 and longest (1)."},
      {"tessera_gpu_seconds_total",
       Type::kCounter,
       {"cluster_queue", "namespace"},
       "GPU-seconds held by running workloads (a share counts its fraction), per team; labels "
       "label_KEY for each SchedulerConfig spec.pricing.rollupLabels key."},
      {"tessera_cost_dollars_total",
       Type::kCounter,
       {"cluster_queue", "namespace"},
       "Allocated cost in dollars (GPU, CPU and memory held x SchedulerConfig spec.pricing), per "
       "team; only when prices are given."},
      // GPU utilization from dcgm-exporter (serve --dcgm-url; docs/observability.md).
      {"tessera_effective_gpu_seconds_total",
       Type::kCounter,
       {"cluster_queue", "namespace"},
       "GPU-seconds held x the GPU utilization dcgm-exporter measured, per team, over the time "
       "a measurement existed (labels as tessera_gpu_seconds_total)."},
      {"tessera_effective_cost_dollars_total",
       Type::kCounter,
       {"cluster_queue", "namespace"},
       "Effective cost: allocated dollars x measured GPU utilization, per team, over the time a "
       "measurement existed; only when prices are given."},
      {"tessera_underused_workloads",
       Type::kGauge,
       {"cluster_queue", "namespace"},
       "Running workloads whose GPU utilization stayed below the underuse threshold for the "
       "underuse period (serve --underuse-threshold, --underuse-for), per team."},
      {"tessera_underused_gpus",
       Type::kGauge,
       {"cluster_queue", "namespace"},
       "GPUs held by underused workloads, per team."},
      {"tessera_failed_gpus",
       Type::kGauge,
       {"node"},
       "GPUs Tessera gives to no pod because they failed (the device plugin stopped offering them, "
       "the kubelet reports them unhealthy, or dcgm-exporter reports a hardware XID), per node "
       "(docs/gpu-failures.md)."},
      {"tessera_gpu_failure_requeues_total",
       Type::kCounter,
       {"cluster_queue"},
       "Workloads evicted whole and requeued because a GPU they ran on failed, per ClusterQueue "
       "(tessera.dev/gpu-failure-policy Requeue)."},
      {"tessera_dcgm_scrapes_total",
       Type::kCounter,
       {"result"},
       "Scrapes of dcgm-exporters (serve --dcgm-url): success, or error (down, timed out, too "
       "large, not a Prometheus exposition)."},
  };
  return d;
}

const char* TypeName(Type t) {
  switch (t) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string LabelText(const std::vector<std::string>& names, const LabelValues& values) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    s += fmt::format("{}{}=\"{}\"", i ? "," : "", names[i], Escape(values[i]));
  return s;
}

}  // namespace

struct Metrics::Family {
  const Declared* decl = nullptr;
  std::vector<std::string> labels;
  std::map<LabelValues, double> values;                          // counters, gauges
  std::map<LabelValues, std::unique_ptr<Histogram>> histograms;  // histograms
};

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

void Histogram::RenderSamples(const std::string& name, const std::string& labels,
                              std::string& out) const {
  std::lock_guard<std::mutex> l(mu_);
  const std::string sep = labels.empty() ? "" : ",";
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  int64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds_[i], cum);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n{}_sum{} {}\n{}_count{} {}\n", name, labels,
                     sep, n_, name, braces, Number(sum_), name, braces, n_);
}

void Histogram::Render(const std::string& name, const std::string& help, std::string& out) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  RenderSamples(name, "", out);
}

Metrics::Metrics()
    : bind_latency(ExpBuckets(0.0005, 2, 16)), cycle_duration(ExpBuckets(0.0001, 2, 18)) {
  for (const Declared& d : Declarations()) {
    auto f = std::make_unique<Family>();
    f->decl = &d;
    f->labels = d.labels;
    families_.emplace(d.name, std::move(f));
  }
}

Metrics::~Metrics() = default;

Metrics::Family& Metrics::Find(std::string_view name) const {
  auto it = families_.find(name);
  if (it == families_.end()) {
    // A programmer error (a name not declared above); fail loudly in tests.
    std::fprintf(stderr, "tessera: metric %.*s is not declared\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  return *it->second;
}

void Metrics::SetLabelNames(std::string_view name, std::vector<std::string> labels) {
  std::lock_guard<std::mutex> l(mu_);
  Family& f = Find(name);
  if (f.labels == labels) return;
  f.labels = std::move(labels);
  f.values.clear();
  f.histograms.clear();
}

std::vector<std::string> Metrics::label_names(std::string_view name) const {
  std::lock_guard<std::mutex> l(mu_);
  return Find(name).labels;
}

void Metrics::Add(std::string_view name, const LabelValues& labels, double by) {
  std::lock_guard<std::mutex> l(mu_);
  Find(name).values[labels] += by;
}

void Metrics::AddAll(const std::vector<Increment>& increments) {
  std::lock_guard<std::mutex> l(mu_);
  for (const Increment& i : increments) Find(i.name).values[i.labels] += i.by;
}

void Metrics::Observe(std::string_view name, const LabelValues& labels, double v) {
  std::lock_guard<std::mutex> l(mu_);
  Family& f = Find(name);
  auto& h = f.histograms[labels];
  if (!h) h = std::make_unique<Histogram>(f.decl->buckets);
  h->Observe(v);
}

void Metrics::SetGauges(std::string_view name, std::map<LabelValues, double> samples) {
  std::lock_guard<std::mutex> l(mu_);
  Find(name).values = std::move(samples);
}

double Metrics::Value(std::string_view name, const LabelValues& labels) const {
  std::lock_guard<std::mutex> l(mu_);
  const Family& f = Find(name);
  if (f.decl->type == Type::kHistogram) {
    auto it = f.histograms.find(labels);
    return it == f.histograms.end() ? 0 : static_cast<double>(it->second->count());
  }
  auto it = f.values.find(labels);
  return it == f.values.end() ? 0 : it->second;
}

std::vector<std::string> Metrics::Names() {
  std::vector<std::string> names = {"tessera_bind_latency_seconds",
                                    "tessera_cycle_duration_seconds",
                                    "tessera_binds_total",
                                    "tessera_eviction_requests_total",
                                    "tessera_scheduling_cycles_total",
                                    "tessera_engine_rebuilds_total",
                                    "tessera_workload_resubmits_total",
                                    "tessera_provisioning_plans_total",
                                    "tessera_events_total",
                                    "tessera_events_queued"};
  for (const Declared& d : Declarations()) names.push_back(d.name);
  return names;
}

std::string Metrics::Render() const {
  std::string out;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const Declared& d : Declarations()) {
      const Family& f = *families_.find(d.name)->second;
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", d.name, d.help, d.name, TypeName(d.type));
      if (d.type == Type::kHistogram) {
        for (const auto& [labels, h] : f.histograms)
          h->RenderSamples(d.name, LabelText(f.labels, labels), out);
        continue;
      }
      for (const auto& [labels, v] : f.values) {
        std::string text = LabelText(f.labels, labels);
        out += fmt::format("{}{} {}\n", d.name, text.empty() ? "" : "{" + text + "}", Number(v));
      }
    }
  }
  bind_latency.Render("tessera_bind_latency_seconds", "Duration of one pods/binding request.", out);
  cycle_duration.Render("tessera_cycle_duration_seconds", "Duration of one engine cycle.", out);
  RenderCounter("tessera_binds_total", "Bind requests by result.",
                {{"result=\"ok\"", binds_ok.load()},
                 {"result=\"conflict\"", binds_conflict.load()},
                 {"result=\"not_found\"", binds_not_found.load()},
                 {"result=\"error\"", binds_error.load()}},
                out);
  RenderCounter(
      "tessera_eviction_requests_total",
      "Eviction API requests (one per pod of a preempted workload) by result.",
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
  RenderCounter("tessera_provisioning_plans_total",
                "Times the gangs that need capacity were worked out again "
                "(--provisioning-requests): after a cycle or a change of the engine, not while "
                "nothing changes.",
                {{"", capacity_plans.load()}}, out);
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

bool BearerTokenMatches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (token.empty() || authorization.size() != kBearer.size() + token.size()) return false;
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(authorization[kBearer.size() + i] ^ token[i]);
  return diff == 0;
}

struct MetricsServer::Impl {
  const Metrics* metrics;
  std::function<bool()> healthy, ready;
  httplib::Server server;
  std::thread thread;
  std::string token;
  std::vector<std::string> token_prefixes;
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

void MetricsServer::AddRoutes(const std::function<void(httplib::Server&)>& add) {
  add(impl_->server);
}

void MetricsServer::RequireToken(std::string token, std::vector<std::string> prefixes) {
  impl_->token = std::move(token);
  impl_->token_prefixes = std::move(prefixes);
  if (impl_->token.empty()) return;
  Impl* impl = impl_.get();
  impl->server.set_pre_routing_handler([impl](const httplib::Request& req, httplib::Response& res) {
    bool guarded = std::any_of(impl->token_prefixes.begin(), impl->token_prefixes.end(),
                               [&](const std::string& p) { return req.path.starts_with(p); });
    if (!guarded || BearerTokenMatches(req.get_header_value("Authorization"), impl->token))
      return httplib::Server::HandlerResponse::Unhandled;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_content(
        R"json({"error": "a bearer token is needed (Authorization: Bearer <token>)"})json",
        "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
}

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
