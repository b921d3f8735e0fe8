// The type checker of dra/cel: the static types of cel-go's checker over the DRA environment
// (device.driver, device.attributes, device.capacity, device.allowMultipleAllocations), so that
// an expression upstream rejects at compile time is rejected here too.
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dra/cel/internal.h"

namespace tessera::dra::cel {

TypeP MakeType(TypeKind k, TypeP a, TypeP b) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  t->a = std::move(a);
  t->b = std::move(b);
  return t;
}

std::string TypeName(const TypeP& t) {
  switch (t->kind) {
    case TypeKind::kDyn: return "dyn";
    case TypeKind::kNull: return "null_type";
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return "int";
    case TypeKind::kUint: return "uint";
    case TypeKind::kDouble: return "double";
    case TypeKind::kString: return "string";
    case TypeKind::kBytes: return "bytes";
    case TypeKind::kList: return "list(" + TypeName(t->a) + ")";
    case TypeKind::kMap: return "map(" + TypeName(t->a) + ", " + TypeName(t->b) + ")";
    case TypeKind::kQuantity: return "kubernetes.Quantity";
    case TypeKind::kSemver: return "kubernetes.Semver";
    case TypeKind::kDevice: return "kubernetes.DRADevice";
  }
  return "?";
}

namespace {

using K = TypeKind;

TypeP T(K k) { return MakeType(k); }

// Whether a value of type `b` may stand where `a` is expected (dyn matches everything).
bool Assignable(const TypeP& a, const TypeP& b) {
  if (a->kind == K::kDyn || b->kind == K::kDyn) return true;
  if (a->kind != b->kind) return false;
  if (!a->a || !b->a) return true;  // an overload's list or map of anything
  if (a->kind == K::kList) return Assignable(a->a, b->a);
  if (a->kind == K::kMap) return Assignable(a->a, b->a) && Assignable(a->b, b->b);
  return true;
}

// The more specific of two unifiable types.
TypeP Join(const TypeP& a, const TypeP& b) { return a->kind == K::kDyn ? b : a; }

struct Overload {
  std::vector<K> params;  // kDyn: any; for member functions the receiver first
  K result;
};
struct Function {
  absl::string_view name;
  bool member;
  std::vector<Overload> overloads;
};

const std::vector<Function>& Functions() {
  static const std::vector<Function> kFns = {
      {"size", false, {{{K::kString}, K::kInt}, {{K::kBytes}, K::kInt}, {{K::kList}, K::kInt}, {{K::kMap}, K::kInt}}},
      {"size", true, {{{K::kString}, K::kInt}, {{K::kBytes}, K::kInt}, {{K::kList}, K::kInt}, {{K::kMap}, K::kInt}}},
      {"int", false, {{{K::kInt}, K::kInt}, {{K::kUint}, K::kInt}, {{K::kDouble}, K::kInt}, {{K::kString}, K::kInt}}},
      {"uint", false, {{{K::kUint}, K::kUint}, {{K::kInt}, K::kUint}, {{K::kDouble}, K::kUint}, {{K::kString}, K::kUint}}},
      {"double", false, {{{K::kDouble}, K::kDouble}, {{K::kInt}, K::kDouble}, {{K::kUint}, K::kDouble}, {{K::kString}, K::kDouble}}},
      {"string", false, {{{K::kString}, K::kString}, {{K::kInt}, K::kString}, {{K::kUint}, K::kString}, {{K::kDouble}, K::kString}, {{K::kBool}, K::kString}, {{K::kBytes}, K::kString}}},
      {"dyn", false, {{{K::kDyn}, K::kDyn}}},
      {"startsWith", true, {{{K::kString, K::kString}, K::kBool}}},
      {"endsWith", true, {{{K::kString, K::kString}, K::kBool}}},
      {"contains", true, {{{K::kString, K::kString}, K::kBool}}},
      {"matches", true, {{{K::kString, K::kString}, K::kBool}}},
      {"matches", false, {{{K::kString, K::kString}, K::kBool}}},
      {"lowerAscii", true, {{{K::kString}, K::kString}}},
      {"upperAscii", true, {{{K::kString}, K::kString}}},
      {"quantity", false, {{{K::kString}, K::kQuantity}}},
      {"isQuantity", false, {{{K::kString}, K::kBool}}},
      {"sign", false, {{{K::kQuantity}, K::kInt}}},
      {"semver", false, {{{K::kString}, K::kSemver}, {{K::kString, K::kBool}, K::kSemver}}},
      {"isSemver", false, {{{K::kString}, K::kBool}, {{K::kString, K::kBool}, K::kBool}}},
      {"isGreaterThan", true, {{{K::kQuantity, K::kQuantity}, K::kBool}, {{K::kSemver, K::kSemver}, K::kBool}}},
      {"isLessThan", true, {{{K::kQuantity, K::kQuantity}, K::kBool}, {{K::kSemver, K::kSemver}, K::kBool}}},
      {"compareTo", true, {{{K::kQuantity, K::kQuantity}, K::kInt}, {{K::kSemver, K::kSemver}, K::kInt}}},
      {"asApproximateFloat", true, {{{K::kQuantity}, K::kDouble}}},
      {"asInteger", true, {{{K::kQuantity}, K::kInt}}},
      {"isInteger", true, {{{K::kQuantity}, K::kBool}}},
      {"add", true, {{{K::kQuantity, K::kQuantity}, K::kQuantity}, {{K::kQuantity, K::kInt}, K::kQuantity}}},
      {"sub", true, {{{K::kQuantity, K::kQuantity}, K::kQuantity}, {{K::kQuantity, K::kInt}, K::kQuantity}}},
      {"major", true, {{{K::kSemver}, K::kInt}}},
      {"minor", true, {{{K::kSemver}, K::kInt}}},
      {"patch", true, {{{K::kSemver}, K::kInt}}},
      {"<", false, {}}, {"<=", false, {}}, {">", false, {}}, {">=", false, {}},
      {"+", false, {{{K::kList, K::kList}, K::kList}, {{K::kInt, K::kInt}, K::kInt}, {{K::kUint, K::kUint}, K::kUint}, {{K::kDouble, K::kDouble}, K::kDouble}, {{K::kString, K::kString}, K::kString}, {{K::kBytes, K::kBytes}, K::kBytes}}},
      {"-", false, {{{K::kInt, K::kInt}, K::kInt}, {{K::kUint, K::kUint}, K::kUint}, {{K::kDouble, K::kDouble}, K::kDouble}}},
      {"*", false, {{{K::kInt, K::kInt}, K::kInt}, {{K::kUint, K::kUint}, K::kUint}, {{K::kDouble, K::kDouble}, K::kDouble}}},
      {"/", false, {{{K::kInt, K::kInt}, K::kInt}, {{K::kUint, K::kUint}, K::kUint}, {{K::kDouble, K::kDouble}, K::kDouble}}},
      {"%", false, {{{K::kInt, K::kInt}, K::kInt}, {{K::kUint, K::kUint}, K::kUint}}},
  };
  return kFns;
}

std::vector<Overload> OrderingOverloads() {
  std::vector<Overload> o;
  for (K a : {K::kInt, K::kUint, K::kDouble}) {
    for (K b : {K::kInt, K::kUint, K::kDouble}) o.push_back({{a, b}, K::kBool});
  }
  for (K a : {K::kString, K::kBytes, K::kBool}) o.push_back({{a, a}, K::kBool});
  return o;
}

class Checker {
 public:
  explicit Checker(Program& p) : p_(p) {
    TypeP inner_attrs = MakeType(K::kMap, T(K::kString), T(K::kDyn));
    TypeP inner_cap = MakeType(K::kMap, T(K::kString), T(K::kQuantity));
    attributes_ = MakeType(K::kMap, T(K::kString), inner_attrs);
    capacity_ = MakeType(K::kMap, T(K::kString), inner_cap);
  }

