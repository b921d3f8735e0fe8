// Pending reasons: the parts a failed attempt leaves (ReasonPart, kept as numbers) formatted
// into the message a user reads, only when someone reads it.
//
// Thread-safety: none; reads one engine's state.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

std::string FormatReason(const EngineState& s, WorkloadId id);
std::string FormatQuotaPart(const EngineState& s, WorkloadId id, const ReasonPart& part);

struct Reservation;
// What would let pending workload `id` start, one sentence per part of its reason: the quota it
// lacks (how much more of which flavor its ClusterQueue would need free), the nodes' room it
// lacks, and, with its reservation (may be null), the running workloads that must end first.
std::vector<std::string> FitHints(const EngineState& s, WorkloadId id,
                                  const Reservation* reservation);

}  // namespace tessera
