// The capacity calculator's search (trace/plan.h): parse pools and targets, bound the sizes to
// try, replay sizes in parallel, narrow the boundary between failing and meeting sizes, and
// check the answer against its neighbour below.
#include "trace/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <thread>

#include "fmt/format.h"
#include "trace/report.h"

namespace tessera::trace {
namespace {

// Sizes replayed inside the gap per round of the narrowing. Fixed, not the thread count, so that
// the sizes tried (and so the answer) do not depend on the machine.
constexpr int kNarrowPerRound = 3;
// The default largest size is twice the peak offered demand, at most this many nodes.
constexpr int64_t kDefaultMaxNodesCap = 20000;
constexpr int32_t kMaxNodes = 500000;   // as NodePool count (docs/manifests.md)
constexpr double kHoursPerMonth = 720;  // 30 days

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

bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

absl::Status PoolError(const std::string& text, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("--pool \"{}\": {}", text, what));
}

// How many pods of `job` one node of `pool` holds (0: none, the job cannot run there).
int64_t PodsPerNode(const Trace& trace, const TraceJob& job, const PoolShape& pool) {
  if (job.gpu_models >= 0) {
    const auto& set = trace.gpu_model_sets[static_cast<size_t>(job.gpu_models)];
    if (std::find(set.begin(), set.end(), pool.gpu_model) == set.end()) return 0;
  }
  int64_t k = pool.max_pods;
  if (job.gpu_milli > 0) k = std::min<int64_t>(k, int64_t{pool.gpus} * 1000 / job.gpu_milli);
  if (job.gpus > 0) k = std::min<int64_t>(k, pool.gpus / job.gpus);
  if (job.cpu_milli > 0) k = std::min(k, pool.cpu_milli / job.cpu_milli);
  if (job.memory_mib > 0) k = std::min(k, pool.memory_mib / job.memory_mib);
  return std::max<int64_t>(k, 0);
}

std::string JobPlace(const Trace& trace, const TraceJob& job, size_t index) {
  std::string name = job.name.empty() ? fmt::format("job-{}", index) : job.name;
  if (job.line > 0 && !trace.jobs_file.empty())
    return fmt::format("{}:{}: {}", trace.jobs_file, job.line, name);
  return name;
}

std::string PodWords(const TraceJob& j) {
  std::string gpu =
      j.gpu_milli > 0 ? fmt::format("{} GPU milli", j.gpu_milli) : fmt::format("{} GPUs", j.gpus);
  return fmt::format("a pod of {}, {} cpu milli, {} MiB", gpu, j.cpu_milli, j.memory_mib);
}

// The bounds of the search for one pool: the fewest nodes that hold the largest gang, and twice
// the nodes the peak offered demand needs (every job started at its arrival, on any resource).
void Bounds(const Trace& trace, const PlanOptions& o, PoolPlan& plan) {
  int64_t fewest = 1;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& j = trace.jobs[i];
    int64_t k = PodsPerNode(trace, j, plan.pool);
    if (k == 0) {
      if (plan.unfit_jobs++ == 0)
        plan.unfit_example = fmt::format("{} needs {}{}", JobPlace(trace, j, i), PodWords(j),
                                         j.gpu_models >= 0 ? " of a GPU model it names" : "");
      continue;
    }
    fewest = std::max(fewest, (j.pods + k - 1) / k);
  }
  // Peak offered demand: a sweep over arrivals and departures.
  std::vector<std::pair<double, int>> events;  // time, +1 arrival / -1 departure of job index+1
  events.reserve(trace.jobs.size() * 2);
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& j = trace.jobs[i];
    events.emplace_back(j.arrival, static_cast<int>(i + 1));
    if (j.duration >= 0) events.emplace_back(j.arrival + j.duration, -static_cast<int>(i + 1));
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;  // departures first
  });
  double gpu = 0, cpu = 0, mem = 0, peak = 0;
  const PoolShape& p = plan.pool;
  for (const auto& [t, e] : events) {
    const TraceJob& j = trace.jobs[static_cast<size_t>(std::abs(e) - 1)];
    const double sign = e > 0 ? 1 : -1;
    gpu += sign * static_cast<double>(j.pods * j.PodGpuMilli()) / (1000.0 * p.gpus);
    cpu += sign * static_cast<double>(j.pods * j.cpu_milli) / static_cast<double>(p.cpu_milli);
    mem += sign * static_cast<double>(j.pods * j.memory_mib) / static_cast<double>(p.memory_mib);
    peak = std::max({peak, gpu, cpu, mem});
  }
  int64_t most = std::min<int64_t>(kDefaultMaxNodesCap, 2 * static_cast<int64_t>(std::ceil(peak)));
  plan.min_nodes =
      o.min_nodes > 0 ? o.min_nodes : static_cast<int32_t>(std::min<int64_t>(fewest, kMaxNodes));
  plan.max_nodes =
      o.max_nodes > 0 ? o.max_nodes : static_cast<int32_t>(std::max<int64_t>(most, plan.min_nodes));
}

