// Which price applies to a unit of capacity (docs/cost.md, "Prices"): a price table of
// SchedulerConfig spec.pricing is looked up by the ResourceFlavor name first, then by the GPU
// model of the node (nvidia.com/gpu.product), then `default`; the flavor's spot discount is
// taken off whatever was found.
//
// Thread-safety: pure functions; NodePricing is immutable after construction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace tessera::cost {

// Dollars per unit-hour from `table` for capacity of flavor `flavor` (empty: none) on a node
// whose GPU model is `gpu_model` (empty: unknown), before any spot discount; std::nullopt when
// neither key is in the table and it has no default.
std::optional<double> LookUpPrice(const PriceTable& table, std::string_view flavor,
                                  std::string_view gpu_model);

// What is paid of a price for capacity of `flavor`: 1 - its spot discount (1 when none).
double SpotFactor(const PricingConfig& pricing, std::string_view flavor);

// The flavor each node is priced by when no admission names one (idle GPUs, workloads without
// a ClusterQueue): the first ResourceFlavor, in manifest order, with node labels that the node
// has; else the first one without node labels (it matches every node); else none.
class NodeFlavors {
 public:
  explicit NodeFlavors(const Model& model);
  // REQUIRES: 0 <= node < number of nodes. Empty when no flavor matches.
  const std::string& of(NodeId node) const { return names_[node]; }

 private:
  std::vector<std::string> names_;
};

}  // namespace tessera::cost
