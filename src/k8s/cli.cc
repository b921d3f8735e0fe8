// `tessera serve`: runs Tessera as a second scheduler of a Kubernetes cluster (docs/kubernetes.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <limits>
#include <mutex>
#include <thread>

#include "accounting/store.h"
#include "cli/command.h"
#include "cli/flag_range.h"
#include "config/dra_quota.h"
#include "fmt/format.h"
#include "k8s/api/api_client.h"
#include "k8s/api/api_cost.h"
#include "k8s/api/api_routes.h"
#include "k8s/api/ui_routes.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/leader_election.h"
#include "k8s/client/log_escape.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/dcgm_scraper.h"
#include "k8s/observe/metrics.h"
#include "spdlog/spdlog.h"

namespace tessera::cli {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_stopping{false};  // a signal came: what waits on the server gives up

void OnSignal(int sig) {
  g_signal = sig;
  g_stopping = true;
}

struct ServeFlags {
  std::string kubeconfig;
  std::string kueue_config;  // Kueue's Configuration: its DRA deviceClassMappings
  std::string context;
  bool insecure = false;
  std::string scheduler_name = "tessera";
  std::string metrics_address = "0.0.0.0";
  int metrics_port = 10259;
  std::string api_token_file;
  bool leader_elect = false;
  std::string lease_namespace = "kube-system";
  std::string lease_name = "tessera";
  std::string identity;
  int bind_workers = 64;
  bool no_scheduled_events = false;
  bool json_only = false;
  bool http2 = false;
  std::string log_level = "info";
  std::vector<std::string> dcgm_urls;
  double dcgm_interval_s = 15;
  double dcgm_timeout_s = 5;
  double underuse_threshold = 0.1;
  double underuse_for_s = 1800;
  std::string accounting_db;
  // Elastic clusters (docs/autoscaling.md, "Kubernetes mode").
  bool provisioning = false;
  std::string provisioning_class = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
  std::vector<std::string> provisioning_parameters;
  int provisioning_backoff_limit = 3;
  double provisioning_backoff_base_s = 60, provisioning_backoff_max_s = 1800;
  int provisioning_max_requests = 64;
  std::string provisioning_merge_policy = "None";
  int protect_min_pods = 2;
  bool no_spot_policy = false;
  std::vector<std::string> spot_labels;
};

// KEY=VALUE of a repeatable flag; false, with the message, when it is not.
bool SplitKeyValue(const std::string& flag, const std::string& text,
                   std::pair<std::string, std::string>* out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    std::cerr << "tessera serve: " << flag << " " << text << ": expected KEY=VALUE\n";
    return false;
  }
  *out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

// The elastic-cluster options from the flags; false, with the message, on a bad one.
bool ElasticOptions(const ServeFlags& f, k8s::ControllerOptions& options) {
  k8s::ProvisioningOptions& p = options.provisioning;
  p.enabled = f.provisioning;
  p.class_name = f.provisioning_class;
  p.backoff_limit = f.provisioning_backoff_limit;
  p.backoff_base_s = f.provisioning_backoff_base_s;
  p.backoff_max_s = f.provisioning_backoff_max_s;
  p.max_requests = f.provisioning_max_requests;
  if (auto m = k8s::ParsePodSetMergePolicy(f.provisioning_merge_policy)) {
    p.merge_policy = *m;
  } else {
    std::cerr << "tessera serve: --provisioning-pod-set-merge-policy "
              << f.provisioning_merge_policy
              << ": expected None, IdenticalPodTemplates or "
                 "IdenticalWorkloadSchedulingRequirements\n";
    return false;
  }
  for (const std::string& kv : f.provisioning_parameters) {
    std::pair<std::string, std::string> v;
    if (!SplitKeyValue("--provisioning-parameter", kv, &v)) return false;
    p.parameters[v.first] = v.second;
  }
  options.node_policy.protect_min_pods = f.protect_min_pods;
  options.node_policy.spot_policy = !f.no_spot_policy;
  for (const std::string& kv : f.spot_labels) {
    std::pair<std::string, std::string> v;
    if (!SplitKeyValue("--spot-node-label", kv, &v)) return false;
    options.node_policy.spot_labels.push_back(std::move(v));
  }
  return true;
}

// The accounting store serve writes (--accounting-db), and a read-only connection of its own
// through which /api/v1/cost reads it (SQLite's WAL lets it read while the loop writes), one
// request at a time.
struct Stores {
  std::unique_ptr<accounting::AccountingStore> rw, ro;
  std::mutex ro_mu;
};

bool OpenStores(const ServeFlags& f, Stores& stores) {
  if (f.accounting_db.empty()) return true;
  for (bool read_only : {false, true}) {
    accounting::StoreOptions o;
    o.read_only = read_only;
    auto opened = accounting::AccountingStore::Open(f.accounting_db, o);
    if (!opened.ok()) {
      std::cerr << "tessera serve: --accounting-db: " << opened.status().message() << "\n";
      return false;
    }
    (read_only ? stores.ro : stores.rw) = std::move(*opened);
  }
  return true;
}

// --identity, else HOST_PID: unique among the replicas competing for the Lease.
std::string Identity(const ServeFlags& f) {
  if (!f.identity.empty()) return f.identity;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return fmt::format("{}_{}", host, getpid());
}

// The dashboard (docs/observability.md): a page that holds no data, so no token guards it; and
// the read-only JSON API, behind the token when one is given (RequireToken).
void AddDashboardAndApi(k8s::MetricsServer& server, k8s::Controller& controller, Stores& stores) {
  server.AddRoutes(k8s::AddUiRoutes);
  server.AddRoutes([&](httplib::Server& s) {
    k8s::ApiOptions api;
    api.view = [&controller] { return controller.view(); };
    if (stores.ro)
      api.cost_store = [&stores](const std::string& by, std::optional<double> from,
                                 std::optional<double> to) -> absl::StatusOr<nlohmann::json> {
        std::lock_guard<std::mutex> l(stores.ro_mu);
        auto records = stores.ro->Read(from.value_or(-std::numeric_limits<double>::infinity()),
                                       to.value_or(std::numeric_limits<double>::infinity()));
        if (!records.ok()) return records.status();
        return k8s::CostFromRecordsJson(*records, by, from, to);
      };
    k8s::AddApiRoutes(s, std::move(api));
  });
}

int Fail(std::string_view message) {
  std::cerr << "tessera serve: " << message << "\n";
  return 1;
}

int Serve(const ServeFlags& f) {
  k8s::InstallEscapingLogFormatter();
  spdlog::set_level(spdlog::level::from_str(f.log_level));
  std::string token;
  if (!f.api_token_file.empty()) {
    absl::StatusOr<std::string> t = k8s::ReadTokenFile("--api-token-file", f.api_token_file);
    if (!t.ok()) return Fail(std::string(t.status().message()));
    token = *t;
  }
  absl::StatusOr<k8s::KubeConfig> config =
      f.kubeconfig.empty() ? k8s::InClusterConfig() : k8s::LoadKubeconfig(f.kubeconfig, f.context);
  if (!config.ok()) return Fail(std::string(config.status().message()));
  if (f.insecure) config->insecure_skip_tls_verify = true;
  config->http2 = f.http2;
  // The controller and the leader elector each have a client: the controller's shutdown cuts
  // what its client still has in flight, and must not cut the release of the Lease.
  k8s::KubeClient client(*config);
  k8s::KubeClient lease_client(*config);
  const std::string identity = Identity(f);

  k8s::Metrics metrics;
  for (const std::string& url : f.dcgm_urls) {
    if (auto u = k8s::ParseHttpUrl(url); !u.ok()) return Fail(std::string(u.status().message()));
  }
  k8s::DcgmScraperOptions dcgm_options;
  dcgm_options.urls = f.dcgm_urls;
  dcgm_options.interval_s = f.dcgm_interval_s;
  dcgm_options.timeout_s = f.dcgm_timeout_s;
  k8s::DcgmScraper dcgm(dcgm_options, &metrics);
  Stores stores;
  if (!OpenStores(f, stores)) return 1;
  k8s::ControllerOptions options;
  if (!f.dcgm_urls.empty()) options.dcgm = &dcgm;
  options.underuse = {f.underuse_threshold, f.underuse_for_s};
  options.accounting = stores.rw.get();
  if (!ElasticOptions(f, options)) return 1;
  if (!f.kueue_config.empty()) {
    auto mappings = ReadDeviceClassMappings(f.kueue_config);
    if (!mappings.ok()) return Fail(std::string(mappings.status().message()));
    options.dra_mappings = std::move(*mappings);
  }
  options.scheduler_name = f.scheduler_name;
  options.bind_workers = f.bind_workers;
  options.scheduled_events = !f.no_scheduled_events;
  options.protobuf = !f.json_only;
  options.instance = identity;
  k8s::Controller controller(&client, options, &metrics);
  std::atomic<bool> lost{false};
  std::unique_ptr<k8s::LeaderElector> elector;
  if (f.leader_elect) {
    controller.SetActive(false);
    k8s::LeaderElectionOptions le;
    le.ns = f.lease_namespace;
    le.name = f.lease_name;
    le.identity = identity;
    elector = std::make_unique<k8s::LeaderElector>(&lease_client, le, [&](bool leader) {
      controller.SetActive(leader);
      if (!leader) lost = true;
    });
  }
  // /healthz: the process is alive. /readyz: caches synced, no informer failing to list or watch
  // (an API server outage makes it 503 until they have relisted), and leading where elected.
  k8s::MetricsServer server(
      &metrics, [] { return true; },
      [&] { return controller.ready() && (!elector || elector->is_leader()); });
  AddDashboardAndApi(server, controller, stores);
  server.RequireToken(token, {"/api/"});
  if (f.metrics_port >= 0) {
    int port = server.Start(f.metrics_address, f.metrics_port);
    if (port < 0) {
      std::cerr << fmt::format("tessera serve: cannot listen on {}:{}\n", f.metrics_address,
                               f.metrics_port);
      return 1;
    }
    spdlog::info(
        "tessera: /metrics, /healthz, /readyz, the dashboard (/ui/) and /api/v1/ on {}:{}{}",
        f.metrics_address, port, token.empty() ? "" : " (API behind a bearer token)");
  }

  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  // An API server that cannot be reached yet is waited for (not-ready meanwhile), not a reason
  // to exit: in a Deployment that would be a crash loop.
  if (!k8s::WaitForApiServer(client, g_stopping)) {
    spdlog::info("tessera: shutting down (signal) before the API server answered");
    server.Stop();
    return 0;
  }
  dcgm.Start();
  controller.Start();
  if (elector) elector->Start();
  spdlog::info("tessera: scheduling pods with schedulerName '{}' through {}", f.scheduler_name,
               config->server);
  while (g_signal == 0 && !lost) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Graceful and bounded (docs/kubernetes.md, "Shutdown"): stop deciding, give the binds in
  // flight up to 3 s (ControllerOptions::stop_drain_s) and cut them then, then give the lease up
  // (at most 3 s, LeaderElectionOptions::release_timeout_s), which reports the loss of
  // leadership once more: the exit status is decided before. With a stalled API server this
  // takes about 8 s at most, well within the Deployment's 30 s grace period.
  const bool lost_lease = lost.load();
  const auto stop_start = std::chrono::steady_clock::now();
  // A follower told to stop takes no lease while the controller drains (it would only give it
  // back, seconds later, to the replica that should have it).
  if (elector) elector->StopAcquiring();
  spdlog::info("tessera: shutting down ({})", lost_lease ? "lost the lease" : "signal");
  controller.Stop();
  dcgm.Stop();
  if (elector) elector->Stop();
  server.Stop();
  spdlog::info(
      "tessera: stopped in {:.1f} s",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_start).count());
  return lost_lease ? 1 : 0;
}

}  // namespace

