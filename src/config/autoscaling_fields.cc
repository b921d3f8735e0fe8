#include "config/autoscaling_fields.h"

#include <cmath>
#include <limits>
#include <string>

#include "config/time_fields.h"
#include "config/yaml_util.h"
#include "fmt/format.h"
#include "model/limits.h"

namespace tessera::config_internal {
namespace {

// A number in [lo, hi] (hi_open: [lo, hi)), or an error at `path` saying what was expected.
std::optional<double> GetNumber(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                                const std::string& path, double lo, double hi, bool hi_open,
                                std::string_view what) {
  YAML::Node value = Child(parent, key);
  if (IsNullish(value)) return std::nullopt;
  std::optional<double> v;
  if (value.IsScalar()) v = ParseNonNegativeNumber(value.Scalar());
  if (!v || !std::isfinite(*v) || *v < lo || *v > hi || (hi_open && *v == hi)) {
    const std::string got = value.IsScalar() ? "\"" + value.Scalar() + "\"" : TypeName(value);
    ctx.Error(value, path,
              fmt::format("expected {} from {:g} to {:g}{}, got {}", what, lo, hi,
                          hi_open ? " (excluded)" : "", got));
    return std::nullopt;
  }
  return v;
}

}  // namespace

void ReadNodePoolElasticity(DocContext& ctx, const YAML::Node& spec, NodePoolSpec& pool) {
  pool.price_per_node_hour = GetNumber(ctx, spec, "pricePerNodeHour", "spec.pricePerNodeHour", 0,
                                       kMaxNodePricePerHour, false, "dollars per node-hour");
  YAML::Node as = Child(spec, "autoscaling");
  if (ExpectMap(ctx, as, "spec.autoscaling")) {
    NodePoolAutoscaling a;
    const std::string p = "spec.autoscaling";
    YAML::Node max = Child(as, "maxNodes");
    if (IsNullish(max)) {
      ctx.Error(as, p + ".maxNodes", "required field is missing");
      return;
    }
    auto max_nodes = ScalarInt(ctx, max, p + ".maxNodes", 1, kMaxNodePoolSize);
    auto min_nodes = GetInt(ctx, as, "minNodes", p + ".minNodes", 0, kMaxNodePoolSize);
    if (!max_nodes) return;
    a.max_nodes = *max_nodes;
    a.min_nodes = min_nodes.value_or(0);
    if (a.min_nodes > a.max_nodes) {
      ctx.Error(Child(as, "minNodes"), p + ".minNodes",
                fmt::format("minNodes {} is more than maxNodes {}", a.min_nodes, a.max_nodes));
      return;
    }
    if (auto v = GetDuration(ctx, as, "provisioningSeconds", p + ".provisioningSeconds",
                             Bound::kNonNegative))
      a.provisioning_seconds = *v;
    if (auto v = GetDuration(ctx, as, "scaleDownAfterSeconds", p + ".scaleDownAfterSeconds",
                             Bound::kNonNegative))
      a.scale_down_after_seconds = *v;
    for (auto it = as.begin(); it != as.end(); ++it) {
      const YAML::Node key = it->first;
      const std::string k = key.IsScalar() ? key.Scalar() : "";
      if (k != "minNodes" && k != "maxNodes" && k != "provisioningSeconds" &&
          k != "scaleDownAfterSeconds")
        ctx.Error(key, p + "." + k,
                  "unknown field; allowed: minNodes, maxNodes, provisioningSeconds, "
                  "scaleDownAfterSeconds");
    }
    if (ctx.failed()) return;
    pool.autoscaling = a;
  }
  YAML::Node spot = Child(spec, "spot");
  if (ExpectMap(ctx, spot, "spec.spot")) {
    NodePoolSpot s;
    const std::string p = "spec.spot";
    if (auto v = GetNumber(ctx, spot, "discount", p + ".discount", 0, 1, true, "a fraction"))
      s.discount = *v;
    if (auto v = GetNumber(ctx, spot, "interruptionsPerNodeHour", p + ".interruptionsPerNodeHour",
                           0, kMaxInterruptionsPerNodeHour, false, "a rate per node-hour"))
      s.interruptions_per_node_hour = *v;
    if (auto v = GetDuration(ctx, spot, "noticeSeconds", p + ".noticeSeconds", Bound::kNonNegative))
      s.notice_seconds = *v;
    for (auto it = spot.begin(); it != spot.end(); ++it) {
      const YAML::Node key = it->first;
      const std::string k = key.IsScalar() ? key.Scalar() : "";
      if (k != "discount" && k != "interruptionsPerNodeHour" && k != "noticeSeconds")
        ctx.Error(key, p + "." + k,
                  "unknown field; allowed: discount, interruptionsPerNodeHour, noticeSeconds");
    }
    if (ctx.failed()) return;
    pool.spot = s;
  }
}

void ReadAutoscalerConfig(DocContext& ctx, const YAML::Node& spec, AutoscalerConfig& out) {
  YAML::Node as = Child(spec, "autoscaler");
  if (!ExpectMap(ctx, as, "spec.autoscaler")) return;
  if (YAML::Node m = Child(as, "scaleUp"); !IsNullish(m)) {
    if (auto v = ParseEnum<ScaleUpMode>(
            ctx, m, "spec.autoscaler.scaleUp",
            {{"gang-aware", ScaleUpMode::kGangAware}, {"pod-by-pod", ScaleUpMode::kPodByPod}}))
      out.scale_up = *v;
  }
  if (auto v =
          GetInt(ctx, as, "seed", "spec.autoscaler.seed", 0, std::numeric_limits<int64_t>::max()))
    out.seed = static_cast<uint64_t>(*v);
  if (auto v =
          GetInt(ctx, as, "maxWorkloadsPerPlan", "spec.autoscaler.maxWorkloadsPerPlan", 1, 100'000))
    out.max_workloads_per_plan = static_cast<int32_t>(*v);
}

}  // namespace tessera::config_internal
