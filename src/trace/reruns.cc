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
  waited_again_ = true;
  requeued_at_.erase(it);
}

double Reruns::Left(WorkloadId id, double runtime) const {
  auto it = progress_.find(id);
  return std::max(0.0, runtime - (it == progress_.end() ? 0 : it->second));
}

}  // namespace tessera::trace
