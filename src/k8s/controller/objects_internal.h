// Readers shared by the object parsers of objects.cc and group_objects.cc (objects.h).
// Internal to src/k8s/controller/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "model/resources.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s::objects_internal {

// An integer count field (minMember, parallelism) within [0, max]; absent or not an integer: ok
// (the callers default it).
absl::Status CheckCount(const nlohmann::json& v, std::string_view path, int64_t max);
// A resource list (requests, allocatable, minResources) into `out`; a name that is not a
// resource or a quantity that cannot be one is an error naming `path`.NAME. A name the
// ResourceRegistry has no room for (model/resources.h, kMaxResources) is an error too, unless
// `untracked` is given: then `path`.NAME goes there and the name is left out of `out`.
absl::Status ReadResources(const nlohmann::json& list, const std::string& path, Resources& out,
                           std::vector<std::string>* untracked = nullptr);

}  // namespace tessera::k8s::objects_internal
