#include "cost/ledger.h"

#include <algorithm>
#include <cmath>

namespace tessera::cost {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
const std::string kNone = "(none)";

}  // namespace

// A share by memory is booked as the engine books it: ceil(M * 1000 / D) milli.
double HeldGpus(const Resources& r, const Node& node) {
  double g = static_cast<double>(r[kGpu]) + static_cast<double>(r[kGpuMilli]) / kMilliPerGpu;
  if (r[kGpuMemory] > 0 && node.gpu_memory_mib > 0) {
    const int64_t milli =
        std::min<int64_t>(kMilliPerGpu, (r[kGpuMemory] * kMilliPerGpu + node.gpu_memory_mib - 1) /
                                            node.gpu_memory_mib);
    g += static_cast<double>(milli) / kMilliPerGpu;
  }
  return g;
}

void CostLine::Add(const CostLine& o) {
  gpu_hours += o.gpu_hours;
  cpu_hours += o.cpu_hours;
  memory_gib_hours += o.memory_gib_hours;
  gpu_dollars += o.gpu_dollars;
  cpu_dollars += o.cpu_dollars;
  memory_dollars += o.memory_dollars;
  unpriced_gpu_hours += o.unpriced_gpu_hours;
  if (o.effective_dollars) effective_dollars = effective_dollars.value_or(0) + *o.effective_dollars;
  runs += o.runs;
}

CostLedger::CostLedger(const Model& model, bool by_workload)
    : model_(model),
      by_workload_(by_workload),
      node_flavors_(model),
      node_gpu_seconds_(model.nodes.size(), 0) {}

std::string CostLedger::FlavorFor(int32_t cluster_queue, const std::vector<int32_t>& flavors,
                                  int pod_set, ResourceId r, NodeId node) const {
  // The flavor admission chose for the pod set in the resource group covering `r` (Kueue's
  // first group that covers it); else the node's own.
  if (cluster_queue >= 0) {
    const auto& groups = model_.cluster_queues[cluster_queue].resource_groups;
    const size_t base = flavors.size() >= (static_cast<size_t>(pod_set) + 1) * groups.size()
                            ? static_cast<size_t>(pod_set) * groups.size()
                            : 0;
    for (size_t g = 0; g < groups.size() && base + g < flavors.size(); ++g) {
      const auto& covered = groups[g].covered;
      if (std::find(covered.begin(), covered.end(), r) == covered.end()) continue;
      const int32_t f = flavors[base + g];
      if (f >= 0 && f < static_cast<int32_t>(model_.flavors.size())) return model_.flavors[f].name;
      break;
    }
  }
  return node_flavors_.of(node);
}

CostLedger::Held CostLedger::Price(int32_t cluster_queue, const std::vector<int32_t>& flavors,
                                   const PodPlacement& p, const Workload& w, double now) const {
  const PricingConfig& pricing = model_.config.pricing;
  const Node& node = model_.nodes[p.node];
  const Resources& r = w.pod_sets[p.pod_set].requests;
  Held h;
  h.start = now;
  h.node = p.node;
  h.gpus = HeldGpus(r, node);
  h.cpus = static_cast<double>(r[kCpu]) / 1000;
  h.gib = static_cast<double>(r[kMemory]) / kBytesPerGiB;
  if (h.gpus > 0) {
    // Shares are quota on tessera.dev/gpu-milli or gpu-memory, whole GPUs on nvidia.com/gpu.
    ResourceId gr = r[kGpu] > 0 ? kGpu : (r[kGpuMilli] > 0 ? kGpuMilli : kGpuMemory);
    const std::string flavor = FlavorFor(cluster_queue, flavors, p.pod_set, gr, p.node);
    if (auto price = LookUpPrice(pricing.gpu_hour, flavor, node.gpu_model))
      h.gpu_price = *price * SpotFactor(pricing, flavor);
  }
  if (h.cpus > 0) {
    const std::string flavor = FlavorFor(cluster_queue, flavors, p.pod_set, kCpu, p.node);
    h.cpu_price = LookUpPrice(pricing.cpu_hour, flavor, node.gpu_model).value_or(0) *
                  SpotFactor(pricing, flavor);
  }
  if (h.gib > 0) {
    const std::string flavor = FlavorFor(cluster_queue, flavors, p.pod_set, kMemory, p.node);
    h.memory_price = LookUpPrice(pricing.memory_gib_hour, flavor, node.gpu_model).value_or(0) *
                     SpotFactor(pricing, flavor);
  }
  return h;
}

