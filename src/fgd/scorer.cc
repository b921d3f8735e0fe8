#include "fgd/scorer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace tessera::fgd {
namespace {

constexpr int64_t kMaxNodeScore = 100;
constexpr int64_t kMinNodeScore = 0;
// The simulator's normalization constants (open-gpu-share/utils/const.go).
constexpr double kMaxSpecCpu = 128000;
constexpr double kMaxSpecGpu = 8000;
constexpr int64_t kMaxSpecGpuMilli = 8000;

constexpr std::array<Policy, 6> kPaper = {Policy::kRandom,        Policy::kDotProd,
                                          Policy::kGpuClustering, Policy::kGpuPacking,
                                          Policy::kBestFit,       Policy::kFgd};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// FGD's score of a fragmentation decrease d = frag_before - frag_after (in GPU milli).
int64_t QuantizedDecrease(double d) {
  return static_cast<int64_t>(Sigmoid(d / 1000) * static_cast<double>(kMaxNodeScore));
}

int64_t FgdQuantized(double frag_before, double frag_after) {
  return QuantizedDecrease(frag_before - frag_after);
}

// QuantizedDecrease as the step function it is: at least k exactly where d >= boundaries[k]
// (boundaries[0] = -inf, boundaries[kMaxNodeScore + 1] = +inf). The steps are found once by
// bisection over doubles on QuantizedDecrease itself, so they are those of the computed
// function (exp's rounding included), not the ideal sigmoid's. `bucket` holds the score at the
// start of each kBucketMilli of d: the steps lie at least 40 milli apart (near d = 0, where the
// sigmoid is steepest), so a bucket holds at most one and a score is a lookup and a comparison.
struct ScoreSteps {
  static constexpr double kBucketMilli = 16;
  static constexpr double kBucketOrigin = -32768;
  static constexpr size_t kBuckets = 4096;
  std::array<double, kMaxNodeScore + 2> boundaries;
  std::array<uint8_t, kBuckets> bucket;

