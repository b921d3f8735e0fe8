// SchedulerConfig spec.pricing as the manifest loader reads it (docs/cost.md): prices per
// GPU-, CPU core- and GiB-hour keyed by ResourceFlavor name or GPU model, spot discounts per
// flavor, and the label keys cost is summed by.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include "config/kinds.h"
#include "model/pricing.h"

namespace tessera::config_internal {

// Highest price accepted, in dollars per unit-hour: far above any real price, low enough that
// a year of a large cluster stays a finite sum.
inline constexpr double kMaxPricePerHour = 1e6;

// spec.pricing: {gpuHour, cpuHour, memoryGiBHour, spotDiscount, rollupLabels}. Present: cost is
// reported. A negative, NaN, infinite or non-numeric price, a discount outside [0, 1] and an
// unknown field are errors at file:line naming the field.
void ReadPricing(DocContext& ctx, const YAML::Node& spec, PricingConfig& out);

}  // namespace tessera::config_internal
