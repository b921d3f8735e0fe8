#include "engine/time/fair_usage.h"

#include <cmath>

#include "engine/engine.h"

namespace tessera {

FairUsage::FairUsage(Engine& e) : e_(e), s_(e.st) {}

double FairUsage::Weighted(WorkloadId id) const {
  const AdmissionFairSharingConfig& c = s_.model.config.admission_fair_sharing;
  const Workload& w = s_.model.workloads[id];
  double total = 0;
  for (const PlacedPod& p : s_.recs[id].placed) {
    const Resources& r = w.pod_sets[p.placement.pod_set].requests;
    if (c.resource_weights.empty()) {
      total += static_cast<double>(r[kGpu]) + static_cast<double>(r[kGpuMilli]) / kMilliPerGpu;
      continue;
    }
    for (const auto& [res, weight] : c.resource_weights) {
      double unit = 1;
      if (res == kCpu || res == kGpuMilli) unit = 1000;
      if (res == kMemory) unit = 1024.0 * 1024 * 1024;
      total += weight * static_cast<double>(r[res]) / unit;
    }
  }
  return total;
}

void FairUsage::Sample(double now) {
  const AdmissionFairSharingConfig& c = s_.model.config.admission_fair_sharing;
  if (last_ < 0) {  // the first call: set up
    enabled_ = c.enabled;
    for (size_t q = 0; q < s_.model.cluster_queues.size(); ++q)
      if (s_.model.cluster_queues[q].usage_based_admission) cqs_.push_back(static_cast<int32_t>(q));
    enabled_ = enabled_ && !cqs_.empty();
    usage_.assign(s_.model.local_queues.size(), 0);
    for (const LocalQueue& lq : s_.model.local_queues) weight_.push_back(lq.fair_weight);
    last_ = now;
    next_ = now + c.sampling_interval;
    return;
  }
  if (!enabled_ || now < next_) return;
  std::vector<double> current(usage_.size(), 0);
  for (int32_t cq : cqs_)
    for (const auto& [priority, id] : s_.admitted_by_cq[cq])
      if (s_.recs[id].lq >= 0) current[s_.recs[id].lq] += Weighted(id);
  const double alpha =
      c.usage_half_life > 0 ? 1 - std::pow(0.5, (now - last_) / c.usage_half_life) : 1.0;
  for (size_t lq = 0; lq < usage_.size(); ++lq)
    usage_[lq] = (1 - alpha) * usage_[lq] + alpha * current[lq];
  last_ = now;
  // The next sample on the interval's grid (a sample may come late: cycles run at events).
  next_ += c.sampling_interval * std::max(1.0, std::ceil((now - next_) / c.sampling_interval));
  if (next_ <= now) next_ = now + c.sampling_interval;
  for (int32_t cq : cqs_) Reorder(cq);
}

void FairUsage::Reorder(int32_t cq) {
  const int q = EngineState::queue_index(cq);
  std::vector<WorkloadId> moved;
  for (WorkloadId id : e_.pending.members(q)) {
    const int32_t lq = s_.recs[id].lq;
    const double key = lq < 0 || weight_[lq] <= 0 ? 0 : usage_[lq] / weight_[lq];
    if (key != s_.recs[id].afs_key) moved.push_back(id);
  }
  for (WorkloadId id : moved) {
    WorkloadRec& rec = s_.recs[id];
    e_.reservations.Forget(id);
    e_.pending.Dequeue(id);
    rec.afs_key = rec.lq < 0 || weight_[rec.lq] <= 0 ? 0 : usage_[rec.lq] / weight_[rec.lq];
    e_.pending.Enqueue(id);
  }
}

double FairUsage::Next(double now) const {
  if (!enabled_) return std::numeric_limits<double>::infinity();
  for (int32_t cq : cqs_)
    if (!e_.pending.members(EngineState::queue_index(cq)).empty()) return std::max(next_, now);
  return std::numeric_limits<double>::infinity();
}

}  // namespace tessera