  absl::Status Run() {
    Visit(*p_.root);
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    K k = p_.root->type->kind;
    if (k != K::kBool && k != K::kDyn) {
      return absl::InvalidArgumentError(absl::StrCat(
          "must evaluate to bool or the unknown type, not ", TypeName(p_.root->type)));
    }
    return absl::OkStatus();
  }

 private:
  void Fail(const Node& n, std::string msg) {
    if (error_.empty()) error_ = absl::StrCat(Where(p_.expression, n.pos), ": ", msg);
  }
  TypeP Dyn() { return T(K::kDyn); }

  void Visit(Node& n);
  void VisitCall(Node& n);
  void VisitComprehension(Node& n);

  Program& p_;
  TypeP attributes_, capacity_;
  std::vector<std::pair<std::string, std::pair<int, TypeP>>> scope_;  // name -> slot, type
  std::string error_;
};

void Checker::VisitComprehension(Node& n) {
  Visit(*n.args[0]);
  TypeP range = n.args[0]->type;
  TypeP var;
  if (range->kind == K::kList) var = range->a;
  else if (range->kind == K::kMap) var = range->a;
  else if (range->kind == K::kDyn) var = Dyn();
  else return Fail(n, absl::StrCat("expression of type '", TypeName(range), "' cannot be range of a comprehension (must be list, map, or dynamic)"));
  n.slot = p_.num_slots++;
  scope_.push_back({n.name, {n.slot, var}});
  Visit(*n.args[1]);
  scope_.pop_back();
  TypeP body = n.args[1]->type;
  if (!body) return;
  if (n.macro == Macro::kMap) {
    n.type = MakeType(K::kList, body);
    return;
  }
  if (!Assignable(T(K::kBool), body)) {
    return Fail(*n.args[1], absl::StrCat("the predicate of a macro must be bool, not ", TypeName(body)));
  }
  n.type = n.macro == Macro::kFilter ? MakeType(K::kList, var) : T(K::kBool);
}

void Checker::VisitCall(Node& n) {
  for (auto& a : n.args) {
    Visit(*a);
    if (!error_.empty()) return;
  }
  std::vector<TypeP> args;
  for (auto& a : n.args) args.push_back(a->type);
  const std::string& f = n.name;
  std::string shown = n.member ? TypeName(args[0]) + "." + f : f;
  auto no_overload = [&] {
    std::string list;
    for (size_t i = n.member ? 1 : 0; i < args.size(); ++i) absl::StrAppend(&list, list.empty() ? "" : ", ", TypeName(args[i]));
    Fail(n, absl::StrCat("found no matching overload for '", shown, "' applied to (", list, ")"));
  };
  if (f == "==" || f == "!=") {
    auto object_and_null = [](const TypeP& a, const TypeP& b) {
      return (a->kind == K::kQuantity || a->kind == K::kSemver) && b->kind == K::kNull;
    };
    if (!Assignable(args[0], args[1]) && !object_and_null(args[0], args[1]) &&
        !object_and_null(args[1], args[0])) {
      return no_overload();
    }
    n.type = T(K::kBool);
    return;
  }
  if (f == "in") {
    K k = args[1]->kind;
    if (k == K::kDyn || ((k == K::kList || k == K::kMap) && Assignable(args[1]->a, args[0]))) {
      n.type = T(K::kBool);
      return;
    }
    return no_overload();
  }
  const Function* fn = nullptr;
  std::vector<Overload> ordering;
  for (const Function& c : Functions()) {
    if (c.name == f && c.member == n.member) fn = &c;
  }
  if (fn == nullptr) {
    bool known = false;
    for (const Function& c : Functions()) known |= c.name == f;
    if (known) return Fail(n, absl::StrCat("found no matching overload for '", shown, "'"));
    return Fail(n, absl::StrCat("function '", f, "' is undeclared or not supported by Tessera's CEL "
                                "evaluator (docs/dra-cel.md lists what is)"));
  }
  const std::vector<Overload>* overloads = &fn->overloads;
  if (f == "<" || f == "<=" || f == ">" || f == ">=") {
    ordering = OrderingOverloads();
    overloads = &ordering;
    // cel-go accepts null against dyn here (null is assignable to its nullable overloads).
    if ((args[0]->kind == K::kDyn && args[1]->kind == K::kNull) ||
        (args[0]->kind == K::kNull && args[1]->kind == K::kDyn)) {
      n.type = T(K::kBool);
      return;
    }
  }
  TypeP result;
  bool mixed = false;
  for (const Overload& o : *overloads) {
    if (o.params.size() != args.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; ++i) ok = Assignable(T(o.params[i]), args[i]);
    if (!ok) continue;
    TypeP r = T(o.result);
    if (o.result == K::kList) r = args[0]->kind == K::kList ? args[0] : args[1];
    if (result && result->kind != r->kind) mixed = true;
    result = r;
  }
  if (f == "+" && args.size() == 2 && args[0]->kind == K::kList && args[1]->kind == K::kList) {
    if (!Assignable(args[0]->a, args[1]->a)) return no_overload();
    n.type = MakeType(K::kList, Join(args[0]->a, args[1]->a));
    return;
  }
  if (!result) return no_overload();
  n.type = mixed ? Dyn() : result;
  if (f == "dyn") n.type = Dyn();
}

void Checker::Visit(Node& n) {
  if (!error_.empty()) return;
  switch (n.kind) {
    case NodeKind::kLiteral: {
      const auto& v = n.literal.v;
      K k = std::holds_alternative<bool>(v) ? K::kBool
            : std::holds_alternative<int64_t>(v) ? K::kInt
            : std::holds_alternative<uint64_t>(v) ? K::kUint
            : std::holds_alternative<double>(v) ? K::kDouble
            : std::holds_alternative<std::string>(v) ? K::kString
            : std::holds_alternative<Bytes>(v) ? K::kBytes : K::kNull;
      n.type = T(k);
      return;
    }
    case NodeKind::kIdent: {
      for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
        if (it->first == n.name) {
          n.slot = it->second.first;
          n.type = it->second.second;
          return;
        }
      }
      if (n.name == "device") {
        n.type = T(K::kDevice);
        return;
      }
      if (n.name == "int" || n.name == "uint" || n.name == "double" || n.name == "string" ||
          n.name == "bool" || n.name == "bytes" || n.name == "list" || n.name == "map" ||
          n.name == "null_type" || n.name == "type") {
        return Fail(n, absl::StrCat("the type value '", n.name, "' is not supported by Tessera's CEL evaluator"));
      }
      if (n.name == "optional" || n.name == "sets" || n.name == "math" || n.name == "strings" ||
          n.name == "base64" || n.name == "lists" || n.name == "regex") {
        return Fail(n, absl::StrCat("the library '", n.name, "' is not supported by Tessera's CEL evaluator"));
      }
      return Fail(n, absl::StrCat("undeclared reference to '", n.name, "'"));
    }
    case NodeKind::kSelect: case NodeKind::kHas: {
      Visit(*n.args[0]);
      if (!error_.empty()) return;
      const TypeP& t = n.args[0]->type;
      if (t->kind == K::kDevice) {
        if (n.name == "driver") n.type = T(K::kString);
        else if (n.name == "allowMultipleAllocations") n.type = T(K::kBool);
        else if (n.name == "attributes") n.type = attributes_;
        else if (n.name == "capacity") n.type = capacity_;
        else return Fail(n, absl::StrCat("undefined field '", n.name, "'"));
      } else if (t->kind == K::kMap && Assignable(t->a, T(K::kString))) {
        n.type = t->b;
      } else if (t->kind == K::kDyn) {
        n.type = Dyn();
      } else {
        return Fail(n, absl::StrCat("type '", TypeName(t), "' does not support field selection"));
      }
      if (n.kind == NodeKind::kHas) n.type = T(K::kBool);
      return;
    }
    case NodeKind::kIndex: {
      Visit(*n.args[0]);
      Visit(*n.args[1]);
      if (!error_.empty()) return;
      const TypeP& t = n.args[0]->type;
      const TypeP& i = n.args[1]->type;
      if (t->kind == K::kList && (i->kind == K::kInt || i->kind == K::kUint || i->kind == K::kDyn)) {
        n.type = t->a;
      } else if (t->kind == K::kMap && Assignable(t->a, i)) {
        n.type = t->b;
      } else if (t->kind == K::kDyn) {
        n.type = Dyn();
      } else {
        return Fail(n, absl::StrCat("found no matching overload for '_[_]' applied to '(", TypeName(t), ", ", TypeName(i), ")'"));
      }
      return;
    }
    case NodeKind::kCall:
      return VisitCall(n);
    case NodeKind::kList: case NodeKind::kMap: {
      TypeP first[2];
      for (size_t i = 0; i < n.args.size(); ++i) {
        Visit(*n.args[i]);
        if (!error_.empty()) return;
        int which = n.kind == NodeKind::kMap ? static_cast<int>(i % 2) : 0;
        const TypeP& t = n.args[i]->type;
        if (!first[which]) {
          first[which] = t;
        } else if (!Assignable(first[which], t)) {
          return Fail(*n.args[i], absl::StrCat("expected type '", TypeName(first[which]), "' but found '", TypeName(t), "'"));
        } else {
          first[which] = Join(first[which], t);
        }
      }
      if (n.kind == NodeKind::kList) {
        n.type = MakeType(K::kList, first[0] ? first[0] : Dyn());
      } else {
        if (first[0] && first[0]->kind != K::kString && first[0]->kind != K::kInt &&
            first[0]->kind != K::kUint && first[0]->kind != K::kBool && first[0]->kind != K::kDyn) {
          return Fail(n, absl::StrCat("unsupported map key type: ", TypeName(first[0])));
        }
        n.type = MakeType(K::kMap, first[0] ? first[0] : Dyn(), first[1] ? first[1] : Dyn());
      }
      return;
    }
    case NodeKind::kAnd: case NodeKind::kOr: case NodeKind::kNot: {
      for (auto& a : n.args) {
        Visit(*a);
        if (!error_.empty()) return;
        if (!Assignable(T(K::kBool), a->type)) {
          return Fail(n, absl::StrCat("found no matching overload for '", n.kind == NodeKind::kAnd ? "&&" : n.kind == NodeKind::kOr ? "||" : "!", "' applied to ", TypeName(a->type)));
        }
      }
      n.type = T(K::kBool);
      return;
    }
    case NodeKind::kNeg: {
      Visit(*n.args[0]);
      if (!error_.empty()) return;
      K k = n.args[0]->type->kind;
      if (k != K::kInt && k != K::kDouble && k != K::kDyn) {
        return Fail(n, absl::StrCat("found no matching overload for '-_' applied to ", TypeName(n.args[0]->type)));
      }
      n.type = n.args[0]->type;
      return;
    }
    case NodeKind::kCond: {
      for (auto& a : n.args) {
        Visit(*a);
        if (!error_.empty()) return;
      }
      if (!Assignable(T(K::kBool), n.args[0]->type) || !Assignable(n.args[1]->type, n.args[2]->type)) {
        return Fail(n, absl::StrCat("found no matching overload for '_?_:_' applied to (", TypeName(n.args[0]->type), ", ", TypeName(n.args[1]->type), ", ", TypeName(n.args[2]->type), ")"));
      }
      n.type = Join(n.args[1]->type, n.args[2]->type);
      return;
    }
    case NodeKind::kComprehension:
      return VisitComprehension(n);
    case NodeKind::kBind: {
      Visit(*n.args[0]);
      if (!error_.empty()) return;
      n.slot = p_.num_slots++;
      scope_.push_back({n.name, {n.slot, n.args[0]->type}});
      Visit(*n.args[1]);
      scope_.pop_back();
      n.type = n.args[1]->type;
      return;
    }
  }
}

}  // namespace

absl::Status Check(Program& program) { return Checker(program).Run(); }

}  // namespace tessera::dra::cel
