// The replay's share of serve's trends (src/k8s/api/cluster_view.cc, TrendPoint): idle GPU nodes
// over time and the 95th percentile of the admission waits per time bucket, kept in bounded
// memory whatever the trace's length; and the run's time-weighted allocation figures.
//
// Thread-safety: value types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/scheduler.h"
#include "model/node.h"
#include "model/resources.h"
#include "sim/simulator.h"
#include "trace/metrics.h"

namespace tessera::trace {

struct ReplayResult;  // trace/replay.h

// GPU nodes online with no GPU (whole or share) held by any pod: serve's idle GPU nodes. Kept up
// to date in O(1) per pod placed or released and per node going on or off line.
class IdleGpuNodes {
 public:
  IdleGpuNodes() = default;
  // `online[n]`: node n is up now (an elastic pool's nodes not provisioned are not).
  IdleGpuNodes(const std::vector<Node>& nodes, const std::vector<bool>& online);
  // The engine's nodes, online as it says now.
  explicit IdleGpuNodes(const Scheduler& s);

  // A pod holding GPUs (`gpu_pods` > 0) or letting them go (< 0) on node n.
  void Hold(NodeId n, int32_t gpu_pods);
  // A pod with requests `req` placed on node n (`sign` 1) or gone from it (-1): counts when it
  // asks for GPUs or a share of one.
  void Hold(NodeId n, const Resources& req, int32_t sign);
  void SetOnline(NodeId n, bool online);
  int64_t count() const { return idle_; }
  // The count after the node events appended to `events` since the last call (nodes the
  // autoscaler brought up or took down: online as `s` says now).
  int64_t Count(const Scheduler& s, const std::vector<SimEvent>& events);

 private:
  bool Idle(size_t n) const { return has_gpus_[n] && online_[n] && pods_[n] == 0; }

  std::vector<bool> has_gpus_, online_;
  std::vector<int32_t> pods_;  // per node, pods holding GPUs
  int64_t idle_ = 0;
  size_t events_seen_ = 0;
};

// Per bucket of a TimeSeries, a histogram of values (admission waits, seconds) in kBins
// log-spaced bins with the bucket's min and max: a nearest-rank quantile within one bin's width
// (25%), exact when it is the bucket's min or max (a bucket of fewer than 20 waits: its p95 is
// its max). The buckets follow the series' (same origin and widths, merged when it merges).
class BucketQuantiles {
 public:
  // Bin 0 holds values <= 0; bin i in 1..kBins-1 holds (kRatio^(i-2), kRatio^(i-1)] seconds
  // (bin 1: (0, 1]); the last bin also holds everything above.
  static constexpr int kBins = 64;
  static constexpr double kRatio = 1.25;

  BucketQuantiles() = default;
  explicit BucketQuantiles(const TimeSeries& series);

  // Adds `value` to the bucket of time t, merging the series' buckets first (TimeSeries::Reach)
  // when t is past them.
  void Add(TimeSeries& series, double t, double value);
  // Merges buckets until they are as wide as the series' (call after it last changed).
  void Follow(const TimeSeries& series);

  int64_t Count(int b) const;
  // Nearest-rank quantile q (0 < q <= 1) of bucket b; none when the bucket has no value.
  std::optional<double> Quantile(int b, double q) const;

 private:
  static int Bin(double v);
  void Merge();

  double width_ = 1;
  int max_buckets_ = 0;
  std::vector<int64_t> counts_;  // bucket * kBins + bin
  std::vector<double> min_, max_;
};

// GPU allocation and fragmentation (in %) integrated exactly over the replay's intervals: over
// the whole run, over the moments at least one job is pending, and up to the last arrival.
class AllocationAreas {
 public:
  explicit AllocationAreas(double last_arrival = 0) : last_arrival_(last_arrival) {}
  // [from, to) with `alloc_pct` and `frag_pct` held throughout and `pending` jobs waiting.
  void Add(double from, double to, double alloc_pct, double frag_pct, int64_t pending) {
    const double dt = to - from;
    alloc_ += alloc_pct * dt;
    frag_ += frag_pct * dt;
    if (pending > 0) {
      pending_alloc_ += alloc_pct * dt;
      pending_time_ += dt;
    }
    if (from < last_arrival_) window_alloc_ += alloc_pct * (std::min(to, last_arrival_) - from);
  }
  // Fills the means of `r` over [r.start, r.end]; `alloc_now` / `frag_now` stand for a run of
  // no time.
  void Fill(ReplayResult& r, double alloc_now, double frag_now) const;

 private:
  double last_arrival_;
  double alloc_ = 0, frag_ = 0, pending_alloc_ = 0, pending_time_ = 0, window_alloc_ = 0;
};

}  // namespace tessera::trace
