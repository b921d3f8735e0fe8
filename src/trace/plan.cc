// The capacity calculator's search (trace/plan.h): bound the sizes to try, screen them on a
// prefix of a long trace, replay sizes in parallel, narrow the boundary between failing and
// meeting sizes, and check the answer against its neighbour below. Parsing: plan_parse.cc.
#include "trace/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <system_error>
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
// With spot interruptions a replay stops once the runs they cut short add up to this many times
// the GPU-hours the trace's jobs ask for (at least kMinLossBound): a rate that interrupts long
// gangs faster than they finish would otherwise replay for ever (docs/autoscaling.md).
constexpr double kLossBoundFactor = 10;
constexpr double kMinLossBound = 1000;

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
  bool fixed = false;  // beside fixed pools: a job may run on them, and no size is too small
  for (const auto& f : o.pools) fixed = fixed || f.fixed_nodes > 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& j = trace.jobs[i];
    int64_t k = PodsPerNode(trace, j, plan.pool);
    if (fixed) {
      for (const auto& f : o.pools)
        if (f.fixed_nodes > 0 && k == 0 && PodsPerNode(trace, j, f) > 0) k = -1;
      if (k != 0) continue;
    }
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
ReplayOptions::EarlyStop EarlyStopFor(const std::vector<Target>& targets, int64_t n) {
  ReplayOptions::EarlyStop es;
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

// The prefix that screens sizes (PlanOptions::screen_jobs): the replay stops at the arrival of
// its last job, and early once the prefix's jobs are known to miss the first wait target.
struct Screen {
  bool on = false;
  int64_t jobs = 0;  // the trace's jobs that arrive by `until`, the manifests' workloads too
  ReplayOptions options;
};

Screen ScreenFor(const Trace& trace, const Model& base, const PlanOptions& o,
                 const ReplayOptions& full) {
  Screen s;
  const auto n = static_cast<int64_t>(trace.jobs.size());
  int64_t k = o.screen_jobs;
  if (k < 0)
    k = n < 2 * PlanOptions::kDefaultScreenJobs
            ? 0
            : std::max<int64_t>(PlanOptions::kDefaultScreenJobs, n / 10);
  if (!o.stop_early || k <= 0 || k >= n) return s;
  std::vector<double> arrivals;
  arrivals.reserve(trace.jobs.size());
  for (const auto& j : trace.jobs) arrivals.push_back(j.arrival);
  std::nth_element(arrivals.begin(), arrivals.begin() + (k - 1), arrivals.end());
  // The prefix's jobs are judged at the end of the screen: it runs past the k-th arrival by the
  // wait bound, so that the jobs before it that are still pending then are known to be late.
  const auto es = EarlyStopFor(o.targets, n);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (es.wait_over == kInf && es.wait_sum_max == kInf) return s;  // no wait target
  double until = arrivals[static_cast<size_t>(k - 1)];
  if (es.wait_over < kInf) until += es.wait_over;
  until = std::min(until, full.until);
  // Every job that arrives by then counts, and the manifests' workloads whatever their arrival:
  // more jobs allow more late ones, so the screen fails less often.
  s.jobs = static_cast<int64_t>(base.workloads.size());
  for (const auto& j : trace.jobs) s.jobs += j.arrival <= until;
  s.options = full;
  s.options.until = until;
  s.options.early_stop = EarlyStopFor(o.targets, s.jobs);
  s.on = true;
  return s;
}

// One size: on the screen's prefix first (when `screen` is on), then, unless the prefix already
// misses the targets, on the whole trace.
absl::StatusOr<SizePoint> ReplayOne(const Trace& trace, const Model& base, const PlanOptions& o,
                                    const PoolShape& pool, int32_t nodes, const Screen& screen,
                                    const ReplayOptions& full, std::vector<std::string>* notes) {
  if (screen.on) {
    auto p = ReplayAtSize(trace, base, pool, nodes, o.targets, o.build, screen.options, notes);
    if (!p.ok() || p->stopped_early.empty()) {
      if (!p.ok()) return p;
    } else {
      p->screened_jobs = screen.jobs;
      p->why_not = fmt::format("fails on the first {} jobs ({}); not replayed in full", screen.jobs,
                               p->stopped_early);
      return p;
    }
  }
  return ReplayAtSize(trace, base, pool, nodes, o.targets, o.build, full, notes);
}

// Replays `sizes` on `threads` threads, adding the points to plan.points (kept by nodes). With
// `screen`, each size is screened on a prefix first (PlanOptions::screen_jobs); without, the
// sizes only screened so far are replayed in full and their points replaced.
absl::Status ReplaySizes(const Trace& trace, const Model& base, const PlanOptions& o,
                         std::vector<int32_t> sizes, bool screen, PoolPlan& plan,
                         PlanResult& result) {
  std::erase_if(sizes, [&](int32_t n) {
    const SizePoint* p = n < 1 ? nullptr : plan.At(n);
    return n < 1 || (p != nullptr && (screen || p->screened_jobs == 0));
  });
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty()) return absl::OkStatus();
  std::erase_if(plan.points, [&](const SizePoint& p) {
    return std::binary_search(sizes.begin(), sizes.end(), p.nodes);
  });
  std::vector<absl::StatusOr<SizePoint>> out(sizes.size(), absl::UnknownError("not run"));
  ReplayOptions ro = o.replay;
  if (o.stop_early)
    ro.early_stop =
        EarlyStopFor(o.targets, static_cast<int64_t>(trace.jobs.size() + base.workloads.size()));
  Screen sc;
  if (screen) sc = ScreenFor(trace, base, o, ro);
  std::vector<std::string> notes;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < sizes.size(); i = next.fetch_add(1))
      out[i] = ReplayOne(trace, base, o, plan.pool, sizes[i], sc, ro, i == 0 ? &notes : nullptr);
  };
  const size_t n = std::min(sizes.size(), static_cast<size_t>(std::max(1, o.threads)));
  std::vector<std::thread> pool;
  std::string no_thread;  // why a thread could not be started (EAGAIN: the machine's limit)
  for (size_t t = 1; t < n; ++t) {
    try {
      pool.push_back(o.start_thread ? o.start_thread(work) : std::thread(work));
    } catch (const std::system_error& e) {
      no_thread = e.what();
      break;  // the threads started share the replays; this one always works
    }
  }
  work();
  for (auto& t : pool) t.join();
  const std::string thread_note =
      no_thread.empty() ? ""
                        : fmt::format(
                              "a replay thread could not be started ({}); the replays "
                              "ran on fewer threads than asked for",
                              no_thread);
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
  if (!thread_note.empty() &&
      std::find(result.notes.begin(), result.notes.end(), thread_note) == result.notes.end())
    result.notes.push_back(thread_note);
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
                           /*screen=*/true, plan, result);
      !s.ok())
    return s;
  // Until a size that failed the screen meets the targets in full, the screen is trusted: its
  // failures count as failures. After that, only failures of the whole trace do.
  bool trust_screen = true;
  for (;;) {
    const SizePoint* fail = nullptr;  // the largest size that failed
    for (const auto& p : plan.points)
      if (!p.meets && (trust_screen || p.screened_jobs == 0)) fail = &p;
    // A size only screened that decides the answer (the largest size, or the neighbour below
    // the answer) is replayed in full first.
    const SizePoint& last = plan.points.back();
    const SizePoint* unsure = last.screened_jobs > 0 ? &last : nullptr;
    if (fail != nullptr && fail->screened_jobs > 0 && plan.At(fail->nodes + 1) != nullptr)
      unsure = fail;
    if (unsure != nullptr) {
      const int32_t n = unsure->nodes;
      if (auto s = ReplaySizes(trace, base, o, {n}, /*screen=*/false, plan, result); !s.ok())
        return s;
      if (plan.At(n)->meets) trust_screen = false;
      continue;
    }
    if (fail != nullptr && fail->nodes >= last.nodes) {
      plan.check = fmt::format("not met up to {} nodes: {}", plan.max_nodes, fail->why_not);
      return absl::OkStatus();
    }
    // The smallest size above `f` that met the targets (the largest size did).
    const int32_t f = fail ? fail->nodes : plan.points.front().nodes - 1;
    int32_t m = 0;
    for (const auto& p : plan.points)
      if (p.nodes > f && p.meets) {
        m = p.nodes;
        break;
      }
    // Once the screen misjudged, the sizes that failed it still guide the search: the largest
    // of them inside the gap is replayed in full next.
    const SizePoint* guess = nullptr;
    for (const auto& p : plan.points)
      if (p.nodes > f && p.nodes < m && p.screened_jobs > 0) guess = &p;
    if (!trust_screen && guess != nullptr) {
      if (auto s = ReplaySizes(trace, base, o, {guess->nodes}, /*screen=*/false, plan, result);
          !s.ok())
        return s;
      continue;
    }
    if (m - f <= 1) {
      // Once the screen misjudged a size, the sizes above the answer that only failed it are
      // replayed in full too: every size above the answer meets the targets in full.
      std::vector<int32_t> above;
      for (const auto& p : plan.points)
        if (p.nodes > m && p.screened_jobs > 0) above.push_back(p.nodes);
      if (above.empty()) {
        plan.answer = m;
        break;
      }
      if (auto s = ReplaySizes(trace, base, o, above, /*screen=*/false, plan, result); !s.ok())
        return s;
      continue;
    }
    std::vector<int32_t> inside;
    for (int j = 1; j <= kNarrowPerRound; ++j)
      inside.push_back(f + static_cast<int32_t>(std::llround(static_cast<double>(j) * (m - f) /
                                                             (kNarrowPerRound + 1))));
    if (auto s = ReplaySizes(trace, base, o, inside, trust_screen, plan, result); !s.ok()) return s;
  }
  const int32_t m = *plan.answer;
  if (m > 1 && plan.At(m - 1) == nullptr) {  // the answer is the smallest size tried
    if (auto s = ReplaySizes(trace, base, o, {m - 1}, /*screen=*/false, plan, result); !s.ok())
      return s;
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

// The fixed pools (nodes=) into `cluster` (the trace with their nodes) and `result`, and with a
// spot pool the replays' guard against interruptions that never let long jobs finish.
absl::Status FixedPools(const Trace& trace, PlanOptions& o, Trace& cluster, PlanResult& result) {
  cluster = trace;
  cluster.nodes.clear();
  bool sized = false, spot = false;
  for (const auto& p : o.pools) {
    spot = spot || (p.spot && p.interruptions_per_node_hour > 0);
    if (p.fixed_nodes == 0) {
      sized = true;
      continue;
    }
    result.fixed.push_back(p);
    for (auto& n : PoolNodes(p, p.fixed_nodes)) cluster.nodes.push_back(std::move(n));
  }
  if (!sized)
    return absl::InvalidArgumentError(
        "--pool: every pool has nodes=, so there is nothing to size; leave nodes= out of the "
        "pool to size");
  if (spot) {
    double asked = 0;  // GPU-hours the jobs ask for
    for (const auto& j : trace.jobs)
      if (j.duration > 0)
        asked += static_cast<double>(j.pods * j.PodGpuMilli()) / 1000 * j.duration / 3600;
    o.replay.max_interruption_loss_gpu_hours = std::max(kMinLossBound, kLossBoundFactor * asked);
  }
  return absl::OkStatus();
}

// One pool sized beside the fixed ones of `cluster`: the fixed pools alone first (0 nodes of the
// pool; the answer when they meet the targets), then the search. Costs include the fixed pools.
absl::Status SizeBeside(const Trace& cluster, const Model& base, const PlanOptions& o,
                        PoolPlan& plan, PlanResult& result) {
  if (!result.fixed.empty()) {
    ReplayOptions ro = o.replay;
    if (o.stop_early)
      ro.early_stop = EarlyStopFor(
          o.targets, static_cast<int64_t>(cluster.jobs.size() + base.workloads.size()));
    std::vector<std::string> notes;
    auto zero = ReplayAtSize(cluster, base, plan.pool, 0, o.targets, o.build, ro, &notes);
    if (!zero.ok())
      return absl::Status(zero.status().code(), fmt::format("the fixed pools alone: {}",
                                                            std::string(zero.status().message())));
    ++result.replays;
    if (result.notes.empty()) result.notes = std::move(notes);
    plan.points.push_back(*std::move(zero));
    if (plan.points.back().meets) {
      plan.answer = 0;
      plan.check = "check: the fixed pools alone meet the targets: " +
                   Verdict(plan.points.back(), o.targets);
    }
  }
  if (!plan.answer)
    if (auto s = Search(cluster, base, o, plan, result); !s.ok()) return s;
  double fixed_cost = 0;
  for (const auto& f : result.fixed)
    fixed_cost += f.fixed_nodes * f.NodeHourPrice() * kHoursPerMonth;
  for (auto& p : plan.points) p.cost_per_month += fixed_cost;
  return absl::OkStatus();
}

// The GPUs the manifests' quotas admit at once on nodes of `pool`: the nominal GPU quota of
// every ClusterQueue and Cohort in the flavors whose node labels the pool's nodes carry (no
// borrowing goes past the sum). None without ClusterQueues (the default queues grow with the
// cluster) or with --unqueued.
std::optional<double> QuotaCapGpus(const Model& base, const BuildOptions& build,
                                   const PoolShape& pool) {
  if (build.unqueued || base.cluster_queues.empty()) return std::nullopt;
  Labels labels;
  if (!pool.gpu_model.empty()) labels["nvidia.com/gpu.product"] = pool.gpu_model;
  std::vector<std::string> flavors;
  for (const auto& f : base.flavors)
    if (MatchesNodeSelector(f.node_labels, labels)) flavors.push_back(f.name);
  double gpus = 0;
  auto add = [&](const std::vector<ResourceGroup>& groups) {
    for (const auto& g : groups)
      for (const auto& f : g.flavors) {
        if (std::find(flavors.begin(), flavors.end(), f.flavor) == flavors.end()) continue;
        for (const auto& r : f.resources) {
          if (r.resource == kGpu) gpus += static_cast<double>(r.nominal);
          if (r.resource == kGpuMilli) gpus += static_cast<double>(r.nominal) / kMilliPerGpu;
        }
      }
  };
  for (const auto& cq : base.cluster_queues) add(cq.resource_groups);
  for (const auto& c : base.cohorts) add(c.resource_groups);
  return gpus;
}

// A plan that found no size, when the sizes tried go past what the quotas admit: the quotas,
// not the nodes, are the cap, and more nodes cannot help.
void SayQuotaCap(const Model& base, const PlanOptions& o, PoolPlan& plan) {
  if (plan.answer || plan.points.empty()) return;
  const std::optional<double> cap = QuotaCapGpus(base, o.build, plan.pool);
  if (!cap) return;
  const auto nodes = static_cast<int32_t>(std::ceil(*cap / plan.pool.gpus));
  if (plan.points.back().nodes <= nodes) return;
  plan.check += fmt::format(
      "; the ClusterQueues' quotas, not the nodes, are the cap: their nominal quota admits at "
      "most {:g} GPUs on nodes of this pool ({} nodes), so larger sizes cannot shorten the "
      "waits (raise the quotas in the manifests, or leave their ClusterQueues out to plan "
      "with default queues that grow with the cluster)",
      *cap, nodes);
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

absl::StatusOr<SizePoint> ReplayAtSize(const Trace& trace, const Model& base, const PoolShape& pool,
                                       int32_t nodes, const std::vector<Target>& targets,
                                       const BuildOptions& build, const ReplayOptions& replay,
                                       std::vector<std::string>* notes) {
  Trace t = trace;  // its nodes: the fixed pools
  for (auto& n : PoolNodes(pool, nodes)) t.nodes.push_back(std::move(n));
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
  p.wait = r->total_wait;  // waits after a preemption or interruption included
  p.utilization = r->mean_allocation_pct / 100.0;
  p.gpu_hours_allocated = r->all.gpu_hours;
  const double hours = p.span_seconds / 3600.0;
  p.gpu_hours_paid = static_cast<double>(p.gpus) * hours;
  p.effective_gpus = hours > 0 ? p.gpu_hours_allocated / hours : 0;
  p.wasted_gpus = static_cast<double>(p.gpus) - p.effective_gpus;
  p.cost_per_month = nodes * pool.NodeHourPrice() * kHoursPerMonth;
  p.preemptions = r->preemptions;
  for (const auto& u : r->node_pools) p.interruptions += u.interrupted;
  p.gpu_hours_lost_to_interruptions = r->gpu_hours_lost_to_interruptions;
  if (r->gpu_failures) {
    p.gpu_failures = r->gpu_failures->failures;
    p.gpu_hours_lost_to_failures = r->gpu_failures->gpu_hours_lost;
  }
  p.stopped_early = r->stopped_early;
  p.meets = p.stopped_early.empty();
  if (!p.meets)
    p.why_not =
        (r->gpu_hours_lost_to_interruptions > replay.max_interruption_loss_gpu_hours
             ? fmt::format("not run to the end: interruptions lost over {} times the "
                           "GPU-hours the jobs ask for (they rerun from the start or their last "
                           "checkpoint), ",
                           kLossBoundFactor)
             : "targets missed, ") +
        p.stopped_early;
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
  // The cluster every replay starts from: the fixed pools.
  Trace cluster;
  PlanOptions o = options;
  if (auto s = FixedPools(trace, o, cluster, result); !s.ok()) return s;
  for (const auto& shape : o.pools) {
    if (shape.fixed_nodes > 0) continue;
    PoolPlan plan;
    plan.pool = shape;
    Bounds(trace, o, plan);
    if (plan.unfit_jobs > 0) {
      plan.check = fmt::format(
          "cannot run the trace: {} jobs fit on no node of this shape{} "
          "(first: {})",
          plan.unfit_jobs, result.fixed.empty() ? "" : " or of the fixed pools",
          plan.unfit_example);
    } else if (plan.max_nodes < plan.min_nodes) {
      plan.check = fmt::format("not met up to {} nodes: the largest job needs {} nodes",
                               plan.max_nodes, plan.min_nodes);
    } else if (auto s = SizeBeside(cluster, base, o, plan, result); !s.ok()) {
      return s;
    } else {
      SayQuotaCap(base, o, plan);
      // Spare nodes for GPU failures: the same search with GPUs that never fail.
      if (o.replay.gpu_failures.enabled()) {
        PlanOptions healthy = o;
        healthy.replay.gpu_failures = {};
        PoolPlan h;
        h.pool = shape;
        Bounds(trace, healthy, h);
        if (auto st = SizeBeside(cluster, base, healthy, h, result); !st.ok()) return st;
        plan.answer_without_failures = h.answer;
      }
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
