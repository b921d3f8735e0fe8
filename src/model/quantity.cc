#include "model/quantity.h"

#include <cctype>
#include <limits>
#include <string>

#include "fmt/format.h"

namespace tessera {
namespace {

// Multiplies two non-negative values; false when the product leaves the int64 range by far
// (the caller still checks the final value).
bool MulOk(__int128 a, __int128 b, __int128& out) {
  constexpr __int128 kLimit = static_cast<__int128>(1) << 100;
  if (a != 0 && b > kLimit / a) return false;
  out = a * b;
  return true;
}

}  // namespace

absl::StatusOr<int64_t> ParseQuantity(std::string_view text, bool milli) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("invalid quantity \"{}\": {}", text, why));
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return bad("empty");
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // Digits, optional fraction.
  __int128 mantissa = 0;  // all digits, integer and fraction, as one number
  int frac_digits = 0;
  size_t i = 0;
  bool any_digit = false, seen_dot = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_dot) return bad("two decimal points");
      seen_dot = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    any_digit = true;
    if (mantissa > static_cast<__int128>(1) << 80) return bad("too large");
    mantissa = mantissa * 10 + (c - '0');
    if (seen_dot) ++frac_digits;
  }
  if (!any_digit) return bad("no digits");
  std::string_view suffix = s.substr(i);
  // Scale as numerator/denominator applied to the mantissa.
  __int128 num = 1, den = 1;
  for (int k = 0; k < frac_digits; ++k) den *= 10;
  auto pow_int = [](__int128 base, int e) {
    __int128 r = 1;
    for (int k = 0; k < e; ++k) r *= base;
    return r;
  };
  if (suffix.empty()) {
  } else if (suffix == "m") {
    den *= 1000;
  } else if (suffix == "u") {
    den *= 1000000;
  } else if (suffix == "n") {
    den *= 1000000000;
  } else if (suffix == "k") {
    num = 1000;
  } else if (suffix == "M") {
    num = pow_int(1000, 2);
  } else if (suffix == "G") {
    num = pow_int(1000, 3);
  } else if (suffix == "T") {
    num = pow_int(1000, 4);
  } else if (suffix == "P") {
    num = pow_int(1000, 5);
  } else if (suffix == "E") {
    num = pow_int(1000, 6);
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBin = "KMGTPE";
    auto p = kBin.find(suffix[0]);
    if (p == std::string_view::npos) return bad(fmt::format("unknown suffix \"{}\"", suffix));
    num = pow_int(1024, static_cast<int>(p) + 1);
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view exp = suffix.substr(1);
    bool eneg = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      eneg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 2) return bad("bad exponent");
    int e = 0;
    for (char c : exp) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad("bad exponent");
      e = e * 10 + (c - '0');
    }
    if (e > 18) return bad("too large");
    if (eneg)
      den *= pow_int(10, e);
    else
      num = pow_int(10, e);
  } else {
    return bad(fmt::format("unknown suffix \"{}\"", suffix));
  }
  if (milli) num *= 1000;
  __int128 scaled_num;
  if (!MulOk(mantissa, num, scaled_num)) return bad("too large");
  __int128 value = (scaled_num + den - 1) / den;  // round up, as Kubernetes does
  if (value > std::numeric_limits<int64_t>::max()) return bad("too large");
  auto v = static_cast<int64_t>(value);
  return negative ? -v : v;
}

bool IsExtendedResourceName(std::string_view name) {
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view domain = name.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io");
}

absl::Status CheckWholeQuantity(std::string_view text) {
  absl::StatusOr<int64_t> milli = ParseQuantity(text, /*milli=*/true);
  // Not a quantity, or beyond 9.2e15 units in thousandths: no fraction a caller could lose.
  if (!milli.ok() || *milli % 1000 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format(
      "{} is not a whole number; extended resources are counted in whole units (Kubernetes "
      "refuses fractions of them)",
      text));
}

}  // namespace tessera
