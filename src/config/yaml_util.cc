// Typed, path-aware access to a parsed YAML document; see yaml_util.h.
#include "config/yaml_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "model/quantity.h"

namespace tessera::config_internal {
namespace {

// Elements one document may visit. Far above any real manifest (a 10000-node NodePool visits a
// handful), far below what alias expansion can produce.
constexpr int64_t kVisitBudget = 200'000;
// Diagnostics one document may report; past this, one line says the rest were dropped.
constexpr int kMaxDiagnostics = 50;

bool NeedsBrackets(std::string_view key) {
  if (key.empty()) return true;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return true;
  }
  return false;
}

}  // namespace

std::string JoinPath(std::string_view base, std::string_view key) {
  std::string out(base);
  if (NeedsBrackets(key)) {
    out += "[\"";
    out += key;
    out += "\"]";
    return out;
  }
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string IndexPath(std::string_view base, size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

DocContext::DocContext(std::string_view file, int line_offset, std::vector<Diagnostic>* out,
                       int last_line)
    : file_(file),
      line_offset_(line_offset),
      last_line_(last_line),
      out_(out),
      budget_(kVisitBudget) {}

int DocContext::Line(const YAML::Node& node, int fallback) const {
  if (!node.IsDefined()) return fallback;
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return fallback;
  return std::min(mark.line + 1 + line_offset_, last_line_);
}

std::string DocContext::Source(const YAML::Node& node) const {
  return file_ + ":" + std::to_string(Line(node, line_offset_ + 1));
}

void DocContext::Report(Diagnostic::Severity s, int line, std::string path, std::string message) {
  if (s == Diagnostic::Severity::kError) failed_ = true;
  if (++reported_ > kMaxDiagnostics) {
    if (reported_ == kMaxDiagnostics + 1) {
      out_->push_back({Diagnostic::Severity::kNotice, file_, line, "",
                       "further diagnostics for this document are not shown"});
    }
    return;
  }
  Diagnostic d;
  d.severity = s;
  d.file = file_;
  d.line = line;
  d.path = std::move(path);
  d.message = std::move(message);
  out_->push_back(std::move(d));
}

void DocContext::Error(const YAML::Node& at, std::string path, std::string message) {
  Report(Diagnostic::Severity::kError, Line(at, line_offset_ + 1), std::move(path),
         std::move(message));
}

void DocContext::Warning(const YAML::Node& at, std::string path, std::string message) {
  Report(Diagnostic::Severity::kWarning, Line(at, line_offset_ + 1), std::move(path),
         std::move(message));
}

void DocContext::Notice(const YAML::Node& at, std::string path, std::string message) {
  Report(Diagnostic::Severity::kNotice, Line(at, line_offset_ + 1), std::move(path),
         std::move(message));
}

bool DocContext::Visit(const YAML::Node& at) {
  if (budget_ > 0) {
    --budget_;
    return true;
  }
  if (budget_ == 0) {
    --budget_;
    Error(at, "",
          "document too large: more than " + std::to_string(kVisitBudget) +
              " elements (anchors and aliases expanding?)");
  }
  return false;
}

const char* TypeName(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "null";
  }
}

YAML::Node Child(const YAML::Node& map, std::string_view key) {
  if (!map.IsDefined() || !map.IsMap()) return YAML::Node();
  for (auto it = map.begin(); it != map.end(); ++it) {
    // `*it` is a temporary pair; bind it (not it->first, whose proxy dies at once) to keep it.
    const auto& kv = *it;
    if (kv.first.IsDefined() && kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node();
}

bool IsNullish(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

std::optional<std::string> ScalarString(DocContext& ctx, const YAML::Node& node,
                                        const std::string& path) {
  if (IsNullish(node)) return std::string();
  if (!node.IsScalar()) {
    ctx.Error(node, path, std::string("expected a string, got ") + TypeName(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<int64_t> ScalarInt(DocContext& ctx, const YAML::Node& node, const std::string& path,
                                 int64_t min, int64_t max) {
  if (IsNullish(node) || !node.IsScalar()) {
    ctx.Error(node, path, std::string("expected an integer, got ") + TypeName(node));
    return std::nullopt;
  }
  std::string_view s = node.Scalar();
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec == std::errc::invalid_argument || p != digits.data() + digits.size()) {
    ctx.Error(node, path, "expected an integer, got \"" + std::string(s) + "\"");
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range || v < min || v > max) {
    ctx.Error(node, path,
              "value " + std::string(s) + " out of range [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> ScalarQuantity(DocContext& ctx, const YAML::Node& node,
                                      const std::string& path, ResourceId r) {
  if (IsNullish(node) || !node.IsScalar()) {
    ctx.Error(node, path, std::string("expected a quantity, got ") + TypeName(node));
    return std::nullopt;
  }
  absl::StatusOr<int64_t> q = ParseQuantity(node.Scalar(), /*milli=*/r == kCpu);
  if (!q.ok()) {
    ctx.Error(node, path, std::string(q.status().message()));
    return std::nullopt;
  }
  if (IsExtendedResourceName(ResourceName(r))) {
    if (absl::Status whole = CheckWholeQuantity(node.Scalar()); !whole.ok()) {
      ctx.Error(node, path, std::string(whole.message()));
      return std::nullopt;
    }
  }
  // tessera.dev/gpu-memory is in MiB as a plain number (KAI's unit); with a suffix ("10Gi",
  // "500M") it is a byte quantity, rounded up to whole MiB.
  if (r == kGpuMemory && !node.Scalar().empty() &&
      std::isalpha(static_cast<unsigned char>(node.Scalar().back())) && *q > 0)
    *q = (*q + (int64_t{1} << 20) - 1) >> 20;
  if (*q < 0) {
    ctx.Error(node, path, "quantity must not be negative, got " + node.Scalar());
    return std::nullopt;
  }
  return *q;
}

std::optional<double> ParseNonNegativeNumber(std::string_view text) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.empty()) return std::nullopt;
  // Plain decimal only: no hex, inf or nan, which strtod would accept.
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-')) {
      return std::nullopt;
    }
  }
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::optional<std::string> GetString(DocContext& ctx, const YAML::Node& parent,
                                     std::string_view key, const std::string& path) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  return ScalarString(ctx, n, path);
}

std::optional<std::string> RequireString(DocContext& ctx, const YAML::Node& parent,
                                         std::string_view key, const std::string& path) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n) || (n.IsScalar() && n.Scalar().empty())) {
    ctx.Error(IsNullish(n) ? parent : n, path, "required field is missing");
    return std::nullopt;
  }
  return ScalarString(ctx, n, path);
}

std::optional<int64_t> GetInt(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                              const std::string& path, int64_t min, int64_t max) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  return ScalarInt(ctx, n, path, min, max);
}

std::optional<bool> GetBool(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                            const std::string& path) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off") return false;
    ctx.Error(n, path, "expected true or false, got \"" + s + "\"");
    return std::nullopt;
  }
  ctx.Error(n, path, std::string("expected true or false, got ") + TypeName(n));
  return std::nullopt;
}

