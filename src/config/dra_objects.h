// Dynamic Resource Allocation in manifests (docs/dra.md): the readers of resource.k8s.io/v1's
// DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate and of Kueue's
// Configuration (its deviceClassMappings), a pod's spec.resourceClaims, and what is resolved
// once every document is read.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <string>
#include <vector>

#include "config/kinds.h"

namespace tessera::config_internal {

void ReadDeviceClass(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadResourceSlice(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadResourceClaim(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadResourceClaimTemplate(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadKueueConfiguration(DocContext& ctx, const ObjectMeta& meta, Staged& out);

// spec.resourceClaims of a pod spec at `path` into the pod set (resolved by ResolveDra).
void ReadPodClaims(DocContext& ctx, const YAML::Node& spec, const std::string& path,
                   PodSet& out);

// Moves one document's DRA objects into the model's. Two slices of one node add their devices.
void MergeDra(dra::DraModel& into, dra::DraModel& from);

// Once every document is read: each pod claim finds its ResourceClaim or template in the
// workload's namespace (a warning when it does not: the pod cannot start); a class with
// Kueue's deviceClassMappings is counted as its resource, per allocated device, in the pods'
// requests (for quota) and in each node's allocatable (the devices of the node it selects); a
// slice of a node that does not exist gets a warning; selectors that do not compile get errors.
void ResolveDra(Model& model, std::vector<Diagnostic>& out);

}  // namespace tessera::config_internal
