// Parsing of Kubernetes resource quantities ("500m", "4", "80Gi", "1.5", "2e3", "4Ti").
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera {

// Parses `text` as a Kubernetes quantity and returns it scaled: in thousandths when `milli`
// (cpu), otherwise in whole units rounded up (memory bytes, GPUs, extended resources).
// Errors on an empty, malformed or overflowing quantity. Negative values parse (callers that
// forbid them say so with the field path).
[[nodiscard]] absl::StatusOr<int64_t> ParseQuantity(std::string_view text, bool milli);

}  // namespace tessera
