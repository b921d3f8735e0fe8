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
  // Its waits to be admitted again so far (0 when none).
  double RequeueWaits(WorkloadId id) const {
    auto it = requeue_waits_.find(id);
    return it == requeue_waits_.end() ? 0 : it->second;
  }
  // Whether any job was admitted again after a requeue.
  bool waited_again() const { return waited_again_; }
  // The job will not run again: what is kept of it goes.
  void Forget(WorkloadId id) {
    requeued_at_.erase(id);
    requeue_waits_.erase(id);
    progress_.erase(id);
  }

 private:
  absl::flat_hash_map<WorkloadId, double> requeued_at_, requeue_waits_, progress_;
  bool waited_again_ = false;
};

}  // namespace tessera::trace
