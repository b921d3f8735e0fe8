#include "fgd/fragmentation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <tuple>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessera::fgd {
namespace {

// The simulator's CanNodeHostPodOnGpuMemory.
bool EnoughGpus(const NodeGpuState& node, const TypicalPod& pod) {
  int needed = pod.num_gpu;
  for (int i = 0; i < node.num_gpus; ++i) {
    if (node.gpu_free_milli[static_cast<size_t>(i)] >= pod.gpu_milli && --needed <= 0) return true;
  }
  return false;
}

// Milli of the GPUs that each have less than the pod's per-GPU request.
int64_t MilliBelow(const NodeGpuState& node, int32_t gpu_milli) {
  int64_t sum = 0;
  for (int i = 0; i < node.num_gpus; ++i) {
    const int32_t free = node.gpu_free_milli[static_cast<size_t>(i)];
    if (free < gpu_milli) sum += free;
  }
  return sum;
}

using ShapeKey = std::tuple<int64_t, int32_t, int32_t, std::string>;  // cpu, milli, count, spec

}  // namespace

void PodShapeTally::Add(const PodShape& shape) {
  if (shape.count <= 0) return;
  auto [it, fresh] = index_.try_emplace(Key{shape.cpu_milli, shape.mem_mib, shape.num_gpu,
                                            shape.gpu_milli, shape.models, shape.model_spec},
                                        shapes_.size());
  if (fresh)
    shapes_.push_back(shape);
  else
    shapes_[it->second].count += shape.count;
}

std::vector<TypicalPod> BuildTypicalPods(std::span<const PodShape> pods,
                                         const TypicalPodOptions& options) {
  struct Group {
    double count = 0;
    int64_t mem_mib = 0;
    ModelMask models = 0;
  };
  std::map<ShapeKey, Group> groups;
  double total = 0;
  for (const PodShape& pod : pods) {
    if (!options.include_cpu_pods && pod.num_gpu == 0) continue;
    double weighted = 1;
    if (options.gpu_res_weight > 0 && pod.gpu_milli == kMilliPerGpu) {
      weighted = 1 + pod.num_gpu * options.gpu_res_weight;
    }
    if (options.weight_by_gpu_request) {
      weighted = static_cast<double>(int64_t{pod.num_gpu} * pod.gpu_milli) / kMilliPerGpu;
      if (weighted <= 0) continue;
    }
    if (pod.count <= 0) continue;
    weighted *= static_cast<double>(pod.count);
    Group& g = groups[ShapeKey{EffectiveCpuMilli(pod.cpu_milli), pod.gpu_milli, pod.num_gpu,
                               pod.model_spec}];
    if (g.count == 0) {
      g.mem_mib = pod.mem_mib;
      g.models = pod.models;
    }
    g.count += weighted;
    total += weighted;
  }
  if (groups.empty()) return {};

  std::vector<TypicalPod> list;
  list.reserve(groups.size());
  for (const auto& [key, g] : groups) {
    TypicalPod t;
    std::tie(t.cpu_milli, t.gpu_milli, t.num_gpu, t.model_spec) = key;
    t.mem_mib = g.mem_mib;
    t.models = g.models;
    t.weight = g.count;
    list.push_back(std::move(t));
  }
  // Most popular first; the simulator sorts by sort.Reverse of (count, cpu, milli, count, spec),
  // so equal counts put the larger shape first.
  std::sort(list.begin(), list.end(), [](const TypicalPod& a, const TypicalPod& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    return std::tie(a.cpu_milli, a.gpu_milli, a.num_gpu, a.model_spec) >
           std::tie(b.cpu_milli, b.gpu_milli, b.num_gpu, b.model_spec);
  });

  // Take shapes `increase_step` at a time until their pods reach the threshold.
  const double threshold = std::min(options.popularity_threshold_percent, 100.0);
  const double expected = threshold * total / 100.0;
  const size_t step = static_cast<size_t>(std::max(options.increase_step, 1));
  size_t taken = 0;
  size_t limit = 0;
  double cumulated = 0;
  while (cumulated < expected && taken < list.size()) {
    limit += step;
    for (; taken < limit && taken < list.size(); ++taken) {
      cumulated += list[taken].weight;
      list[taken].weight /= total;
    }
  }
  if (taken >= list.size()) return list;
  list.resize(taken);
  for (TypicalPod& t : list) t.weight /= cumulated / total;
  return list;
}

