// dra/cel's values: CEL equality and ordering (heterogeneous numbers as cel-go compares them),
// and the device's attribute and capacity maps read in place.
#include <string>

#include "absl/strings/str_cat.h"
#include "dra/cel/internal.h"

namespace tessera::dra::cel {
namespace {

// -1, 0, 1 for a numeric pair; 2 when unordered (NaN); 3 when either is not a number.
int CompareNumbers(const Value& a, const Value& b) {
  auto kind = [](const Value& v) -> int {
    if (std::holds_alternative<int64_t>(v.v)) return 0;
    if (std::holds_alternative<uint64_t>(v.v)) return 1;
    if (std::holds_alternative<double>(v.v)) return 2;
    return -1;
  };
  int ka = kind(a), kb = kind(b);
  if (ka < 0 || kb < 0) return 3;
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (ka == 2 || kb == 2) {
    auto as_ld = [](const Value& v) -> long double {
      if (auto* i = std::get_if<int64_t>(&v.v)) return *i;
      if (auto* u = std::get_if<uint64_t>(&v.v)) return *u;
      return std::get<double>(v.v);
    };
    long double x = as_ld(a), y = as_ld(b);
    if (x != x || y != y) return 2;
    return cmp(x, y);
  }
  if (ka == 0 && kb == 0) return cmp(std::get<int64_t>(a.v), std::get<int64_t>(b.v));
  if (ka == 1 && kb == 1) return cmp(std::get<uint64_t>(a.v), std::get<uint64_t>(b.v));
  if (ka == 0) {
    int64_t x = std::get<int64_t>(a.v);
    return x < 0 ? -1 : cmp(static_cast<uint64_t>(x), std::get<uint64_t>(b.v));
  }
  int64_t y = std::get<int64_t>(b.v);
  return y < 0 ? 1 : cmp(std::get<uint64_t>(a.v), static_cast<uint64_t>(y));
}

bool IsMap(const Value& v) {
  return std::holds_alternative<MapP>(v.v) || std::holds_alternative<OuterMap>(v.v) ||
         std::holds_alternative<DomainMap>(v.v);
}

// "domain", "id" of a device key; a key without a domain is in the driver's.
std::pair<absl::string_view, absl::string_view> SplitKey(const std::string& key,
                                                       const std::string& driver) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {driver, key};
  return {absl::string_view(key).substr(0, slash), absl::string_view(key).substr(slash + 1)};
}

template <typename Map>
const typename Map::mapped_type* Find(const Map& m, const Device& d, absl::string_view domain,
                                      absl::string_view id) {
  auto it = m.find(absl::StrCat(domain, "/", id));
  if (it != m.end()) return &it->second;
  if (domain == d.driver) {
    it = m.find(std::string(id));
    if (it != m.end()) return &it->second;
  }
  return nullptr;
}

template <typename Map>
std::vector<std::string> Keys(const Map& m, const Device& d, const std::string* domain) {
  std::vector<std::string> out;
  for (const auto& [key, value] : m) {
    auto [dom, id] = SplitKey(key, d.driver);
    std::string k(domain ? id : dom);
    if (domain && dom != *domain) continue;
    bool seen = false;
    for (const auto& o : out) seen |= o == k;
    if (!seen) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

Value ToValue(const AttributeValue& a) {
  auto scalar = [](const auto& s) -> Value {
    using T = std::decay_t<decltype(s)>;
    if constexpr (std::is_same_v<T, Version>) {
      auto v = ParseSemver(s.text, false);
      if (!v.ok()) return Err(std::string(v.status().message()));
      return Value{*v};
    } else if constexpr (std::is_same_v<T, std::vector<Scalar>>) {
      return Err("nested list");
    } else {
      return Value{s};
    }
  };
  if (auto* list = std::get_if<std::vector<Scalar>>(&a)) {
    auto out = std::make_shared<std::vector<Value>>();
    for (const Scalar& s : *list) out->push_back(std::visit(scalar, s));
    return Value{ListP(std::move(out))};
  }
  return std::visit(scalar, a);
}

bool ToQuantity(const Capacity& c, Quantity& out) {
  if (!c.text.empty()) {
    auto q = ParseQuantity(c.text);
    if (q.ok()) {
      out = *q;
      return true;
    }
  }
  out.nanos = static_cast<__int128>(c.milli) * 1000000;
  return true;
}

std::vector<std::string> MapKeys(const Value& map, const Device& d) {
  if (auto* o = std::get_if<OuterMap>(&map.v)) {
    return o->capacity ? Keys(d.capacity, d, nullptr) : Keys(d.attributes, d, nullptr);
  }
  if (auto* dm = std::get_if<DomainMap>(&map.v)) {
    return dm->capacity ? Keys(d.capacity, d, &dm->domain) : Keys(d.attributes, d, &dm->domain);
  }
  return {};
}

Value MapLookup(const Value& map, const Value& key, const Device& d, bool* found) {
  *found = false;
  if (auto* m = std::get_if<MapP>(&map.v)) {
    for (const auto& [k, v] : **m) {
      Value eq = Equal(k, key, d);
      if (auto* b = std::get_if<bool>(&eq.v); b && *b) {
        *found = true;
        return v;
      }
    }
    return Value{};
  }
  const std::string* s = std::get_if<std::string>(&key.v);
  if (s == nullptr) return Value{};
  if (auto* o = std::get_if<OuterMap>(&map.v)) {
    for (const auto& k : MapKeys(map, d)) *found |= k == *s;
    return Value{DomainMap{o->capacity, *s}};
  }
  const auto& dm = std::get<DomainMap>(map.v);
  if (dm.capacity) {
    const Capacity* c = Find(d.capacity, d, dm.domain, *s);
    if (c == nullptr) return Value{};
    *found = true;
    Quantity q;
    ToQuantity(*c, q);
    return Value{q};
  }
  const AttributeValue* a = Find(d.attributes, d, dm.domain, *s);
  if (a == nullptr) return Value{};
  *found = true;
  return ToValue(*a);
}

Value Equal(const Value& a, const Value& b, const Device& d) {
  if (a.is_error()) return a;
  if (b.is_error()) return b;
  int n = CompareNumbers(a, b);
  if (n != 3) return Value{n == 0};
  // Kubernetes' Quantity and Semver compare only with their own kind (and null): cel-go asks the
  // left operand, and theirs answer "no such overload" where the built-in types answer false.
  if ((std::holds_alternative<Quantity>(a.v) || std::holds_alternative<Semver>(a.v)) &&
      a.v.index() != b.v.index() && !std::holds_alternative<std::monostate>(b.v)) {
    return Err("no such overload");
  }
  if (IsMap(a) && IsMap(b)) {
    auto entries = [&](const Value& m) {
      std::vector<std::pair<Value, Value>> out;
      if (auto* p = std::get_if<MapP>(&m.v)) return **p;
      for (const auto& k : MapKeys(m, d)) {
        bool found = false;
        Value key{k};
        Value v = MapLookup(m, key, d, &found);
        out.emplace_back(std::move(key), std::move(v));
      }
      return out;
    };
    auto ea = entries(a), eb = entries(b);
    if (ea.size() != eb.size()) return Value{false};
    for (const auto& [k, v] : ea) {
      bool found = false;
      Value other = MapLookup(Value{MapP(std::make_shared<std::vector<std::pair<Value, Value>>>(eb))}, k, d, &found);
      if (!found) return Value{false};
      Value eq = Equal(v, other, d);
      if (auto* x = std::get_if<bool>(&eq.v); !x || !*x) return eq.is_error() ? eq : Value{false};
    }
    return Value{true};
  }
  if (a.v.index() != b.v.index()) return Value{false};
  if (auto* x = std::get_if<ListP>(&a.v)) {
    const auto& y = std::get<ListP>(b.v);
    if ((*x)->size() != y->size()) return Value{false};
    for (size_t i = 0; i < y->size(); ++i) {
      Value eq = Equal((**x)[i], (*y)[i], d);
      if (auto* z = std::get_if<bool>(&eq.v); !z || !*z) return eq.is_error() ? eq : Value{false};
    }
    return Value{true};
  }
  if (std::holds_alternative<std::monostate>(a.v)) return Value{true};
  if (auto* x = std::get_if<bool>(&a.v)) return Value{*x == std::get<bool>(b.v)};
  if (auto* x = std::get_if<std::string>(&a.v)) return Value{*x == std::get<std::string>(b.v)};
  if (auto* x = std::get_if<Bytes>(&a.v)) return Value{x->data == std::get<Bytes>(b.v).data};
  if (auto* x = std::get_if<Quantity>(&a.v)) return Value{x->nanos == std::get<Quantity>(b.v).nanos};
  if (auto* x = std::get_if<Semver>(&a.v)) return Value{CompareSemver(*x, std::get<Semver>(b.v)) == 0};
  return Value{false};
}

Value Less(const Value& a, const Value& b) {
  int n = CompareNumbers(a, b);
  if (n == 2) return Err("NaN values cannot be ordered");
  if (n != 3) return Value{n < 0};
  if (a.v.index() == b.v.index()) {
    if (auto* x = std::get_if<std::string>(&a.v)) return Value{*x < std::get<std::string>(b.v)};
    if (auto* x = std::get_if<Bytes>(&a.v)) return Value{x->data < std::get<Bytes>(b.v).data};
    if (auto* x = std::get_if<bool>(&a.v)) return Value{!*x && std::get<bool>(b.v)};
  }
  return Err("no such overload: _<_");
}

}  // namespace tessera::dra::cel
