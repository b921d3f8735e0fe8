#include "engine/placement/plugin.h"

#include "engine/placement/bucket_walk.h"
#include "engine/placement/fgd_placement.h"
#include "engine/placement/plan_placement.h"

namespace tessera {

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
