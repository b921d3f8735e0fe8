// Parsing of the capacity calculator's inputs (trace/plan.h): --pool node shapes and --target
// bounds, each error naming the text and the key at fault; and the nodes a pool's size makes.
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

#include "fmt/format.h"
#include "trace/plan.h"

namespace tessera::trace {
namespace {
// A decimal number that is the whole text (no sign, no exponent).
bool ParseDecimal(std::string_view s, double& v) {
  if (s.empty() || s.size() > 32) return false;
  int dots = 0;
  for (char c : s) {
    if (c == '.')
      ++dots;
    else if (c < '0' || c > '9')
      return false;
  }
  if (dots > 1 || s == ".") return false;
  v = std::strtod(std::string(s).c_str(), nullptr);
  return std::isfinite(v);
}

// Memory: MiB as a plain number, or with Ki, Mi, Gi or Ti.
bool ParseMemoryMib(std::string_view s, int64_t& mib) {
  double scale = 1;
  for (auto [suffix, f] :
       {std::pair{"Ki", 1.0 / 1024}, {"Mi", 1.0}, {"Gi", 1024.0}, {"Ti", 1024.0 * 1024}}) {
    if (s.size() > 2 && s.substr(s.size() - 2) == suffix) {
      scale = f;
      s.remove_suffix(2);
      break;
    }
  }
  double v = 0;
  if (!ParseDecimal(s, v)) return false;
  v *= scale;
  if (!(v >= 1 && v <= 1e12)) return false;
  mib = static_cast<int64_t>(std::llround(v));
  return true;
}

// A duration: a decimal number of seconds, or with s, m, h or d (e.g. 30m).
bool ParseDuration(std::string_view num, double& seconds) {
  double unit = 1;
  if (!num.empty()) {
    switch (num.back()) {
      case 's':
        unit = 1;
        num.remove_suffix(1);
        break;
      case 'm':
        unit = 60;
        num.remove_suffix(1);
        break;
      case 'h':
        unit = 3600;
        num.remove_suffix(1);
        break;
      case 'd':
        unit = 86400;
        num.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  double v = 0;
  if (!ParseDecimal(num, v) || v * unit > 1e12) return false;
  seconds = v * unit;
  return true;
}

bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

absl::Status PoolError(const std::string& text, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("--pool \"{}\": {}", text, what));
}

}  // namespace

absl::StatusOr<PoolShape> ParsePool(const std::string& text) {
  PoolShape p;
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    return PoolError(text,
                     "expected NAME:gpus=G,cpu=C,memory=M[,model=X][,price=P][,spot=D]"
                     "[,interruptions=R][,notice=T][,replace=T][,nodes=N]");
  p.name = text.substr(0, colon);
  if (!ValidName(p.name))
    return PoolError(text,
                     "the name must be 1 to 40 of a-z, 0-9 and '-', not starting or "
                     "ending with '-'");
  bool has_gpus = false, has_cpu = false, has_memory = false, has_rate = false;
  bool has_replace = false;
  std::vector<std::string_view> kvs;
  for (std::string_view rest = std::string_view(text).substr(colon + 1);;) {
    const size_t comma = rest.find(',');
    kvs.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  for (std::string_view kv : kvs) {
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos)
      return PoolError(text, fmt::format("\"{}\" is not key=value", kv));
    std::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    double d = 0;
    if (k == "gpus") {
      if (!ParseDecimal(v, d) || d != std::floor(d) || d < 0 || d > 64)
        return PoolError(text, fmt::format("gpus \"{}\": a whole number from 1 to 64", v));
      if (d == 0)
        return PoolError(text,
                         "gpus=0: a pool without GPUs cannot be sized by GPU demand; "
                         "give 1 to 64 GPUs a node");
      p.gpus = static_cast<int32_t>(d);
      has_gpus = true;
    } else if (k == "cpu") {
      if (!ParseDecimal(v, d) || d < 0.001 || d > 1e6)
        return PoolError(text, fmt::format("cpu \"{}\": cores, from 0.001 to 1000000", v));
      p.cpu_milli = std::llround(d * 1000);
      has_cpu = true;
    } else if (k == "memory") {
      if (!ParseMemoryMib(v, p.memory_mib))
        return PoolError(text, fmt::format("memory \"{}\": MiB, or a number with Ki, Mi, Gi or "
                                           "Ti (e.g. 768Gi)",
                                           v));
      has_memory = true;
    } else if (k == "model") {
      if (v.empty() || v.size() > 63)
        return PoolError(text, "model: 1 to 63 characters, e.g. A100");
      p.gpu_model = std::string(v);
    } else if (k == "pods") {
      if (!ParseDecimal(v, d) || d != std::floor(d) || d < 1 || d > 10000)
        return PoolError(text, fmt::format("pods \"{}\": a whole number from 1 to 10000", v));
      p.max_pods = static_cast<int32_t>(d);
    } else if (k == "price") {
      if (!ParseDecimal(v, d) || d > 1e6)
        return PoolError(text, fmt::format("price \"{}\": dollars per node-hour, 0 to 1000000", v));
      p.price_per_node_hour = d;
    } else if (k == "spot") {
      if (!ParseDecimal(v, d) || d >= 1)
        return PoolError(text, fmt::format("spot \"{}\": the discount, from 0 to under 1", v));
      p.spot_discount = d;
      p.spot = true;
    } else if (k == "interruptions") {
      if (!ParseDecimal(v, d) || d > 3600)
        return PoolError(text, fmt::format("interruptions \"{}\": per node-hour, 0 to 3600", v));
      p.interruptions_per_node_hour = d;
      has_rate = p.spot = true;
    } else if (k == "notice" || k == "replace") {
      if (!ParseDuration(v, d) || d > 7 * 86400)
        return PoolError(text, fmt::format("{} \"{}\": a duration up to 7d, seconds or with s, "
                                           "m, h or d (e.g. 2m)",
                                           k, v));
      (k == "notice" ? p.notice_seconds : p.replace_seconds) = d;
      p.spot = p.spot || k == "notice";
      has_replace = has_replace || k == "replace";
    } else if (k == "nodes") {
      if (!ParseDecimal(v, d) || d != std::floor(d) || d < 1 || d > 500000)
        return PoolError(text, fmt::format("nodes \"{}\": a whole number from 1 to 500000 (the "
                                           "pool's fixed size; leave it out to size the pool)",
                                           v));
      p.fixed_nodes = static_cast<int32_t>(d);
    } else {
      return PoolError(text, fmt::format("unknown key \"{}\" (gpus, model, cpu, memory, pods, "
                                         "price, spot, interruptions, notice, replace, nodes)",
                                         k));
    }
  }
  if (!has_gpus || !has_cpu || !has_memory)
    return PoolError(text, "gpus, cpu and memory are required");
  if (has_replace && !p.spot)
    return PoolError(text,
                     "replace= is how long an interrupted spot node takes to come back: give "
                     "spot=, interruptions= or notice= too");
  if (p.spot && !has_rate)
    p.interruptions_per_node_hour = PoolShape::kDefaultInterruptionsPerNodeHour;
  return p;
}

std::vector<TraceNode> PoolNodes(const PoolShape& pool, int32_t nodes) {
  TraceNode n;
  n.cpu_milli = pool.cpu_milli;
  n.memory_mib = pool.memory_mib;
  n.gpus = pool.gpus;
  n.max_pods = pool.max_pods;
  n.gpu_model = pool.gpu_model;
  n.source = fmt::format("--pool {}", pool.name);
  if (nodes <= 0) return {};
  if (pool.spot && pool.interruptions_per_node_hour > 0) {
    // One group of `nodes`, all up from the start, an interrupted one replaced.
    n.name = pool.name;
    n.autoscaling = NodePoolAutoscaling{nodes, nodes, pool.replace_seconds, 600};
    n.price_per_node_hour = pool.price_per_node_hour;
    n.spot =
        NodePoolSpot{pool.spot_discount, pool.interruptions_per_node_hour, pool.notice_seconds};
    return {n};
  }
  std::vector<TraceNode> out(static_cast<size_t>(nodes), n);
  for (int32_t i = 0; i < nodes; ++i)
    out[static_cast<size_t>(i)].name = fmt::format("{}-{}", pool.name, i);
  return out;
}

absl::StatusOr<Target> ParseTarget(const std::string& text) {
  const size_t eq = text.find('=');
  const std::string key = text.substr(0, eq);
  const std::string val = eq == std::string::npos ? "" : text.substr(eq + 1);
  static const std::map<std::string, Target::Kind> kKinds = {
      {"wait-mean", Target::Kind::kWaitMean}, {"wait-p50", Target::Kind::kWaitP50},
      {"wait-p95", Target::Kind::kWaitP95},   {"wait-p99", Target::Kind::kWaitP99},
      {"wait-max", Target::Kind::kWaitMax},   {"utilization", Target::Kind::kUtilization}};
  auto it = kKinds.find(key);
  if (eq == std::string::npos || it == kKinds.end())
    return absl::InvalidArgumentError(fmt::format(
        "--target \"{}\": expected wait-p50, wait-p95, wait-p99, wait-mean or wait-max=DURATION "
        "(e.g. wait-p95=30m) or utilization=FRACTION (e.g. utilization=0.8)",
        text));
  Target t{it->second, 0, text};
  double v = 0;
  if (t.kind == Target::Kind::kUtilization) {
    if (!ParseDecimal(val, v) || v <= 0 || v > 1)
      return absl::InvalidArgumentError(fmt::format(
          "--target \"{}\": utilization is a fraction of the GPUs, above 0 and at most 1", text));
    t.value = v;
    return t;
  }
  if (!ParseDuration(val, v))
    return absl::InvalidArgumentError(fmt::format(
        "--target \"{}\": \"{}\" is not a duration: a number of seconds, or with s, m, h or d "
        "(e.g. 30m)",
        text, val));
  t.value = v;
  return t;
}

}  // namespace tessera::trace
