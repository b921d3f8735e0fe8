// Consumable capacity in manifests (KEP-5075, resource.k8s.io/v1): a device's capacities with
// their requestPolicy, a request's capacity.requests, and an allocation result's
// consumedCapacity. Refuses what the API server refuses, naming the field (docs/dra.md).
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "config/kinds.h"
#include "dra/model.h"

namespace tessera::config_internal {

// A device's `capacity` map at `path`: into out.device.capacity (qualified with `driver`, for
// CEL) and out.capacities (as written, with requestPolicy). Reads allowMultipleAllocations of
// `d` first: a requestPolicy needs it.
void ReadDeviceCapacity(DocContext& ctx, const YAML::Node& d, const std::string& path,
                        const std::string& driver, dra::NodeDevice& out);

// `capacity: {requests: {name: quantity}}` of a request at `path`, in thousandths.
void ReadCapacityRequests(DocContext& ctx, const YAML::Node& request, const std::string& path,
                          std::map<std::string, int64_t>& out);

// `consumedCapacity: {name: quantity}` of an allocation result at `path`, in thousandths.
void ReadConsumedCapacity(DocContext& ctx, const YAML::Node& result, const std::string& path,
                          std::map<std::string, int64_t>& out);

}  // namespace tessera::config_internal