  // QuantizedDecrease(d') for every d' within `margin` of d, or -1 when a step lies that close
  // (or d is not a number).
  int64_t Score(double d, double margin) const {
    const double at_bucket = (d - kBucketOrigin) / kBucketMilli;
    int64_t k = 0;
    if (at_bucket >= 0 && at_bucket < static_cast<double>(kBuckets)) {
      k = bucket[static_cast<size_t>(at_bucket)];
      k += d >= boundaries[static_cast<size_t>(k) + 1];
    } else {
      k = std::upper_bound(boundaries.begin() + 1, boundaries.end() - 1, d) -
          (boundaries.begin() + 1);
    }
    const size_t i = static_cast<size_t>(k);
    return d - boundaries[i] >= margin && boundaries[i + 1] - d >= margin ? k : -1;
  }
};

const ScoreSteps& Steps() {
  static const ScoreSteps steps = [] {
    ScoreSteps s{};
    auto& b = s.boundaries;
    b.front() = -std::numeric_limits<double>::infinity();
    b.back() = std::numeric_limits<double>::infinity();
    for (int64_t k = 1; k <= kMaxNodeScore; ++k) {
      double lo = -1e7;  // QuantizedDecrease(lo) < k <= QuantizedDecrease(hi)
      double hi = 1e7;
      for (int step = 0; step < 4096; ++step) {
        const double mid = lo + (hi - lo) / 2;
        if (mid == lo || mid == hi) break;
        (QuantizedDecrease(mid) >= k ? hi : lo) = mid;
      }
      b[static_cast<size_t>(k)] = hi;
    }
    for (size_t i = 0; i < ScoreSteps::kBuckets; ++i) {
      const double start =
          ScoreSteps::kBucketOrigin + static_cast<double>(i) * ScoreSteps::kBucketMilli;
      s.bucket[i] = static_cast<uint8_t>(std::upper_bound(b.begin() + 1, b.end() - 1, start) -
                                         (b.begin() + 1));
    }
    return s;
  }();
  return steps;
}

// FgdQuantized (or, `exact`, the decrease in 1/1000 milli) from an estimate of frag_after that is
// within `tolerance` of Evaluate's value: the integer Evaluate's value gives, unless the estimate
// lies too close to a rounding boundary to tell (false; the caller evaluates exactly). The
// margins are twice the tolerance, plus room for the rounding of the subtraction.
bool QuantizeEstimate(double frag_before, double after_estimate, double tolerance, bool exact,
                      int64_t* score) {
  if (exact) {
    const double z = (frag_before - after_estimate) * 1000;
    const double margin = 2 * tolerance * 1000 + 1e-6;
    if (!(std::abs(z - std::floor(z) - 0.5) >= margin)) return false;
    *score = std::llround(z);
    return true;
  }
  *score = Steps().Score(frag_before - after_estimate, 2 * tolerance + 1e-9);
  return *score >= 0;
}

// FGD's score of a sharing pod of `milli` per GPU on a node prepared with its free CPU after the
// pod (FragmentationMeasure::Prepare), from the estimates: the decrease of every GPU that fits
// (all wholly free GPUs give the same node, so the first stands for them), the best score, and
// the first GPU that reaches it. False when an estimate is too close to a score boundary to tell.
bool EstimatedShareScore(const FragmentationMeasure& measure,
                         const FragmentationMeasure::NodeSums& sums, const NodeGpuState& node,
                         double frag_before, int32_t milli, Scored* out) {
  std::array<double, kMaxGpusPerNode + 1> decrease;
  std::array<int, kMaxGpusPerNode + 1> gpu;
  int n = 0;
  if (sums.full_gpus != 0) {
    gpu[0] = std::countr_zero(sums.full_gpus);
    decrease[0] = frag_before - measure.EstimateWithGpu(sums, kMilliPerGpu, kMilliPerGpu - milli);
    n = 1;
  }
  for (uint32_t bits = sums.partial_gpus; bits != 0; bits &= bits - 1) {
    const int i = std::countr_zero(bits);
    const int32_t free = node.gpu_free_milli[static_cast<size_t>(i)];
    if (free < milli) continue;
    gpu[static_cast<size_t>(n)] = i;
    decrease[static_cast<size_t>(n)] =
        frag_before - measure.EstimateWithGpu(sums, free, free - milli);
    ++n;
  }
  if (n == 0) {
    *out = Scored{kMinNodeScore, 0, false};
    return true;
  }
  double best = decrease[0];
  for (int k = 1; k < n; ++k) best = std::max(best, decrease[static_cast<size_t>(k)]);
  const ScoreSteps& steps = Steps();
  const double margin = 2 * measure.estimate_tolerance() + 1e-9;
  const int64_t score = steps.Score(best, margin);
  if (score < 0) return false;
  const double reaches = steps.boundaries[static_cast<size_t>(score)];
  int pick = kMaxGpusPerNode;
  for (int k = 0; k < n; ++k) {
    const double d = decrease[static_cast<size_t>(k)];
    if (std::abs(d - reaches) < margin) return false;
    if (d >= reaches) pick = std::min(pick, gpu[static_cast<size_t>(k)]);
  }
  *out = Scored{score, GpuSet{1} << pick, false};
  return true;
}

int FullyFreeGpus(const NodeGpuState& node) {
  int n = 0;
  for (int i = 0; i < node.num_gpus; ++i)
    n += node.gpu_free_milli[static_cast<size_t>(i)] == kMilliPerGpu;
  return n;
}

// The simulator's NodeResource.Sub for the fragmentation of the node after the pod: CPU (the
// effective request) and, for whole-GPU pods, the lowest-numbered free GPUs. An infeasible CPU
// leaves the node as it was (Sub's error is ignored there).
NodeGpuState AfterExclusive(const NodeGpuState& node, const PodRequest& pod, GpuSet gpus) {
  NodeGpuState out = node;
  const int64_t cpu = EffectiveCpuMilli(pod.cpu_milli);
  if (out.cpu_free_milli < cpu || out.num_gpus < pod.num_gpu) return out;
  out.cpu_free_milli -= cpu;
  for (int i = 0; i < out.num_gpus; ++i) {
    if (gpus & (GpuSet{1} << i)) out.gpu_free_milli[static_cast<size_t>(i)] -= pod.gpu_milli;
  }
  return out;
}

int64_t GpuPackingScore(const NodeGpuState& node, const PodRequest& pod) {
  const int fully_free = FullyFreeGpus(node);
  if (fully_free == node.num_gpus) {
    return std::max<int64_t>(kMaxNodeScore / 3 - fully_free, fully_free);
  }
  // GPUs in ascending free milli (stable), the first that fit.
  std::array<int, kMaxGpusPerNode> order{};
  for (int i = 0; i < node.num_gpus; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.begin() + node.num_gpus, [&](int a, int b) {
    return node.gpu_free_milli[static_cast<size_t>(a)] <
           node.gpu_free_milli[static_cast<size_t>(b)];
  });
  int needed = pod.num_gpu;
  int fully_free_used = 0;
  int64_t free_ratio_on_used = 0;
  for (int k = 0; k < node.num_gpus && needed > 0; ++k) {
    const int32_t free = node.gpu_free_milli[static_cast<size_t>(order[static_cast<size_t>(k)])];
    if (pod.gpu_milli <= free) {
      --needed;
      fully_free_used += free == kMilliPerGpu;
      free_ratio_on_used += int64_t{free} * 100 / kMilliPerGpu;
    }
  }
  if (needed != 0) return kMinNodeScore;  // cannot happen after Fits
  if (fully_free_used > 0) {
    return std::max<int64_t>(kMaxNodeScore / 2 - fully_free_used, kMaxNodeScore / 3);
  }
  return std::max<int64_t>(kMaxNodeScore - free_ratio_on_used / 10, kMaxNodeScore / 2);
}

int64_t GpuClusteringScore(const NodeGpuState& node, AffinityTags tags, const PodRequest& pod) {
  const AffinityTags tag = AffinityTagOf(pod);
  if (tag == 0) return kMinNodeScore;
  const int64_t left = node.IdleGpuMilli();
  const int64_t base = kMaxNodeScore / 4 * (kMaxSpecGpuMilli - left) / kMaxSpecGpuMilli;
  if (tags & tag) {
    const bool only_this = (tags & (tags - 1)) == 0;
    return base + (only_this ? kMaxNodeScore * 3 / 4 : kMaxNodeScore * 2 / 4);
  }
  return base + (tags == 0 ? kMaxNodeScore / 4 : 0);
}

Scored BestFitScore(const NodeGpuState& node, const PodRequest& pod) {
  const double free[2] = {static_cast<double>(node.cpu_free_milli),
                          static_cast<double>(node.IdleGpuMilli())};
  const double req[2] = {static_cast<double>(EffectiveCpuMilli(pod.cpu_milli)),
                         static_cast<double>(pod.TotalGpuMilli())};
  const double max_spec[2] = {kMaxSpecCpu, kMaxSpecGpu};
  double score = 0;
  for (int i = 0; i < 2; ++i) {
    if (free[i] < req[i]) return Scored{kMinNodeScore, 0, /*error=*/true};
    score += (free[i] - req[i]) / max_spec[i] * 0.5;
  }
  score = (1.0 - score) * static_cast<double>(kMaxNodeScore);
  return Scored{static_cast<int64_t>(score), 0, false};
}

int64_t DotProdScore(const NodeGpuState& node, const PodRequest& pod) {
  // dimExtMethod "merge", normMethod "max": [cpu, total GPU milli] over [128 cores, 8 GPUs].
  const int64_t cpu = EffectiveCpuMilli(pod.cpu_milli);
  if (node.cpu_free_milli < cpu) return kMinNodeScore;
  const double node_vec[2] = {static_cast<double>(node.cpu_free_milli) / kMaxSpecCpu,
                              static_cast<double>(node.IdleGpuMilli()) / kMaxSpecGpu};
  const double pod_vec[2] = {static_cast<double>(cpu) / kMaxSpecCpu,
                             static_cast<double>(pod.TotalGpuMilli()) / kMaxSpecGpu};
  double dot = 0;
  for (int i = 0; i < 2; ++i) dot += node_vec[i] * pod_vec[i];
  const double score = 1 - dot / 2;
  return static_cast<int64_t>(static_cast<double>(kMaxNodeScore) * score);
}

}  // namespace

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kRandom:
      return "Random";
    case Policy::kDotProd:
      return "DotProd";
    case Policy::kGpuClustering:
      return "GpuClustering";
    case Policy::kGpuPacking:
      return "GpuPacking";
    case Policy::kBestFit:
      return "BestFit";
    case Policy::kFgd:
      return "FGD";
    case Policy::kTesseraFgd:
      return "TesseraFGD";
  }
  return "?";
}

