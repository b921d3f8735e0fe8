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
  if (s < 3600) return fmt::format("{}m", (s + 59) / 60);
  if (s < 86400) {
    const int64_t m = (s + 59) / 60;
    return m % 60 ? fmt::format("{}h{}m", m / 60, m % 60) : fmt::format("{}h", m / 60);
  }
  const int64_t h = (s + 3599) / 3600;
  return h % 24 ? fmt::format("{}d{}h", h / 24, h % 24) : fmt::format("{}d", h / 24);
}

}  // namespace tessera