void CostLedger::Hold(WorkloadId id, int32_t cluster_queue, const std::vector<int32_t>& flavors,
                      const std::vector<PodPlacement>& pods, double now) {
  const Workload& w = model_.workloads[id];
  auto [it, fresh] = open_.try_emplace(id);
  Run& run = it->second;
  run.cluster_queue = cluster_queue;
  // A new run counts once, whatever its scale-ups add.
  if (fresh) ++run.runs;
  for (const PodPlacement& p : pods) run.pods.push_back(Price(cluster_queue, flavors, p, w, now));
}

void CostLedger::Release(WorkloadId id, double now) {
  auto it = open_.find(id);
  if (it == open_.end()) return;
  const CostLine line = Charge(it->second, now, &node_gpu_seconds_);
  AddToRows(id, it->second.cluster_queue, line, closed_);
  open_.erase(it);
}

CostLine CostLedger::Charge(const Run& run, double end, std::vector<double>* node_gpu_seconds) {
  CostLine line;
  line.runs = run.runs;
  for (const Held& h : run.pods) {
    const double hours = std::max(0.0, end - h.start) / kSecondsPerHour;
    line.gpu_hours += h.gpus * hours;
    line.cpu_hours += h.cpus * hours;
    line.memory_gib_hours += h.gib * hours;
    if (h.gpu_price)
      line.gpu_dollars += h.gpus * hours * *h.gpu_price;
    else
      line.unpriced_gpu_hours += h.gpus * hours;
    line.cpu_dollars += h.cpus * hours * h.cpu_price;
    line.memory_dollars += h.gib * hours * h.memory_price;
    if (node_gpu_seconds) (*node_gpu_seconds)[h.node] += h.gpus * hours * kSecondsPerHour;
  }
  return line;
}

void CostLedger::AddToRows(WorkloadId id, int32_t cluster_queue, const CostLine& line,
                           CostReport& report) const {
  const Workload& w = model_.workloads[id];
  if (by_workload_) report.by_workload[w.Key()].Add(line);
  report.by_namespace[w.ns].Add(line);
  report.by_local_queue[w.queue_name.empty() ? kNone : w.ns + "/" + w.queue_name].Add(line);
  const ClusterQueue* cq = cluster_queue >= 0 ? &model_.cluster_queues[cluster_queue] : nullptr;
  report.by_cluster_queue[cq ? cq->name : kNone].Add(line);
  report.by_cohort[cq && !cq->cohort.empty() ? cq->cohort : kNone].Add(line);
  for (const std::string& key : model_.config.pricing.rollup_labels) {
    auto it = w.labels.find(key);
    report.by_label[key][it == w.labels.end() ? kNone : it->second].Add(line);
  }
  report.allocated.Add(line);
}

std::optional<CostLine> CostLedger::OpenRun(WorkloadId id, double now) const {
  auto it = open_.find(id);
  if (it == open_.end()) return std::nullopt;
  return Charge(it->second, now, nullptr);
}

CostReport CostLedger::Report(double end, double start) const {
  CostReport report = closed_;
  report.end_time = end;
  std::vector<double> node_gpu_seconds = node_gpu_seconds_;
  for (const auto& [id, run] : open_)
    AddToRows(id, run.cluster_queue, Charge(run, end, &node_gpu_seconds), report);
  // Idle: each node's GPUs over [start, end] less what was held on it, at the node's own price.
  const PricingConfig& pricing = model_.config.pricing;
  for (size_t n = 0; n < model_.nodes.size(); ++n) {
    const Node& node = model_.nodes[n];
    const double up = uptime_.empty() ? std::max(0.0, end - start) : uptime_[n];
    const double capacity = static_cast<double>(node.gpu_count()) * up;
    const double idle_hours = std::max(0.0, capacity - node_gpu_seconds[n]) / kSecondsPerHour;
    if (idle_hours <= 0) continue;
    report.idle.gpu_hours += idle_hours;
    const std::string& flavor = node_flavors_.of(static_cast<NodeId>(n));
    if (auto price = LookUpPrice(pricing.gpu_hour, flavor, node.gpu_model))
      report.idle.dollars += idle_hours * *price * SpotFactor(pricing, flavor);
    else
      report.idle.unpriced_gpu_hours += idle_hours;
  }
  return report;
}

}  // namespace tessera::cost
