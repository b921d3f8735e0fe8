// The evaluator of dra/cel: walks the checked tree over one device with cel-go's semantics
// (commutative && and ||, errors as values that the logic operators may absorb, the macros'
// accumulation rules) and a bounded cost.
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dra/cel/internal.h"
#include "dra/cel/selector.h"

namespace tessera::dra::cel {

Value Err(std::string message) { return Value{Error{std::move(message)}}; }

namespace {

const bool* AsBool(const Value& v) { return std::get_if<bool>(&v.v); }

class Evaluator {
 public:
  Evaluator(const Program& p, const Device& d) : p_(p), d_(d), slots_(p.num_slots) {}

  absl::StatusOr<bool> Run() {
    Value v = Eval(*p_.root);
    if (aborted_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "operation cancelled: actual cost limit exceeded (", kMaxCost, ")"));
    }
    if (auto* e = std::get_if<Error>(&v.v)) return absl::InvalidArgumentError(e->message);
    if (auto* b = AsBool(v)) return *b;
    return absl::InvalidArgumentError("CEL result could not be converted to bool");
  }

 private:
  bool Charge(uint64_t n) {
    cost_ += n;
    if (cost_ > kMaxCost) aborted_ = true;
    return !aborted_;
  }
  Value Eval(const Node& n);
  Value Select(const Node& n, const Value& target);
  Value Index(const Value& target, const Value& key);
  Value Logic(const Node& n, bool is_and);
  Value Comprehension(const Node& n);
  Value Arith(const std::string& op, const Value& a, const Value& b);
  Value Call(const Node& n);

  const Program& p_;
  const Device& d_;
  std::vector<Value> slots_;
  uint64_t cost_ = 0;
  bool aborted_ = false;
};

Value NoOverload(absl::string_view what) {
  return Err(absl::StrCat("no such overload: ", what));
}

Value Evaluator::Select(const Node& n, const Value& t) {
  if (t.is_error()) return t;
  if (std::holds_alternative<DeviceRef>(t.v)) {
    if (n.name == "driver") return Value{d_.driver};
    if (n.name == "allowMultipleAllocations") return Value{d_.allow_multiple_allocations};
    if (n.name == "attributes") return Value{OuterMap{false}};
    if (n.name == "capacity") return Value{OuterMap{true}};
    return Err(absl::StrCat("no such field: ", n.name));
  }
  return Index(t, Value{n.name});
}

Value Evaluator::Index(const Value& t, const Value& key) {
  if (t.is_error()) return t;
  if (key.is_error()) return key;
  if (auto* list = std::get_if<ListP>(&t.v)) {
    int64_t i = 0;
    if (auto* x = std::get_if<int64_t>(&key.v)) i = *x;
    else if (auto* u = std::get_if<uint64_t>(&key.v)) i = *u > INT64_MAX ? -1 : static_cast<int64_t>(*u);
    else if (auto* dd = std::get_if<double>(&key.v); dd && *dd == static_cast<double>(static_cast<int64_t>(*dd))) i = static_cast<int64_t>(*dd);
    else return NoOverload("_[_]");
    if (i < 0 || i >= static_cast<int64_t>((*list)->size())) return Err(absl::StrCat("index out of bounds: ", i));
    return (**list)[i];
  }
  if (auto* o = std::get_if<OuterMap>(&t.v)) {
    // A domain the device does not have is an empty map (upstream's mapper with a default).
    const std::string* s = std::get_if<std::string>(&key.v);
    return Value{DomainMap{o->capacity, s ? *s : std::string("\x01")}};
  }
  if (std::holds_alternative<MapP>(t.v) || std::holds_alternative<DomainMap>(t.v)) {
    bool found = false;
    Value v = MapLookup(t, key, d_, &found);
    if (found) return v;
    if (auto* s = std::get_if<std::string>(&key.v)) return Err(absl::StrCat("no such key: ", *s));
    return Err("no such key");
  }
  return NoOverload("_[_]");
}

