#include "engine/placement/node_scorer.h"

namespace tessera {
namespace {

// Mean fraction of cpu and memory that would be in use after placing `req`.
double UsedFraction(const Resources& free, const Resources& alloc, const Resources& req) {
  double sum = 0;
  int n = 0;
  for (ResourceId r : {kCpu, kMemory}) {
    if (alloc[r] <= 0) continue;
    sum += 1.0 - static_cast<double>(free[r] - req[r]) / static_cast<double>(alloc[r]);
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

// Kubernetes' MostAllocated: fill nodes so that whole nodes stay free for big gangs.
class BinpackScorer : public NodeScorer {
 public:
  std::string_view name() const override { return "binpack"; }
  bool FullestFirst() const override { return true; }
  double Score(const Resources& free, const Resources& alloc, const Resources& req) const override {
    return UsedFraction(free, alloc, req);
  }
};

// Kubernetes' LeastAllocated: spread load, e.g. for inference replicas.
class SpreadScorer : public NodeScorer {
 public:
  std::string_view name() const override { return "spread"; }
  bool FullestFirst() const override { return false; }
  double Score(const Resources& free, const Resources& alloc, const Resources& req) const override {
    return -UsedFraction(free, alloc, req);
  }
};

}  // namespace

std::unique_ptr<NodeScorer> MakeNodeScorer(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kSpread:
      return std::make_unique<SpreadScorer>();
    case PlacementPolicy::kBinpack:
    default:  // the FGD policies: binpack's bucket order gives their candidates
      break;
  }
  return std::make_unique<BinpackScorer>();
}

}  // namespace tessera