FragBreakdown NodeFragBreakdown(const NodeGpuState& node, std::span<const TypicalPod> typical) {
  FragBreakdown out;
  const double idle = static_cast<double>(node.IdleGpuMilli());
  for (const TypicalPod& pod : typical) {
    if (pod.weight < 0 || pod.weight > 1) continue;  // the simulator skips bad frequencies
    const bool cpu_fits = node.cpu_free_milli >= pod.cpu_milli;
    if (pod.gpu_milli == 0) {
      (cpu_fits ? out.xl_satisfied : out.xr_lack_cpu) += pod.weight * idle;
    } else if (!ModelAllowed(pod.models, node.gpu_model)) {
      out.no_access += pod.weight * idle;
    } else if (EnoughGpus(node, pod)) {
      if (cpu_fits) {
        const double below = static_cast<double>(MilliBelow(node, pod.gpu_milli));
        out.q2_lack_gpu += pod.weight * below;
        out.q3_satisfied += pod.weight * (idle - below);
      } else {
        out.q4_lack_cpu += pod.weight * idle;
      }
    } else {
      (cpu_fits ? out.q2_lack_gpu : out.q1_lack_both) += pod.weight * idle;
    }
  }
  return out;
}

double NodeFragmentedGpuMilli(const NodeGpuState& node, std::span<const TypicalPod> typical) {
  return NodeFragBreakdown(node, typical).Fragmented();
}

FragmentationMeasure::FragmentationMeasure(std::span<const TypicalPod> typical)
    : typical_(typical.begin(), typical.end()) {
  for (const TypicalPod& pod : typical_) {
    if (pod.weight < 0 || pod.weight > 1) continue;
    if (pod.gpu_milli == 0) {
      cpu_only_weight_ += pod.weight;
      continue;
    }
    auto it = std::find(thresholds_.begin(), thresholds_.end(), pod.gpu_milli);
    if (it == thresholds_.end()) {
      if (thresholds_.size() >= kMaxThresholds) {
        slow_shapes_.push_back(pod);
        continue;
      }
      it = thresholds_.insert(thresholds_.end(), pod.gpu_milli);
    }
    shape_cpu_.push_back(pod.cpu_milli);
    shape_num_gpu_.push_back(pod.num_gpu);
    shape_threshold_.push_back(static_cast<int32_t>(it - thresholds_.begin()));
    shape_weight_.push_back(pod.weight);
    shape_models_.push_back(pod.models);
    any_model_constraint_ |= pod.models != 0;
  }
  BuildEstimateTables();
}

