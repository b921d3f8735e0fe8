// The FGD experiment's runs (fgd/experiment.h): the cluster and workload, the policy names, one
// run's random draws (pod order with the inflation, node ranks) and its result. The placement of
// the queue is in experiment_greedy.cc (the paper's policies, TesseraFGD, the lookahead) and
// experiment_plan.cc (TesseraPlan), on the cluster state of experiment_fill.cc; the reduction of
// a run's events to the 0..130% columns in experiment_curves.cc.
#include "fgd/experiment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "absl/status/status.h"
#include "fgd/experiment_internal.h"
#include "fgd/plan.h"
#include "fmt/format.h"

namespace tessera::fgd {
namespace {

using experiment_internal::Event;
using experiment_internal::Replay;

// The pod order of one run: the simulator sorts pods by name, shuffles them, then tunes the total
// GPU request to tune_ratio x the cluster's GPUs (tuneDownPods / tuneUpPods, including
// tuneUpPods' check of the per-GPU milli rather than the pod's total before it stops).
std::vector<int32_t> PodOrder(const Workload& w, const Cluster& cluster, double tune_ratio,
                              Rng& rng) {
  std::vector<int32_t> by_name(w.pods.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(), [&](int32_t a, int32_t b) {
    return w.names[static_cast<size_t>(a)] < w.names[static_cast<size_t>(b)];
  });
  std::vector<int32_t> order = by_name;
  rng.Shuffle(order);
  if (tune_ratio <= 0 || order.empty()) return order;

  int64_t total = 0;
  for (const PodShape& p : w.pods) total += int64_t{p.num_gpu} * p.gpu_milli;
  const double target = tune_ratio * static_cast<double>(cluster.total_gpus * kMilliPerGpu);
  if (static_cast<double>(total) > target) {
    while (static_cast<double>(total) > target && !order.empty()) {
      const size_t idx = static_cast<size_t>(rng.Below(order.size()));
      const PodShape& p = w.pods[static_cast<size_t>(order[idx])];
      total -= int64_t{p.num_gpu} * p.gpu_milli;
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(idx));
    }
  } else if (static_cast<double>(total) < target) {
    while (true) {
      const int32_t idx = by_name[static_cast<size_t>(rng.Below(by_name.size()))];
      const PodShape& p = w.pods[static_cast<size_t>(idx)];
      if (static_cast<double>(total + p.gpu_milli) > target) break;
      total += int64_t{p.num_gpu} * p.gpu_milli;
      order.push_back(idx);
      // A workload of CPU-only pods would never reach the target.
      if (order.size() > 64 * w.pods.size() + 1024) break;
    }
  }
  return order;
}

// The simulator renames node i (in name order) to "%04d-name" with rand.Perm, after tuning: the
// first-fit rank of each node.
std::vector<int32_t> NodeRanks(const Cluster& cluster, Rng& rng) {
  std::vector<int32_t> rank(cluster.nodes.size());
  std::vector<size_t> by_name(cluster.nodes.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](size_t a, size_t b) { return cluster.names[a] < cluster.names[b]; });
  std::vector<int32_t> perm(cluster.nodes.size());
  std::iota(perm.begin(), perm.end(), 0);
  rng.Shuffle(perm);
  for (size_t k = 0; k < by_name.size(); ++k) rank[by_name[k]] = perm[k];
  return rank;
}

Replay ReplayOrder(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                   const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  if (policy.plan && (policy.base == Policy::kFgd || policy.base == Policy::kTesseraFgd)) {
    return experiment_internal::ReplayPlan(cluster, workload, policy, order, rank, rng);
  }
  return experiment_internal::ReplayGreedy(cluster, workload, policy, order, rank, rng);
}

}  // namespace

Cluster MakeCluster(const std::vector<TraceNode>& nodes) {
  Cluster c;
  c.nodes.reserve(nodes.size());
  for (const TraceNode& n : nodes) {
    NodeGpuState s;
    s.cpu_free_milli = n.cpu_milli;
    s.mem_free_mib = n.memory_mib;
    s.gpu_model = n.gpu_model;
    s.num_gpus = n.num_gpus;
    for (int i = 0; i < n.num_gpus; ++i) s.gpu_free_milli[static_cast<size_t>(i)] = kMilliPerGpu;
    c.nodes.push_back(s);
    c.names.push_back(n.name);
    c.total_gpus += n.num_gpus;
  }
  return c;
}

Workload MakeWorkload(std::string name, std::vector<TracePod> pods) {
  Workload w;
  w.name = std::move(name);
  w.names.reserve(pods.size());
  w.pods.reserve(pods.size());
  for (TracePod& p : pods) {
    w.names.push_back(std::move(p.name));
    w.pods.push_back(std::move(p.shape));
  }
  w.typical = BuildTypicalPods(w.pods);
  w.measure = std::make_unique<FragmentationMeasure>(w.typical);
  return w;
}

absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view name) {
  if (std::optional<Policy> p = ParsePolicy(name)) return PolicySpec(*p);
  PolicySpec spec;
  spec.name = std::string(name);
  // "TesseraPlan", "TesseraPlan-bfd-nogangs-h90".
  if (name == "TesseraPlan" || name.starts_with("TesseraPlan-")) {
    spec.base = Policy::kTesseraFgd;
    spec.plan = true;
    std::string_view rest = name.substr(std::string_view("TesseraPlan").size());
    while (!rest.empty()) {
      rest.remove_prefix(1);  // '-'
      const size_t dash = rest.find('-');
      const std::string_view part = rest.substr(0, dash);
      rest = dash == std::string_view::npos ? std::string_view() : rest.substr(dash);
      int percent = 0;
      if (part == "bfd") {
        spec.plan_options.packing = SharePacking::kBestFitDecreasing;
      } else if (part == "noshares") {
        spec.plan_options.share_plan = false;
      } else if (part == "nogangs") {
        spec.plan_options.gang_reservations = false;
      } else if (part == "nobalance") {
        spec.plan_options.balance = false;
      } else if (part == "nomodels") {
        spec.plan_options.model_pressure = false;
      } else if (part.size() > 1 && part[0] == 'h' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 1 && percent <= 1000) {
        spec.plan_options.horizon = percent / 100.0;
      } else if (part.size() > 1 && part[0] == 'w' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 2) {
        spec.plan_options.window = static_cast<size_t>(percent);
      } else if (part.size() > 1 && part[0] == 'p' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 1 && percent <= 1000) {
        spec.plan_options.pressure_threshold = percent / 100.0;
      } else {
        return absl::InvalidArgumentError(fmt::format(
            "policy '{}': unknown part '{}' (TesseraPlan-[bfd|noshares|nogangs|nobalance|"
            "nomodels|hNN|pNN|wN]...)",
            name, part));
      }
    }
    return spec;
  }
  if (name == "TesseraLookahead") {
    spec.base = Policy::kTesseraFgd;
    spec.candidates = kLookaheadCandidates;
    spec.window = kLookaheadWindow;
    return spec;
  }
  // "TesseraLookahead-8x32", "FgdLookahead-4x16f".
  std::string_view rest;
  if (name.starts_with("TesseraLookahead-")) {
    spec.base = Policy::kTesseraFgd;
    rest = name.substr(17);
  } else if (name.starts_with("FgdLookahead-")) {
    spec.base = Policy::kFgd;
    rest = name.substr(13);
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "unknown policy '{}' (known: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, "
        "TesseraFGD, TesseraPlan, TesseraLookahead, TesseraLookahead-KxW, FgdLookahead-KxW)",
        name));
  }
  if (rest.ends_with('f')) {
    spec.frag_tiebreak = true;
    rest.remove_suffix(1);
  }
  const size_t x = rest.find('x');
  int k = 0, w = 0;
  const auto parse = [](std::string_view s, int& v) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && ptr == s.data() + s.size() && v >= 1 && v <= 4096;
  };
  if (x == std::string_view::npos || !parse(rest.substr(0, x), k) ||
      !parse(rest.substr(x + 1), w)) {
    return absl::InvalidArgumentError(fmt::format(
        "policy '{}': expected K x W after the dash, e.g. TesseraLookahead-8x32 (1..4096 each)",
        name));
  }
  spec.candidates = k;
  spec.window = w;
  return spec;
}

RunResult RunFgdExperiment(const Cluster& cluster, const Workload& workload,
                           const PolicySpec& policy, uint64_t seed,
                           const ExperimentOptions& options) {
  RunResult out;
  out.workload = workload.name;
  out.policy = policy.base;
  out.policy_name = policy.Name();
  out.seed = seed;
  out.total_gpus = cluster.total_gpus;

  Rng rng(seed);
  const std::vector<int32_t> order = PodOrder(workload, cluster, options.tune_ratio, rng);
  const std::vector<int32_t> rank = NodeRanks(cluster, rng);
  const Replay replay = ReplayOrder(cluster, workload, policy, order, rank, rng);

  std::vector<Event> events;
  events.reserve(order.size());
  int64_t arrived = 0;
  int64_t used = 0;
  for (size_t t = 0; t < order.size(); ++t) {
    const int64_t milli =
        PodRequest::Of(workload.pods[static_cast<size_t>(order[t])]).TotalGpuMilli();
    arrived += milli;
    ++out.pods_arrived;
    if (replay.node[t] < 0) {
      ++out.pods_failed;
    } else {
      used += milli;
      ++out.pods_placed;
    }
    events.push_back(Event{arrived, used, replay.frag[t]});
  }
  experiment_internal::Discretize(events, cluster.total_gpus, out);
  return out;
}

std::vector<int32_t> PlaceQueue(const Cluster& cluster, const Workload& workload,
                                const PolicySpec& policy, const std::vector<int32_t>& order,
                                const std::vector<int32_t>& rank, uint64_t seed) {
  Rng rng(seed);
  return ReplayOrder(cluster, workload, policy, order, rank, rng).node;
}

}  // namespace tessera::fgd