Value Evaluator::Logic(const Node& n, bool is_and) {
  Value l = Eval(*n.args[0]);
  if (aborted_) return l;
  const bool* lb = AsBool(l);
  if (lb && *lb != is_and) return Value{!is_and};
  Value r = Eval(*n.args[1]);
  const bool* rb = AsBool(r);
  if (rb && *rb != is_and) return Value{!is_and};
  if (lb && rb) return Value{is_and};
  if (!lb) return l.is_error() ? l : NoOverload(is_and ? "_&&_" : "_||_");
  return r.is_error() ? r : NoOverload(is_and ? "_&&_" : "_||_");
}

Value Evaluator::Comprehension(const Node& n) {
  Value range = Eval(*n.args[0]);
  if (range.is_error()) return range;
  std::vector<Value> items;
  if (auto* list = std::get_if<ListP>(&range.v)) {
    items = **list;
  } else if (std::holds_alternative<MapP>(range.v) || std::holds_alternative<OuterMap>(range.v) ||
             std::holds_alternative<DomainMap>(range.v)) {
    for (auto& k : MapKeys(range, d_)) items.push_back(Value{k});
    if (auto* m = std::get_if<MapP>(&range.v)) {
      items.clear();
      for (auto& [k, v] : **m) items.push_back(k);
    }
  } else {
    return Err("expression does not support iteration");
  }
  Value accu;  // exists: false/error; all: true/error
  int64_t count = 0;
  auto out = std::make_shared<std::vector<Value>>();
  bool want = n.macro == Macro::kExists;  // the value that decides exists/all early
  Value pending;                          // the first error seen by exists/all
  bool has_pending = false;
  for (const Value& item : items) {
    if (!Charge(1)) return Err("cost");
    slots_[n.slot] = item;
    Value r = Eval(*n.args[1]);
    if (aborted_) return r;
    const bool* b = AsBool(r);
    switch (n.macro) {
      case Macro::kExists: case Macro::kAll:
        if (b && *b == want) return Value{want};
        if (!b && !has_pending) {
          pending = r.is_error() ? r : NoOverload(n.macro == Macro::kExists ? "_||_" : "_&&_");
          has_pending = true;
        }
        break;
      case Macro::kExistsOne:
        if (!b) return r.is_error() ? r : NoOverload("_?_:_");
        count += *b ? 1 : 0;
        break;
      case Macro::kMap:
        if (r.is_error()) return r;
        out->push_back(std::move(r));
        break;
      case Macro::kFilter:
        if (!b) return r.is_error() ? r : NoOverload("_?_:_");
        if (*b) out->push_back(item);
        break;
      case Macro::kNone:
        break;
    }
  }
  switch (n.macro) {
    case Macro::kExists: case Macro::kAll:
      if (has_pending) return pending;
      return Value{!want};
    case Macro::kExistsOne:
      return Value{count == 1};
    default:
      return Value{ListP(std::move(out))};
  }
}

Value Evaluator::Arith(const std::string& op, const Value& a, const Value& b) {
  if (auto* x = std::get_if<int64_t>(&a.v)) {
    const int64_t* y = std::get_if<int64_t>(&b.v);
    if (!y) return NoOverload(op);
    int64_t r = 0;
    bool overflow = false;
    switch (op[0]) {
      case '+': overflow = __builtin_add_overflow(*x, *y, &r); break;
      case '-': overflow = __builtin_sub_overflow(*x, *y, &r); break;
      case '*': overflow = __builtin_mul_overflow(*x, *y, &r); break;
      case '/': case '%':
        if (*y == 0) return Err(op == "/" ? "division by zero" : "modulus by zero");
        if (*x == INT64_MIN && *y == -1) return Err("integer overflow");
        r = op == "/" ? *x / *y : *x % *y;
        break;
    }
    if (overflow) return Err("integer overflow");
    return Value{r};
  }
  if (auto* x = std::get_if<uint64_t>(&a.v)) {
    const uint64_t* y = std::get_if<uint64_t>(&b.v);
    if (!y) return NoOverload(op);
    uint64_t r = 0;
    bool overflow = false;
    switch (op[0]) {
      case '+': overflow = __builtin_add_overflow(*x, *y, &r); break;
      case '-': overflow = __builtin_sub_overflow(*x, *y, &r); break;
      case '*': overflow = __builtin_mul_overflow(*x, *y, &r); break;
      case '/': case '%':
        if (*y == 0) return Err(op == "/" ? "division by zero" : "modulus by zero");
        r = op == "/" ? *x / *y : *x % *y;
        break;
    }
    if (overflow) return Err("unsigned integer overflow");
    return Value{r};
  }
  if (auto* x = std::get_if<double>(&a.v)) {
    const double* y = std::get_if<double>(&b.v);
    if (!y || op == "%") return NoOverload(op);
    switch (op[0]) {
      case '+': return Value{*x + *y};
      case '-': return Value{*x - *y};
      case '*': return Value{*x * *y};
      default: return Value{*x / *y};
    }
  }
  if (op == "+") {
    if (auto* x = std::get_if<std::string>(&a.v)) {
      if (auto* y = std::get_if<std::string>(&b.v)) {
        Charge((x->size() + y->size()) / 10);
        return Value{*x + *y};
      }
    }
    if (auto* x = std::get_if<Bytes>(&a.v)) {
      if (auto* y = std::get_if<Bytes>(&b.v)) return Value{Bytes{x->data + y->data}};
    }
    if (auto* x = std::get_if<ListP>(&a.v)) {
      if (auto* y = std::get_if<ListP>(&b.v)) {
        auto r = std::make_shared<std::vector<Value>>(**x);
        r->insert(r->end(), (*y)->begin(), (*y)->end());
        Charge(r->size());
        return Value{ListP(std::move(r))};
      }
    }
  }
  return NoOverload(op);
}

