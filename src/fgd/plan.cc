#include "fgd/plan.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace tessera::fgd {
namespace {

// The items of one model mask, per size (largest first), each size's positions ascending.
using BySize = std::map<int32_t, std::deque<size_t>, std::greater<>>;

std::map<ModelMask, BySize> GroupItems(std::span<const ShareItem> items) {
  std::map<ModelMask, BySize> groups;
  for (const ShareItem& it : items) groups[it.models][it.milli].push_back(it.position);
  for (auto& [models, by_size] : groups) {
    for (auto& [size, positions] : by_size) std::sort(positions.begin(), positions.end());
  }
  return groups;
}

ShareBin Finish(std::vector<size_t> members, ModelMask models, int32_t milli) {
  std::sort(members.begin(), members.end());
  return ShareBin{std::move(members), models, milli};
}

// MBS': a bin takes the largest item left, then the subset of the rest with the largest sum that
// fits (a bounded subset-sum over the distinct sizes; counts split in powers of two). Among
// subsets of equal sum, the one the DP reaches first: larger sizes, fewer items.
void PackMinimumBinSlack(ModelMask models, BySize& by_size, std::vector<ShareBin>& out) {
  struct Piece {
    int32_t size;
    int32_t count;
  };
  std::vector<Piece> pieces;
  std::vector<int32_t> from(kMilliPerGpu + 1, -1);  // piece index that first reached a sum
  while (true) {
    auto largest = by_size.begin();
    while (largest != by_size.end() && largest->second.empty()) ++largest;
    if (largest == by_size.end()) return;
    std::vector<size_t> members = {largest->second.front()};
    largest->second.pop_front();
    const int32_t cap = kMilliPerGpu - largest->first;

    pieces.clear();
    for (const auto& [size, positions] : by_size) {
      if (size > cap || positions.empty()) continue;
      int32_t left =
          static_cast<int32_t>(std::min(positions.size(), static_cast<size_t>(cap / size)));
      for (int32_t k = 1; left > 0; k *= 2) {
        const int32_t take = std::min(k, left);
        pieces.push_back(Piece{size, take});
        left -= take;
      }
    }
    std::fill(from.begin(), from.begin() + cap + 1, -1);
    from[0] = static_cast<int32_t>(pieces.size());  // reached with nothing
    for (size_t p = 0; p < pieces.size(); ++p) {
      const int32_t w = pieces[p].size * pieces[p].count;
      for (int32_t f = cap; f >= w; --f) {
        if (from[static_cast<size_t>(f)] < 0 && from[static_cast<size_t>(f - w)] >= 0) {
          from[static_cast<size_t>(f)] = static_cast<int32_t>(p);
        }
      }
    }
    int32_t fill = cap;
    while (from[static_cast<size_t>(fill)] < 0) --fill;
    for (int32_t f = fill; f > 0;) {
      const Piece& piece = pieces[static_cast<size_t>(from[static_cast<size_t>(f)])];
      std::deque<size_t>& positions = by_size[piece.size];
      for (int32_t k = 0; k < piece.count; ++k) {
        members.push_back(positions.front());
        positions.pop_front();
      }
      f -= piece.size * piece.count;
    }
    out.push_back(Finish(std::move(members), models, kMilliPerGpu - cap + fill));
  }
}

// BFD: items largest first (equal sizes: earlier positions first), each into the bin with the
// least room that holds it (equal room: the older bin), else a new bin.
void PackBestFitDecreasing(ModelMask models, BySize& by_size, std::vector<ShareBin>& out) {
  const size_t first = out.size();
  std::set<std::pair<int32_t, size_t>> room;  // (free milli, bin index)
  for (auto& [size, positions] : by_size) {
    for (const size_t position : positions) {
      auto it = room.lower_bound({size, 0});
      size_t bin;
      if (it == room.end()) {
        bin = out.size();
        out.push_back(ShareBin{{}, models, 0});
      } else {
        bin = it->second;
        room.erase(it);
      }
      ShareBin& b = out[bin];
      b.members.push_back(position);
      b.milli += size;
      room.emplace(kMilliPerGpu - b.milli, bin);
    }
    positions.clear();
  }
  for (size_t b = first; b < out.size(); ++b) {
    std::sort(out[b].members.begin(), out[b].members.end());
  }
}

}  // namespace

std::vector<ShareBin> PackShares(std::span<const ShareItem> items, SharePacking packing) {
  std::map<ModelMask, BySize> groups = GroupItems(items);
  std::vector<ShareBin> bins;
  for (auto& [models, by_size] : groups) {
    if (packing == SharePacking::kMinimumBinSlack) {
      PackMinimumBinSlack(models, by_size, bins);
    } else {
      PackBestFitDecreasing(models, by_size, bins);
    }
  }
  return bins;
}

