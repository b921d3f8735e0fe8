// Discretize (fgd/experiment_internal.h): a run's pod events reduced to the columns 0..130 of
// arrived load, as the authors' analysis scripts do (merge_alloc_discrete_0920.py,
// merge_frag_discrete_0928.py).
#include <array>
#include <cmath>
#include <cstdint>

#include "fgd/experiment_internal.h"

namespace tessera::fgd::experiment_internal {
namespace {

// Python's round(x, 2) for the values at hand (ties to even on the scaled value).
double Round2(double x) { return std::nearbyint(x * 100) / 100; }

}  // namespace

void Discretize(const std::vector<Event>& events, int64_t total_gpus, RunResult& out) {
  // Buckets one past each end so that the neighbour fallback of 0 and 130 has both sides.
  constexpr int kBuckets = kLoadColumns + 2;
  std::array<double, kBuckets> alloc_sum{};
  std::array<double, kBuckets> frag_sum{};
  std::array<int64_t, kBuckets> count{};
  const double total = static_cast<double>(total_gpus);
  for (const Event& e : events) {
    const double arrive = std::nearbyint(static_cast<double>(e.arrived_milli) / total / 10);
    if (arrive < 0 || arrive > kMaxLoadPercent + 1) continue;
    const size_t b = static_cast<size_t>(arrive) + 1;
    alloc_sum[b] += Round2(static_cast<double>(e.used_milli) / total / 10);
    frag_sum[b] += e.frag_milli;
    ++count[b];
  }
  for (int x = 0; x <= kMaxLoadPercent; ++x) {
    const size_t b = static_cast<size_t>(x) + 1;
    double a = alloc_sum[b], f = frag_sum[b];
    int64_t n = count[b];
    if (n == 0) {
      a = alloc_sum[b - 1] + alloc_sum[b + 1];
      f = frag_sum[b - 1] + frag_sum[b + 1];
      n = count[b - 1] + count[b + 1];
    }
    if (n == 0) continue;
    out.alloc_percent[static_cast<size_t>(x)] = Round2(a / static_cast<double>(n));
    out.frag_percent[static_cast<size_t>(x)] =
        Round2(100 * (f / static_cast<double>(n)) / 1000 / total);
  }
}

}  // namespace tessera::fgd::experiment_internal
