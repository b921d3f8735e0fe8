// The FGD paper's fragmentation experiment (ATC'23, section 6; the authors' simulator run with
// experiments/run_scripts): a cluster is filled by one workload's pods, one at a time; pods never
// leave; a pod that fits nowhere is dropped. GPU allocation and fragmentation are recorded against
// the arrived GPU request, as a percent of the cluster's GPUs, 0..130.
//
// This is a fast path of its own (flat node arrays, cached per-node fragmentation), not the
// general engine: one run on the 1,213-node openb cluster takes well under a second. It scores
// with fgd::Scorer and orders nodes and chooses GPUs with fgd/placement.h, the functions the
// engine's FGD placement is to share; docs/fgd.md ("One placement path") lists what it skips or
// does differently from the engine.
//
// Thread-safety: RunFgdExperiment only reads its inputs; runs may proceed in parallel.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fgd/fragmentation.h"
#include "fgd/plan.h"
#include "fgd/scorer.h"
#include "fgd/trace_csv.h"

namespace tessera::fgd {

inline constexpr int kMaxLoadPercent = 130;
inline constexpr int kLoadColumns = kMaxLoadPercent + 1;

struct Cluster {
  std::vector<NodeGpuState> nodes;  // all free
  std::vector<std::string> names;
  int64_t total_gpus = 0;
};
Cluster MakeCluster(const std::vector<TraceNode>& nodes);

// One pod list with what every run on it shares: the typical pods and their measure.
struct Workload {
  std::string name;                // the pod file's name without ".csv"
  std::vector<std::string> names;  // pod names, for the simulator's name order before shuffling
  std::vector<PodShape> pods;
  std::vector<TypicalPod> typical;
  std::unique_ptr<FragmentationMeasure> measure;
};
// Builds the typical pods of `pods` (the paper's options) and the measure.
Workload MakeWorkload(std::string name, std::vector<TracePod> pods);

struct ExperimentOptions {
  // The total GPU request is brought to this multiple of the cluster's GPUs by dropping random
  // pods or appending copies of random pods (the simulator's workloadTuningConfig).
  double tune_ratio = 1.3;
};

// A policy of the experiment: a node scorer of the paper (or TesseraFGD) and, optionally, a
// lookahead over the queue (docs/fgd.md, "TesseraLookahead"): for each pod, the `candidates`
// best placements by the scorer's order are each followed by a greedy rollout of the next
// `window` pods of the queue (nothing further), and the placement whose rollout drops the
// fewest GPU milli wins (equal: the scorer's order). Lookahead needs an FGD-family base.
// Or TesseraPlan (`plan`; docs/fgd.md, "TesseraPlan"): TesseraFGD's scorer with the share plan,
// reservations, the CPU/memory balance and the GPU-model pressure of fgd/plan.h.
struct PolicySpec {
  Policy base = Policy::kFgd;
  int candidates = 0;  // 0: no lookahead, the scorer's choice
  int window = 0;
  // Equal drops: the lower cluster fragmentation at the end of the window before the scorer's
  // order (an experiment variant; off in TesseraLookahead).
  bool frag_tiebreak = false;
  bool plan = false;
  PlanOptions plan_options;
  std::string name;  // as printed; PolicyName(base) when empty

  PolicySpec() = default;
  PolicySpec(Policy p) : base(p) {}  // NOLINT(google-explicit-constructor): a plain policy
  std::string Name() const { return name.empty() ? std::string(PolicyName(base)) : name; }
  bool lookahead() const { return candidates > 0 && window > 0; }
};

// The policy names of `tessera sim fgd --policies`: those of ParsePolicy, "TesseraLookahead"
// (TesseraFGD with kLookaheadCandidates x kLookaheadWindow), "TesseraPlan" and, for
// experiments, "TesseraLookahead-KxW" / "FgdLookahead-KxW" (K candidates, a window of W pods; a
// trailing "f" turns frag_tiebreak on) and TesseraPlan with parts changed or left out:
// "TesseraPlan-bfd" (best fit decreasing instead of MBS'), "-noshares", "-nogangs",
// "-nobalance", "-nomodels", "-hNN" (horizon NN% of the cluster's GPUs), "-pNN" (pressure
// threshold NN%), "-wN" (plans of the next N pods only), combined in any order
// ("TesseraPlan-bfd-nogangs").
inline constexpr int kLookaheadCandidates = 8;
inline constexpr int kLookaheadWindow = 32;
[[nodiscard]] absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view name);

struct RunResult {
  std::string workload;
  Policy policy = Policy::kFgd;
  std::string policy_name;  // PolicySpec::Name()
  uint64_t seed = 0;
  int64_t total_gpus = 0;
  // Per arrived-load percent 0..130, as the authors' analysis scripts compute them: the mean
  // over the pod events whose arrived load rounds to that percent (or, when none does, to a
  // neighbour), rounded to 2 decimals. nullopt where no event is near.
  std::array<std::optional<double>, kLoadColumns> alloc_percent;
  std::array<std::optional<double>, kLoadColumns> frag_percent;
  int64_t pods_arrived = 0;
  int64_t pods_placed = 0;
  int64_t pods_failed = 0;

  // 100 - allocation at 100% arrived load (the paper's "unallocated GPUs"), nullopt if missing.
  std::optional<double> UnallocatedAt100() const {
    if (!alloc_percent[100]) return std::nullopt;
    return 100.0 - *alloc_percent[100];
  }
};

RunResult RunFgdExperiment(const Cluster& cluster, const Workload& workload,
                           const PolicySpec& policy, uint64_t seed,
                           const ExperimentOptions& options = {});

// Places workload.pods[order[0]], workload.pods[order[1]], ... one at a time as a run does after
// its shuffle, with node i at first-fit rank rank[i] (lower first) and random draws (Random)
// from `seed`. Returns each position's node, -1 where the pod fit nowhere. For tests and tools.
std::vector<int32_t> PlaceQueue(const Cluster& cluster, const Workload& workload,
                                const PolicySpec& policy, const std::vector<int32_t>& order,
                                const std::vector<int32_t>& rank, uint64_t seed = 0);
inline RunResult RunFgdExperiment(const Cluster& cluster, const Workload& workload, Policy policy,
                                  uint64_t seed, const ExperimentOptions& options = {}) {
  return RunFgdExperiment(cluster, workload, PolicySpec(policy), seed, options);
}

}  // namespace tessera::fgd
