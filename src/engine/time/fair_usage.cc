#include "engine/time/fair_usage.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/engine.h"

namespace tessera {

FairUsage::FairUsage(Engine& e) : e_(e), s_(e.st) {}

void FairUsage::Holds(WorkloadId id, std::vector<double>& into) const {
  const bool default_weights = s_.model.config.admission_fair_sharing.resource_weights.empty();
  const Workload& w = s_.model.workloads[id];
  for (const PlacedPod& p : s_.recs[id].placed) {
    const Resources& r = w.pod_sets[p.placement.pod_set].requests;
    for (size_t t = 0; t < terms_.size(); ++t) {
      const ResourceId res = terms_[t].r;
      double amount = static_cast<double>(r[res]);
      if (res == kCpu || res == kGpuMilli) amount /= 1000;  // cores, GPUs
      // By default GPUs count with their shares.
      if (default_weights && res == kGpu)
        amount += static_cast<double>(r[kGpuMilli]) / kMilliPerGpu;
      into[t] += amount;
    }
  }
}

double FairUsage::WeightedOf(const std::vector<double>& per_term) const {
  double total = 0;
  for (size_t t = 0; t < terms_.size(); ++t)
    total += terms_[t].weight * per_term[t] / terms_[t].scale;
  return total;
}

void FairUsage::Setup(double now) {
  const AdmissionFairSharingConfig& c = s_.model.config.admission_fair_sharing;
  enabled_ = c.enabled;
  for (size_t q = 0; q < s_.model.cluster_queues.size(); ++q)
    if (s_.model.cluster_queues[q].usage_based_admission) cqs_.push_back(static_cast<int32_t>(q));
  enabled_ = enabled_ && !cqs_.empty();
  if (c.resource_weights.empty()) terms_.push_back({kGpu, 1, 1});
  for (const auto& [res, weight] : c.resource_weights)  // per GPU, CPU core, GiB of memory
    terms_.push_back({res, weight, res == kMemory ? 1024.0 * 1024 * 1024 : 1});
  usage_.assign(s_.model.local_queues.size(), 0);
  consumed_.assign(s_.model.local_queues.size(), std::vector<double>(terms_.size(), 0));
  for (const LocalQueue& lq : s_.model.local_queues) weight_.push_back(lq.fair_weight);
  floor_.assign(s_.model.cluster_queues.size(), std::numeric_limits<double>::infinity());
  last_ = now;
  next_ = now + c.sampling_interval;
  ApplySeeds(now);
}

void FairUsage::ApplySeeds(double now) {
  const double half_life = s_.model.config.admission_fair_sharing.usage_half_life;
  for (auto& [lq, u] : seeds_) {
    if (lq < 0 || static_cast<size_t>(lq) >= consumed_.size()) continue;
    // A half-life of 0 keeps no memory: the first sample starts from what is held.
    const double elapsed = std::max(0.0, now - u.at);
    const double keep = half_life > 0 ? std::pow(0.5, elapsed / half_life) : 0.0;
    for (const auto& [name, amount] : u.consumed)
      for (size_t t = 0; t < terms_.size(); ++t)
        if (ResourceName(terms_[t].r) == name && std::isfinite(amount) && amount >= 0)
          consumed_[lq][t] = amount * keep;
    usage_[lq] = WeightedOf(consumed_[lq]);
  }
  seeds_.clear();
  if (enabled_)
    for (int32_t cq : cqs_) Reorder(cq);
}

LocalQueueUsage FairUsage::Consumed(int32_t lq) const {
  LocalQueueUsage u;
  if (last_ < 0 || lq < 0 || static_cast<size_t>(lq) >= consumed_.size()) return u;
  u.at = last_;
  for (size_t t = 0; t < terms_.size(); ++t)
    u.consumed.emplace_back(ResourceName(terms_[t].r), consumed_[lq][t]);
  return u;
}

void FairUsage::Sample(double now) {
  const AdmissionFairSharingConfig& c = s_.model.config.admission_fair_sharing;
  if (last_ < 0) {  // the first call: set up
    Setup(now);
    return;
  }
  if (!enabled_ || now < next_) return;
  std::vector<std::vector<double>> current(consumed_.size(), std::vector<double>(terms_.size(), 0));
  for (int32_t cq : cqs_)
    for (const auto& [priority, id] : s_.admitted_by_cq[cq])
      if (s_.recs[id].lq >= 0) Holds(id, current[s_.recs[id].lq]);
  // Preempted workloads in their grace period still hold what they held.
  for (const auto& [end, id] : e_.terminations.ends()) {
    const WorkloadRec& rec = s_.recs[id];
    if (rec.lq >= 0 && rec.cq >= 0 && s_.model.cluster_queues[rec.cq].usage_based_admission)
      Holds(id, current[rec.lq]);
  }
  const double alpha =
      c.usage_half_life > 0 ? 1 - std::pow(0.5, (now - last_) / c.usage_half_life) : 1.0;
  for (size_t lq = 0; lq < consumed_.size(); ++lq) {
    for (size_t t = 0; t < terms_.size(); ++t)
      consumed_[lq][t] = (1 - alpha) * consumed_[lq][t] + alpha * current[lq][t];
    usage_[lq] = WeightedOf(consumed_[lq]);
  }
  last_ = now;
  // The next sample on the interval's grid (a sample may come late: cycles run at events).
  next_ += c.sampling_interval * std::max(1.0, std::ceil((now - next_) / c.sampling_interval));
  if (next_ <= now) next_ = now + c.sampling_interval;
  for (int32_t cq : cqs_) Reorder(cq);
}

double FairUsage::LocalKey(WorkloadId id) const {
  const int32_t lq = s_.recs[id].lq;
  return lq < 0 || static_cast<size_t>(lq) >= usage_.size() || weight_[lq] <= 0
             ? 0
             : usage_[lq] / weight_[lq];
}

namespace {
// An overdue workload's FIFO key was moved before its creation (WaitLimits::MoveAhead).
bool Overdue(const EngineState& s, WorkloadId id) {
  return s.recs[id].order_created < s.status[id].created;
}
}  // namespace

double FairUsage::EntryKey(WorkloadId id) {
  const int32_t cq = s_.recs[id].cq;
  if (!enabled_ || cq < 0 || !s_.model.cluster_queues[cq].usage_based_admission) return 0;
  const double local = LocalKey(id);
  floor_[cq] = std::min(floor_[cq], local);
  return Overdue(s_, id) ? floor_[cq] : local;
}

void FairUsage::Reorder(int32_t cq) {
  const int q = EngineState::queue_index(cq);
  double floor = std::numeric_limits<double>::infinity();
  for (WorkloadId id : e_.pending.members(q)) floor = std::min(floor, LocalKey(id));
  floor_[cq] = floor;
  std::vector<WorkloadId> moved;
  for (WorkloadId id : e_.pending.members(q)) {
    const double key = Overdue(s_, id) ? floor : LocalKey(id);
    if (key != s_.recs[id].afs_key) moved.push_back(id);
  }
  for (WorkloadId id : moved) {
    e_.reservations.Forget(id);
    e_.pending.Dequeue(id);
    e_.pending.Enqueue(id);  // with that key (EntryKey)
  }
}

double FairUsage::Next(double now) const {
  if (!enabled_) return std::numeric_limits<double>::infinity();
  for (int32_t cq : cqs_)
    if (!e_.pending.members(EngineState::queue_index(cq)).empty()) return std::max(next_, now);
  return std::numeric_limits<double>::infinity();
}

}  // namespace tessera