bool Met(const Target& t, const SizePoint& p, std::string& why) {
  const double v = TargetValue(t, p);
  if (p.unserved > 0) {
    why = fmt::format("{} jobs never started", p.unserved);
    return false;
  }
  if (v <= t.value) return true;
  why = t.kind == Target::Kind::kUtilization
            ? fmt::format("utilization {:.1f}% > {:.1f}%", 100 * v, 100 * t.value)
            : fmt::format("{} {} > {}", TargetName(t.kind), FormatDuration(v),
                          FormatDuration(t.value));
  return false;
}

// When a replay can stop: the first wait target (of jobs in the trace and the manifests) says
// how many jobs may wait how long, or how long all may wait together.
ReplayOptions::EarlyStop EarlyStopFor(const std::vector<Target>& targets, const Trace& trace,
                                      const Model& base) {
  ReplayOptions::EarlyStop es;
  const auto n = static_cast<int64_t>(trace.jobs.size() + base.workloads.size());
  for (const auto& t : targets) {
    double pct = 0;
    switch (t.kind) {
      case Target::Kind::kWaitP50:
        pct = 50;
        break;
      case Target::Kind::kWaitP95:
        pct = 95;
        break;
      case Target::Kind::kWaitP99:
        pct = 99;
        break;
      case Target::Kind::kWaitMax:
        pct = 100;
        break;
      case Target::Kind::kWaitMean:
        // A little slack: the plan's mean is summed in another order.
        es.wait_sum_max = t.value * static_cast<double>(n) * (1 + 1e-9) + 1e-6;
        return es;
      case Target::Kind::kUtilization:
        continue;
    }
    // As Summarize (trace/metrics.cc) ranks: pX is the k-th smallest wait, k = ceil(X% of n);
    // it is over the bound once more than n - k jobs waited longer.
    const auto k = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(pct / 100.0 * static_cast<double>(n))), 1, n);
    es.wait_over = t.value;
    es.late_allowed = n - k;
    return es;
  }
  return es;
}

// Replays `sizes` on `threads` threads, adding the points to plan.points (kept by nodes).
absl::Status ReplaySizes(const Trace& trace, const Model& base, const PlanOptions& o,
                         std::vector<int32_t> sizes, PoolPlan& plan, PlanResult& result) {
  std::erase_if(sizes, [&](int32_t n) { return n < 1 || plan.At(n) != nullptr; });
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty()) return absl::OkStatus();
  std::vector<absl::StatusOr<SizePoint>> out(sizes.size(), absl::UnknownError("not run"));
  ReplayOptions ro = o.replay;
  if (o.stop_early) ro.early_stop = EarlyStopFor(o.targets, trace, base);
  std::vector<std::string> notes;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < sizes.size(); i = next.fetch_add(1))
      out[i] = ReplayAtSize(trace, base, plan.pool, sizes[i], o.targets, o.build, ro,
                            i == 0 ? &notes : nullptr);
  };
  const size_t n = std::min(sizes.size(), static_cast<size_t>(std::max(1, o.threads)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!out[i].ok())
      return absl::Status(out[i].status().code(),
                          fmt::format("pool {}, {} nodes: {}", plan.pool.name, sizes[i],
                                      std::string(out[i].status().message())));
    plan.points.push_back(*std::move(out[i]));
  }
  std::sort(plan.points.begin(), plan.points.end(),
            [](const SizePoint& a, const SizePoint& b) { return a.nodes < b.nodes; });
  result.replays += static_cast<int64_t>(sizes.size());
  if (result.notes.empty()) result.notes = std::move(notes);
  return absl::OkStatus();
}

std::vector<int32_t> Spread(int32_t lo, int32_t hi, int32_t count) {
  std::vector<int32_t> sizes;
  if (count <= 1 || hi <= lo) return {lo, hi};
  for (int32_t i = 0; i < count; ++i)
    sizes.push_back(
        lo + static_cast<int32_t>(std::llround(static_cast<double>(i) * (hi - lo) / (count - 1))));
  return sizes;
}

// Words for one replayed size against the targets.
std::string Verdict(const SizePoint& p, const std::vector<Target>& ts) {
  if (!p.stopped_early.empty()) return fmt::format("{} nodes do not ({})", p.nodes, p.why_not);
  std::string values;
  for (const auto& t : ts) {
    const double v = TargetValue(t, p);
    values += fmt::format(
        "{}{} {}", values.empty() ? "" : ", ", TargetName(t.kind),
        t.kind == Target::Kind::kUtilization ? fmt::format("{:.1f}%", 100 * v) : FormatDuration(v));
  }
  if (p.unserved > 0) values += fmt::format(", {} jobs never started", p.unserved);
  return fmt::format("{} nodes {} ({})", p.nodes, p.meets ? "meet the targets" : "do not", values);
}

