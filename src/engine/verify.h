// Verify: recomputes every invariant of the engine (node capacity, GPU device ownership and
// MIG slices, quota usage and limits, gang completeness, required topology and anti-affinity)
// from the workloads' placements alone, and returns the first that does not hold.
//
// Thread-safety: none; reads one engine.
#pragma once

#include "absl/status/status.h"

namespace tessera {

struct Engine;

absl::Status VerifyEngine(const Engine& e);

}  // namespace tessera
