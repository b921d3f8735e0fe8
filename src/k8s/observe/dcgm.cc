#include "k8s/observe/dcgm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "fmt/format.h"

namespace tessera::k8s {
namespace {

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool NameChar(char c) { return NameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

void SkipBlanks(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

// A sample value: a float, NaN, +Inf, -Inf.
bool ParseValue(std::string_view tok, double& v) {
  if (tok.empty() || tok.size() > 64) return false;
  if (tok == "NaN") {
    v = std::nan("");
    return true;
  }
  if (tok == "+Inf" || tok == "Inf") {
    v = INFINITY;
    return true;
  }
  if (tok == "-Inf") {
    v = -INFINITY;
    return true;
  }
  const std::string t(tok);
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  // strtod also reads "nan(...)", "infinity", hex floats: Prometheus' text format does not.
  if (end != t.c_str() + t.size()) return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
           c == '+' || c == '-';
  });
}

// `{a="x",b="y"}` from s[i] == '{'; i ends after '}'. Empty: ok; otherwise what is wrong.
std::string ParseLabels(std::string_view s, size_t& i, Sample& out) {
  ++i;  // '{'
  while (true) {
    SkipBlanks(s, i);
    if (i < s.size() && s[i] == '}') {
      ++i;
      return "";
    }
    const size_t start = i;
    if (i >= s.size() || !(std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      return "expected a label name";
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    std::string name(s.substr(start, i - start));
    SkipBlanks(s, i);
    if (i >= s.size() || s[i] != '=') return fmt::format("expected '=' after label {}", name);
    ++i;
    SkipBlanks(s, i);
    if (i >= s.size() || s[i] != '"') return fmt::format("label {}: expected a quoted value", name);
    ++i;
    std::string value;
    while (true) {
      if (i >= s.size()) return fmt::format("label {}: unterminated value", name);
      const char c = s[i++];
      if (c == '"') break;
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (i >= s.size()) return fmt::format("label {}: unterminated value", name);
      const char e = s[i++];
      if (e == 'n') {
        value.push_back('\n');
      } else if (e == '\\' || e == '"') {
        value.push_back(e);
      } else {
        return fmt::format("label {}: unknown escape \\{}", name, e);
      }
    }
    out.labels.emplace_back(std::move(name), std::move(value));
    SkipBlanks(s, i);
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') {
      ++i;
      return "";
    }
    return "expected ',' or '}' after a label";
  }
}

// One sample line; empty: ok, otherwise what is wrong with it.
std::string ParseSample(std::string_view s, Sample& out) {
  size_t i = 0;
  if (s.empty() || !NameStart(s[0])) return "expected a metric name";
  while (i < s.size() && NameChar(s[i])) ++i;
  out.name = std::string(s.substr(0, i));
  SkipBlanks(s, i);
  if (i < s.size() && s[i] == '{') {
    if (std::string err = ParseLabels(s, i, out); !err.empty()) return err;
  }
  SkipBlanks(s, i);
  size_t start = i;
  while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
  if (!ParseValue(s.substr(start, i - start), out.value))
    return fmt::format("{}: expected a number, got \"{}\"", out.name,
                       std::string(s.substr(start, std::min<size_t>(i - start, 32))));
  SkipBlanks(s, i);
  if (i < s.size()) {  // a timestamp: milliseconds, an integer
    start = i;
    if (s[i] == '-') ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    SkipBlanks(s, i);
    if (i != s.size() || i == start)
      return fmt::format("{}: unexpected text after the value", out.name);
  }
  return "";
}

const std::string* Label(const Sample& s, std::string_view name) {
  for (const auto& [k, v] : s.labels)
    if (k == name) return &v;
  return nullptr;
}

std::string LabelOr(const Sample& s, std::string_view name) {
  const std::string* v = Label(s, name);
  return v ? *v : std::string();
}

enum class Field { kNone, kGpuUtil, kEngineActive, kFbUsed, kFbFree, kXid };

Field FieldOf(const std::string& name) {
  if (name == "DCGM_FI_DEV_GPU_UTIL") return Field::kGpuUtil;
  if (name == "DCGM_FI_PROF_GR_ENGINE_ACTIVE") return Field::kEngineActive;
  if (name == "DCGM_FI_DEV_FB_USED") return Field::kFbUsed;
  if (name == "DCGM_FI_DEV_FB_FREE") return Field::kFbFree;
  if (name == "DCGM_FI_DEV_XID_ERRORS") return Field::kXid;
  return Field::kNone;
}

}  // namespace

absl::StatusOr<std::vector<GpuReading>> ParseDcgmExposition(std::string_view body,
                                                            const DcgmLimits& limits) {
  using Key = std::tuple<std::string, int32_t, std::string, std::string, std::string, std::string,
                         std::string>;
  std::map<Key, size_t> index;
  std::vector<GpuReading> out;
  size_t line_no = 0, pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) nl = body.size();
    std::string_view line = body.substr(pos, nl - pos);
    pos = nl + 1;
    if (++line_no > limits.max_lines)
      return absl::ResourceExhaustedError(
          fmt::format("more than {} lines; not a dcgm-exporter exposition?", limits.max_lines));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    SkipBlanks(line, i);
    line.remove_prefix(i);
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    if (std::string err = ParseSample(line, s); !err.empty())
      return absl::InvalidArgumentError(fmt::format("line {}: {}", line_no, err));
    const Field f = FieldOf(s.name);
    if (f == Field::kNone) continue;
    int32_t gpu = -1;
    if (const std::string* g = Label(s, "gpu"); g && !g->empty()) {
      char* end = nullptr;
      const long v = std::strtol(g->c_str(), &end, 10);
      if (*end != '\0' || v < 0 || v > 1 << 20)
        return absl::InvalidArgumentError(fmt::format(
            "line {}: {}: label gpu=\"{}\" is not a device index", line_no, s.name, *g));
      gpu = static_cast<int32_t>(v);
    }
    Key key{LabelOr(s, "Hostname"),  gpu,
            LabelOr(s, "UUID"),      LabelOr(s, "GPU_I_ID"),
            LabelOr(s, "namespace"), LabelOr(s, "pod"),
            LabelOr(s, "container")};
    auto [it, inserted] = index.try_emplace(key, out.size());
    if (inserted) {
      if (out.size() >= limits.max_gpus)
        return absl::ResourceExhaustedError(
            fmt::format("line {}: more than {} GPUs in one exposition", line_no, limits.max_gpus));
      GpuReading r;
      std::tie(r.hostname, r.gpu, r.uuid, r.gpu_instance, r.ns, r.pod, r.container) = key;
      r.model = LabelOr(s, "modelName");
      out.push_back(std::move(r));
    }
    GpuReading& r = out[it->second];
    if (std::isnan(s.value)) continue;
    switch (f) {
      case Field::kGpuUtil:
        r.gpu_util = std::clamp(s.value / 100, 0.0, 1.0);
        break;
      case Field::kEngineActive:
        r.engine_active = std::clamp(s.value, 0.0, 1.0);
        break;
      case Field::kFbUsed:
        r.fb_used_mib = s.value;
        break;
      case Field::kFbFree:
        r.fb_free_mib = s.value;
        break;
      case Field::kXid:
        // An XID is a small code (NVIDIA lists fewer than 200); anything else is not one.
        if (s.value >= 0 && s.value < 1e6) r.xid = static_cast<int64_t>(s.value);
        break;
      case Field::kNone:
        break;
    }
  }
  return out;
}

}  // namespace tessera::k8s
