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

// Kubernetes' extended resources: names in a domain other than kubernetes.io
// ("nvidia.com/gpu", "tessera.dev/gpu-memory"), as opposed to cpu, memory, pods, hugepages-*.
bool IsExtendedResourceName(std::string_view name);
// Extended resources are counted in whole units: the API server refuses "0.5" or "0.0001" for
// them (a quantity whose MilliValue() is not a multiple of 1000), where ParseQuantity would
// round up to 1. OK for a whole number (and for text ParseQuantity refuses anyway).
[[nodiscard]] absl::Status CheckWholeQuantity(std::string_view text);

}  // namespace tessera
