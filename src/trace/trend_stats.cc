#include "trace/trend_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "trace/replay.h"

namespace tessera::trace {

IdleGpuNodes::IdleGpuNodes(const std::vector<Node>& nodes, const std::vector<bool>& online)
    : has_gpus_(nodes.size()), online_(online), pods_(nodes.size(), 0) {
  online_.resize(nodes.size(), true);
  for (size_t n = 0; n < nodes.size(); ++n) {
    has_gpus_[n] = nodes[n].gpu_count() > 0;
    if (Idle(n)) ++idle_;
  }
}

IdleGpuNodes::IdleGpuNodes(const Scheduler& s) {
  const std::vector<Node>& nodes = s.model().nodes;
  std::vector<bool> online(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) online[n] = s.node_online(static_cast<NodeId>(n));
  *this = IdleGpuNodes(nodes, online);
}

void IdleGpuNodes::Hold(NodeId n, const Resources& req, int32_t sign) {
  if (req[kGpu] > 0 || req[kGpuMilli] > 0) Hold(n, sign);
}

int64_t IdleGpuNodes::Count(const Scheduler& s, const std::vector<SimEvent>& events) {
  for (; events_seen_ < events.size(); ++events_seen_) {
    const NodeId n = events[events_seen_].node;
    if (n >= 0) SetOnline(n, s.node_online(n));
  }
  return idle_;
}

void IdleGpuNodes::Hold(NodeId n, int32_t gpu_pods) {
  const auto i = static_cast<size_t>(n);
  if (n < 0 || i >= pods_.size() || gpu_pods == 0) return;
  const bool was = Idle(i);
  pods_[i] = std::max(0, pods_[i] + gpu_pods);
  idle_ += static_cast<int64_t>(Idle(i)) - static_cast<int64_t>(was);
}

void IdleGpuNodes::SetOnline(NodeId n, bool online) {
  const auto i = static_cast<size_t>(n);
  if (n < 0 || i >= online_.size()) return;
  const bool was = Idle(i);
  online_[i] = online;
  idle_ += static_cast<int64_t>(Idle(i)) - static_cast<int64_t>(was);
}

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

BucketQuantiles::BucketQuantiles(const TimeSeries& series)
    : width_(series.width()),
      max_buckets_(series.max_buckets()),
      counts_(static_cast<size_t>(max_buckets_) * kBins, 0),
      min_(static_cast<size_t>(max_buckets_), kInf),
      max_(static_cast<size_t>(max_buckets_), -kInf) {}

int BucketQuantiles::Bin(double v) {
  if (!(v > 0)) return 0;
  if (v <= 1) return 1;
  // v in (kRatio^(i-2), kRatio^(i-1)]: i = 1 + ceil(log(v) / log(kRatio)).
  const double i = 1 + std::ceil(std::log(v) / std::log(kRatio));
  return static_cast<int>(std::clamp(i, 2.0, static_cast<double>(kBins - 1)));
}

void BucketQuantiles::Add(TimeSeries& series, double t, double value) {
  if (max_buckets_ <= 0) *this = BucketQuantiles(series);
  series.Reach(t);
  Follow(series);
  const double at = std::max(0.0, t - series.origin());
  const int b = std::min(max_buckets_ - 1, static_cast<int>(std::floor(at / width_)));
  ++counts_[static_cast<size_t>(b) * kBins + static_cast<size_t>(Bin(value))];
  min_[static_cast<size_t>(b)] = std::min(min_[static_cast<size_t>(b)], value);
  max_[static_cast<size_t>(b)] = std::max(max_[static_cast<size_t>(b)], value);
}

void BucketQuantiles::Follow(const TimeSeries& series) {
  while (max_buckets_ > 0 && width_ < series.width()) Merge();
}

void BucketQuantiles::Merge() {
  const size_t half = static_cast<size_t>(max_buckets_) / 2;
  for (size_t b = 0; b < half; ++b) {
    for (size_t k = 0; k < kBins; ++k)
      counts_[b * kBins + k] = counts_[2 * b * kBins + k] + counts_[(2 * b + 1) * kBins + k];
    min_[b] = std::min(min_[2 * b], min_[2 * b + 1]);
    max_[b] = std::max(max_[2 * b], max_[2 * b + 1]);
  }
  std::fill(counts_.begin() + static_cast<std::ptrdiff_t>(half * kBins), counts_.end(), 0);
  std::fill(min_.begin() + static_cast<std::ptrdiff_t>(half), min_.end(), kInf);
  std::fill(max_.begin() + static_cast<std::ptrdiff_t>(half), max_.end(), -kInf);
  width_ *= 2;
}

int64_t BucketQuantiles::Count(int b) const {
  if (b < 0 || b >= max_buckets_) return 0;
  int64_t n = 0;
  for (size_t k = 0; k < kBins; ++k) n += counts_[static_cast<size_t>(b) * kBins + k];
  return n;
}

std::optional<double> BucketQuantiles::Quantile(int b, double q) const {
  const int64_t n = Count(b);
  if (n <= 0) return std::nullopt;
  const auto rank =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(q * static_cast<double>(n))), 1, n);
  const double lo = min_[static_cast<size_t>(b)], hi = max_[static_cast<size_t>(b)];
  if (rank == n) return hi;
  if (rank == 1) return lo;
  int64_t seen = 0;
  for (int k = 0; k < kBins; ++k) {
    seen += counts_[static_cast<size_t>(b) * kBins + static_cast<size_t>(k)];
    if (seen < rank) continue;
    // The bin's upper edge, within the bucket's range.
    const double edge = k == 0 ? 0 : k == kBins - 1 ? hi : std::pow(kRatio, k - 1);
    return std::clamp(edge, lo, hi);
  }
  return hi;
}

void AllocationAreas::Fill(ReplayResult& r, double alloc_now, double frag_now) const {
  const double span = r.end - r.start;
  r.mean_allocation_pct = span > 0 ? alloc_ / span : alloc_now;
  r.mean_fragmentation_pct = span > 0 ? frag_ / span : frag_now;
  r.allocation_while_pending_pct = pending_time_ > 0 ? pending_alloc_ / pending_time_ : 0;
  r.pending_time_pct = span > 0 ? 100.0 * pending_time_ / span : 0;
  const double window = std::min(last_arrival_, r.end) - r.start;
  r.arrival_window_allocation_pct = window > 0 ? window_alloc_ / window : 0;
}

}  // namespace tessera::trace
