// Durations in manifests: a plain number of seconds, or Go's time.ParseDuration syntax (what
// Kubernetes, Volcano and Kueue write: "90s", "30m", "1h30m", "1.5h", "500ms").
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace tessera {

// The longest duration Tessera accepts anywhere: 10 years of 365 days, in seconds. Longer values
// are almost certainly mistakes, and keeping every time finite and modest keeps the engine's
// arithmetic exact.
inline constexpr double kMaxDurationSeconds = 10.0 * 365 * 24 * 3600;

// Parses `text` into seconds. Accepted, with surrounding whitespace ignored:
//   - a plain non-negative decimal number of seconds: "90", "1.5", "2e3";
//   - Go's duration syntax: an optional sign, then one or more decimal numbers (".5" and "5."
//     too), each followed by a unit ns, us (or µs, μs), ms, s, m or h: "90s", "1h30m", "1.5h",
//     "500ms", "1h2m3s"; "0" alone is zero.
// Errors (InvalidArgument) carry a message that reads after a field path ("spec.x: <message>"):
// text that is neither form (naming an unknown unit), a negative duration, or one longer than
// kMaxDurationSeconds (including numbers too large to represent). Zero is accepted: callers
// that need a positive value check for it.
absl::StatusOr<double> ParseDuration(std::string_view text);

}  // namespace tessera
