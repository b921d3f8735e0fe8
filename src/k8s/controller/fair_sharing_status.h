// Admission fair sharing usage in a LocalQueue's status (docs/time.md, "Fair share over time"):
// Kueue's status.fairSharing.admissionFairSharingStatus, {consumedResources: {name: quantity},
// lastUpdate: RFC 3339}. serve writes it at each sample and reads it back when it starts, so the
// order of the teams survives a restart.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>

#include "engine/scheduler.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// status.fairSharing for `u` (the engine's clock); `wall_start` is the wall-clock time of the
// engine's 0. Null when `u` was never sampled.
nlohmann::json FairSharingStatus(const LocalQueueUsage& u,
                                 std::chrono::system_clock::time_point wall_start);
// The usage in a LocalQueue's `status` (the whole status object), in the engine's clock; nullopt
// when it has none or it cannot be read (a quantity or time that does not parse).
std::optional<LocalQueueUsage> ParseFairSharingStatus(
    const nlohmann::json& status, std::chrono::system_clock::time_point wall_start);

}  // namespace tessera::k8s