Command AddServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  Command c;
  c.app = app.add_subcommand(
      "serve", "Schedule a Kubernetes cluster's pods (spec.schedulerName) through its API server");
  CLI::App* s = c.app;
  s->add_option("--kubeconfig", flags->kubeconfig,
                "kubeconfig file (default: in-cluster service account credentials)");
  s->add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  s->add_option("--kueue-config", flags->kueue_config,
                "Kueue's Configuration file: its resources.deviceClassMappings count DRA devices "
                "in ClusterQueue quota (docs/dra.md)");
  s->add_flag("--insecure-skip-tls-verify", flags->insecure, "do not verify the server's cert");
  s->add_flag("--http2", flags->http2,
              "talk HTTP/2 to the API server (default HTTP/1.1, one connection per request in "
              "flight, cheaper for the server)");
  s->add_option("--scheduler-name", flags->scheduler_name,
                "pods with this spec.schedulerName are Tessera's")
      ->capture_default_str();
  s->add_option("--metrics-address", flags->metrics_address, "address of /metrics and probes")
      ->capture_default_str();
  s->add_option("--metrics-port", flags->metrics_port,
                "port of /metrics, /healthz, /readyz (-1: none, 0: any free)")
      ->capture_default_str();
  s->add_option("--api-token-file", flags->api_token_file,
                "a file holding the bearer token that /api/ requests must carry (Authorization: "
                "Bearer TOKEN); without it the API is open to whoever reaches the port")
      ->check(CLI::ExistingFile);
  s->add_flag("--leader-elect", flags->leader_elect,
              "run with replicas: only the holder of a coordination.k8s.io Lease schedules");
  s->add_option("--lease-namespace", flags->lease_namespace)->capture_default_str();
  s->add_option("--lease-name", flags->lease_name)->capture_default_str();
  s->add_option("--identity", flags->identity, "leader election identity (default host_pid)");
  s->add_option("--bind-workers", flags->bind_workers, "binding requests in flight at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  s->add_flag("--no-scheduled-events", flags->no_scheduled_events,
              "do not post a 'Scheduled' Event for every bound pod");
  s->add_flag("--json-only", flags->json_only,
              "read pods and nodes, and send Bindings, as JSON (default: protobuf where the "
              "server offers it)");
  s->add_option("--dcgm-url", flags->dcgm_urls,
                "scrape this NVIDIA dcgm-exporter (http://HOST:PORT/metrics) for GPU utilization; "
                "repeatable (docs/observability.md)");
  s->add_option("--dcgm-interval", flags->dcgm_interval_s,
                "seconds between scrapes of one exporter")
      ->capture_default_str()
      ->check(Range(0.1, 3600, false, "a finite number of seconds from 0.1 to 3600"));
  s->add_option("--dcgm-timeout", flags->dcgm_timeout_s,
                "seconds to connect, and then for each read, of a scrape")
      ->capture_default_str()
      ->check(Range(0.1, 60, false, "a finite number of seconds from 0.1 to 60"));
  s->add_option("--underuse-threshold", flags->underuse_threshold,
                "GPU utilization (0-1) below which a workload barely uses its GPUs")
      ->capture_default_str()
      ->check(Range(0, 1, true, "a finite fraction from 0 to 1"));
  s->add_option("--underuse-for", flags->underuse_for_s,
                "seconds a workload must stay below the threshold to be reported as underused")
      ->capture_default_str()
      ->check(Range(0, 1e7, true, "a finite number of seconds from 0 to 1e7"));
  s->add_option("--accounting-db", flags->accounting_db,
                "write one accounting record per workload run to this SQLite file (leader only; "
                "docs/accounting.md)");
  s->add_flag(
      "--provisioning-requests", flags->provisioning,
      "ask the autoscaler for capacity for gangs that do not fit but whose queue would "
      "admit them, with autoscaling.x-k8s.io/v1 ProvisioningRequests (docs/autoscaling.md)");
  s->add_option(
       "--provisioning-class", flags->provisioning_class,
       "spec.provisioningClassName of the requests (or check-capacity.autoscaling.x-k8s.io)")
      ->capture_default_str();
  s->add_option("--provisioning-parameter", flags->provisioning_parameters,
                "KEY=VALUE into the requests' spec.parameters; repeatable");
  s->add_option("--provisioning-backoff-limit", flags->provisioning_backoff_limit,
                "new attempts after a request Failed, its booking expired or its capacity was "
                "revoked")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  s->add_option("--provisioning-backoff-base", flags->provisioning_backoff_base_s,
                "seconds before the second attempt; doubled for each later one")
      ->capture_default_str()
      ->check(Range(0, 86400, true, "a finite number of seconds from 0 to 86400"));
  s->add_option("--provisioning-backoff-max", flags->provisioning_backoff_max_s,
                "the longest wait between attempts, seconds")
      ->capture_default_str()
      ->check(Range(0, 86400, true, "a finite number of seconds from 0 to 86400"));
  s->add_option("--provisioning-max-requests", flags->provisioning_max_requests,
                "gangs, in queue order, with a request out at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  s->add_option("--provisioning-pod-set-merge-policy", flags->provisioning_merge_policy,
                "pod sets that share one PodTemplate of a request, as Kueue's "
                "ProvisioningRequestConfig podSetMergePolicy: None, IdenticalPodTemplates or "
                "IdenticalWorkloadSchedulingRequirements")
      ->capture_default_str()
      ->check(CLI::IsMember(
          {"None", "IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"}));
  s->add_option("--protect-gangs-min-pods", flags->protect_min_pods,
                "bound pods of workloads of at least this many pods get karpenter.sh/"
                "do-not-disrupt and cluster-autoscaler.kubernetes.io/safe-to-evict=false "
                "(0: none, 1: every pod)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  s->add_flag("--no-spot-policy", flags->no_spot_policy,
              "spot nodes are nodes like the others (default: only pods annotated "
              "tessera.dev/interruptible=true use them, and prefer them)");
  s->add_option("--spot-node-label", flags->spot_labels,
                "KEY=VALUE: nodes with this label are spot nodes too (besides karpenter.sh/"
                "capacity-type=spot, cloud.google.com/gke-spot=true, eks.amazonaws.com/"
                "capacityType=SPOT); repeatable");
  s->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  c.run = [flags] { return Serve(*flags); };
  return c;
}

}  // namespace tessera::cli
