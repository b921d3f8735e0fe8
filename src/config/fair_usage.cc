#include "config/fair_usage.h"

#include <string>

#include "config/time_fields.h"

namespace tessera::config_internal {

void ReadAdmissionFairSharing(DocContext& ctx, const YAML::Node& spec,
                              AdmissionFairSharingConfig& out) {
  const std::string path = "spec.admissionFairSharing";
  YAML::Node afs = Child(spec, "admissionFairSharing");
  if (IsNullish(afs) || !ExpectMap(ctx, afs, path)) return;
  out.enabled = true;
  if (auto v = GetDuration(ctx, afs, "usageHalfLifeTime", path + ".usageHalfLifeTime",
                           Bound::kNonNegative)) {
    out.usage_half_life = *v;
    if (*v == 0)
      ctx.Warning(Child(afs, "usageHalfLifeTime"), path + ".usageHalfLifeTime",
                  "0 means no memory: LocalQueues are ordered by what they use now, not by "
                  "what they used before (Kueue resets the usage to 0 instead)");
  }
  if (auto v = GetDuration(ctx, afs, "usageSamplingInterval", path + ".usageSamplingInterval",
                           Bound::kPositive))
    out.sampling_interval = *v;
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
