// The Kubernetes backend of the engine: watches the API server, groups Tessera's pods into
// workloads, runs engine cycles, and carries the decisions out through the API (pods/binding,
// Eviction, pod conditions, Events, PodGroup and ClusterQueue status).
//
// One scheduling loop thread owns all state: informer threads only hand it events, writer pools
// only hand it results. The engine is rebuilt from a fresh Model snapshot when nodes or queue
// objects change (and after an API failure that leaves the engine's view in doubt), restoring
// every workload whose pods are already bound, so that a restart or a resync never moves or
// double-binds a pod.
//
// Thread-safety: Start/Stop/SetActive from one thread; the accessors are thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "dra/model.h"
#include "k8s/api/cluster_view.h"
#include "k8s/client/kube_client.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/provisioning.h"
#include "k8s/observe/dcgm_scraper.h"
#include "k8s/observe/metrics.h"
#include "k8s/observe/utilization.h"

namespace tessera::accounting {
class AccountingStore;
}

namespace tessera::k8s {

struct ControllerOptions {
  std::string scheduler_name = "tessera";  // spec.schedulerName of Tessera's pods
  int bind_workers = 64;                   // pods/binding requests in flight at once
  int status_workers = 4;                  // conditions and status writes in flight
  int event_workers = 2;                   // Event writes in flight
  bool scheduled_events = true;            // a "Scheduled" Event per bound pod
  bool protobuf = true;  // read pods and nodes, and send Bindings, as protobuf (proto.h)
  std::string instance = "tessera";     // reportingInstance of Events
  double status_period_s = 1.0;         // PodGroup / ClusterQueue status and gauges
  double min_rebuild_interval_s = 0.2;  // batches node/queue churn into one rebuild
  // A gang still pending for the same reason after a cycle gets its FailedScheduling Event's
  // count raised at most this often (-1: only when the reason changes).
  double failed_event_interval_s = 10;
  // Stop() gives binds and writes in flight this long to be answered, then cuts them: a stalled
  // API server cannot hold a shutdown up for a request timeout (60 s).
  double stop_drain_s = 3;
  // GPU utilization (docs/observability.md, "GPU utilization from DCGM"): the readings of these
  // dcgm-exporters are joined to the running workloads every status period (not owned; null:
  // none), and workloads below `underuse.threshold` for `underuse.for_s` are reported.
  const DcgmScraper* dcgm = nullptr;
  UnderuseOptions underuse;
  // The accounting store serve writes its records to (docs/accounting.md; not owned; null:
  // none). Only while leading; open runs are rewritten every `accounting_checkpoint_s`.
  accounting::AccountingStore* accounting = nullptr;
  double accounting_checkpoint_s = 10;
  // The JSON API's trends (cluster_view.h): one point per this many seconds.
  double trend_interval_s = 60;
  // Elastic clusters (docs/autoscaling.md, "Kubernetes mode"): ProvisioningRequests for gangs
  // that do not fit, and the rules for nodes being removed, spot nodes and consolidation.
  ProvisioningOptions provisioning;
  NodePolicyOptions node_policy;
  // Kueue's deviceClassMappings (docs/dra.md, "Quota"): DRA devices of these classes count as
  // their resource in ClusterQueue quota (serve's --kueue-config).
  std::vector<dra::DeviceClassMapping> dra_mappings;
};

struct ControllerSnapshot {
  int64_t pods_bound = 0;  // binds this controller completed
  int64_t pending_workloads = 0;
  int64_t waiting_groups = 0;  // gangs whose pods do not all exist yet
  int64_t engine_workloads = 0;
  int64_t rebuilds = 0;
  int64_t cycles = 0;
  bool synced = false;
  double decision_seconds = 0;  // total time in engine cycles and rebuilds
  int64_t events_created = 0;   // Events POSTed
  int64_t events_patched = 0;   // Events whose count was raised
  // Event occurrences (EventRecorderStats): Events are written behind the binds, so a burst of
  // binds leaves some to write after it.
  int64_t events_recorded = 0, events_written = 0, events_dropped = 0, events_queued = 0;
  int64_t status_writes_queued = 0;  // PodGroup / ClusterQueue / pod status writes not yet sent
};

class Controller {
 public:
  Controller(KubeClient* client, ControllerOptions options, Metrics* metrics);
  ~Controller();  // Stop()s
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the informers and the scheduling loop.
  void Start();
  // Stops the loop and the informers (lists and watches in flight are cut at once), then waits
  // for the binds and writes already in flight, at most `stop_drain_s` (they are cut then).
  // Returns within stop_drain_s plus about a second, whatever the server does. The cut goes
  // through the client (KubeClient::AbortAfter): should the drain run out, other users of the
  // same client are cut too until Stop returns (serve gives the leader elector its own).
  void Stop();
  // Only an active controller (the leader) schedules; a passive one keeps its caches warm.
  void SetActive(bool active);

  bool synced() const;
  // Synced, and every informer in touch with the server (none failing to list or watch): what
  // /readyz says. After an outage the informers relist and it is true again once they have.
  bool ready() const;
  ControllerSnapshot snapshot() const;
  // Per-GPU utilization and the underused workloads, as of the last status period (empty
  // without --dcgm-url); thread-safe (UtilizationTracker's accessors), for the JSON API.
  const UtilizationTracker& utilization() const;
  // What the JSON API serves (cluster_view.h): the loop publishes one every status period;
  // null before the caches synced.
  std::shared_ptr<const ClusterView> view() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::k8s
