// The jobs of a trace as a stream, so that a replay holds only the jobs that have arrived and
// not yet left: a materialized Trace's jobs (sorted by arrival, 4 bytes per job), or a synthetic
// trace made from its seed as the replay reaches each job (nothing per job before it arrives).
// A source is read in two ways: every job in trace order (the passes before a replay: the queue
// and priority names used, the typical pods), and a cursor in arrival order (the replay).
//
// Thread-safety: a source is immutable; each cursor is one reader's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "trace/synthetic.h"
#include "trace/trace.h"

namespace tessera::trace {

class JobCursor {
 public:
  virtual ~JobCursor() = default;
  // The next job in arrival order (equal arrivals: trace order) and its index in the trace;
  // false when none is left.
  virtual bool Next(TraceJob& job, int64_t& index) = 0;
};

class JobSource {
 public:
  virtual ~JobSource() = default;
  virtual int64_t size() const = 0;
  // The latest arrival (0 when there is no job).
  virtual double last_arrival() const = 0;
  // Calls f(job, index) for every job in trace order.
  virtual void ForEach(absl::FunctionRef<void(const TraceJob&, int64_t)> f) const = 0;
  virtual std::unique_ptr<JobCursor> Cursor() const = 0;
};

// The jobs of `trace`, which must outlive the source and its cursors.
class TraceJobs : public JobSource {
 public:
  explicit TraceJobs(const Trace& trace);
  int64_t size() const override { return static_cast<int64_t>(order_.size()); }
  double last_arrival() const override;
  void ForEach(absl::FunctionRef<void(const TraceJob&, int64_t)> f) const override;
  std::unique_ptr<JobCursor> Cursor() const override;

 private:
  const Trace& trace_;
  std::vector<int32_t> order_;  // by arrival, stable
};

// The jobs GenerateSynthetic(options) makes, the first `limit` of them (< 0: all), made one at a
// time; with `ignore_times`, job k arrives at k seconds and never leaves (what --ignore-times
// does to a trace). A synthetic trace's arrivals never go down: trace order is arrival order.
class SyntheticJobs : public JobSource {
 public:
  SyntheticJobs(const SyntheticOptions& options, int64_t limit, bool ignore_times);
  int64_t size() const override { return count_; }
  double last_arrival() const override { return last_arrival_; }
  void ForEach(absl::FunctionRef<void(const TraceJob&, int64_t)> f) const override;
  std::unique_ptr<JobCursor> Cursor() const override;

 private:
  SyntheticOptions options_;
  int64_t count_ = 0;
  bool ignore_times_ = false;
  double last_arrival_ = 0;
};

}  // namespace tessera::trace
