// Runtime estimates for trace jobs (`tessera sim replay --estimates`): none (the engine learns
// them), the job's exact duration, the duration times a fixed factor, or times a factor drawn
// log-uniformly from a range, per job, reproducibly from a seed. The engine uses
// Workload::runtime_estimate for reservations and backfill (docs/time.md).
//
// Syntax (docs/trace-replay.md): `none`, `exact`, `x<F>` (e.g. `x0.5`, `x3`), `random:<LO>-<HI>`
// (e.g. `random:0.5-3`), factors from 0.001 to 1000.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::trace {

struct EstimateOptions {
  enum class Kind { kNone, kExact, kFactor, kRandom };
  Kind kind = Kind::kNone;
  double factor = 1;      // kFactor
  double lo = 1, hi = 1;  // kRandom: factor log-uniform in [lo, hi]
  uint64_t seed = 1;      // kRandom
};

inline constexpr double kMinEstimateFactor = 0.001;
inline constexpr double kMaxEstimateFactor = 1000;

// Parses the flag's text (the seed is not part of it). The error says what was expected.
absl::StatusOr<EstimateOptions> ParseEstimates(std::string_view text);

// The text ParseEstimates reads back, e.g. "x0.5", "random:0.5-3".
std::string FormatEstimates(const EstimateOptions& o);

// The factor of job `index` (its row in the trace): 1 for kExact, `factor` for kFactor, for
// kRandom lo * (hi / lo)^u with u uniform in [0, 1) from (seed, index) alone, so that the draw
// of a job does not depend on the order or number of the others.
double EstimateFactor(const EstimateOptions& o, int64_t index);

// The estimate of a job of `duration` seconds (< 0: none, the job runs until the end): none for
// kNone or without a duration, else duration x EstimateFactor.
std::optional<double> RuntimeEstimate(const EstimateOptions& o, double duration, int64_t index);

}  // namespace tessera::trace
