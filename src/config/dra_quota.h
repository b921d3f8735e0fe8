// Quota for DRA devices outside the manifest loader (tessera serve, docs/dra.md "Quota"): Kueue's
// deviceClassMappings count each allocated device of a mapped class as the mapped resource, in
// the pods' requests (claims made from templates) and in the nodes' allocatable.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"

namespace tessera {

// The deviceClassMappings of the Kueue Configuration in file `path` (config.kueue.x-k8s.io, as
// Kueue's manager reads it); an error names the file and what is wrong.
absl::StatusOr<std::vector<dra::DeviceClassMapping>> ReadDeviceClassMappings(
    const std::string& path);

// What each pod whose claim is `claim` is charged, by `dra.mappings`.
Resources DraClaimQuota(const dra::DraModel& dra, const dra::Claim& claim);

// Adds to each node of `model` the devices its slices publish that a mapped class selects, as
// allocatable of the mapped resource.
void CountDraNodeQuota(Model& model);

}  // namespace tessera
