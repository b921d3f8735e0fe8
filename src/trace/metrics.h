// Streaming metric helpers for the replay: a time series of time-weighted means in buckets whose
// width doubles as the replay runs longer (memory bounded whatever the trace's length), and
// nearest-rank quantiles.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tessera::trace {

class TimeSeries {
 public:
  // Buckets start at `origin` and are `initial_width` seconds wide until the covered time needs
  // more than `max_buckets`; then neighbours merge and the width doubles.
  TimeSeries(double origin, int channels, int max_buckets, double initial_width);

  // Adds `values` (one per channel), constant over [t0, t1). REQUIRES: t0 >= the previous t1.
  void Integrate(double t0, double t1, std::span<const double> values);

  // Merges buckets until time t falls in one (as Integrate would on reaching t), so that what
  // is kept beside the series per bucket (trace/trend_stats.h) can be put in t's bucket now.
  void Reach(double t);

  double origin() const { return origin_; }
  int max_buckets() const { return max_buckets_; }
  double width() const { return width_; }
  int channels() const { return channels_; }
  // Buckets that received any time.
  int size() const { return used_; }
  // Time-weighted mean of channel c over the time bucket b saw (0 when it saw none).
  double Mean(int b, int c) const;
  // Seconds of bucket b that were integrated.
  double Covered(int b) const { return covered_[static_cast<size_t>(b)]; }

 private:
  void Merge();

  double origin_;
  int channels_;
  int max_buckets_;
  double width_;
  int used_ = 0;
  std::vector<double> area_;     // bucket * channels + channel
  std::vector<double> covered_;  // per bucket
};

struct Distribution {
  int64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};

// Nearest-rank quantiles: pX is the smallest value with at least X% of the values at or below
// it. Sorts `values`. All zero for an empty list.
Distribution Summarize(std::vector<double>& values);

// Values kept for exact nearest-rank quantiles in a replay (waits, completion times): equal
// values are kept once with their count, so that a million waits of 0 s, or completion times in
// whole seconds, take a few thousand entries instead of a million. Values come in a buffer that
// is sorted into the counted runs when it grows past them; once that halves the entries no more
// (nearly every value distinct), the buffer just grows, as a plain list of values would.
class ValueList {
 public:
  void Add(double v);
  // Adds every value of `other`.
  void Append(const ValueList& other);
  int64_t size() const { return count_; }
  // Entries held (runs and buffered values): what the list costs, for tests.
  int64_t entries() const {
    return static_cast<int64_t>(runs_.size()) + static_cast<int64_t>(fresh_.size());
  }
  // Summarize over the values: the same figures, to the bit (the values are summed in sorted
  // order, as Summarize does). Sorts the buffer.
  Distribution Summary();

 private:
  void Compact();

  int64_t count_ = 0;
  std::vector<std::pair<double, int64_t>> runs_;  // distinct values, ascending, with counts
  std::vector<double> fresh_;                     // added since the last Compact
  bool plain_ = false;                            // runs no longer pay: fresh_ only grows
};

// Jain's fairness index (sum x)^2 / (n * sum x^2) of `x`; 1 when every x is 0 or x is empty.
double JainIndex(std::span<const double> x);

}  // namespace tessera::trace
