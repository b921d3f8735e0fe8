// Node scoring plugins: where a pod goes among the nodes that can take it.
//
// The engine walks nodes bucketed by free GPUs in the order a scorer asks for (fullest first
// for packing, emptiest first for spreading) and, inside the first bucket with feasible nodes,
// keeps the feasible node with the highest Score. Policies are chosen by name in
// SchedulerConfig.spec.placement; MakeNodeScorer is the one place that maps names to classes.
//
// Thread-safety: implementations are immutable after construction.
#pragma once

#include <memory>
#include <string_view>

#include "model/model.h"
#include "model/resources.h"

namespace tessera {

class NodeScorer {
 public:
  virtual ~NodeScorer() = default;
  virtual std::string_view name() const = 0;
  // True: visit nodes with the fewest free GPUs first (pack); false: the most first (spread).
  virtual bool FullestFirst() const = 0;
  // Higher is better. `free` is before placing `req`.
  virtual double Score(const Resources& free, const Resources& allocatable,
                       const Resources& req) const = 0;
};

std::unique_ptr<NodeScorer> MakeNodeScorer(PlacementPolicy policy);

}  // namespace tessera