bool ExpectMap(DocContext& ctx, const YAML::Node& node, const std::string& path) {
  if (IsNullish(node)) return false;
  if (!node.IsMap()) {
    ctx.Error(node, path, std::string("expected a map, got ") + TypeName(node));
    return false;
  }
  return true;
}

bool ExpectSeq(DocContext& ctx, const YAML::Node& node, const std::string& path) {
  if (IsNullish(node)) return false;
  if (!node.IsSequence()) {
    ctx.Error(node, path, std::string("expected a list, got ") + TypeName(node));
    return false;
  }
  return true;
}

void ForEachMap(
    DocContext& ctx, const YAML::Node& map, const std::string& path,
    const std::function<bool(const std::string&, const YAML::Node&, const std::string&)>& fn) {
  if (!ExpectMap(ctx, map, path)) return;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!ctx.Visit(map)) return;
    const auto& kv = *it;  // a temporary pair, kept alive by the reference
    const YAML::Node& k = kv.first;
    if (!k.IsDefined() || !k.IsScalar()) {
      ctx.Error(k, path, std::string("expected a string key, got ") + TypeName(k));
      return;
    }
    if (!fn(k.Scalar(), kv.second, JoinPath(path, k.Scalar()))) return;
  }
}

void ForEachSeq(DocContext& ctx, const YAML::Node& seq, const std::string& path,
                const std::function<bool(size_t, const YAML::Node&, const std::string&)>& fn) {
  if (!ExpectSeq(ctx, seq, path)) return;
  size_t i = 0;
  for (auto it = seq.begin(); it != seq.end(); ++it, ++i) {
    if (!ctx.Visit(seq)) return;
    const YAML::Node item = *it;
    if (!fn(i, item, IndexPath(path, i))) return;
  }
}

std::optional<std::vector<std::string>> GetStringList(DocContext& ctx, const YAML::Node& parent,
                                                      std::string_view key,
                                                      const std::string& path) {
  std::vector<std::string> out;
  bool ok = true;
  ForEachSeq(ctx, Child(parent, key), path,
             [&](size_t, const YAML::Node& item, const std::string& item_path) {
               auto s = ScalarString(ctx, item, item_path);
               if (!s) return ok = false;
               out.push_back(std::move(*s));
               return true;
             });
  if (!ok || ctx.failed()) return std::nullopt;
  return out;
}

