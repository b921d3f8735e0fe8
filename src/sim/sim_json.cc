#include "sim/sim_json.h"

namespace tessera::sim_internal {

void AddWorkloadFields(const Scheduler& s, WorkloadId id, nlohmann::json& w) {
  const Workload& wl = s.model().workloads[static_cast<size_t>(id)];
  const WorkloadStatus& st = s.status(id);
  int64_t gpu_milli = 0;
  for (const PodSet& ps : wl.pod_sets)
    gpu_milli += int64_t{ps.count} *
                 (ps.requests[kGpu] > 0 ? ps.requests[kGpu] * 1000 : ps.requests[kGpuMilli]);
  w["namespace"] = wl.ns;
  w["workloadName"] = wl.name;
  w["labels"] = wl.labels;
  w["localQueue"] = wl.queue_name;
  w["priority"] = s.priority(id);
  w["gpus"] = static_cast<double>(gpu_milli) / 1000.0;
  w["created"] = st.created;
  if (st.state != WorkloadState::kPending && st.admitted_at >= 0) w["admittedAt"] = st.admitted_at;
}

void AddClusterFields(const Scheduler& s, nlohmann::json& doc) {
  const Model& m = s.model();
  nlohmann::json cqs = nlohmann::json::array();
  for (const ClusterQueue& cq : m.cluster_queues) {
    double gpus = 0;
    for (const auto& g : cq.resource_groups)
      for (const auto& f : g.flavors)
        for (const auto& r : f.resources) {
          if (r.resource == kGpu) gpus += static_cast<double>(r.nominal);
          if (r.resource == kGpuMilli) gpus += static_cast<double>(r.nominal) / 1000.0;
        }
    cqs.push_back({{"name", cq.name}, {"cohort", cq.cohort}, {"nominalGpus", gpus}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node& n : m.nodes)
    nodes.push_back({{"name", n.name},
                     {"gpuModel", n.gpu_model},
                     {"gpus", n.gpu_count()},
                     {"unschedulable", n.unschedulable},
                     {"labels", n.labels}});
  doc["clusterQueues"] = std::move(cqs);
  doc["nodes"] = std::move(nodes);
}

}  // namespace tessera::sim_internal