std::optional<Policy> ParsePolicy(std::string_view name) {
  for (Policy p : {Policy::kRandom, Policy::kDotProd, Policy::kGpuClustering, Policy::kGpuPacking,
                   Policy::kBestFit, Policy::kFgd, Policy::kTesseraFgd}) {
    if (PolicyName(p) == name) return p;
  }
  return std::nullopt;
}

std::span<const Policy> PaperPolicies() { return kPaper; }

AffinityTags AffinityTagOf(const PodRequest& pod) {
  if (pod.num_gpu == 0) return 0;
  if (pod.IsShare()) return 1;
  return AffinityTags{1} << std::min(pod.num_gpu, 31);
}

bool Fits(const NodeGpuState& node, const PodRequest& pod) {
  if (node.cpu_free_milli < pod.cpu_milli || node.mem_free_mib < pod.mem_mib) return false;
  if (pod.gpu_milli <= 0) return true;  // Open-Gpu-Share passes pods without GPU milli
  if (node.num_gpus == 0 || !ModelAllowed(pod.models, node.gpu_model)) return false;
  int enough = 0;
  for (int i = 0; i < node.num_gpus; ++i) {
    if (node.gpu_free_milli[static_cast<size_t>(i)] >= pod.gpu_milli && ++enough >= pod.num_gpu) {
      return true;
    }
  }
  return enough >= pod.num_gpu;
}