bool ReadLabels(DocContext& ctx, const YAML::Node& node, const std::string& path, Labels& out) {
  bool ok = true;
  const bool annotations = path.ends_with("annotations");
  ForEachMap(ctx, node, path,
             [&](const std::string& key, const YAML::Node& value, const std::string& item_path) {
               auto v = ScalarString(ctx, value, item_path);
               if (!v) return ok = false;
               // Kubernetes label keys and values (and annotation keys) are ASCII; a byte that
               // is not is refused at its line rather than carried into outputs (issue 31).
               const auto not_ascii = [](std::string_view s) {
                 return std::any_of(s.begin(), s.end(), [](char c) {
                   const auto u = static_cast<unsigned char>(c);
                   return u < 0x20 || u >= 0x7f;
                 });
               };
               if (not_ascii(key) || (!annotations && not_ascii(*v))) {
                 ctx.Error(value, item_path,
                           "a label's key and value (and an annotation's key) are ASCII letters, "
                           "digits, '-', '_', '.' and '/'; this one has a control character or a "
                           "byte beyond ASCII");
                 return ok = false;
               }
               out[key] = std::move(*v);
               return true;
             });
  return ok && !ctx.failed();
}

namespace {

std::optional<TaintEffect> ReadEffect(DocContext& ctx, const YAML::Node& node,
                                      const std::string& path) {
  return ParseEnum<TaintEffect>(ctx, node, path,
                                {{"NoSchedule", TaintEffect::kNoSchedule},
                                 {"PreferNoSchedule", TaintEffect::kPreferNoSchedule},
                                 {"NoExecute", TaintEffect::kNoExecute}});
}

}  // namespace

bool ReadTaints(DocContext& ctx, const YAML::Node& node, const std::string& path,
                std::vector<Taint>& out) {
  ForEachSeq(ctx, node, path, [&](size_t, const YAML::Node& item, const std::string& item_path) {
    if (!ExpectMap(ctx, item, item_path)) {
      if (!ctx.failed()) ctx.Error(item, item_path, "expected a taint, got null");
      return false;
    }
    Taint t;
    auto key = RequireString(ctx, item, "key", item_path + ".key");
    auto value = GetString(ctx, item, "value", item_path + ".value");
    YAML::Node effect = Child(item, "effect");
    if (IsNullish(effect)) {
      ctx.Error(item, item_path + ".effect", "required field is missing");
      return false;
    }
    auto e = ReadEffect(ctx, effect, item_path + ".effect");
    if (!key || !e || ctx.failed()) return false;
    t.key = *key;
    t.value = value.value_or("");
    t.effect = *e;
    out.push_back(std::move(t));
    return true;
  });
  return !ctx.failed();
}

bool ReadTolerations(DocContext& ctx, const YAML::Node& node, const std::string& path,
                     std::vector<Toleration>& out) {
  ForEachSeq(ctx, node, path, [&](size_t, const YAML::Node& item, const std::string& item_path) {
    if (!ExpectMap(ctx, item, item_path)) {
      if (!ctx.failed()) ctx.Error(item, item_path, "expected a toleration, got null");
      return false;
    }
    Toleration t;
    t.key = GetString(ctx, item, "key", item_path + ".key").value_or("");
    t.value = GetString(ctx, item, "value", item_path + ".value").value_or("");
    YAML::Node op = Child(item, "operator");
    if (!IsNullish(op)) {
      auto o = ParseEnum<TolerationOp>(
          ctx, op, item_path + ".operator",
          {{"Equal", TolerationOp::kEqual}, {"Exists", TolerationOp::kExists}});
      if (!o) return false;
      t.op = *o;
    }
    YAML::Node effect = Child(item, "effect");
    if (!IsNullish(effect) && !(effect.IsScalar() && effect.Scalar().empty())) {
      auto e = ReadEffect(ctx, effect, item_path + ".effect");
      if (!e) return false;
      t.effect = *e;
    }
    if (t.key.empty() && t.op != TolerationOp::kExists) {
      ctx.Error(item, item_path + ".operator",
                "a toleration without key must use operator Exists (it tolerates every taint)");
      return false;
    }
    if (ctx.failed()) return false;
    out.push_back(std::move(t));
    return true;
  });
  return !ctx.failed();
}