// Narrows the gap between the largest failing size and the next meeting one, then checks.
absl::Status Search(const Trace& trace, const Model& base, const PlanOptions& o, PoolPlan& plan,
                    PlanResult& result) {
  if (auto s = ReplaySizes(trace, base, o, Spread(plan.min_nodes, plan.max_nodes, o.curve_points),
                           plan, result);
      !s.ok())
    return s;
  for (;;) {
    const SizePoint* fail = nullptr;  // the largest size that failed
    for (const auto& p : plan.points)
      if (!p.meets) fail = &p;
    if (fail != nullptr && fail->nodes >= plan.points.back().nodes) {
      plan.check = fmt::format("not met up to {} nodes: {}", plan.max_nodes, fail->why_not);
      return absl::OkStatus();
    }
    const int32_t f = fail ? fail->nodes : plan.points.front().nodes - 1;
    int32_t m = 0;
    for (const auto& p : plan.points)
      if (p.nodes > f) {
        m = p.nodes;
        break;
      }
    if (m - f <= 1) {
      plan.answer = m;
      break;
    }
    std::vector<int32_t> inside;
    for (int j = 1; j <= kNarrowPerRound; ++j)
      inside.push_back(f + static_cast<int32_t>(std::llround(static_cast<double>(j) * (m - f) /
                                                             (kNarrowPerRound + 1))));
    if (auto s = ReplaySizes(trace, base, o, inside, plan, result); !s.ok()) return s;
  }
  const int32_t m = *plan.answer;
  if (m > 1 && plan.At(m - 1) == nullptr) {  // the answer is the smallest size tried
    if (auto s = ReplaySizes(trace, base, o, {m - 1}, plan, result); !s.ok()) return s;
  }
  const SizePoint* at = plan.At(m);
  const SizePoint* below = plan.At(m - 1);
  plan.check = "check: " + Verdict(*at, o.targets) + "; ";
  if (below == nullptr) {
    plan.check += fmt::format("{} nodes run nothing", m - 1);
  } else {
    plan.check += Verdict(*below, o.targets);
    if (below->meets)
      plan.warnings.push_back(fmt::format(
          "{} nodes also meet the targets: the search starts at --min-nodes {}; lower it to "
          "look further",
          m - 1, plan.min_nodes));
  }
  for (const auto& p : plan.points)
    if (p.meets && p.nodes < m - 1)
      plan.warnings.push_back(fmt::format(
          "{} nodes met the targets, but {} did not: the metric is not monotone in the cluster "
          "size here; the answer is the smallest size above which every size tried met them",
          p.nodes, m - 1));
  return absl::OkStatus();
}

}  // namespace

const SizePoint* PoolPlan::At(int32_t nodes) const {
  for (const auto& p : points)
    if (p.nodes == nodes) return &p;
  return nullptr;
}

std::string TargetName(Target::Kind kind) {
  switch (kind) {
    case Target::Kind::kWaitMean:
      return "wait-mean";
    case Target::Kind::kWaitP50:
      return "wait-p50";
    case Target::Kind::kWaitP95:
      return "wait-p95";
    case Target::Kind::kWaitP99:
      return "wait-p99";
    case Target::Kind::kWaitMax:
      return "wait-max";
    case Target::Kind::kUtilization:
      return "utilization";
  }
  return "?";
}

double TargetValue(const Target& t, const SizePoint& p) {
  switch (t.kind) {
    case Target::Kind::kWaitMean:
      return p.wait.mean;
    case Target::Kind::kWaitP50:
      return p.wait.p50;
    case Target::Kind::kWaitP95:
      return p.wait.p95;
    case Target::Kind::kWaitP99:
      return p.wait.p99;
    case Target::Kind::kWaitMax:
      return p.wait.max;
    case Target::Kind::kUtilization:
      return p.utilization;
  }
  return 0;
}