void FragmentationMeasure::BuildEstimateTables() {
  if (!slow_shapes_.empty()) return;
  std::vector<const TypicalPod*> shapes;  // the GPU shapes the measure counts
  weight_all_ = cpu_only_weight_;
  double weight_abs = cpu_only_weight_;
  std::vector<int32_t> single_thresholds;
  std::vector<int32_t> multi_thresholds;
  ModelMask named_models = 0;
  for (const TypicalPod& pod : typical_) {
    if (pod.weight < 0 || pod.weight > 1 || pod.gpu_milli == 0) continue;
    if (pod.gpu_milli < 1 || pod.gpu_milli > kMilliPerGpu) return;
    shapes.push_back(&pod);
    weight_all_ += pod.weight;
    weight_abs += pod.weight;
    cpu_levels_.push_back(pod.cpu_milli);
    (pod.num_gpu == 1 ? single_thresholds : multi_thresholds).push_back(pod.gpu_milli);
    named_models |= pod.models;
  }
  auto sort_unique = [](auto& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  sort_unique(cpu_levels_);
  if (cpu_levels_.empty() || cpu_levels_.front() < 0 || cpu_levels_.size() > 255) return;
  cpu_rank_at_bucket_.resize(static_cast<size_t>(cpu_levels_.back() >> kCpuBucketShift) + 1);
  for (size_t b = 0; b < cpu_rank_at_bucket_.size(); ++b) {
    cpu_rank_at_bucket_[b] =
        static_cast<uint8_t>(std::upper_bound(cpu_levels_.begin(), cpu_levels_.end(),
                                              static_cast<int64_t>(b) << kCpuBucketShift) -
                             cpu_levels_.begin());
  }
  sort_unique(single_thresholds);
  sort_unique(multi_thresholds);
  if (multi_thresholds.size() > kMaxMultiThresholds) return;
  num_multi_ = multi_thresholds.size();
  std::copy(multi_thresholds.begin(), multi_thresholds.end(), multi_thresholds_.begin());

  level_of_milli_.assign(kMilliPerGpu + 1, 0);
  for (int32_t milli = 0; milli <= kMilliPerGpu; ++milli) {
    level_of_milli_[static_cast<size_t>(milli)] = static_cast<uint8_t>(
        std::upper_bound(single_thresholds.begin(), single_thresholds.end(), milli) -
        single_thresholds.begin());
  }
  num_levels_ = single_thresholds.size() + 1;

  // Class 0: models that no constraint names (and GPU-less nodes); then one per named model.
  std::vector<int32_t> class_model = {kNoGpuModel};
  for (int id = 0; id < kMaxGpuModels; ++id) {
    if ((named_models >> id) & 1u) {
      class_of_model_[static_cast<size_t>(id)] = static_cast<uint8_t>(class_model.size());
      class_model.push_back(id);
    }
  }
  row_ranks_ = cpu_levels_.size() + 1;
  single_row_ = num_levels_;
  multi_row_ = num_multi_ * kCounts;
  const size_t rows = class_model.size() * row_ranks_;
  if (rows * (single_row_ + multi_row_) > (size_t{1} << 19)) return;  // 4 MiB: use Evaluate
  single_.assign(rows * single_row_, 0);
  multi_.assign(rows * multi_row_, 0);
  for (size_t cls = 0; cls < class_model.size(); ++cls) {
    for (size_t rank = 0; rank < row_ranks_; ++rank) {
      double* single = single_.data() + (cls * row_ranks_ + rank) * single_row_;
      double* multi = multi_.data() + (cls * row_ranks_ + rank) * multi_row_;
      for (const TypicalPod* pod : shapes) {
        const size_t cpu_index = static_cast<size_t>(
            std::lower_bound(cpu_levels_.begin(), cpu_levels_.end(), pod->cpu_milli) -
            cpu_levels_.begin());
        if (cpu_index >= rank || !ModelAllowed(pod->models, class_model[cls])) continue;
        if (pod->num_gpu == 1) {
          // Counted from the first level whose GPUs reach the request.
          single[level_of_milli_[static_cast<size_t>(pod->gpu_milli)]] += pod->weight;
        } else if (pod->num_gpu <= kMaxGpusPerNode) {
          const size_t k = static_cast<size_t>(
              std::lower_bound(multi_thresholds.begin(), multi_thresholds.end(), pod->gpu_milli) -
              multi_thresholds.begin());
          multi[k * kCounts + static_cast<size_t>(std::max(pod->num_gpu, 0))] += pod->weight;
        }
      }
      for (size_t l = 1; l < single_row_; ++l) single[l] += single[l - 1];
      for (size_t k = 0; k < num_multi_; ++k) {
        for (size_t c = 1; c < kCounts; ++c) multi[k * kCounts + c] += multi[k * kCounts + c - 1];
      }
    }
  }
  // Both sums round at most once per term and per GPU on values of at most 16 x 1000 milli:
  // a few hundred units in the last place of 16000 x the total weight; 16 times that.
  const double ulp = std::ldexp(1.0, -52);
  estimate_tolerance_ = 16 * static_cast<double>(shapes.size() + 2 * kMaxGpusPerNode + 64) * ulp *
                        kMaxGpusPerNode * kMilliPerGpu * std::max(1.0, weight_abs);
  estimate_ok_ = true;
}

namespace {

// The masks of a node's wholly free GPUs, its partly used GPUs and the GPUs whose free milli lies
// outside 0..1000 (bit i: GPU i), and its idle milli.
struct GpuMasks {
  uint32_t full = 0;
  uint32_t partial = 0;
  uint32_t out_of_range = 0;
  int64_t idle = 0;
};

#if defined(__SSE2__)
// Four GPUs at a time (SSE2 is part of x86-64), the slots past the node's GPUs masked off: no
// branch on the values.
GpuMasks MasksOf(const NodeGpuState& node) {
  static_assert(kMaxGpusPerNode % 4 == 0);
  GpuMasks out;
  const __m128i count = _mm_set1_epi32(node.num_gpus);
  const __m128i full = _mm_set1_epi32(kMilliPerGpu);
  const __m128i zero = _mm_setzero_si128();
  __m128i index = _mm_setr_epi32(0, 1, 2, 3);
  __m128i idle = zero;
  for (int q = 0; q < node.num_gpus; q += 4) {
    const __m128i valid = _mm_cmplt_epi32(index, count);
    const __m128i free = _mm_and_si128(
        valid, _mm_loadu_si128(reinterpret_cast<const __m128i*>(node.gpu_free_milli.data() + q)));
    idle = _mm_add_epi32(idle, free);
    const __m128i is_full = _mm_cmpeq_epi32(free, full);
    const __m128i above_zero = _mm_cmpgt_epi32(free, zero);
    const __m128i outside = _mm_or_si128(_mm_cmplt_epi32(free, zero), _mm_cmpgt_epi32(free, full));
    const __m128i is_partial = _mm_andnot_si128(_mm_or_si128(is_full, outside), above_zero);
    out.full |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(is_full))) << q;
    out.partial |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(is_partial))) << q;
    out.out_of_range |= static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(outside))) << q;
    index = _mm_add_epi32(index, _mm_set1_epi32(4));
  }
  // Lanes hold at most 4 x 1000 (or out-of-range values, rejected by the caller).
  idle = _mm_add_epi32(idle, _mm_shuffle_epi32(idle, _MM_SHUFFLE(1, 0, 3, 2)));
  idle = _mm_add_epi32(idle, _mm_shuffle_epi32(idle, _MM_SHUFFLE(2, 3, 0, 1)));
  out.idle = _mm_cvtsi128_si32(idle);
  return out;
}
#else
GpuMasks MasksOf(const NodeGpuState& node) {
  GpuMasks out;
  for (int i = node.num_gpus - 1; i >= 0; --i) {
    const int32_t free = node.gpu_free_milli[static_cast<size_t>(i)];
    out.out_of_range = out.out_of_range << 1 | uint32_t{free < 0 || free > kMilliPerGpu};
    out.idle += free;
    out.full = out.full << 1 | uint32_t{free == kMilliPerGpu};
    out.partial = out.partial << 1 | uint32_t{free > 0 && free < kMilliPerGpu};
  }
  return out;
}
#endif

}  // namespace

