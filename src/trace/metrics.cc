#include "trace/metrics.h"

#include <algorithm>
#include <cmath>

namespace tessera::trace {

TimeSeries::TimeSeries(double origin, int channels, int max_buckets, double initial_width)
    : origin_(origin),
      channels_(channels),
      max_buckets_(std::max(2, max_buckets - max_buckets % 2)),
      width_(initial_width > 0 ? initial_width : 1),
      area_(static_cast<size_t>(max_buckets_) * static_cast<size_t>(channels), 0),
      covered_(static_cast<size_t>(max_buckets_), 0) {}

void TimeSeries::Merge() {
  const size_t c = static_cast<size_t>(channels_);
  const size_t half = static_cast<size_t>(max_buckets_) / 2;
  for (size_t b = 0; b < half; ++b) {
    for (size_t k = 0; k < c; ++k)
      area_[b * c + k] = area_[2 * b * c + k] + area_[(2 * b + 1) * c + k];
    covered_[b] = covered_[2 * b] + covered_[2 * b + 1];
  }
  std::fill(area_.begin() + static_cast<std::ptrdiff_t>(half * c), area_.end(), 0.0);
  std::fill(covered_.begin() + static_cast<std::ptrdiff_t>(half), covered_.end(), 0.0);
  width_ *= 2;
  used_ = static_cast<int>((static_cast<size_t>(used_) + 1) / 2);
}

void TimeSeries::Integrate(double t0, double t1, std::span<const double> values) {
  t0 -= origin_;
  t1 -= origin_;
  if (t0 < 0) t0 = 0;
  const size_t c = static_cast<size_t>(channels_);
  while (t1 > t0) {
    while (t0 >= width_ * max_buckets_) Merge();
    const int b = static_cast<int>(std::floor(t0 / width_));
    const double end = std::min(t1, (b + 1) * width_);
    const double dt = end - t0;
    if (dt <= 0) break;  // rounding at a bucket edge
    for (size_t k = 0; k < c; ++k) area_[static_cast<size_t>(b) * c + k] += values[k] * dt;
    covered_[static_cast<size_t>(b)] += dt;
    used_ = std::max(used_, b + 1);
    t0 = end;
  }
}

void TimeSeries::Reach(double t) {
  while (t - origin_ >= width_ * max_buckets_ && std::isfinite(t)) Merge();
}

double TimeSeries::Mean(int b, int c) const {
  const double cov = covered_[static_cast<size_t>(b)];
  if (cov <= 0) return 0;
  return area_[static_cast<size_t>(b) * static_cast<size_t>(channels_) + static_cast<size_t>(c)] /
         cov;
}

Distribution Summarize(std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.count = static_cast<int64_t>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  auto rank = [&](double p) {
    auto k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(k, 1, values.size()) - 1];
  };
  d.p50 = rank(50);
  d.p95 = rank(95);
  d.p99 = rank(99);
  d.max = values.back();
  return d;
}

double JainIndex(std::span<const double> x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  if (x.empty() || sq <= 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sq);
}

}  // namespace tessera::trace
