// Pending reasons: the parts a failed attempt leaves (ReasonPart, kept as numbers) formatted
// into the message a user reads, only when someone reads it.
//
// Thread-safety: none; reads one engine's state.
#pragma once

#include <string>

#include "engine/engine_state.h"

namespace tessera {

std::string FormatReason(const EngineState& s, WorkloadId id);
std::string FormatQuotaPart(const EngineState& s, WorkloadId id, const ReasonPart& part);

}  // namespace tessera
