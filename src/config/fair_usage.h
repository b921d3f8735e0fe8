// Usage-based admission fair sharing as the manifest loader reads it (Kueue's field names;
// docs/time.md): SchedulerConfig spec.admissionFairSharing, a ClusterQueue's
// spec.admissionScope.admissionMode and a LocalQueue's spec.fairSharing.weight.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

// spec.admissionFairSharing: {usageHalfLifeTime, usageSamplingInterval, resourceWeights}.
// Present: enabled. usageHalfLifeTime 0 is accepted with a warning that it means "no memory"
// (Kueue silently resets the usage to 0 and with it the feature).
void ReadAdmissionFairSharing(DocContext& ctx, const YAML::Node& spec,
                              AdmissionFairSharingConfig& out);
// spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing (or Kueue's older spelling
// UsageBasedFairSharing) or NoAdmissionFairSharing.
void ReadAdmissionScope(DocContext& ctx, const YAML::Node& spec, ClusterQueue& cq);

}  // namespace tessera::config_internal
