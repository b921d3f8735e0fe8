#include "config/pricing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "config/yaml_util.h"
#include "fmt/format.h"

namespace tessera::config_internal {
namespace {

constexpr std::array<std::string_view, 5> kFields = {"gpuHour", "cpuHour", "memoryGiBHour",
                                                     "spotDiscount", "rollupLabels"};

// A number from `lo` to `hi`, or an error saying what was expected.
std::optional<double> ReadNumber(DocContext& ctx, const YAML::Node& value, const std::string& path,
                                 double lo, double hi, std::string_view what) {
  std::optional<double> v;
  if (value.IsScalar()) v = ParseNonNegativeNumber(value.Scalar());
  if (!v || *v < lo || *v > hi) {
    const std::string got = value.IsScalar() ? "\"" + value.Scalar() + "\"" : TypeName(value);
    ctx.Error(value, path, fmt::format("expected {} from {:g} to {:g}, got {}", what, lo, hi, got));
    return std::nullopt;
  }
  return v;
}

void ReadPriceTable(DocContext& ctx, const YAML::Node& pricing, std::string_view field,
                    std::string_view unit, PriceTable& out) {
  const std::string path = JoinPath("spec.pricing", field);
  const std::string what = fmt::format("dollars per {}", unit);
  ForEachMap(ctx, Child(pricing, field), path,
             [&](const std::string& key, const YAML::Node& value, const std::string& item) {
               auto v = ReadNumber(ctx, value, item, 0, kMaxPricePerHour, what);
               if (!v) return true;
               if (key == "default")
                 out.default_price = *v;
               else
                 out.by_key[key] = *v;
               return true;
             });
}

}  // namespace

void ReadPricing(DocContext& ctx, const YAML::Node& spec, PricingConfig& out) {
  const std::string path = "spec.pricing";
  YAML::Node pricing = Child(spec, "pricing");
  if (IsNullish(pricing) || !ExpectMap(ctx, pricing, path)) return;
  out.present = true;
  out.source = ctx.Source(pricing);
  ForEachMap(ctx, pricing, path,
             [&](const std::string& key, const YAML::Node& value, const std::string& item) {
               if (std::find(kFields.begin(), kFields.end(), key) != kFields.end()) return true;
               ctx.Error(value, item,
                         "unknown field; allowed: gpuHour, cpuHour, memoryGiBHour, "
                         "spotDiscount, rollupLabels");
               return true;
             });
  ReadPriceTable(ctx, pricing, "gpuHour", "GPU-hour", out.gpu_hour);
  ReadPriceTable(ctx, pricing, "cpuHour", "CPU core-hour", out.cpu_hour);
  ReadPriceTable(ctx, pricing, "memoryGiBHour", "GiB-hour", out.memory_gib_hour);
  ForEachMap(ctx, Child(pricing, "spotDiscount"), path + ".spotDiscount",
             [&](const std::string& flavor, const YAML::Node& value, const std::string& item) {
               if (auto v = ReadNumber(ctx, value, item, 0, 1, "a fraction"))
                 out.spot_discount[flavor] = *v;
               return true;
             });
  if (auto labels = GetStringList(ctx, pricing, "rollupLabels", path + ".rollupLabels")) {
    for (std::string& key : *labels) {
      if (std::find(out.rollup_labels.begin(), out.rollup_labels.end(), key) ==
          out.rollup_labels.end())
        out.rollup_labels.push_back(std::move(key));
    }
  }
}

}  // namespace tessera::config_internal