GpuSet LowestFreeGpus(const NodeGpuState& node, int count) {
  GpuSet set = 0;
  for (int i = 0; i < node.num_gpus && count > 0; ++i) {
    if (node.gpu_free_milli[static_cast<size_t>(i)] == kMilliPerGpu) {
      set |= GpuSet{1} << i;
      --count;
    }
  }
  return set;
}

void Place(NodeGpuState& node, const PodRequest& pod, GpuSet gpus) {
  node.cpu_free_milli -= pod.cpu_milli;
  node.mem_free_mib -= pod.mem_mib;
  for (int i = 0; i < node.num_gpus; ++i) {
    if (gpus & (GpuSet{1} << i)) node.gpu_free_milli[static_cast<size_t>(i)] -= pod.gpu_milli;
  }
}

Scorer::Scorer(Policy policy, const FragmentationMeasure* measure)
    : policy_(policy), measure_(measure) {}

Scored Scorer::FgdScore(const FragmentationMeasure& measure, const NodeGpuState& node,
                        double frag_before, const PodRequest& pod, bool exact) {
  auto quantize = [&](double after) -> int64_t {
    return exact ? std::llround((frag_before - after) * 1000) : FgdQuantized(frag_before, after);
  };

  // The fragmentation after the pod is estimated in O(1) per GPU tried
  // (FragmentationMeasure::EstimateWithGpu) and measured exactly only when the estimate is too
  // close to a score boundary, so the scores are those of Evaluate.
  const double tolerance = measure.estimate_tolerance();
  FragmentationMeasure::NodeSums sums;
  int64_t score = 0;

  if (!pod.IsShare()) {
    const GpuSet gpus = pod.num_gpu > 0 ? LowestFreeGpus(node, pod.num_gpu) : 0;
    const NodeGpuState after = AfterExclusive(node, pod, gpus);
    // No GPU taken and the same typical pods fitting: every term of Evaluate as it was. (The
    // estimate would not do here: FGD's step from 49 to 50 lies within 1e-13 of a zero decrease.)
    if (after.gpu_free_milli == node.gpu_free_milli &&
        measure.SameTerms(node, node.cpu_free_milli, after.cpu_free_milli)) {
      return Scored{quantize(frag_before), gpus, false};
    }
    if (!(measure.Prepare(after, after.cpu_free_milli, &sums) &&
          QuantizeEstimate(frag_before, measure.Estimate(sums), tolerance, exact, &score))) {
      score = quantize(measure.Evaluate(after));
    }
    return Scored{score, gpus, false};
  }
  // A sharing pod: try each GPU that fits; GPUs with the same free milli give the same node, so
  // each value is measured once. The first GPU with the best score wins.
  const int64_t cpu = EffectiveCpuMilli(pod.cpu_milli);
  Scored best{std::numeric_limits<int64_t>::min(), 0, false};
  const bool estimate =
      pod.gpu_milli > 0 && measure.Prepare(node, node.cpu_free_milli - cpu, &sums);
  if (estimate && !exact &&
      EstimatedShareScore(measure, sums, node, frag_before, pod.gpu_milli, &best)) {
    return best;
  }
  std::array<int32_t, kMaxGpusPerNode> seen_value{};
  std::array<int64_t, kMaxGpusPerNode> seen_score{};
  int seen = 0;
  NodeGpuState after = node;
  after.cpu_free_milli -= cpu;
  for (int i = 0; i < node.num_gpus; ++i) {
    const int32_t free = node.gpu_free_milli[static_cast<size_t>(i)];
    if (free < pod.gpu_milli) continue;
    int k = 0;
    while (k < seen && seen_value[static_cast<size_t>(k)] != free) ++k;
    if (k < seen) {
      score = seen_score[static_cast<size_t>(k)];
    } else {
      after.gpu_free_milli[static_cast<size_t>(i)] = free - pod.gpu_milli;
      if (!(estimate &&
            QuantizeEstimate(frag_before, measure.EstimateWithGpu(sums, free, free - pod.gpu_milli),
                             tolerance, exact, &score))) {
        score = quantize(measure.Evaluate(after));
      }
      after.gpu_free_milli[static_cast<size_t>(i)] = free;
      seen_value[static_cast<size_t>(seen)] = free;
      seen_score[static_cast<size_t>(seen)] = score;
      ++seen;
    }
    if (best.gpus == 0 || score > best.score) best = Scored{score, GpuSet{1} << i, false};
  }
  if (best.gpus == 0) best.score = kMinNodeScore;
  return best;
}

