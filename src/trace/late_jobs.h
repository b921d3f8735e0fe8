// ReplayOptions::early_stop's bookkeeping in a trace replay (trace/replay.cc): the jobs in
// arrival order, how many of them waited longer than the bound, and the waits so far, so that a
// replay can stop once it is known to miss the bound (the capacity calculator's far too small
// clusters, trace/plan.h).
//
// Thread-safety: not thread-safe; part of one replay.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/id_pages.h"
#include "model/workload.h"
#include "trace/replay.h"

namespace tessera::trace {

class LateJobs {
 public:
  explicit LateJobs(const ReplayOptions::EarlyStop& bound);

  // False when the bound is the default (nothing to stop for): the others then do nothing.
  bool on() const { return on_; }
  void Arrived(WorkloadId id, double at);
  void FirstAdmitted(double arrival, double wait);
  // Why the run misses the bound at `now` ("stopped at t=...: ..."); empty while it may still
  // meet it. Jobs are looked at in arrival order once `wait_over` has passed since their arrival.
  // `first_admit`: by workload, < 0 when not admitted yet.
  std::string Check(double now, const IdPages<double>& first_admit,
                    const std::function<double(WorkloadId)>& arrival);

 private:
  ReplayOptions::EarlyStop bound_;
  bool on_ = false;
  std::vector<WorkloadId> arrived_;
  size_t cursor_ = 0;  // the first job of arrived_ not yet looked at
  int64_t late_ = 0, unadmitted_ = 0;
  double unadmitted_arrivals_ = 0, admitted_waits_ = 0;
};

}  // namespace tessera::trace
