#include "sim/gpu_failures.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera {

std::vector<std::string> UnsimulatedFailurePolicies(const Model& model) {
  std::vector<std::string> out;
  for (const ClusterQueue& cq : model.cluster_queues)
    if (cq.gpu_failure_policy == GpuFailurePolicy::kLeaveToController)
      out.push_back(fmt::format(
          "ClusterQueue {}: tessera.dev/gpu-failure-policy LeaveToController is not simulated "
          "(its workloads' controllers would decide); --gpu-failures requeues them as Requeue "
          "does",
          cq.name));
  return out;
}

GpuFailures::GpuFailures(Scheduler& s, const GpuFailureOptions& o)
    : s_(s), o_(o), rng_(o.seed), next_failure_(std::numeric_limits<double>::infinity()) {
  const Model& m = s.model();
  first_.push_back(0);
  for (const Node& n : m.nodes) first_.push_back(first_.back() + n.physical_gpus());
  if (o_.enabled() && first_.back() > 0) next_failure_ = Draw();
}

double GpuFailures::Draw() {
  // Exponential, drawn by hand from 53 random bits so that every platform's standard library
  // gives the same run (as the autoscaler's spot interruptions); whole seconds, rounded up.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
  const double rate = static_cast<double>(first_.back()) / o_.mtbf_seconds;
  return std::ceil(-std::log1p(-u) / rate);
}

void GpuFailures::Advance(double now, std::vector<Decision>& evicted) {
  // In time order. A failure before `now` (the run was waiting for a repair only) is repaired
  // from its own time; what it evicts leaves now.
  while (std::min(NextRepair(), next_failure_) <= now) {
    if (NextRepair() <= next_failure_) {
      const auto [n, g] = repairs_.begin()->second;
      s_.SetGpuFailed(n, g, false);
      stats_.failed_gpu_hours += o_.repair_seconds / 3600;
      repairs_.erase(repairs_.begin());
      continue;
    }
    Fail(next_failure_, evicted);
    next_failure_ += Draw();
  }
}

void GpuFailures::Fail(double at, std::vector<Decision>& evicted) {
  const auto pick = static_cast<int64_t>(rng_() % static_cast<uint64_t>(first_.back()));
  const auto n = static_cast<NodeId>(std::upper_bound(first_.begin(), first_.end(), pick) -
                                     first_.begin() - 1);
  const auto g = static_cast<int32_t>(pick - first_[n]);
  if (!s_.node_online(n) || s_.gpu_failed(n, g)) return;  // thinned: no healthy GPU that is up
  ++stats_.failures;
  s_.SetGpuFailed(n, g, true);
  repairs_.insert({at + o_.repair_seconds, {n, g}});
  for (WorkloadId id : s_.WorkloadsOnGpu(n, g)) {
    ++stats_.interruptions;
    evicted.push_back(
        s_.EvictForNode(id, fmt::format("GPU {} of node {} failed", g, s_.model().nodes[n].name)));
  }
}

void GpuFailures::Lost(double ran, double saved, double before, double gpus) {
  stats_.gpu_hours_lost += (ran - saved) * gpus / 3600;
  stats_.gpu_hours_lost_without_checkpoints += (ran + before) * gpus / 3600;
}

void GpuFailures::Finish(double end) {
  for (const auto& [due, gpu] : repairs_)
    stats_.failed_gpu_hours += std::max(0.0, end - (due - o_.repair_seconds)) / 3600;
}

std::string GpuFailureLines(const GpuFailureStats& st) {
  return fmt::format(
      "  GPU failures        {} ({} workloads interrupted)\n"
      "  lost to failures    {:.2f} GPU-hours since the last checkpoint ({:.2f} without "
      "checkpoints)\n"
      "  failed GPU-hours    {:.2f} (GPUs out until repaired)\n",
      st.failures, st.interruptions, st.gpu_hours_lost, st.gpu_hours_lost_without_checkpoints,
      st.failed_gpu_hours);
}

nlohmann::json GpuFailureJson(const GpuFailureStats& st) {
  return {{"failures", st.failures},
          {"interruptions", st.interruptions},
          {"gpuHoursLost", st.gpu_hours_lost},
          {"gpuHoursLostWithoutCheckpoints", st.gpu_hours_lost_without_checkpoints},
          {"failedGpuHours", st.failed_gpu_hours}};
}

}  // namespace tessera
