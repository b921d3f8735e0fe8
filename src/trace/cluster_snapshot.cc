#include "trace/cluster_snapshot.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <vector>

#include "cost/pricing.h"
#include "engine/time/span.h"
#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "trace/report_format.h"

namespace tessera::trace {
namespace {

using nlohmann::json;
using report_internal::Rfc3339;

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json TimeOrNull(double t) { return t < 0 ? json(nullptr) : json(Rfc3339(t)); }

// Pods are named as a Job's would be: `<workload>-<i>`, with the pod set's name between when
// there are several.
std::string PodName(const Workload& w, int32_t pod_set, int32_t index) {
  if (w.pod_sets.size() == 1) return fmt::format("{}-{}", w.name, index);
  return fmt::format("{}-{}-{}", w.name, w.pod_sets[static_cast<size_t>(pod_set)].name, index);
}

// The engine writes "expected to start in 22m (t=5400s)" at the cycle that planned it; the
// snapshot may be taken later than that cycle. The span is said again from the snapshot's
// instant, so that the reason and the page's start column (expectedStart - now) agree.
std::string ReasonAt(const std::string& reason, double expected, double now) {
  static constexpr std::string_view kHead = "expected to start in ";
  const size_t at = reason.find(kHead);
  if (expected < 0 || at == std::string::npos) return reason;
  const size_t end = reason.find(" (t=", at + kHead.size());
  if (end == std::string::npos) return reason;
  return reason.substr(0, at + kHead.size()) + FormatSpan(std::max(0.0, expected - now)) +
         reason.substr(end);
}

// One item of serve's /api/v1/workloads, with its explanation (the page's explain box reads it
// from the item in a snapshot).
json WorkloadItem(const Scheduler& s, WorkloadId id, double now) {
  const Model& m = s.model();
  const Workload& w = m.workloads[static_cast<size_t>(id)];
  const WorkloadStatus& st = s.status(id);
  const bool admitted = st.state != WorkloadState::kPending;
  // A preempted workload in its grace period still holds its pods' GPUs, told to stop.
  const bool terminating = st.state == WorkloadState::kTerminating;
  const std::string cq =
      st.cluster_queue >= 0 ? m.cluster_queues[static_cast<size_t>(st.cluster_queue)].name : "";
  std::string flavor;
  for (int32_t f : st.flavors) {
    if (f >= 0 && static_cast<size_t>(f) < m.flavors.size()) {
      flavor = m.flavors[static_cast<size_t>(f)].name;
      break;
    }
  }
  int64_t gpus = 0;
  for (const PodSet& ps : w.pod_sets) gpus += ps.requests[kGpu] * ps.count;
  json pods = json::array();
  for (const PodPlacement& p : st.pods) {
    if (static_cast<int64_t>(pods.size()) >= kMaxSnapshotPods) break;
    pods.push_back({{"name", PodName(w, p.pod_set, p.index)},
                    {"node", m.nodes[static_cast<size_t>(p.node)].name},
                    {"gpuIndices", p.gpus}});
  }
  // A pending workload's pods exist but are not placed.
  for (int32_t ps = 0; !admitted && ps < static_cast<int32_t>(w.pod_sets.size()); ++ps)
    for (int32_t i = 0; i < w.pod_sets[static_cast<size_t>(ps)].count &&
                        static_cast<int64_t>(pods.size()) < kMaxSnapshotPods;
         ++i)
      pods.push_back(
          {{"name", PodName(w, ps, i)}, {"node", nullptr}, {"gpuIndices", json::array()}});
  const double expected = admitted ? -1 : st.expected_start;
  const std::string reason = admitted ? std::string() : ReasonAt(st.reason, expected, now);
  return {{"namespace", w.ns},
          {"name", w.name},
          {"localQueue", OrNull(w.queue_name)},
          {"clusterQueue", OrNull(cq)},
          {"priority", s.priority(id)},
          {"priorityClass", OrNull(w.workload_priority_class.empty() ? w.priority_class
                                                                     : w.workload_priority_class)},
          {"state", terminating ? "terminating"
                    : admitted  ? "admitted"
                                : "pending"},
          {"reason", terminating ? json("preempted: told to stop, it keeps its GPUs until its "
                                        "grace period ends")
                     : admitted  ? json(nullptr)
                                 : OrNull(reason)},
          {"created", TimeOrNull(st.created)},
          {"admittedAt", TimeOrNull(admitted ? st.admitted_at : -1)},
          {"waitSeconds",
           report_internal::JNum(std::max(0.0, (admitted ? st.admitted_at : now) - st.created), 3)},
          {"expectedStart", TimeOrNull(expected)},
          {"gpus", gpus},
          {"flavor", OrNull(flavor)},
          {"pods", std::move(pods)},
          {"explain",
           {{"reason", admitted ? fmt::format("admitted to ClusterQueue {}", cq) : reason},
            {"expectedStart", TimeOrNull(expected)},
            {"wouldFitIf", s.fit_hints(id)}}}};
}

// The GPU map: serve's /api/v1/nodes items for the nodes up, each GPU slot with the workload
// whose pod the engine placed on it. Counts the idle GPU nodes into `snap`.
json NodeItems(const Scheduler& s, const std::vector<WorkloadId>& running, ClusterSnapshot& snap) {
  const Model& m = s.model();
  const cost::NodeFlavors flavors(m);
  std::vector<json> slots(m.nodes.size());
  std::vector<bool> gpu_held(m.nodes.size(), false);
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (!s.node_online(static_cast<NodeId>(n))) continue;
    slots[n] = json::array();
    for (int32_t g = 0; g < m.nodes[n].gpu_count(); ++g)
      slots[n].push_back({{"index", g},
                          {"workload", nullptr},
                          {"clusterQueue", nullptr},
                          {"utilization", nullptr},
                          {"underused", false}});
  }
  for (WorkloadId id : running) {
    const Workload& w = m.workloads[static_cast<size_t>(id)];
    const WorkloadStatus& st = s.status(id);
    const json cq = st.cluster_queue >= 0
                        ? json(m.cluster_queues[static_cast<size_t>(st.cluster_queue)].name)
                        : json(nullptr);
    for (const PodPlacement& p : st.pods) {
      const Resources& req = w.pod_sets[static_cast<size_t>(p.pod_set)].requests;
      const auto n = static_cast<size_t>(p.node);
      if (req[kGpu] > 0 || req[kGpuMilli] > 0) gpu_held[n] = true;
      for (int32_t g : p.gpus) {
        if (slots[n].is_null() || g < 0 || static_cast<size_t>(g) >= slots[n].size()) continue;
        if (slots[n][static_cast<size_t>(g)]["workload"].is_null()) ++snap.gpus_allocated;
        slots[n][static_cast<size_t>(g)]["workload"] = w.Key();
        slots[n][static_cast<size_t>(g)]["clusterQueue"] = cq;
      }
    }
  }
  json items = json::array();
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    if (slots[n].is_null()) continue;
    const Node& node = m.nodes[n];
    ++snap.nodes_up;
    snap.gpus_up += node.gpu_count();
    if (node.gpu_count() > 0 && !gpu_held[n]) ++snap.idle_gpu_nodes;
    if (static_cast<int64_t>(items.size()) >= kMaxSnapshotNodes) continue;
    items.push_back({{"name", node.name},
                     {"flavor", OrNull(flavors.of(static_cast<NodeId>(n)))},
                     {"gpuModel", OrNull(node.gpu_model)},
                     {"gpus", node.gpu_count()},
                     {"unschedulable", node.unschedulable},
                     {"gpuSlots", std::move(slots[n])}});
  }
  return items;
}

