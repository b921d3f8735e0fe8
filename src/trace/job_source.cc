#include "trace/job_source.h"

#include <algorithm>
#include <numeric>

namespace tessera::trace {
namespace {

class TraceCursor : public JobCursor {
 public:
  TraceCursor(const Trace& trace, const std::vector<int32_t>& order)
      : trace_(trace), order_(order) {}
  bool Next(TraceJob& job, int64_t& index) override {
    if (next_ >= order_.size()) return false;
    index = order_[next_++];
    job = trace_.jobs[static_cast<size_t>(index)];
    return true;
  }

 private:
  const Trace& trace_;
  const std::vector<int32_t>& order_;
  size_t next_ = 0;
};

class SyntheticCursor : public JobCursor {
 public:
  SyntheticCursor(SyntheticGenerator gen, int64_t count, bool ignore_times)
      : gen_(std::move(gen)), count_(count), ignore_times_(ignore_times) {}
  bool Next(TraceJob& job, int64_t& index) override {
    if (next_ >= count_) return false;
    index = next_++;
    job = gen_.Next();
    if (ignore_times_) {
      job.arrival = static_cast<double>(index);
      job.duration = -1;
    }
    return true;
  }

 private:
  SyntheticGenerator gen_;
  int64_t count_;
  bool ignore_times_;
  int64_t next_ = 0;
};

// The generator at the first job (the cluster it makes is not kept).
SyntheticGenerator StartOf(const SyntheticOptions& options) {
  Trace cluster;
  return SyntheticGenerator(options, cluster);
}

}  // namespace

TraceJobs::TraceJobs(const Trace& trace) : trace_(trace), order_(trace.jobs.size()) {
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    return trace_.jobs[static_cast<size_t>(a)].arrival <
           trace_.jobs[static_cast<size_t>(b)].arrival;
  });
}

double TraceJobs::last_arrival() const {
  return order_.empty() ? 0 : trace_.jobs[static_cast<size_t>(order_.back())].arrival;
}

void TraceJobs::ForEach(absl::FunctionRef<void(const TraceJob&, int64_t)> f) const {
  for (size_t i = 0; i < trace_.jobs.size(); ++i) f(trace_.jobs[i], static_cast<int64_t>(i));
}

std::unique_ptr<JobCursor> TraceJobs::Cursor() const {
  return std::make_unique<TraceCursor>(trace_, order_);
}

SyntheticJobs::SyntheticJobs(const SyntheticOptions& options, int64_t limit, bool ignore_times)
    : options_(options),
      count_(std::max<int64_t>(0, limit < 0 ? options.jobs : std::min(options.jobs, limit))),
      ignore_times_(ignore_times) {
  ForEach([&](const TraceJob& j, int64_t) { last_arrival_ = j.arrival; });
}

void SyntheticJobs::ForEach(absl::FunctionRef<void(const TraceJob&, int64_t)> f) const {
  SyntheticCursor cursor(StartOf(options_), count_, ignore_times_);
  TraceJob job;
  int64_t index = 0;
  while (cursor.Next(job, index)) f(job, index);
}

std::unique_ptr<JobCursor> SyntheticJobs::Cursor() const {
  return std::make_unique<SyntheticCursor>(StartOf(options_), count_, ignore_times_);
}

}  // namespace tessera::trace