Value Evaluator::Call(const Node& n) {
  std::vector<Value> args;
  args.reserve(n.args.size());
  for (const auto& a : n.args) {
    args.push_back(Eval(*a));
    if (aborted_) return args.back();
    if (args.back().is_error()) return args.back();
  }
  const std::string& f = n.name;
  if (f == "==" || f == "!=") {
    // cel-go's != of a Quantity or Semver against another kind is true, where its == fails.
    if (f == "!=" && (std::holds_alternative<Quantity>(args[0].v) || std::holds_alternative<Semver>(args[0].v)) &&
        args[0].v.index() != args[1].v.index()) {
      return Value{true};
    }
    Value r = Equal(args[0], args[1], d_);
    if (auto* b = AsBool(r); b && f == "!=") return Value{!*b};
    return r;
  }
  if (f == "<" || f == ">" || f == "<=" || f == ">=") {
    bool swap = f == ">" || f == "<=";
    Value r = swap ? Less(args[1], args[0]) : Less(args[0], args[1]);
    const bool* b = AsBool(r);
    if (!b) return r;
    if (f == "<=" || f == ">=") return Value{!*b};
    return r;
  }
  if (f == "in") {
    if (auto* list = std::get_if<ListP>(&args[1].v)) {
      for (const Value& e : **list) {
        if (!Charge(1)) return Err("cost");
        Value r = Equal(args[0], e, d_);
        if (auto* b = AsBool(r); b && *b) return Value{true};
      }
      return Value{false};
    }
    bool found = false;
    if (std::holds_alternative<MapP>(args[1].v) || std::holds_alternative<DomainMap>(args[1].v) ||
        std::holds_alternative<OuterMap>(args[1].v)) {
      MapLookup(args[1], args[0], d_, &found);
      return Value{found};
    }
    return NoOverload("@in");
  }
  if (f == "+" || f == "-" || f == "*" || f == "/" || f == "%") return Arith(f, args[0], args[1]);
  if (f == "size" && args.size() == 1 &&
      (std::holds_alternative<OuterMap>(args[0].v) || std::holds_alternative<DomainMap>(args[0].v))) {
    return Value{static_cast<int64_t>(MapKeys(args[0], d_).size())};
  }
  Value r = CallFunction(f, n.member, args, cost_);
  if (cost_ > kMaxCost) aborted_ = true;
  return r;
}

