// What a preempted job carries into its next run in a trace replay (trace/replay.cc): the work
// its checkpoints saved (Workload::checkpoint_interval, as `tessera sim` counts it), and the time
// it waited to be admitted again, for the waits in all (ReplayResult::total_wait).
//
// Thread-safety: not thread-safe; part of one replay.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/workload.h"
#include "trace/metrics.h"

namespace tessera::trace {

class Reruns {
 public:
  // A run of `ran` seconds cut short: returns the seconds its checkpoints (every `interval`
  // seconds; none without one) saved, which its next runs need not run again.
  double Stopped(WorkloadId id, double ran, const std::optional<double>& interval);
  // Back in its queue at `now`; admitted again at `now`.
  void Requeued(WorkloadId id, double now) { requeued_at_[id] = now; }
  void Readmitted(WorkloadId id, double now);
  // Seconds a run of a job of `runtime` seconds takes now: what its checkpoints did not save.
  double Left(WorkloadId id, double runtime) const;
  // Each admitted job's wait to its first admission (`first_admit`, < 0: never admitted, by
  // workload) plus its waits to be admitted again; none when no job waited again.
  std::optional<Distribution> TotalWaits(const std::vector<double>& first_admit,
                                         const std::function<double(WorkloadId)>& arrival) const;

 private:
  absl::flat_hash_map<WorkloadId, double> requeued_at_, requeue_waits_, progress_;
};

}  // namespace tessera::trace
