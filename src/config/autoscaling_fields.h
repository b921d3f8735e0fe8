// The fields of elastic clusters (docs/autoscaling.md) as the manifest loader reads them: a
// NodePool's spec.autoscaling, spec.pricePerNodeHour and spec.spot, and SchedulerConfig's
// spec.autoscaler. docs/manifests.md lists every field with its range.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

// Reads spec.autoscaling, spec.pricePerNodeHour and spec.spot of a NodePool's `spec` into
// `pool`; errors name the field. Leaves the context failed on a bad value.
void ReadNodePoolElasticity(DocContext& ctx, const YAML::Node& spec, NodePoolSpec& pool);

// SchedulerConfig spec.autoscaler: {scaleUp: gang-aware | pod-by-pod, seed}.
void ReadAutoscalerConfig(DocContext& ctx, const YAML::Node& spec, AutoscalerConfig& out);

}  // namespace tessera::config_internal