Scored Scorer::Score(const NodeView& node, const PodRequest& pod) const {
  const NodeGpuState& s = *node.state;
  switch (policy_) {
    case Policy::kRandom:
      return Scored{kMinNodeScore, 0, false};
    case Policy::kDotProd:
      return Scored{DotProdScore(s, pod), 0, false};
    case Policy::kGpuClustering:
      return Scored{GpuClusteringScore(s, node.tags, pod), 0, false};
    case Policy::kGpuPacking:
      return Scored{pod.gpu_milli <= 0 ? kMinNodeScore : GpuPackingScore(s, pod), 0, false};
    case Policy::kBestFit:
      return BestFitScore(s, pod);
    case Policy::kFgd:
      return FgdScore(*measure_, s, node.frag, pod);
    case Policy::kTesseraFgd:
      return FgdScore(*measure_, s, node.frag, pod);
  }
  return Scored{};
}

void Scorer::Normalize(std::span<int64_t> scores) const {
  if (policy_ != Policy::kBestFit || scores.empty()) return;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const int64_t lowest = *lo;
  const int64_t range = *hi - lowest;
  for (int64_t& s : scores) {
    s = range == 0 ? kMinNodeScore : (s - lowest) * (kMaxNodeScore - kMinNodeScore) / range;
  }
}

GpuSet Scorer::PickGpus(const NodeGpuState& node, const PodRequest& pod, Rng& rng) const {
  if (pod.num_gpu == 0 || pod.gpu_milli <= 0) return 0;
  if (!pod.IsShare()) return LowestFreeGpus(node, pod.num_gpu);
  int chosen = -1;
  if (policy_ == Policy::kRandom) {
    uint64_t candidates = 0;
    for (int i = 0; i < node.num_gpus; ++i) {
      if (node.gpu_free_milli[static_cast<size_t>(i)] >= pod.gpu_milli &&
          rng.Below(++candidates) == 0) {
        chosen = i;
      }
    }
  } else {
    for (int i = 0; i < node.num_gpus; ++i) {
      const int32_t free = node.gpu_free_milli[static_cast<size_t>(i)];
      if (free >= pod.gpu_milli &&
          (chosen < 0 || free < node.gpu_free_milli[static_cast<size_t>(chosen)])) {
        chosen = i;
      }
    }
  }
  return chosen < 0 ? 0 : GpuSet{1} << chosen;
}

}  // namespace tessera::fgd