bool ReadRequirements(DocContext& ctx, const YAML::Node& node, const std::string& path,
                      bool allow_gt_lt, std::vector<SelectorRequirement>& out) {
  ForEachSeq(ctx, node, path, [&](size_t, const YAML::Node& item, const std::string& item_path) {
    if (!ExpectMap(ctx, item, item_path)) {
      if (!ctx.failed()) ctx.Error(item, item_path, "expected a requirement, got null");
      return false;
    }
    SelectorRequirement req;
    auto key = RequireString(ctx, item, "key", item_path + ".key");
    YAML::Node op = Child(item, "operator");
    if (IsNullish(op)) {
      ctx.Error(item, item_path + ".operator", "required field is missing");
      return false;
    }
    std::optional<SelectorOp> o;
    if (allow_gt_lt) {
      o = ParseEnum<SelectorOp>(ctx, op, item_path + ".operator",
                                {{"In", SelectorOp::kIn},
                                 {"NotIn", SelectorOp::kNotIn},
                                 {"Exists", SelectorOp::kExists},
                                 {"DoesNotExist", SelectorOp::kDoesNotExist},
                                 {"Gt", SelectorOp::kGt},
                                 {"Lt", SelectorOp::kLt}});
    } else {
      o = ParseEnum<SelectorOp>(ctx, op, item_path + ".operator",
                                {{"In", SelectorOp::kIn},
                                 {"NotIn", SelectorOp::kNotIn},
                                 {"Exists", SelectorOp::kExists},
                                 {"DoesNotExist", SelectorOp::kDoesNotExist}});
    }
    auto values = GetStringList(ctx, item, "values", item_path + ".values");
    if (!key || !o || !values) return false;
    req.key = *key;
    req.op = *o;
    req.values = std::move(*values);
    bool needs_values = req.op == SelectorOp::kIn || req.op == SelectorOp::kNotIn;
    if (needs_values && req.values.empty()) {
      ctx.Error(item, item_path + ".values", "operator In and NotIn need at least one value");
      return false;
    }
    if ((req.op == SelectorOp::kGt || req.op == SelectorOp::kLt) && req.values.size() != 1) {
      ctx.Error(item, item_path + ".values", "operator Gt and Lt need exactly one value");
      return false;
    }
    if (req.op == SelectorOp::kGt || req.op == SelectorOp::kLt) {
      // Kubernetes reads the value as a 64-bit integer (strconv.ParseInt); "8Gi" or "1.5" would
      // never match a node, so it is refused here as the API server refuses it.
      const std::string& v = req.values[0];
      std::string_view digits = v;
      if (digits.starts_with('+') && !digits.starts_with("+-")) digits.remove_prefix(1);
      int64_t parsed = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
        const YAML::Node values = Child(item, "values");
        ctx.Error(values.IsSequence() && values.size() > 0 ? values[0] : values,
                  item_path + ".values[0]",
                  "operator Gt and Lt need a whole number (a 64-bit integer), got \"" + v + "\"");
        return false;
      }
    }
    out.push_back(std::move(req));
    return true;
  });
  return !ctx.failed();
}

bool ReadLabelSelector(DocContext& ctx, const YAML::Node& node, const std::string& path,
                       LabelSelector& out) {
  if (!node.IsDefined()) return true;
  // `namespaceSelector:` with nothing after it is null in YAML; Kubernetes decodes it as an
  // absent selector, so it stays absent here too.
  if (node.IsNull()) return true;
  if (!ExpectMap(ctx, node, path)) return false;
  out.present = true;
  ReadLabels(ctx, Child(node, "matchLabels"), path + ".matchLabels", out.match_labels);
  ReadRequirements(ctx, Child(node, "matchExpressions"), path + ".matchExpressions",
                   /*allow_gt_lt=*/false, out.match_expressions);
  return !ctx.failed();
}

std::optional<ResourceId> InternResource(DocContext& ctx, const YAML::Node& at,
                                         const std::string& path, std::string_view name) {
  if (name.empty()) {
    ctx.Error(at, path, "empty resource name");
    return std::nullopt;
  }
  absl::StatusOr<ResourceId> id = ResourceRegistry::Global().Intern(name);
  if (!id.ok()) {
    ctx.Error(at, path, std::string(id.status().message()));
    return std::nullopt;
  }
  return *id;
}

bool ReadResourceMap(DocContext& ctx, const YAML::Node& node, const std::string& path,
                     Resources& out, std::vector<ResourceId>* named) {
  ForEachMap(ctx, node, path,
             [&](const std::string& key, const YAML::Node& value, const std::string& item_path) {
               auto id = InternResource(ctx, value, item_path, key);
               if (!id) return false;
               auto q = ScalarQuantity(ctx, value, item_path, *id);
               if (!q) return false;
               out.Set(*id, *q);
               if (named) named->push_back(*id);
               return true;
             });
  return !ctx.failed();
}

size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace tessera::config_internal