size_t FragmentationMeasure::CpuRank(int64_t cpu_free_milli) const {
  if (cpu_free_milli < 0) return 0;  // the levels are not negative
  const size_t bucket = static_cast<size_t>(cpu_free_milli >> kCpuBucketShift);
  if (bucket >= cpu_rank_at_bucket_.size()) return cpu_levels_.size();
  size_t rank = cpu_rank_at_bucket_[bucket];
  while (rank < cpu_levels_.size() && cpu_free_milli >= cpu_levels_[rank]) ++rank;
  return rank;
}

bool FragmentationMeasure::SameTerms(const NodeGpuState& node, int64_t a, int64_t b) const {
  if (a == b || (estimate_ok_ && CpuRank(a) == CpuRank(b))) return true;
  if (!slow_shapes_.empty()) return false;
  // Only the shapes whose CPU request lies between the two can change, and only where their
  // model and GPUs fit.
  const int64_t lo = std::min(a, b);
  const int64_t hi = std::max(a, b);
  for (size_t j = 0; j < shape_cpu_.size(); ++j) {
    if (shape_cpu_[j] <= lo || shape_cpu_[j] > hi) continue;
    if (!ModelAllowed(shape_models_[j], node.gpu_model)) continue;
    const int32_t milli = thresholds_[static_cast<size_t>(shape_threshold_[j])];
    int32_t count = 0;
    for (int i = 0; i < node.num_gpus; ++i) {
      count += node.gpu_free_milli[static_cast<size_t>(i)] >= milli;
    }
    if (count >= shape_num_gpu_[j]) return false;
  }
  return true;
}

