// Restore: admits a not-yet-admitted workload at placements that already exist (see
// Scheduler::Restore for the contract).
//
// Thread-safety: none; part of one engine.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "engine/engine_state.h"

namespace tessera {

struct Engine;

[[nodiscard]] absl::Status RestoreWorkload(Engine& e, WorkloadId id, std::vector<PodPlacement> pods,
                                           double now);

}  // namespace tessera