Value Evaluator::Eval(const Node& n) {
  if (!Charge(1)) return Err("cost");
  switch (n.kind) {
    case NodeKind::kLiteral:
      return n.literal;
    case NodeKind::kIdent:
      return n.slot >= 0 ? slots_[n.slot] : Value{DeviceRef{}};
    case NodeKind::kSelect:
      return Select(n, Eval(*n.args[0]));
    case NodeKind::kHas: {
      Value t = Eval(*n.args[0]);
      if (t.is_error()) return t;
      // device's fields are always set; device.attributes and device.capacity answer every
      // domain (upstream's maps with a default); a value that is no map has no fields.
      if (std::holds_alternative<DeviceRef>(t.v) || std::holds_alternative<OuterMap>(t.v)) {
        return Value{true};
      }
      bool found = false;
      if (std::holds_alternative<MapP>(t.v) || std::holds_alternative<DomainMap>(t.v)) {
        MapLookup(t, Value{n.name}, d_, &found);
        return Value{found};
      }
      return Value{false};
    }
    case NodeKind::kIndex: {
      Value t = Eval(*n.args[0]);
      if (t.is_error()) return t;
      return Index(t, Eval(*n.args[1]));
    }
    case NodeKind::kCall:
      return Call(n);
    case NodeKind::kList: {
      auto l = std::make_shared<std::vector<Value>>();
      for (const auto& a : n.args) {
        l->push_back(Eval(*a));
        if (l->back().is_error()) return l->back();
      }
      return Value{ListP(std::move(l))};
    }
    case NodeKind::kMap: {
      auto m = std::make_shared<std::vector<std::pair<Value, Value>>>();
      for (size_t i = 0; i + 1 < n.args.size(); i += 2) {
        Value k = Eval(*n.args[i]);
        if (k.is_error()) return k;
        Value v = Eval(*n.args[i + 1]);
        if (v.is_error()) return v;
        bool replaced = false;  // a repeated key: the last value wins, as in cel-go
        for (auto& [ek, ev] : *m) {
          Value same = Equal(ek, k, d_);
          if (auto* b = AsBool(same); b && *b) {
            ev = v;
            replaced = true;
          }
        }
        if (!replaced) m->emplace_back(std::move(k), std::move(v));
      }
      return Value{MapP(std::move(m))};
    }
    case NodeKind::kAnd:
      return Logic(n, true);
    case NodeKind::kOr:
      return Logic(n, false);
    case NodeKind::kNot: {
      Value v = Eval(*n.args[0]);
      if (auto* b = AsBool(v)) return Value{!*b};
      return v.is_error() ? v : NoOverload("!_");
    }
    case NodeKind::kNeg: {
      Value v = Eval(*n.args[0]);
      if (auto* i = std::get_if<int64_t>(&v.v)) {
        if (*i == INT64_MIN) return Err("integer overflow");
        return Value{-*i};
      }
      if (auto* x = std::get_if<double>(&v.v)) return Value{-*x};
      return v.is_error() ? v : NoOverload("-_");
    }
    case NodeKind::kCond: {
      Value c = Eval(*n.args[0]);
      const bool* b = AsBool(c);
      if (!b) return c.is_error() ? c : NoOverload("_?_:_");
      return Eval(*n.args[*b ? 1 : 2]);
    }
    case NodeKind::kComprehension:
      return Comprehension(n);
    case NodeKind::kBind:
      slots_[n.slot] = Eval(*n.args[0]);
      return Eval(*n.args[1]);
  }
  return Err("internal error: unknown node");
}

// Upstream converts every attribute before it evaluates: a version that is not semantic fails
// every selector on the device.
absl::Status CheckVersions(const Device& d) {
  for (const auto& entry : d.attributes) {
    const std::string& name = entry.first;  // (a lambda may not capture a structured binding
    const AttributeValue& value = entry.second;  // in clang's C++20, which the fuzz build uses)
    auto check = [&](const Scalar& s) -> absl::Status {
      if (auto* v = std::get_if<Version>(&s)) {
        auto sv = ParseSemver(v->text, false);
        if (!sv.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "attribute ", name, ": parse semantic version: ", sv.status().message()));
        }
      }
      return absl::OkStatus();
    };
    if (auto* list = std::get_if<std::vector<Scalar>>(&value)) {
      for (const Scalar& s : *list) {
        if (auto st = check(s); !st.ok()) return st;
      }
    } else if (auto* v = std::get_if<Version>(&value)) {
      if (auto st = check(Scalar(*v)); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> Run(const Program& program, const Device& device) {
  if (auto st = CheckVersions(device); !st.ok()) return st;
  return Evaluator(program, device).Run();
}

}  // namespace tessera::dra::cel
