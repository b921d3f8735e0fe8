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

namespace {

// Merges ascending runs `b` into ascending runs `a`, equal values into one run.
void MergeRuns(std::vector<std::pair<double, int64_t>>& a,
               const std::vector<std::pair<double, int64_t>>& b) {
  std::vector<std::pair<double, int64_t>> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const auto& next =
        j >= b.size() || (i < a.size() && a[i].first <= b[j].first) ? a[i++] : b[j++];
    if (!out.empty() && out.back().first == next.first) {
      out.back().second += next.second;
    } else {
      out.push_back(next);
    }
  }
  a = std::move(out);
}

}  // namespace

void ValueList::Add(double v) {
  fresh_.push_back(v);
  ++count_;
  if (!plain_ && fresh_.size() >= std::max<size_t>(4096, runs_.size())) Compact();
}

void ValueList::Append(const ValueList& other) {
  MergeRuns(runs_, other.runs_);
  for (double v : other.fresh_) fresh_.push_back(v);
  count_ += other.count_;
}

void ValueList::Compact() {
  std::sort(fresh_.begin(), fresh_.end());
  std::vector<std::pair<double, int64_t>> add;
  for (double v : fresh_) {
    if (!add.empty() && add.back().first == v) {
      ++add.back().second;
    } else {
      add.emplace_back(v, 1);
    }
  }
  std::vector<double>().swap(fresh_);
  MergeRuns(runs_, add);
  // Fewer than two values a run: counting them saves nothing.
  plain_ = static_cast<int64_t>(runs_.size()) * 2 > count_;
}

Distribution ValueList::Summary() {
  Distribution d;
  if (count_ == 0) return d;
  std::sort(fresh_.begin(), fresh_.end());
  const int64_t n = count_;
  auto rank_of = [n](double p) {
    auto k = static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return std::clamp<int64_t>(k, 1, n);
  };
  const int64_t k50 = rank_of(50), k95 = rank_of(95), k99 = rank_of(99);
  double sum = 0;
  int64_t seen = 0;  // values summed so far; the next one has rank seen + 1
  auto take = [&](double v, int64_t times) {
    for (int64_t t = 0; t < times; ++t) sum += v;
    if (seen < k50 && k50 <= seen + times) d.p50 = v;
    if (seen < k95 && k95 <= seen + times) d.p95 = v;
    if (seen < k99 && k99 <= seen + times) d.p99 = v;
    seen += times;
    d.max = v;
  };
  // Runs and buffer in one ascending walk: the sorted list Summarize would sum.
  size_t i = 0, j = 0;
  while (i < runs_.size() || j < fresh_.size()) {
    if (j >= fresh_.size() || (i < runs_.size() && runs_[i].first <= fresh_[j])) {
      take(runs_[i].first, runs_[i].second);
      ++i;
    } else {
      take(fresh_[j++], 1);
    }
  }
  d.count = n;
  d.mean = sum / static_cast<double>(n);
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
