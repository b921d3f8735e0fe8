#include "trace/reruns.h"

#include <algorithm>
#include <cmath>

namespace tessera::trace {

double Reruns::Stopped(WorkloadId id, double ran, const std::optional<double>& interval) {
  const double saved = interval && *interval > 0 ? std::floor(ran / *interval) * *interval : 0;
  if (saved > 0) progress_[id] += saved;
  return saved;
}

void Reruns::Readmitted(WorkloadId id, double now) {
  auto it = requeued_at_.find(id);
  if (it == requeued_at_.end()) return;
  requeue_waits_[id] += now - it->second;
  requeued_at_.erase(it);
}

double Reruns::Left(WorkloadId id, double runtime) const {
  auto it = progress_.find(id);
  return std::max(0.0, runtime - (it == progress_.end() ? 0 : it->second));
}

std::optional<Distribution> Reruns::TotalWaits(
    const std::vector<double>& first_admit,
    const std::function<double(WorkloadId)>& arrival) const {
  if (requeue_waits_.empty()) return std::nullopt;
  std::vector<double> total;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(first_admit.size()); ++id) {
    const double first = first_admit[static_cast<size_t>(id)];
    if (first < 0) continue;
    auto it = requeue_waits_.find(id);
    total.push_back(first - arrival(id) + (it == requeue_waits_.end() ? 0 : it->second));
  }
  return Summarize(total);
}

}  // namespace tessera::trace
