// The range check of every number flag (docs/robustness.md). CLI11's own CLI::Range compares
// with < and >, which NaN passes (`sim --until nan` was accepted and then ignored); this one wants
// a finite number that is the whole text, within [lo, hi], or exactly 0 where 0 is allowed, and
// says the range when it is not.
//
// Header-only: the command modules (trace, k8s) and cli/main.cc share it without a library.
// Thread-safety: the validator is a pure function.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>

#include "CLI/CLI.hpp"
#include "config/duration.h"
#include "fmt/format.h"

namespace tessera::cli {

// A number flag within its range: finite, lo <= v <= hi, or exactly 0 where `zero_too`. The
// message says the range ("\"nan\" is out of range: RANGE").
inline CLI::Validator Range(double lo, double hi, bool zero_too, const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end != nullptr && *end == '\0';
        if (number && std::isfinite(v) && ((v >= lo && v <= hi) || (zero_too && v == 0))) return "";
        return fmt::format("\"{}\" is out of range: {}", text, range);
      },
      range);
}

// A duration flag above 0 (config/duration.h: "50000h", "1h30m", "90s", or seconds, at most 10
// years): a transform, so the option reads the text as its seconds. The message says what is
// wrong ("\"-3h\" is not a duration above 0: ...").
inline CLI::Validator PositiveDuration() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto d = ParseDuration(text);
        if (!d.ok() || *d <= 0)
          return fmt::format("\"{}\" is not a duration above 0 (e.g. 50000h, 1h30m, 90s): {}", text,
                             d.ok() ? "it is 0" : std::string(d.status().message()));
        text = fmt::format("{}", *d);
        return "";
      },
      "DURATION");
}

}  // namespace tessera::cli
