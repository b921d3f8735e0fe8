#include "cost/pricing.h"

#include "model/labels.h"

namespace tessera::cost {

std::optional<double> LookUpPrice(const PriceTable& table, std::string_view flavor,
                                  std::string_view gpu_model) {
  // A flavor names what a team was given (on-demand or spot, a reserved pool); the GPU model
  // only what hardware it ran on. The more specific key wins.
  for (std::string_view key : {flavor, gpu_model}) {
    if (key.empty()) continue;
    if (auto it = table.by_key.find(std::string(key)); it != table.by_key.end()) return it->second;
  }
  return table.default_price;
}

double SpotFactor(const PricingConfig& pricing, std::string_view flavor) {
  if (flavor.empty()) return 1;
  auto it = pricing.spot_discount.find(std::string(flavor));
  return it == pricing.spot_discount.end() ? 1 : 1 - it->second;
}

NodeFlavors::NodeFlavors(const Model& model) {
  names_.resize(model.nodes.size());
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const std::string* any = nullptr;
    for (const ResourceFlavor& f : model.flavors) {
      if (!MatchesNodeSelector(f.node_labels, model.nodes[n].labels)) continue;
      if (!f.node_labels.empty()) {
        any = &f.name;
        break;
      }
      if (!any) any = &f.name;
    }
    if (any) names_[n] = *any;
  }
}

}  // namespace tessera::cost
