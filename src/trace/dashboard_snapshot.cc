// The dashboard's snapshot of a replay (docs/observability.md, "Dashboard"; docs/trace.md): the
// documents of serve's JSON API that a replay can fill, so that `sim replay --report` writes the
// same page as serve with the cluster at one instant: the snapshot's (the peak of the GPU
// allocation by default, or --report-at). Every figure of the summary cards, the queue rows, the
// workloads and the GPU map is of that instant. Simulated seconds become times since
// 1970-01-01T00:00:00Z; `clock` tells the page so, and it shows them as time elapsed since
// the simulation's t=0 ("+3h12m"), never as dates. A replay keeps no per-workload or per-node state (a trace may hold a
// million jobs) but takes the cluster's workloads and nodes at one instant, bounded
// (trace/cluster_snapshot.h): the page's Workloads tab and GPU map show them.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "trace/report.h"
#include "trace/report_format.h"

namespace tessera::trace {
namespace {

using nlohmann::json;
using report_internal::JNum;
using report_internal::Rfc3339;

int Channel(const ReplayResult& r, const std::string& name) {
  auto it = std::find(r.channels.begin(), r.channels.end(), name);
  return it == r.channels.end() ? -1 : static_cast<int>(it - r.channels.begin());
}

// The ClusterQueues at the snapshot's instant (r.queues holds the model's in its order, then
// "(none)").
json Queues(const ReplayResult& r) {
  json items = json::array();
  const ClusterSnapshot& cs = r.snapshot;
  for (size_t i = 0; i < r.queues.size(); ++i) {
    const QueueResult& q = r.queues[i];
    if (q.name == "(none)") continue;
    const QueueAtSnapshot at = i < cs.queues.size() ? cs.queues[i] : QueueAtSnapshot{};
    const double used = std::round(at.used_gpus * 1000) / 1000;
    json resources = json::array();
    if (q.quota_gpus > 0 || used > 0) {
      resources.push_back({{"flavor", "(all)"},
                           {"resource", "nvidia.com/gpu"},
                           {"nominal", JNum(q.quota_gpus)},
                           {"borrowingLimit", nullptr},
                           {"lendingLimit", nullptr},
                           {"used", used},
                           {"borrowed", nullptr}});  // not kept by the replay
    }
    items.push_back({{"name", q.name},
                     {"cohort", nullptr},
                     {"strategy", nullptr},
                     {"resources", resources},
                     {"pending", {{"active", at.pending}, {"inadmissible", 0}}},
                     {"pendingByReason", json::object()},
                     {"admitted", at.admitted},
                     {"weightedShare", nullptr},
                     {"reservation", nullptr}});
  }
  return {{"items", items}};
}

json Cost(const ReplayResult& r) {
  if (!r.cost) return nullptr;
  json rows = json::array();
  for (const auto& [key, line] : r.cost->by_cluster_queue) {
    rows.push_back({{"key", key},
                    {"gpuHours", JNum(line.gpu_hours)},
                    {"allocatedDollars", JNum(line.allocated_dollars(), 2)},
                    {"effectiveDollars",
                     line.effective_dollars ? JNum(*line.effective_dollars, 2) : json(nullptr)},
                    {"jobs", line.runs}});
  }
  return {
      {"from", Rfc3339(r.start)},
      {"to", Rfc3339(r.end)},
      {"currency", "USD"},
      {"rows", rows},
      {"idle",
       {{"gpuHours", JNum(r.cost->idle.gpu_hours)}, {"dollars", JNum(r.cost->idle.dollars, 2)}}}};
}

// Per NodePool, the mean nodes up and idle over bucket b (a replay's addition to the trends
// points: serve's have no `nodesByPool`).
json NodesByPool(const ReplayResult& r, int b) {
  json pools = json::object();
  for (const PoolUsage& u : r.node_pools) {
    const int up = Channel(r, "nodes_up:" + u.pool), idle = Channel(r, "nodes_idle:" + u.pool);
    if (up < 0 || idle < 0) continue;
    pools[u.pool] = {{"up", JNum(r.series.Mean(b, up), 2)},
                     {"idle", JNum(r.series.Mean(b, idle), 2)}};
  }
  return pools;
}

json Trends(const ReplayResult& r) {
  const int alloc = Channel(r, "gpu_allocation_pct"), pending = Channel(r, "pending_jobs");
  const int idle = Channel(r, "idle_gpu_nodes");
  json points = json::array();
  for (int b = 0; b < r.series.size(); ++b) {
    if (r.series.Covered(b) <= 0) continue;
    // As serve's: the p95 of the waits of the jobs first admitted in the bucket (none: null),
    // and the node-seconds of GPU nodes up with no GPU held.
    const std::optional<double> p95 = r.admission_waits.Quantile(b, 0.95);
    json p = {
        {"time", Rfc3339(r.series.origin() + b * r.series.width())},
        {"gpuAllocation", alloc < 0 ? json(nullptr) : JNum(r.series.Mean(b, alloc) / 100, 4)},
        {"waitP95Seconds", p95 ? JNum(*p95, 3) : json(nullptr)},
        {"idleNodeSeconds",
         idle < 0 ? json(nullptr) : JNum(r.series.Mean(b, idle) * r.series.Covered(b), 3)},
        {"pendingWorkloads", pending < 0 ? json(nullptr) : JNum(r.series.Mean(b, pending), 1)}};
    if (!r.node_pools.empty()) p["nodesByPool"] = NodesByPool(r, b);
    points.push_back(std::move(p));
  }
  return {{"interval", JNum(r.series.width())}, {"points", points}};
}

}  // namespace

std::string DashboardSnapshotJson(const ReplayResult& r) {
  // The cluster snapshot (trace/cluster_snapshot.h): the nodes and GPUs up then (an elastic
  // pool's nodes not provisioned are left out), the GPUs held, the idle nodes, the workloads.
  const ClusterSnapshot& cs = r.snapshot;
  const bool taken = cs.time >= 0;
  const double at = taken ? cs.time : r.end;
  json snap = {{"clock",
                {{"simulated", true},
                 {"start", Rfc3339(r.start)},
                 {"end", Rfc3339(r.end)},
                 {"snapshot", Rfc3339(at)}}},
               {"summary",
                {{"time", Rfc3339(at)},
                 {"leader", nullptr},
                 {"synced", true},
                 {"schedulerName", "tessera"},
                 {"nodes", taken ? json(cs.nodes_up) : json(r.nodes)},
                 {"gpus", taken ? json(cs.gpus_up) : json(r.gpus_total)},
                 {"gpusAllocated", taken ? json(cs.gpus_allocated) : json(nullptr)},
                 {"idleGpuNodes", taken ? json(cs.idle_gpu_nodes) : json(nullptr)},
                 {"pendingWorkloads", taken ? json(cs.pending) : json(nullptr)},
                 {"admittedWorkloads", taken ? json(cs.admitted) : json(nullptr)}}},
               {"queues", Queues(r)},
               {"workloads", cs.time < 0 ? json(nullptr) : json::parse(cs.workloads_json)},
               {"nodes", cs.time < 0 ? json(nullptr) : json::parse(cs.nodes_json)},
               {"cost", Cost(r)},
               {"trends", Trends(r)}};
  return DumpJson(snap);
}

}  // namespace tessera::trace
