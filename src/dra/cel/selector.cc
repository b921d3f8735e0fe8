// Compile and Evaluate of dra/cel's Selector: parse, check, validate the constant regular
// expressions, then evaluate on devices.
#include "dra/cel/selector.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dra/cel/internal.h"

namespace tessera::dra::cel {
namespace {

// cel-go folds a type conversion of a literal when it plans the program: one that fails is a
// compile-time error ("program instantiation failed") there, so it is here too.
absl::Status CheckConstantConversions(const Program& p, const Node& n) {
  if (n.kind == NodeKind::kCall && !n.member && n.args.size() == 1 &&
      n.args[0]->kind == NodeKind::kLiteral &&
      (n.name == "int" || n.name == "uint" || n.name == "double" || n.name == "string")) {
    std::vector<Value> args{n.args[0]->literal};
    uint64_t cost = 0;
    Value v = CallFunction(n.name, false, args, cost);
    if (auto* e = std::get_if<Error>(&v.v)) {
      return absl::InvalidArgumentError(absl::StrCat("program instantiation failed: ", Where(p.expression, n.pos), ": ", e->message));
    }
  }
  for (const auto& a : n.args) {
    if (auto st = CheckConstantConversions(p, *a); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// quantity("...") and semver("...") of literals are parsed once, here, not per evaluation; one
// that fails stays a call, to fail at runtime as upstream's does.
void FoldConstants(Node& n) {
  for (auto& a : n.args) FoldConstants(*a);
  if (n.kind != NodeKind::kCall || n.member || (n.name != "quantity" && n.name != "semver")) return;
  std::vector<Value> args;
  for (const auto& a : n.args) {
    if (a->kind != NodeKind::kLiteral) return;
    args.push_back(a->literal);
  }
  uint64_t cost = 0;
  Value v = CallFunction(n.name, false, args, cost);
  if (v.is_error()) return;
  n.kind = NodeKind::kLiteral;
  n.literal = std::move(v);
  n.args.clear();
}

absl::Status CheckRegexLiterals(const Program& p, const Node& n) {
  if (n.kind == NodeKind::kCall && n.name == "matches" && n.args.size() == 2 &&
      n.args[1]->kind == NodeKind::kLiteral) {
    if (auto* s = std::get_if<std::string>(&n.args[1]->literal.v)) {
      if (auto st = CheckRegex(*s); !st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(Where(p.expression, n.pos), ": ", st.message()));
      }
    }
  }
  for (const auto& a : n.args) {
    if (auto st = CheckRegexLiterals(p, *a); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Selector> Selector::Compile(std::string_view expression) {
  if (expression.size() > kMaxExpressionLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the expression is ", expression.size(), " bytes long, more than the ",
        kMaxExpressionLength, " that resource.k8s.io allows"));
  }
  auto program = std::make_shared<Program>();
  program->expression = std::string(expression);
  auto root = Parse(absl::string_view(program->expression));
  if (!root.ok()) return absl::InvalidArgumentError(absl::StrCat("compilation failed: ", root.status().message()));
  program->root = std::move(*root);
  if (auto st = Check(*program); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("compilation failed: ", st.message()));
  }
  if (auto st = CheckRegexLiterals(*program, *program->root); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("compilation failed: ", st.message()));
  }
  if (auto st = CheckConstantConversions(*program, *program->root); !st.ok()) return st;
  FoldConstants(*program->root);
  return Selector(std::move(program));
}

absl::StatusOr<bool> Selector::Evaluate(const Device& device) const {
  return Run(*program_, device);
}

const std::string& Selector::expression() const { return program_->expression; }

}  // namespace tessera::dra::cel