absl::StatusOr<PoolShape> ParsePool(const std::string& text) {
  PoolShape p;
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    return PoolError(text, "expected NAME:gpus=G,cpu=C,memory=M[,model=X][,price=P][,spot=D]");
  p.name = text.substr(0, colon);
  if (!ValidName(p.name))
    return PoolError(text,
                     "the name must be 1 to 40 of a-z, 0-9 and '-', not starting or "
                     "ending with '-'");
  bool has_gpus = false, has_cpu = false, has_memory = false;
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
    } else {
      return PoolError(text, fmt::format("unknown key \"{}\" (gpus, model, cpu, memory, pods, "
                                         "price, spot)",
                                         k));
    }
  }
  if (!has_gpus || !has_cpu || !has_memory)
    return PoolError(text, "gpus, cpu and memory are required");
  return p;
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
  std::string_view num = val;
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
  if (!ParseDecimal(num, v) || v * unit > 1e12)
    return absl::InvalidArgumentError(fmt::format(
        "--target \"{}\": \"{}\" is not a duration: a number of seconds, or with s, m, h or d "
        "(e.g. 30m)",
        text, val));
  t.value = v * unit;
  return t;
}

absl::StatusOr<SizePoint> ReplayAtSize(const Trace& trace, const Model& base, const PoolShape& pool,
                                       int32_t nodes, const std::vector<Target>& targets,
                                       const BuildOptions& build, const ReplayOptions& replay,
                                       std::vector<std::string>* notes) {
  Trace t = trace;
  t.nodes.clear();
  t.nodes.reserve(static_cast<size_t>(nodes));
  for (int32_t i = 0; i < nodes; ++i) {
    TraceNode n;
    n.name = fmt::format("{}-{}", pool.name, i);
    n.cpu_milli = pool.cpu_milli;
    n.memory_mib = pool.memory_mib;
    n.gpus = pool.gpus;
    n.max_pods = pool.max_pods;
    n.gpu_model = pool.gpu_model;
    n.source = fmt::format("--pool {}", pool.name);
    t.nodes.push_back(std::move(n));
  }
  Model model = base;
  std::vector<std::string> assumed;
  auto conv = BuildModel(t, build, model, assumed);
  if (!conv.ok()) return conv.status();
  if (notes != nullptr) *notes = std::move(assumed);
  auto r = RunReplay(std::move(model), t, *conv, replay);
  if (!r.ok()) return r.status();

  SizePoint p;
  p.nodes = nodes;
  p.gpus = r->gpus_total;
  p.span_seconds = std::max(0.0, r->end - r->start);
  p.jobs = r->all.jobs;
  p.unserved = r->all.rejected + r->all.pending_at_end;
  p.wait = r->all.wait;
  p.utilization = r->mean_allocation_pct / 100.0;
  p.gpu_hours_allocated = r->all.gpu_hours;
  const double hours = p.span_seconds / 3600.0;
  p.gpu_hours_paid = static_cast<double>(p.gpus) * hours;
  p.effective_gpus = hours > 0 ? p.gpu_hours_allocated / hours : 0;
  p.wasted_gpus = static_cast<double>(p.gpus) - p.effective_gpus;
  p.cost_per_month = nodes * pool.NodeHourPrice() * kHoursPerMonth;
  p.preemptions = r->preemptions;
  p.stopped_early = r->stopped_early;
  p.meets = p.stopped_early.empty();
  if (!p.meets) p.why_not = "targets missed, " + p.stopped_early;
  for (const auto& target : targets) {
    if (!p.meets) break;
    if (!Met(target, p, p.why_not)) {
      p.meets = false;
      break;
    }
  }
  return p;
}

absl::StatusOr<PlanResult> RunPlan(const Trace& trace, const Model& base,
                                   const PlanOptions& options) {
  PlanResult result;
  result.targets = options.targets;
  result.jobs = static_cast<int64_t>(trace.jobs.size());
  for (const auto& shape : options.pools) {
    PoolPlan plan;
    plan.pool = shape;
    Bounds(trace, options, plan);
    if (plan.unfit_jobs > 0) {
      plan.check = fmt::format(
          "cannot run the trace: {} jobs fit on no node of this shape "
          "(first: {})",
          plan.unfit_jobs, plan.unfit_example);
    } else if (plan.max_nodes < plan.min_nodes) {
      plan.check = fmt::format("not met up to {} nodes: the largest job needs {} nodes",
                               plan.max_nodes, plan.min_nodes);
    } else if (auto s = Search(trace, base, options, plan, result); !s.ok()) {
      return s;
    }
    result.pools.push_back(std::move(plan));
  }
  for (size_t i = 0; i < result.pools.size(); ++i) {
    const PoolPlan& p = result.pools[i];
    if (!p.answer) continue;
    if (!result.best) {
      result.best = i;
      continue;
    }
    const SizePoint* a = p.At(*p.answer);
    const PoolPlan& bp = result.pools[*result.best];
    const SizePoint* b = bp.At(*bp.answer);
    if (a->cost_per_month < b->cost_per_month ||
        (a->cost_per_month == b->cost_per_month && a->gpus < b->gpus))
      result.best = i;
  }
  return result;
}

}  // namespace tessera::trace
