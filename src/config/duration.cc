// Durations: plain seconds or Go's syntax; see duration.h.
#include "config/duration.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tessera {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

absl::Status NotADuration(std::string_view text, const std::string& why = "") {
  std::string msg =
      "expected a duration: seconds (90, 1.5) or Go's form (90s, 30m, 1h30m, 1.5h, 500ms), got \"" +
      std::string(text) + "\"";
  if (!why.empty()) msg += ": " + why;
  return absl::InvalidArgumentError(msg);
}

// Digits with at most one '.', at least one digit; from `i`, which ends past them. False when
// there is no digit.
bool ScanDecimal(std::string_view s, size_t& i) {
  bool digit = false;
  while (i < s.size() && IsDigit(s[i])) ++i, digit = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, digit = true;
  }
  return digit;
}

// A plain unsigned decimal with an optional exponent: "90", "1.5", ".5", "2e3".
bool IsPlainNumber(std::string_view s) {
  size_t i = 0;
  if (!ScanDecimal(s, i)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t digits = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == digits) return false;
  }
  return i == s.size();
}

// strtod on text already checked to be a plain decimal (no inf, nan or hex can reach it).
double ToDouble(std::string_view s) {
  std::string copy(s);
  return std::strtod(copy.c_str(), nullptr);
}

// Seconds in `value` of `unit`, or a negative number for an unknown unit. Sub-second units
// divide by an exact power of ten, so that "500ms" is exactly 0.5.
double InUnit(double value, std::string_view unit) {
  if (unit == "h") return value * 3600;
  if (unit == "m") return value * 60;
  if (unit == "s") return value;
  if (unit == "ms") return value / 1e3;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return value / 1e6;
  if (unit == "ns") return value / 1e9;
  return -1;
}

// Go's "<number><unit>..." (no sign), as time.ParseDuration reads it.
absl::StatusOr<double> ParseGoForm(std::string_view s, std::string_view original) {
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    if (!ScanDecimal(s, i)) return NotADuration(original);
    const std::string_view number = s.substr(start, i - start);
    const size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && !IsDigit(s[i])) ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    if (unit.empty()) {
      return NotADuration(original,
                          "missing unit after " + std::string(number) + " (ns, us, ms, s, m, h)");
    }
    double seconds = InUnit(ToDouble(number), unit);
    if (seconds < 0) {
      return NotADuration(
          original, "unknown unit \"" + std::string(unit) + "\"; allowed: ns, us, ms, s, m, h");
    }
    total += seconds;
  }
  return total;
}

}  // namespace

absl::StatusOr<double> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return NotADuration(text);
  double seconds = 0;
  if (IsPlainNumber(s)) {
    seconds = ToDouble(s);
  } else {
    absl::StatusOr<double> go = ParseGoForm(s, text);
    if (!go.ok()) return go.status();
    seconds = *go;
  }
  if (negative && seconds != 0) {
    return absl::InvalidArgumentError("expected a non-negative duration, got \"" +
                                      std::string(text) + "\"");
  }
  if (!std::isfinite(seconds) || seconds > kMaxDurationSeconds) {
    return absl::InvalidArgumentError(
        "duration \"" + std::string(text) +
        "\" is longer than 10 years (315360000 seconds), the longest Tessera accepts");
  }
  return seconds;
}

}  // namespace tessera