// Per ClusterQueue: the GPUs its admitted workloads hold and how many are admitted and pending.
void CountQueues(const Scheduler& s, const std::vector<WorkloadId>& running,
                 const std::vector<WorkloadId>& pending, ClusterSnapshot& snap) {
  const Model& m = s.model();
  snap.queues.assign(m.cluster_queues.size(), {});
  auto queue = [&](WorkloadId id) -> QueueAtSnapshot* {
    const int32_t cq = s.status(id).cluster_queue;
    return cq < 0 || static_cast<size_t>(cq) >= snap.queues.size()
               ? nullptr
               : &snap.queues[static_cast<size_t>(cq)];
  };
  for (WorkloadId id : pending)
    if (QueueAtSnapshot* q = queue(id)) ++q->pending;
  for (WorkloadId id : running) {
    QueueAtSnapshot* q = queue(id);
    if (q == nullptr) continue;
    ++q->admitted;
    const Workload& w = m.workloads[static_cast<size_t>(id)];
    int64_t milli = 0;
    for (const PodPlacement& p : s.status(id).pods) {
      const Resources& req = w.pod_sets[static_cast<size_t>(p.pod_set)].requests;
      milli += req[kGpu] > 0 ? req[kGpu] * 1000 : req[kGpuMilli];
    }
    q->used_gpus += static_cast<double>(milli) / 1000.0;
  }
}

}  // namespace

ClusterSnapshot TakeClusterSnapshot(const Scheduler& s, double now, int64_t max_workloads) {
  ClusterSnapshot snap;
  snap.time = now;
  // Running workloads (admitted, or keeping their GPUs through a grace period), then the
  // pending ones oldest first: what a person looks at first, kept when the list is cut.
  std::vector<WorkloadId> running, pending;
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    if (s.retired(id)) continue;  // ended long ago
    const WorkloadState state = s.status(id).state;
    if (state == WorkloadState::kPending) pending.push_back(id);
    if (state == WorkloadState::kAdmitted || state == WorkloadState::kTerminating)
      running.push_back(id);
  }
  std::stable_sort(pending.begin(), pending.end(), [&](WorkloadId a, WorkloadId b) {
    return s.status(a).created < s.status(b).created;
  });
  snap.workloads_total = static_cast<int64_t>(running.size() + pending.size());
  snap.admitted = static_cast<int64_t>(running.size());
  snap.pending = static_cast<int64_t>(pending.size());
  CountQueues(s, running, pending, snap);
  std::vector<WorkloadId> written(running);
  written.insert(written.end(), pending.begin(), pending.end());
  if (static_cast<int64_t>(written.size()) > max_workloads)
    written.resize(static_cast<size_t>(max_workloads));
  snap.workloads_written = static_cast<int64_t>(written.size());
  // Listed as serve lists them: by namespace, then name.
  const Model& m = s.model();
  std::sort(written.begin(), written.end(), [&](WorkloadId a, WorkloadId b) {
    const Workload& x = m.workloads[static_cast<size_t>(a)];
    const Workload& y = m.workloads[static_cast<size_t>(b)];
    return std::tie(x.ns, x.name, a) < std::tie(y.ns, y.name, b);
  });
  json items = json::array();
  for (WorkloadId id : written) items.push_back(WorkloadItem(s, id, now));
  snap.workloads_json = DumpJson(
      json{{"time", Rfc3339(now)}, {"total", snap.workloads_total}, {"items", std::move(items)}});
  json nodes = NodeItems(s, running, snap);
  snap.nodes_json =
      DumpJson(json{{"time", Rfc3339(now)}, {"total", snap.nodes_up}, {"items", std::move(nodes)}});
  return snap;
}

}  // namespace tessera::trace
