#include "trace/size_classes.h"

#include <algorithm>

namespace tessera::trace {

int SizeClassOf(int64_t gpu_milli) {
  if (gpu_milli <= 0) return 0;
  if (gpu_milli <= 1000) return 1;
  if (gpu_milli < 8000) return 2;
  if (gpu_milli < 16000) return 3;
  return 4;
}

const char* SizeClassName(int size_class) {
  constexpr const char* kNames[kSizeClasses] = {"0", "1", "2-7", "8-15", "16+"};
  return kNames[std::clamp(size_class, 0, kSizeClasses - 1)];
}

double BoundedSlowdown(double response, double run) {
  return std::max(1.0, response / std::max(run, kSlowdownThreshold));
}

void SizeClassMetrics::FirstAdmitted(int c, double wait) {
  ++at(c).admitted;
  waits_[static_cast<size_t>(c)].Add(wait);
}

void SizeClassMetrics::Finished(int c, double response, double run) {
  ++at(c).finished;
  jcts_[static_cast<size_t>(c)].Add(response);
  slowdowns_[static_cast<size_t>(c)].Add(BoundedSlowdown(response, run));
}

void SizeClassMetrics::Advance(double dt) {
  for (size_t c = 0; c < res_.size(); ++c)
    res_[c].gpu_hours += static_cast<double>(milli_[c]) / 1000.0 * dt / 3600.0;
}

void SizeClassMetrics::PendingAtEnd(int c, double wait) {
  ++at(c).pending_at_end;
  at(c).pending_max_wait = std::max(at(c).pending_max_wait, wait);
}

std::vector<SizeClassResult> SizeClassMetrics::Results(double span) {
  std::vector<SizeClassResult> out;
  out.reserve(res_.size());
  for (size_t c = 0; c < res_.size(); ++c) {
    SizeClassResult r = res_[c];
    r.name = SizeClassName(static_cast<int>(c));
    r.wait = waits_[c].Summary();
    r.slowdown = slowdowns_[c].Summary();
    r.jct = jcts_[c].Summary();
    r.mean_gpus = span > 0 ? r.gpu_hours * 3600.0 / span : static_cast<double>(milli_[c]) / 1000.0;
    for (auto* v : {&waits_[c], &slowdowns_[c], &jcts_[c]}) *v = ValueList();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tessera::trace
