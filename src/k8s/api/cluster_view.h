// ClusterView: an immutable picture of what `tessera serve` knows (queues, workloads with their
// pods, nodes with their GPUs, cost since start, trends), built by the scheduling loop and read
// by the JSON API's handlers (api_routes.h) on the HTTP server's threads.
//
// The loop owns the engine; a handler must never touch it. So the loop builds a ClusterView (a
// plain struct of strings and numbers) after each status period and publishes it as a
// shared_ptr<const ClusterView>; a handler takes the latest pointer under a mutex and reads it
// without holding anything. A view is at most one status period old (1 s by default).
//
// ViewBuilder keeps what must outlive one view: the cost accumulated since start (per
// namespace, ClusterQueue and each rollup label of spec.pricing, with the idle GPUs) and the
// trends ring (one point per interval, bounded).
//
// Thread-safety: ClusterView is immutable once published. ViewBuilder: one thread (the loop).
// ViewHolder: thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/scheduler.h"

namespace tessera::k8s {

// Times are seconds since the Unix epoch (UTC); -1 where there is none.
struct ViewPod {
  std::string name;
  std::string node;           // empty: not placed
  std::vector<int32_t> gpus;  // device indices on the node
};

struct ViewWorkload {
  std::string ns, name;
  std::string owner;  // "JobSet/train": the kind and name of the object its pods come from
  std::string local_queue, cluster_queue;  // empty: none
  int32_t priority = 0;
  std::string priority_class;   // empty: none
  std::string state;            // "pending", "admitted", "waiting-for-pods"
  std::string reason;           // empty: none
  std::string reason_category;  // quota, placement, ... (ReasonCategory)
  double created = -1, admitted_at = -1, expected_start = -1;
  double wait_seconds = 0;  // pending: since created; admitted: created to admission
  int64_t gpus = 0;         // GPUs asked for by all its pods
  std::string flavor;       // the first flavor chosen for it; empty: none
  std::vector<ViewPod> pods;
  std::vector<std::string> would_fit_if;  // pending: what would let it start
  std::string Key() const { return ns + "/" + name; }
};

struct ViewQuota {
  std::string flavor, resource;
  double nominal = 0;
  std::optional<double> borrowing_limit, lending_limit;
  double used = 0, borrowed = 0;  // base units (cores, bytes, devices)
};

struct ViewQueue {
  std::string name, cohort, strategy;
  std::vector<ViewQuota> resources;
  int64_t pending_active = 0, pending_inadmissible = 0, admitted = 0;
  std::map<std::string, int64_t> pending_by_reason;  // ReasonCategory -> count
  std::optional<double> weighted_share;              // none: infinite (weight 0)
  std::string reservation_workload;                  // ns/name; empty: none
  double reservation_start = -1;
};

struct ViewGpuSlot {
  int32_t index = 0;
  std::string workload, cluster_queue;  // empty: free
  std::optional<double> utilization;    // from DCGM (serve --dcgm-url); none without a reading
  bool underused = false;               // its workload barely uses its GPUs (utilization.h)
};

struct ViewNode {
  std::string name, flavor, gpu_model;
  int32_t gpus = 0;
  bool unschedulable = false;
  std::vector<ViewGpuSlot> slots;
};

struct CostRow {
  double gpu_hours = 0, dollars = 0;
  int64_t jobs = 0;  // workloads that held something in the period
};

struct ViewCost {
  double from = -1, to = -1;
  bool priced = false;  // spec.pricing was given
  // "namespace", "cluster-queue", "label:KEY" (KEY of spec.pricing.rollupLabels) -> group -> row
  std::map<std::string, std::map<std::string, CostRow>> rows;
  double idle_gpu_hours = 0, idle_dollars = 0;
};

struct TrendPoint {
  double time = 0;
  double gpu_allocation = 0;       // allocated / total GPUs, at the point
  std::optional<double> wait_p95;  // admission waits of the interval; none: no admission
  double idle_node_seconds = 0;    // over the interval
  int64_t pending_workloads = 0;   // at the point
};

struct ClusterView {
  double time = 0;
  bool leader = false, synced = false;
  std::string scheduler_name;
  int64_t node_count = 0, gpus = 0, gpus_allocated = 0, idle_gpu_nodes = 0;
  int64_t pending_workloads = 0, admitted_workloads = 0;
  std::vector<ViewQueue> queues;
  std::vector<ViewWorkload> workloads;  // sorted by namespace, name
  std::vector<ViewNode> nodes;
  ViewCost cost;
  double trend_interval = 60;
  std::vector<TrendPoint> trends;  // oldest first

  const ViewWorkload* Find(const std::string& ns, const std::string& name) const;
};

// A short category of a pending reason, for counts per reason: "quota", "placement",
// "stopped" (the ClusterQueue's stopPolicy), "preempted" (requeued after a preemption),
// "unresolved" (no such queue, flavor or priority class), "not-tried-yet", "other".
std::string ReasonCategory(const std::string& reason);

// What the loop hands the builder for one view.
struct ViewInput {
  const Scheduler* engine = nullptr;  // null: no engine (not leading, or not built yet)
  double engine_now = 0;              // the engine's clock
  double wall_zero = 0;               // Unix seconds of the engine's 0
  bool leader = false, synced = false;
  std::string scheduler_name;
  // A workload the controller has in the engine; pod_names[pod set][index] is its pod's name.
  struct Tracked {
    WorkloadId id = -1;
    bool foreign = false;  // bound pods of another scheduler: capacity only
    std::vector<std::vector<std::string>> pod_names;
    std::string owner;  // "JobSet/train": the object its pods come from; empty: a lone pod
  };
  std::vector<Tracked> workloads;
  // A gang whose pods do not all exist yet (not in the engine).
  struct Waiting {
    std::string ns, name, reason;
    double created = -1;  // engine clock
    std::vector<std::string> pods;
    std::string owner;
  };
  std::vector<Waiting> waiting;
  // GPU `index` of `node` as DCGM last read it (utilization, its workload underused); unset or
  // std::nullopt: no reading.
  struct GpuReading {
    std::optional<double> utilization;
    bool underused = false;
  };
  std::function<std::optional<GpuReading>(const std::string& node, int32_t index)> gpu_reading;
};

class ViewBuilder {
 public:
  static constexpr size_t kMaxTrendPoints = 1440;
  explicit ViewBuilder(double trend_interval_s = 60) : trend_interval_(trend_interval_s) {}

  // A workload was admitted after waiting `wait` seconds (the trends' wait p95).
  void OnAdmit(double wait);
  // The view as of `in`; cost and idle time grow by what held since the last Build.
  std::shared_ptr<const ClusterView> Build(const ViewInput& in);

 private:
  void AddCost(const ViewInput& in, double dt);
  void AddTrend(const ClusterView& v, double idle_nodes, double dt);

  const double trend_interval_;
  double last_engine_now_ = -1;
  ViewCost cost_;
  std::set<std::string> charged_;  // workloads admitted at the last Build (their job counted)
  std::deque<TrendPoint> trends_;
  double interval_start_ = -1, interval_idle_ = 0;
  std::vector<double> interval_waits_;
};

// The latest view, handed from the loop to the handlers.
class ViewHolder {
 public:
  void Set(std::shared_ptr<const ClusterView> v) {
    std::lock_guard<std::mutex> l(mu_);
    view_ = std::move(v);
  }
  std::shared_ptr<const ClusterView> Get() const {
    std::lock_guard<std::mutex> l(mu_);
    return view_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ClusterView> view_;  // GUARDED_BY(mu_); null before the first
};

}  // namespace tessera::k8s
