// A readable span of time for reasons and events: "45s", "12m", "3h10m", "2d4h" (rounded up).
//
// Thread-safety: pure function.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "fmt/format.h"

namespace tessera {

inline std::string FormatSpan(double seconds) {
  if (!std::isfinite(seconds)) return "forever";
  const auto s = static_cast<int64_t>(std::ceil(std::clamp(seconds, 0.0, 1e15)));
  if (s < 60) return fmt::format("{}s", s);
  const int64_t m = (s + 59) / 60;
  if (m < 60) return fmt::format("{}m", m);
  if (m < 24 * 60)
    return m % 60 ? fmt::format("{}h{}m", m / 60, m % 60) : fmt::format("{}h", m / 60);
  const int64_t h = (m + 59) / 60;
  return h % 24 ? fmt::format("{}d{}h", h / 24, h % 24) : fmt::format("{}d", h / 24);
}

}  // namespace tessera
