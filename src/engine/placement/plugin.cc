#include "engine/placement/plugin.h"

#include "absl/container/flat_hash_map.h"
#include "engine/placement/bucket_walk.h"
#include "engine/placement/fgd_placement.h"
#include "engine/placement/plan_placement.h"

namespace tessera {

std::vector<int32_t> DenseGpuModelIds(const std::vector<Node>& nodes) {
  absl::flat_hash_map<std::string, int32_t> ids;
  std::vector<int32_t> out;
  out.reserve(nodes.size());
  for (const Node& node : nodes) {
    int32_t id = fgd::kNoGpuModel;
    if (node.gpu_count() > 0) {
      auto [it, inserted] = ids.try_emplace(node.gpu_model, static_cast<int32_t>(ids.size()));
      id = it->second;
    }
    out.push_back(id);
  }
  return out;
}

std::unique_ptr<PlacementPlugin> MakePlacementPlugin(PlacementPolicy policy, Engine& e,
                                                     const NodeScorer& scorer) {
  auto fgd = [&](fgd::Policy p) -> std::unique_ptr<PlacementPlugin> {
    return std::make_unique<FgdPlacement>(e, scorer, p);
  };
  switch (policy) {
    case PlacementPolicy::kBinpack:
    case PlacementPolicy::kSpread:
      return std::make_unique<BucketWalkPlacement>(e, scorer);
    case PlacementPolicy::kRandom:
      return fgd(fgd::Policy::kRandom);
    case PlacementPolicy::kDotProd:
      return fgd(fgd::Policy::kDotProd);
    case PlacementPolicy::kGpuClustering:
      return fgd(fgd::Policy::kGpuClustering);
    case PlacementPolicy::kGpuPacking:
      return fgd(fgd::Policy::kGpuPacking);
    case PlacementPolicy::kBestFit:
      return fgd(fgd::Policy::kBestFit);
    case PlacementPolicy::kFgd:
      return fgd(fgd::Policy::kFgd);
    case PlacementPolicy::kTesseraFgd:
      return fgd(fgd::Policy::kTesseraFgd);
    case PlacementPolicy::kTesseraPlan:
      return std::make_unique<PlanPlacement>(e);
  }
  return std::make_unique<BucketWalkPlacement>(e, scorer);
}

}  // namespace tessera
