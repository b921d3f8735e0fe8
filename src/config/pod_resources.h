// A pod spec's effective request as the loader reads it: containers, init containers (sidecars
// with restartPolicy: Always), pod-level spec.resources and spec.overhead, by Kubernetes' rule
// (model/pod_requests.h, the rule serve applies to live pods too).
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <string>

#include "config/yaml_util.h"
#include "model/resources.h"

namespace tessera::config_internal {

// The request of the pod spec `spec` (path `path`); errors go to `ctx` (a container that is not
// a map, a quantity that does not parse). REQUIRES: spec.containers is present.
Resources ReadPodRequests(DocContext& ctx, const YAML::Node& spec, const std::string& path);

}  // namespace tessera::config_internal
