#include "trace/estimates.h"

#include <cmath>
#include <cstdlib>

#include "fmt/format.h"

namespace tessera::trace {
namespace {

// A factor: a whole decimal number within [kMinEstimateFactor, kMaxEstimateFactor].
std::optional<double> ParseFactor(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  // strtod takes hex, "inf", "nan" and leading blanks: only digits and one '.' are allowed.
  int dots = 0;
  for (char c : text) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (dots > 1 || text == ".") return std::nullopt;
  const std::string s(text);
  const double v = std::strtod(s.c_str(), nullptr);
  if (!(v >= kMinEstimateFactor && v <= kMaxEstimateFactor)) return std::nullopt;
  return v;
}

// splitmix64's finaliser: a well-mixed 64-bit hash of a 64-bit value.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

absl::StatusOr<EstimateOptions> ParseEstimates(std::string_view text) {
  EstimateOptions o;
  const auto bad = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "\"{}\" is not an estimate mode: none, exact, x<F> (e.g. x0.5) or random:<LO>-<HI> "
        "(e.g. random:0.5-3), factors from {} to {}",
        text, kMinEstimateFactor, kMaxEstimateFactor));
  };
  if (text == "none") return o;
  if (text == "exact") {
    o.kind = EstimateOptions::Kind::kExact;
    return o;
  }
  if (text.starts_with("x")) {
    auto f = ParseFactor(text.substr(1));
    if (!f) return bad();
    o.kind = EstimateOptions::Kind::kFactor;
    o.factor = *f;
    return o;
  }
  constexpr std::string_view kRandom = "random:";
  if (text.starts_with(kRandom)) {
    const std::string_view range = text.substr(kRandom.size());
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos) return bad();
    auto lo = ParseFactor(range.substr(0, dash));
    auto hi = ParseFactor(range.substr(dash + 1));
    if (!lo || !hi) return bad();
    if (*lo > *hi) {
      return absl::InvalidArgumentError(
          fmt::format("\"{}\": the low factor {} is above the high one {}", text, *lo, *hi));
    }
    o.kind = EstimateOptions::Kind::kRandom;
    o.lo = *lo;
    o.hi = *hi;
    return o;
  }
  return bad();
}

std::string FormatEstimates(const EstimateOptions& o) {
  switch (o.kind) {
    case EstimateOptions::Kind::kNone:
      return "none";
    case EstimateOptions::Kind::kExact:
      return "exact";
    case EstimateOptions::Kind::kFactor:
      return fmt::format("x{}", o.factor);
    case EstimateOptions::Kind::kRandom:
      return fmt::format("random:{}-{}", o.lo, o.hi);
  }
  return "none";
}

double EstimateFactor(const EstimateOptions& o, int64_t index) {
  switch (o.kind) {
    case EstimateOptions::Kind::kNone:
    case EstimateOptions::Kind::kExact:
      return 1;
    case EstimateOptions::Kind::kFactor:
      return o.factor;
    case EstimateOptions::Kind::kRandom: {
      // A stream of its own: the synthetic generator uses the same --seed with splitmix64's
      // sequence, this hashes (seed, index) with a different constant.
      const uint64_t h = Mix(Mix(o.seed ^ 0x5bd1e9955bd1e995ULL) +
                             static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL);
      const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
      return o.lo * std::exp(u * std::log(o.hi / o.lo));
    }
  }
  return 1;
}

std::optional<double> RuntimeEstimate(const EstimateOptions& o, double duration, int64_t index) {
  if (o.kind == EstimateOptions::Kind::kNone || duration < 0) return std::nullopt;
  return duration * EstimateFactor(o, index);
}

}  // namespace tessera::trace
