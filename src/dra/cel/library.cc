// dra/cel's library: Kubernetes' quantity() and semver() (k8s.io/apiserver/pkg/cel/library),
// the string functions of CEL's standard library, and the conversions. Regular expressions are
// RE2's, the engine cel-go's Go regexp package follows (docs/dra-cel.md says where they differ).
#include <cmath>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "dra/cel/internal.h"
#include "re2/re2.h"

namespace tessera::dra::cel {
namespace {

constexpr __int128 kBillion = 1000000000;
const __int128 kQuantityLimit = static_cast<__int128>(1) << 120;

bool AllOf(absl::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnumDash(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-'; }

absl::Status Bad(absl::string_view what, absl::string_view s) {
  return absl::InvalidArgumentError(absl::StrCat(what, " \"", s, "\""));
}

absl::StatusOr<uint64_t> Number(absl::string_view s, absl::string_view which) {
  if (!AllOf(s, IsDigit)) return Bad(absl::StrCat("Invalid character(s) found in ", which, " number"), s);
  if (s.size() > 1 && s[0] == '0') return Bad(absl::StrCat(which, " number must not contain leading zeroes"), s);
  uint64_t v = 0;
  if (!absl::SimpleAtoi(s, &v)) return Bad(absl::StrCat("invalid ", which, " number"), s);
  return v;
}

absl::StatusOr<std::string> Normalize(absl::string_view in) {
  if (absl::StartsWith(in, "v")) in.remove_prefix(1);
  std::vector<std::string> parts = absl::StrSplit(in, absl::MaxSplits('.', 2));
  for (auto& p : parts) {
    if (p.size() > 1) {
      size_t z = p.find_first_not_of('0');
      p = z == std::string::npos ? "" : p.substr(z);
      if (p.empty() || !IsDigit(p[0])) p = "0" + p;
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return absl::InvalidArgumentError("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.push_back("0");
  }
  return absl::StrJoin(parts, ".");
}

int ComparePre(const std::string& a, const std::string& b) {
  bool na = AllOf(a, IsDigit), nb = AllOf(b, IsDigit);
  if (na && nb) {
    uint64_t x = 0, y = 0;
    (void)absl::SimpleAtoi(a, &x);
    (void)absl::SimpleAtoi(b, &y);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (na != nb) return na ? -1 : 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

int Sign(__int128 x) { return x < 0 ? -1 : (x > 0 ? 1 : 0); }

const RE2* Regex(const std::string& pattern, std::string* error) {
  static std::mutex mu;
  static absl::flat_hash_map<std::string, std::unique_ptr<RE2>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    if (cache.size() > 1000) cache.clear();
    RE2::Options opts;
    opts.set_log_errors(false);
    it = cache.emplace(pattern, std::make_unique<RE2>(pattern, opts)).first;
  }
  if (!it->second->ok()) {
    *error = it->second->error();
    return nullptr;
  }
  return it->second.get();
}

int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

template <typename T>
const T* Get(const std::vector<Value>& args, size_t i) {
  return i < args.size() ? std::get_if<T>(&args[i].v) : nullptr;
}

// resource.Quantity.AsInt64.
bool AsInt64(const Quantity& q, int64_t& out) {
  if (!q.small || q.scale < 0) return false;
  out = q.value;
  for (int k = 0; k < q.scale; ++k) {
    if (__builtin_mul_overflow(out, int64_t{10}, &out)) return false;
  }
  return true;
}

// resource.Quantity.Add (int64 amounts while they fit, an inf.Dec otherwise).
Value AddQuantities(const Quantity& a, const Quantity& b) {
  __int128 sum = a.nanos + b.nanos;
  if (sum >= kQuantityLimit || sum <= -kQuantityLimit) return Err("quantity out of the range Tessera evaluates");
  if (a.small && b.small) {
    if (b.value == 0) return Value{Quantity{sum, true, a.value, a.scale, 9}};
    if (a.value == 0) return Value{Quantity{sum, true, b.value, b.scale, 9}};
    int64_t x = a.value, y = b.value;
    int32_t scale = std::min(a.scale, b.scale);
    bool ok = true;
    for (int k = scale; k < a.scale && ok; ++k) ok = !__builtin_mul_overflow(x, int64_t{10}, &x);
    for (int k = scale; k < b.scale && ok; ++k) ok = !__builtin_mul_overflow(y, int64_t{10}, &y);
    int64_t r = 0;
    if (ok && !__builtin_add_overflow(x, y, &r)) return Value{Quantity{sum, true, r, scale, 9}};
  }
  auto dec_scale = [](const Quantity& q) { return q.small ? -q.scale : q.dec_scale; };
  return Value{Quantity{sum, false, 0, 0, std::max(dec_scale(a), dec_scale(b))}};
}

Quantity Negate(Quantity q) {
  q.nanos = -q.nanos;
  q.value = -q.value;
  return q;
}

Value QuantityFunction(const std::string& f, const std::vector<Value>& args) {
  const Quantity& q = *Get<Quantity>(args, 0);
  const Quantity* o = Get<Quantity>(args, 1);
  const int64_t* i = Get<int64_t>(args, 1);
  int64_t as_int = 0;
  bool integral = AsInt64(q, as_int);
  if (f == "isGreaterThan" && o) return Value{q.nanos > o->nanos};
  if (f == "isLessThan" && o) return Value{q.nanos < o->nanos};
  if (f == "compareTo" && o) return Value{static_cast<int64_t>(Sign(q.nanos - o->nanos))};
  if (f == "sign") return Value{static_cast<int64_t>(Sign(q.nanos))};
  if (f == "isInteger") return Value{integral};
  if (f == "asInteger") {
    if (!integral) return Err("cannot convert value to integer");
    return Value{as_int};
  }
  if (f == "asApproximateFloat") {
    // float64(unscaled) * 10^exponent, as AsApproximateFloat64 computes it.
    double base = 0;
    int exponent = 0;
    if (q.small) {
      base = static_cast<double>(q.value);
      exponent = q.scale;
    } else {
      __int128 unscaled = q.nanos;
      for (int k = q.dec_scale; k < 9; ++k) unscaled /= 10;
      base = static_cast<double>(unscaled);
      exponent = -q.dec_scale;
    }
    if (exponent == 0) return Value{base};
    return Value{base * (exponent > 0 ? std::pow(10.0, exponent) : 1.0 / std::pow(10.0, -exponent))};
  }
  if ((f == "add" || f == "sub") && (o || i)) {
    Quantity other = o ? *o : Quantity{static_cast<__int128>(*i) * kBillion, true, *i, 0, 9};
    return AddQuantities(q, f == "add" ? other : Negate(other));
  }
  return Err(absl::StrCat("no such overload: ", f));
}

Value SemverFunction(const std::string& f, const std::vector<Value>& args) {
  const Semver& v = *Get<Semver>(args, 0);
  const Semver* o = Get<Semver>(args, 1);
  if (f == "isGreaterThan" && o) return Value{CompareSemver(v, *o) > 0};
  if (f == "isLessThan" && o) return Value{CompareSemver(v, *o) < 0};
  if (f == "compareTo" && o) return Value{static_cast<int64_t>(CompareSemver(v, *o))};
  if (f == "major") return Value{static_cast<int64_t>(v.major)};
  if (f == "minor") return Value{static_cast<int64_t>(v.minor)};
  if (f == "patch") return Value{static_cast<int64_t>(v.patch)};
  return Err(absl::StrCat("no such overload: ", f));
}

Value StringFunction(const std::string& f, const std::vector<Value>& args, uint64_t& cost) {
  const std::string& s = *Get<std::string>(args, 0);
  const std::string* a = Get<std::string>(args, 1);
  cost += s.size() / 10 + (a ? a->size() / 10 : 0);
  if (f == "startsWith" && a) return Value{absl::StartsWith(s, *a)};
  if (f == "endsWith" && a) return Value{absl::EndsWith(s, *a)};
  if (f == "contains" && a) return Value{absl::StrContains(s, *a)};
  if (f == "lowerAscii") return Value{absl::AsciiStrToLower(s)};
  if (f == "upperAscii") return Value{absl::AsciiStrToUpper(s)};
  if (f == "size") return Value{CodePoints(s)};
  if (f == "matches" && a) {
    std::string error;
    const RE2* re = Regex(*a, &error);
    if (re == nullptr) return Err(absl::StrCat("invalid regular expression: ", error));
    cost += s.size();
    return Value{RE2::PartialMatch(s, *re)};
  }
  if (f == "quantity") {
    auto q = ParseQuantity(s);
    if (!q.ok()) return Err(std::string(q.status().message()));
    return Value{*q};
  }
  if (f == "isQuantity") return Value{ParseQuantity(s).ok()};
  if (f == "semver" || f == "isSemver") {
    const bool* norm = Get<bool>(args, 1);
    auto v = ParseSemver(s, norm && *norm);
    if (f == "isSemver") return Value{v.ok()};
    if (!v.ok()) return Err(std::string(v.status().message()));
    return Value{*v};
  }
  return Err(absl::StrCat("no such overload: ", f));
}

// The syntax strconv.ParseInt (signed) or ParseUint accepts in base 10.
bool GoInteger(const std::string& s, bool sign) {
  absl::string_view d = s;
  if (sign && !d.empty() && (d[0] == '+' || d[0] == '-')) d.remove_prefix(1);
  return !d.empty() && AllOf(d, IsDigit);
}

Value Convert(const std::string& f, const Value& v) {
  if (f == "dyn") return v;
  if (f == "int") {
    if (std::holds_alternative<int64_t>(v.v)) return v;
    if (auto* u = std::get_if<uint64_t>(&v.v)) {
      if (*u > static_cast<uint64_t>(INT64_MAX)) return Err("range error converting to int");
      return Value{static_cast<int64_t>(*u)};
    }
    if (auto* d = std::get_if<double>(&v.v)) {
      if (!(*d > -9223372036854775808.0 && *d < 9223372036854775807.0)) return Err("range error converting to int");
      return Value{static_cast<int64_t>(*d)};
    }
    if (auto* s = std::get_if<std::string>(&v.v)) {
      int64_t x = 0;
      if (!GoInteger(*s, true) || !absl::SimpleAtoi(*s, &x)) {
        return Err(absl::StrCat("cannot convert \"", *s, "\" to int"));
      }
      return Value{x};
    }
  }
  if (f == "uint") {
    if (std::holds_alternative<uint64_t>(v.v)) return v;
    if (auto* i = std::get_if<int64_t>(&v.v)) {
      if (*i < 0) return Err("range error converting to uint");
      return Value{static_cast<uint64_t>(*i)};
    }
    if (auto* d = std::get_if<double>(&v.v)) {
      if (!(*d > -1.0 && *d < 18446744073709551616.0)) return Err("range error converting to uint");
      return Value{static_cast<uint64_t>(*d)};
    }
    if (auto* s = std::get_if<std::string>(&v.v)) {
      uint64_t x = 0;
      if (!GoInteger(*s, false) || !absl::SimpleAtoi(*s, &x)) {
        return Err(absl::StrCat("cannot convert \"", *s, "\" to uint"));
      }
      return Value{x};
    }
  }
  if (f == "double") {
    if (std::holds_alternative<double>(v.v)) return v;
    if (auto* i = std::get_if<int64_t>(&v.v)) return Value{static_cast<double>(*i)};
    if (auto* u = std::get_if<uint64_t>(&v.v)) return Value{static_cast<double>(*u)};
    if (auto* s = std::get_if<std::string>(&v.v)) {
      // strconv.ParseFloat: a decimal number, or inf/infinity/nan in any case.
      char* end = nullptr;
      double x = s->empty() || absl::ascii_isspace(s->front()) ? 0 : std::strtod(s->c_str(), &end);
      bool hex = absl::StrContains(*s, "x") || absl::StrContains(*s, "X");
      if (end == nullptr || *end != '\0' || hex) return Err(absl::StrCat("cannot convert \"", *s, "\" to double"));
      return Value{x};
    }
  }
  if (f == "string") {
    if (std::holds_alternative<std::string>(v.v)) return v;
    if (auto* i = std::get_if<int64_t>(&v.v)) return Value{absl::StrCat(*i)};
    if (auto* u = std::get_if<uint64_t>(&v.v)) return Value{absl::StrCat(*u)};
    if (auto* b = std::get_if<bool>(&v.v)) return Value{std::string(*b ? "true" : "false")};
  }
  return Err(absl::StrCat("no such overload: ", f));
}

}  // namespace

absl::StatusOr<Quantity> ParseQuantity(absl::string_view s) {
  // k8s.io/apimachinery/pkg/api/resource ParseQuantity, step by step.
  auto bad = [] {
    return absl::InvalidArgumentError(
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  };
  auto range = [] { return absl::OutOfRangeError("quantity out of the range Tessera evaluates"); };
  if (s.empty()) return bad();
  size_t pos = 0, end = s.size();
  bool positive = true;
  if (s[0] == '+' || s[0] == '-') positive = s[pos++] != '-';
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) return Quantity{0, true, 0, 0, 9};
  size_t n0 = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  std::string num(s.substr(n0, pos - n0));
  if (num.empty()) num.assign(1, '0');  // (not = "0": a false -Wrestrict at -O3, GCC 12)
  std::string denom;
  if (pos < end && s[pos] == '.') {
    size_t d0 = ++pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    denom = std::string(s.substr(d0, pos - d0));
  }
  size_t suffix_start = pos;
  while (pos < end && absl::string_view("eEinumkKMGTP").find(s[pos]) != absl::string_view::npos) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos < end) return bad();
  absl::string_view suffix = s.substr(suffix_start);
  // The suffix: base 10 or 2, an exponent, and whether it is binary.
  int base = 10, exponent = 0;
  bool binary = false, known = false;
  static const std::pair<absl::string_view, int> kDecimal[] = {
      {"", 0}, {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::pair<absl::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (auto [n, e] : kDecimal) {
    if (suffix == n) known = true, exponent = e;
  }
  for (auto [n, e] : kBinary) {
    if (suffix == n) known = true, exponent = e, base = 2, binary = true;
  }
  if (!known && suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    int64_t e = 0;
    absl::string_view digits = suffix.substr(1);
    if (!absl::SimpleAtoi(digits, &e) || absl::ascii_isspace(digits.front()) ||
        absl::ascii_isspace(digits.back())) {
      return absl::InvalidArgumentError("unable to parse quantity's suffix");
    }
    if (e > 1000 || e < -1000) return range();
    exponent = static_cast<int>(e);
    known = true;
  }
  if (!known) return absl::InvalidArgumentError("unable to parse quantity's suffix");
  // The fast path: an int64 times a power of ten.
  int precision = 0, scale = 0;
  int64_t mantissa = 1;
  if (!binary) {
    scale = exponent;
    precision = 18 - static_cast<int>(num.size() + denom.size());
  } else if (exponent >= 0 && denom.empty()) {
    mantissa = int64_t{1} << exponent;
    precision = 15 - static_cast<int>(num.size()) - static_cast<int>(static_cast<float>(exponent) * 3 / 10) - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0) {
    scale -= static_cast<int>(denom.size());
    int64_t value = 0, result = 0;
    if (scale >= -9 && absl::SimpleAtoi(num + denom, &value) &&
        !__builtin_mul_overflow(value, mantissa, &result)) {
      if (!positive) result = -result;
      __int128 nanos = result;
      for (int k = 0; k < scale + 9; ++k) {
        if (nanos > kQuantityLimit / 10 || nanos < -kQuantityLimit / 10) return range();
        nanos *= 10;
      }
      return Quantity{nanos, true, result, scale, 9};
    }
  }
  // The slow path: an exact decimal, rounded up to nano precision; a binary one capped at
  // 2^63-1.
  __int128 nanos = 0;
  for (char c : num + denom) {
    if (nanos > kQuantityLimit / 10) return range();
    nanos = nanos * 10 + (c - '0');
  }
  int shift = 9 - static_cast<int>(denom.size()) + (base == 10 ? exponent : 0);
  if (base == 2) {
    for (int k = 0; k < exponent; ++k) {
      if (nanos > kQuantityLimit / 2) return range();
      nanos *= 2;
    }
  }
  for (; shift > 0; --shift) {
    if (nanos > kQuantityLimit / 10) return range();
    nanos *= 10;
  }
  bool remainder = false;
  for (; shift < 0 && nanos != 0; ++shift) {
    remainder |= nanos % 10 != 0;
    nanos /= 10;
  }
  if (remainder) nanos += 1;
  const __int128 max_allowed = static_cast<__int128>(INT64_MAX) * kBillion;
  if (binary && nanos > max_allowed) nanos = max_allowed;
  return Quantity{positive ? nanos : -nanos, false, 0, 0, 9};
}

absl::StatusOr<Semver> ParseSemver(absl::string_view in, bool normalize) {
  std::string normalized;
  if (normalize) {
    auto n = Normalize(in);
    if (!n.ok()) return n.status();
    normalized = *n;
    in = normalized;
  }
  if (in.empty()) return absl::InvalidArgumentError("Version string empty");
  std::vector<absl::string_view> parts = absl::StrSplit(in, absl::MaxSplits('.', 2));
  if (parts.size() != 3) return absl::InvalidArgumentError("No Major.Minor.Patch elements found");
  Semver v;
  auto major = Number(parts[0], "Major");
  if (!major.ok()) return major.status();
  auto minor = Number(parts[1], "Minor");
  if (!minor.ok()) return minor.status();
  absl::string_view rest = parts[2];
  size_t pre = rest.find('-'), build = rest.find('+');
  size_t end = std::min(pre, build);
  auto patch = Number(rest.substr(0, std::min(end, rest.size())), "Patch");
  if (!patch.ok()) return patch.status();
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  if (pre != absl::string_view::npos && (build == absl::string_view::npos || pre < build)) {
    absl::string_view p = rest.substr(pre + 1, build == absl::string_view::npos ? absl::string_view::npos : build - pre - 1);
    for (absl::string_view id : absl::StrSplit(p, '.')) {
      if (id.empty()) return absl::InvalidArgumentError("Prerelease is empty");
      if (AllOf(id, IsDigit)) {
        if (id.size() > 1 && id[0] == '0') return Bad("Numeric PreRelease version must not contain leading zeroes", id);
        uint64_t x = 0;
        if (!absl::SimpleAtoi(id, &x)) return Bad("invalid prerelease number", id);
      } else if (!AllOf(id, IsAlnumDash)) {
        return Bad("Invalid character(s) found in prerelease", id);
      }
      v.pre.emplace_back(id);
    }
  }
  if (build != absl::string_view::npos) {
    absl::string_view b = rest.substr(build + 1);
    for (absl::string_view id : absl::StrSplit(b, '.')) {
      if (id.empty()) return absl::InvalidArgumentError("Buildversion is empty");
      if (!AllOf(id, IsAlnumDash)) return Bad("Invalid character(s) found in build meta data", id);
    }
    v.build = std::string(b);
  }
  return v;
}

int CompareSemver(const Semver& a, const Semver& b) {
  auto cmp = [](uint64_t x, uint64_t y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  if (a.pre.empty() && b.pre.empty()) return 0;
  if (a.pre.empty()) return 1;
  if (b.pre.empty()) return -1;
  for (size_t i = 0;; ++i) {
    if (i == a.pre.size() && i == b.pre.size()) return 0;
    if (i == a.pre.size()) return -1;
    if (i == b.pre.size()) return 1;
    if (int c = ComparePre(a.pre[i], b.pre[i])) return c;
  }
}

Value CallFunction(const std::string& name, bool member, std::vector<Value>& args, uint64_t& cost) {
  (void)member;
  if (args.empty()) return Err(absl::StrCat("no such overload: ", name));
  if (Get<Quantity>(args, 0)) return QuantityFunction(name, args);
  if (Get<Semver>(args, 0)) return SemverFunction(name, args);
  if (name == "size") {
    if (auto* b = Get<Bytes>(args, 0)) return Value{static_cast<int64_t>(b->data.size())};
    if (auto* l = Get<ListP>(args, 0)) return Value{static_cast<int64_t>((*l)->size())};
    if (auto* m = Get<MapP>(args, 0)) return Value{static_cast<int64_t>((*m)->size())};
  }
  if (name == "int" || name == "uint" || name == "double" || name == "string" || name == "dyn") {
    return Convert(name, args[0]);
  }
  if (Get<std::string>(args, 0)) return StringFunction(name, args, cost);
  return Err(absl::StrCat("no such overload: ", name));
}

// Validates a constant pattern of matches() at compile time, as upstream's
// cel.ValidateRegexLiterals does.
absl::Status CheckRegex(const std::string& pattern) {
  std::string error;
  if (Regex(pattern, &error) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("invalid matches argument: ", error));
  }
  return absl::OkStatus();
}

}  // namespace tessera::dra::cel