BalanceRatios ClusterRatios(std::span<const NodeGpuState> nodes) {
  double cpu = 0, mem = 0, gpu = 0;
  for (const NodeGpuState& n : nodes) {
    cpu += static_cast<double>(n.cpu_free_milli);
    mem += static_cast<double>(n.mem_free_mib);
    gpu += static_cast<double>(n.IdleGpuMilli());
  }
  if (gpu <= 0) return BalanceRatios{};
  return BalanceRatios{cpu / gpu, mem / gpu};
}

double Imbalance(int64_t cpu_free_milli, int64_t mem_free_mib, int64_t idle_milli,
                 const BalanceRatios& ratios) {
  const double idle = static_cast<double>(idle_milli);
  double worst = 0;
  if (ratios.cpu_per_milli > 0) {
    worst = std::abs(static_cast<double>(cpu_free_milli) - ratios.cpu_per_milli * idle) /
            ratios.cpu_per_milli;
  }
  if (ratios.mem_per_milli > 0) {
    worst =
        std::max(worst, std::abs(static_cast<double>(mem_free_mib) - ratios.mem_per_milli * idle) /
                            ratios.mem_per_milli);
  }
  return worst;
}

int64_t BalanceGain(const NodeGpuState& node, const PodRequest& pod, const BalanceRatios& ratios) {
  const int64_t idle = node.IdleGpuMilli();
  const double before = Imbalance(node.cpu_free_milli, node.mem_free_mib, idle, ratios);
  const double after =
      Imbalance(node.cpu_free_milli - pod.cpu_milli, node.mem_free_mib - pod.mem_mib,
                idle - pod.TotalGpuMilli(), ratios);
  return static_cast<int64_t>(std::floor((before - after) / kBalanceStepMilli));
}

ModelPressure::ModelPressure(std::span<const PodShape* const> queue,
                             std::span<const int64_t> gpus_per_model) {
  const auto gpus = [&](int32_t m) {
    return static_cast<size_t>(m) < gpus_per_model.size()
               ? static_cast<double>(gpus_per_model[static_cast<size_t>(m)])
               : 0.0;
  };
  for (int32_t m = 0; m < kMaxGpuModels; ++m) cluster_milli_ += gpus(m) * kMilliPerGpu;
  std::vector<char> used(kMaxGpuModels, 0);
  for (const PodShape* p : queue) {
    if (p->models == 0 || p->num_gpu <= 0 || p->gpu_milli <= 0) continue;
    for (int32_t m = 0; m < kMaxGpuModels; ++m) {
      if (((p->models >> m) & 1u) && gpus(m) > 0) used[static_cast<size_t>(m)] = 1;
    }
  }
  index_of_.assign(kMaxGpuModels, -1);
  for (int32_t m = 0; m < kMaxGpuModels; ++m) {
    if (!used[static_cast<size_t>(m)]) continue;
    index_of_[static_cast<size_t>(m)] = static_cast<int32_t>(models_.size());
    models_.push_back(m);
  }
  if (models_.empty()) return;
  const size_t k = models_.size();
  const auto finish = [&] {
    for (const int32_t m : models_) {
      oversubscribed_ += std::max(0.0, Demand(0, m) - gpus(m) * kMilliPerGpu);
    }
  };
  demand_.assign((queue.size() + 1) * k, 0.0);
  for (size_t t = queue.size(); t-- > 0;) {
    std::copy_n(demand_.begin() + static_cast<std::ptrdiff_t>((t + 1) * k), k,
                demand_.begin() + static_cast<std::ptrdiff_t>(t * k));
    const PodShape& p = *queue[t];
    if (p.models == 0 || p.num_gpu <= 0 || p.gpu_milli <= 0) continue;
    double total = 0;
    for (const int32_t m : models_) {
      if ((p.models >> m) & 1u) total += gpus(m);
    }
    if (total <= 0) continue;
    const double milli = static_cast<double>(p.num_gpu) * p.gpu_milli;
    for (size_t j = 0; j < k; ++j) {
      const int32_t m = models_[j];
      if ((p.models >> m) & 1u) demand_[t * k + j] += milli * gpus(m) / total;
    }
  }
  finish();
}

double ModelPressure::Demand(size_t t, int32_t model) const {
  if (models_.empty() || model < 0 || model >= kMaxGpuModels) return 0;
  const int32_t j = index_of_[static_cast<size_t>(model)];
  if (j < 0) return 0;
  const size_t k = models_.size();
  t = std::min(t, demand_.size() / k - 1);
  return demand_[t * k + static_cast<size_t>(j)];
}

}  // namespace tessera::fgd
