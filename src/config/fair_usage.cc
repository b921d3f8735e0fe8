#include "config/fair_usage.h"

#include <string>

#include "config/duration.h"

namespace tessera::config_internal {
namespace {

std::optional<double> Duration(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                               const std::string& path) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  if (!n.IsScalar()) {
    ctx.Error(n, path, std::string("expected a duration, got ") + TypeName(n));
    return std::nullopt;
  }
  absl::StatusOr<double> d = ParseDuration(n.Scalar());
  if (!d.ok()) {
    ctx.Error(n, path, std::string(d.status().message()));
    return std::nullopt;
  }
  return *d;
}

}  // namespace

void ReadAdmissionFairSharing(DocContext& ctx, const YAML::Node& spec,
                              AdmissionFairSharingConfig& out) {
  const std::string path = "spec.admissionFairSharing";
  YAML::Node afs = Child(spec, "admissionFairSharing");
  if (IsNullish(afs) || !ExpectMap(ctx, afs, path)) return;
  out.enabled = true;
  if (auto v = Duration(ctx, afs, "usageHalfLifeTime", path + ".usageHalfLifeTime")) {
    out.usage_half_life = *v;
    if (*v == 0)
      ctx.Warning(Child(afs, "usageHalfLifeTime"), path + ".usageHalfLifeTime",
                  "0 means no memory: LocalQueues are ordered by what they use now, not by "
                  "what they used before (Kueue resets the usage to 0 instead)");
  }
  if (auto v = Duration(ctx, afs, "usageSamplingInterval", path + ".usageSamplingInterval")) {
    if (*v > 0) {
      out.sampling_interval = *v;
    } else {
      ctx.Error(Child(afs, "usageSamplingInterval"), path + ".usageSamplingInterval",
                "must be greater than 0");
    }
  }
  ForEachMap(ctx, Child(afs, "resourceWeights"), path + ".resourceWeights",
             [&](const std::string& name, const YAML::Node& value, const std::string& item) {
               std::optional<double> w;
               if (value.IsScalar()) w = ParseNonNegativeNumber(value.Scalar());
               if (!w || *w > 1e6) {
                 ctx.Error(value, item, "expected a weight from 0 to 1000000");
                 return true;
               }
               if (auto id = InternResource(ctx, value, item, name))
                 out.resource_weights.emplace_back(*id, *w);
               return true;
             });
}

void ReadAdmissionScope(DocContext& ctx, const YAML::Node& spec, ClusterQueue& cq) {
  YAML::Node scope = Child(spec, "admissionScope");
  if (IsNullish(scope) || !ExpectMap(ctx, scope, "spec.admissionScope")) return;
  YAML::Node mode = Child(scope, "admissionMode");
  if (IsNullish(mode)) return;
  const std::string text = mode.IsScalar() ? mode.Scalar() : "";
  if (text == "UsageBasedAdmissionFairSharing" || text == "UsageBasedFairSharing") {
    cq.usage_based_admission = true;
  } else if (text != "NoAdmissionFairSharing") {
    ctx.Error(
        mode, "spec.admissionScope.admissionMode",
        "expected UsageBasedAdmissionFairSharing or NoAdmissionFairSharing, got \"" + text + "\"");
  }
}

}  // namespace tessera::config_internal
