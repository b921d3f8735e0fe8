#include "trace/late_jobs.h"

#include <limits>

#include "fmt/format.h"

namespace tessera::trace {

LateJobs::LateJobs(const ReplayOptions::EarlyStop& bound)
    : bound_(bound),
      on_(bound.wait_over < std::numeric_limits<double>::infinity() ||
          bound.wait_sum_max < std::numeric_limits<double>::infinity()) {}

void LateJobs::Arrived(WorkloadId id, double at) {
  if (!on_) return;
  arrived_.push_back(id);
  ++unadmitted_;
  unadmitted_arrivals_ += at;
}

void LateJobs::FirstAdmitted(double arrival, double wait) {
  if (!on_) return;
  --unadmitted_;
  unadmitted_arrivals_ -= arrival;
  admitted_waits_ += wait;
}

std::string LateJobs::Check(double now, const IdPages<double>& first_admit,
                            const std::function<double(WorkloadId)>& arrival) {
  if (!on_) return "";
  for (; cursor_ < arrived_.size(); ++cursor_) {
    const WorkloadId id = arrived_[cursor_];
    if (!(arrival(id) + bound_.wait_over < now)) break;
    const double first = first_admit[static_cast<size_t>(id)];
    if (first < 0 || first - arrival(id) > bound_.wait_over) ++late_;
  }
  if (late_ > bound_.late_allowed)
    return fmt::format("stopped at t={:.0f}s: {} jobs waited over {:.0f}s", now, late_,
                       bound_.wait_over);
  const double sum =
      admitted_waits_ + static_cast<double>(unadmitted_) * now - unadmitted_arrivals_;
  if (sum > bound_.wait_sum_max)
    return fmt::format("stopped at t={:.0f}s: the waits already sum to {:.0f}s", now, sum);
  return "";
}

}  // namespace tessera::trace
