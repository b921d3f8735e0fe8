#include "accounting/recorder.h"

#include <algorithm>
#include <set>

#include "model/json_text.h"
#include "nlohmann/json.hpp"

namespace tessera::accounting {
namespace {

constexpr double kSecondsPerHour = 3600;

std::string JoinSet(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ",";
    out += s;
  }
  return out;
}

}  // namespace

RunRecorder::RunRecorder(const Model& model, RecordSink& sink, RecorderOptions options)
    : model_(model),
      sink_(sink),
      options_(std::move(options)),
      ledger_(model, /*by_workload=*/false) {}

int32_t PriorityOf(const Model& model, const Workload& w) {
  // As the engine resolves it: the workload priority class wins, then the PriorityClass, then
  // the global default.
  for (const auto& c : model.workload_priority_classes)
    if (!w.workload_priority_class.empty() && c.name == w.workload_priority_class) return c.value;
  for (const auto& c : model.priority_classes)
    if (!w.priority_class.empty() && c.name == w.priority_class) return c.value;
  for (const auto& c : model.priority_classes)
    if (c.global_default) return c.value;
  return 0;
}

RunRecord DescribeRun(const Model& model, WorkloadId id, int32_t cluster_queue,
                      const std::vector<int32_t>& flavors) {
  const Workload& w = model.workloads[static_cast<size_t>(id)];
  RunRecord r;
  r.ns = w.ns;
  r.name = w.name;
  r.local_queue = w.queue_name;
  if (cluster_queue >= 0 && cluster_queue < static_cast<int32_t>(model.cluster_queues.size())) {
    r.cluster_queue = model.cluster_queues[static_cast<size_t>(cluster_queue)].name;
    r.cohort = model.cluster_queues[static_cast<size_t>(cluster_queue)].cohort;
  }
  r.labels = DumpJson(nlohmann::json(w.labels));
  r.priority = PriorityOf(model, w);
  std::vector<std::string> names;  // in resource-group order, each once
  for (int32_t f : flavors) {
    if (f < 0 || f >= static_cast<int32_t>(model.flavors.size())) continue;
    const std::string& n = model.flavors[static_cast<size_t>(f)].name;
    if (std::find(names.begin(), names.end(), n) != names.end()) continue;
    r.flavors += (names.empty() ? "" : ",") + n;
    names.push_back(n);
  }
  return r;
}

RunRecord RunRecorder::Start(WorkloadId id, int32_t cluster_queue,
                             const std::vector<int32_t>& flavors) const {
  RunRecord r = DescribeRun(model_, id, cluster_queue, flavors);
  r.source = options_.source;
  return r;
}

void RunRecorder::Hold(Open& run, WorkloadId id, const std::vector<PodPlacement>& pods,
                       double now) {
  const Workload& w = model_.workloads[static_cast<size_t>(id)];
  for (const PodPlacement& p : pods) {
    const Node& node = model_.nodes[static_cast<size_t>(p.node)];
    const double g = cost::HeldGpus(w.pod_sets[static_cast<size_t>(p.pod_set)].requests, node);
    run.gpus += g;
    ++run.pods;
    if (g > 0 && !node.gpu_model.empty()) run.gpu_models.insert(node.gpu_model);
  }
  run.record.gpu_model = JoinSet(run.gpu_models);
  run.record.gpus = std::max(run.record.gpus, run.gpus);
  run.record.pods = std::max(run.record.pods, run.pods);
  ledger_.Hold(id, run.cluster_queue, run.flavors, pods, now);
}

void RunRecorder::Admitted(WorkloadId id, double submit, int32_t cluster_queue,
                           const std::vector<int32_t>& flavors,
                           const std::vector<PodPlacement>& pods, double now) {
  if (open_.count(id) > 0) Ended(id, RunEnd::kPreempted, "", now);
  Open& run = open_[id];
  run.cluster_queue = cluster_queue;
  run.flavors = flavors;
  run.record = Start(id, cluster_queue, flavors);
  run.record.attempt = ++counts_[id].first;
  run.record.submit = submit;
  run.record.start = now;
  Hold(run, id, pods, now);
}

void RunRecorder::ScaledUp(WorkloadId id, const std::vector<PodPlacement>& pods, double now) {
  auto it = open_.find(id);
  if (it == open_.end()) return;
  Hold(it->second, id, pods, now);
}

void RunRecorder::Ended(WorkloadId id, RunEnd how, const std::string& reason, double now) {
  auto it = open_.find(id);
  if (it == open_.end()) return;
  RunRecord r = std::move(it->second.record);
  open_.erase(it);
  if (how == RunEnd::kPreempted) ++counts_[id].second;
  r.how = how;
  r.reason = reason;
  r.end = now;
  r.preemptions = counts_[id].second;
  if (auto line = ledger_.OpenRun(id, now)) {
    r.gpu_hours = line->gpu_hours;
    if (model_.config.pricing.present) r.allocated_dollars = line->allocated_dollars();
    if (line->effective_dollars && line->allocated_dollars() > 0)
      r.utilization = *line->effective_dollars / line->allocated_dollars();
  } else {
    r.gpu_hours = r.gpus * std::max(0.0, now - r.start) / kSecondsPerHour;
  }
  ledger_.Release(id, now);
  r.submit += options_.epoch;
  r.start += options_.epoch;
  r.end += options_.epoch;
  ++recorded_;
  sink_.Add(std::move(r));
}

void RunRecorder::CloseAll(double end) {
  std::vector<WorkloadId> ids;
  ids.reserve(open_.size());
  for (const auto& [id, run] : open_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (WorkloadId id : ids) Ended(id, RunEnd::kRunning, "", end);
}

}  // namespace tessera::accounting
