// The per-queue figures of a trace replay (trace/replay.cc) that need the values of every job,
// the waits and completion times for exact quantiles, kept as ValueLists (equal values once,
// trace/metrics.h); and, at the end, each queue's summaries and their sum over queues.
//
// Thread-safety: not thread-safe; part of one replay.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/metrics.h"
#include "trace/replay.h"

namespace tessera::trace {

// The bin of kDelayBinEdges a wait falls in (the last: more than the last edge).
int DelayBin(double wait);

class QueueTotals {
 public:
  void Resize(size_t queues) {
    waits_.resize(queues);
    jcts_.resize(queues);
  }
  void FirstAdmitted(size_t q, double wait) { waits_[q].Add(wait); }
  void Finished(size_t q, double jct) { jcts_[q].Add(jct); }
  // At the end of the replay: every queue's wait, completion time and mean GPUs over
  // [res.start, res.end] (`queue_milli`: the GPU milli each holds now, for a run of no time),
  // their sum in res.all, res's GPU-hours lost and Jain's index; the last queue ("(none)") and
  // its series channel go when no job was in it. res.total_wait is the caller's.
  void Sum(ReplayResult& res, const std::vector<int64_t>& queue_milli);

 private:
  std::vector<ValueList> waits_, jcts_;  // per queue
};

}  // namespace tessera::trace
