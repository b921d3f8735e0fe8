// Does a skipped object look like a workload? An object of a kind Tessera does not read (an
// unknown API group, or a well-known kind the loader skips) is harmless when it is a ConfigMap or
// a Service, but a JobSet, a RayCluster or a StatefulSet makes pods that Tessera will never see.
// The loader asks FindPodTemplate and, when it finds one, says so with a warning instead of the
// quiet notice (docs/manifests.md, "Diagnostics").
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "yaml-cpp/yaml.h"

namespace tessera::config_internal {

// How deep (maps and lists) and how many nodes the search looks at: hostile input (aliases that
// fan out, thousands of keys) costs at most this much, and the recursion is bounded.
inline constexpr int kPodTemplateProbeDepth = 12;
inline constexpr int kPodTemplateProbeVisits = 20'000;

// The field path of the first pod template inside `object` in document order, or nullopt: a map
// key "template" whose value has a "spec" with a "containers" list (the path of the template,
// e.g. "spec.replicatedJobs[0].template.spec.template"), or a map key "spec" whose value has a
// "containers" list (the path of that spec). The root's metadata is not searched. Never throws.
std::optional<std::string> FindPodTemplate(const YAML::Node& object);

// FindPodTemplate for an object the loader skips, except for kinds that hold a template but make
// no pods of their own (core v1 PodTemplate, apps/v1 ControllerRevision).
std::optional<std::string> SkippedObjectPodTemplate(std::string_view group, std::string_view kind,
                                                    const YAML::Node& object);

// metadata.name of `object` when it is a string, else "": for messages about skipped objects,
// whose fields are not checked.
std::string LenientObjectName(const YAML::Node& object);

}  // namespace tessera::config_internal