bool FragmentationMeasure::Prepare(const NodeGpuState& node, int64_t cpu_free_milli,
                                   NodeSums* sums) const {
  if (!estimate_ok_ || node.num_gpus < 0 || node.num_gpus > kMaxGpusPerNode) return false;
  const GpuMasks masks = MasksOf(node);
  if (masks.out_of_range != 0) return false;
  const int32_t model = node.gpu_model;
  const size_t cls =
      model >= 0 && model < kMaxGpuModels ? class_of_model_[static_cast<size_t>(model)] : 0;
  const size_t row_rank = CpuRank(cpu_free_milli);
  const size_t row = cls * row_ranks_ + row_rank;
  const double* single = single_.data() + row * single_row_;
  sums->single = single;
  sums->multi = multi_row_ == 0 ? nullptr : multi_.data() + row * multi_row_;
  const int64_t idle = masks.idle;
  const uint32_t partial = masks.partial;
  const int32_t* gpu_free_milli = node.gpu_free_milli.data();
  const int num_gpus = node.num_gpus;
  // Wholly free GPUs all weigh single[top level], idle ones nothing; the partly used ones one by
  // one.
  const uint8_t* level = level_of_milli_.data();
  int64_t partial_milli = 0;
  double partial_sum = 0;
  for (uint32_t bits = partial; bits != 0; bits &= bits - 1) {
    const int32_t free = gpu_free_milli[std::countr_zero(bits)];
    partial_milli += free;
    partial_sum += free * single[level[free]];
  }
  const double single_sum =
      static_cast<double>(idle - partial_milli) * single[num_levels_ - 1] + partial_sum;
  for (size_t k = 0; k < num_multi_; ++k) {
    int32_t count = 0;
    int64_t above = 0;
    for (int i = 0; i < num_gpus; ++i) {
      const bool reaches = gpu_free_milli[i] >= multi_thresholds_[k];
      count += reaches;
      above += reaches ? gpu_free_milli[i] : 0;
    }
    sums->count[k] = count;
    sums->above[k] = above;
  }
  sums->full_gpus = masks.full;
  sums->partial_gpus = partial;
  sums->idle = idle;
  sums->single_sum = single_sum;
  return true;
}

double FragmentationMeasure::Evaluate(int64_t cpu_free_milli, int32_t gpu_model,
                                      const int32_t* gpu_free_milli, int num_gpus) const {
  int64_t idle_milli = 0;
  for (int i = 0; i < num_gpus; ++i) idle_milli += gpu_free_milli[i];
  if (idle_milli == 0) return 0;  // every term is a part of the idle milli
  const double idle = static_cast<double>(idle_milli);

  // Per distinct per-GPU request: how many GPUs reach it and the milli of those that do not.
  // GPUs outside, requests inside, so that the inner loop vectorizes.
  const size_t n_thresholds = thresholds_.size();
  const int32_t* thresholds = thresholds_.data();
  int32_t count_at[kMaxThresholds] = {};
  int32_t below_at[kMaxThresholds] = {};
  for (int i = 0; i < num_gpus; ++i) {
    const int32_t free = gpu_free_milli[i];
    for (size_t t = 0; t < n_thresholds; ++t) {
      const int32_t reaches = free >= thresholds[t];
      count_at[t] += reaches;
      below_at[t] += reaches ? 0 : free;
    }
  }

  double frag = cpu_only_weight_ * idle;
  const size_t n_shapes = shape_cpu_.size();
  for (size_t j = 0; j < n_shapes; ++j) {
    const int32_t t = shape_threshold_[j];
    bool fits = cpu_free_milli >= shape_cpu_[j] && count_at[t] >= shape_num_gpu_[j];
    if (any_model_constraint_) fits = fits && ModelAllowed(shape_models_[j], gpu_model);
    frag += shape_weight_[j] * (fits ? static_cast<double>(below_at[t]) : idle);
  }
  for (const TypicalPod& pod : slow_shapes_) {
    int32_t count = 0;
    int64_t below = 0;
    for (int i = 0; i < num_gpus; ++i) {
      if (gpu_free_milli[i] >= pod.gpu_milli) {
        ++count;
      } else {
        below += gpu_free_milli[i];
      }
    }
    const bool fits = ModelAllowed(pod.models, gpu_model) && cpu_free_milli >= pod.cpu_milli &&
                      count >= pod.num_gpu;
    frag += pod.weight * (fits ? static_cast<double>(below) : idle);
  }
  return frag;
}

}  // namespace tessera::fgd
