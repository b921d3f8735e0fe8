// Prices for cost accounting: SchedulerConfig spec.pricing (docs/cost.md), after OpenCost's
// custom pricing (a price per GPU-, CPU core- and GiB-hour, with cheaper spot capacity).
//
// A price table maps a ResourceFlavor name or a GPU model (a node's nvidia.com/gpu.product) to
// dollars per unit-hour, with a `default`; which key a pod's price comes from is
// cost/pricing.h's business (flavor name, then GPU model, then default).
//
// Thread-safety: value types.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

struct PriceTable {
  std::map<std::string, double> by_key;  // flavor name or GPU model -> dollars per unit-hour
  std::optional<double> default_price;   // the `default` key
  bool empty() const { return by_key.empty() && !default_price; }
};

struct PricingConfig {
  bool present = false;        // spec.pricing was given: cost is reported
  PriceTable gpu_hour;         // spec.pricing.gpuHour: per GPU-hour (a share counts its fraction)
  PriceTable cpu_hour;         // spec.pricing.cpuHour: per CPU core-hour
  PriceTable memory_gib_hour;  // spec.pricing.memoryGiBHour: per GiB-hour (2^30 bytes)
  // spec.pricing.spotDiscount: ResourceFlavor name -> the fraction taken off every price of
  // capacity of that flavor, in [0, 1] (0.6: pay 40% of the price).
  std::map<std::string, double> spot_discount;
  // spec.pricing.rollupLabels: workload label keys (e.g. team) cost is also summed by.
  std::vector<std::string> rollup_labels;
  std::string source;  // "file:line" of spec.pricing
};

}  // namespace tessera
