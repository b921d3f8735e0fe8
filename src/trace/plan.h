// The capacity calculator behind `tessera sim plan` (issue 17): given a trace, candidate node
// shapes (pools) and targets such as "wait p95 at most 30 minutes", it replays the trace on
// fixed clusters of 1..N nodes of each shape and finds the smallest cluster that meets every
// target, with the curve of wait, utilization and cost against cluster size on the way.
// docs/autoscaling.md ("Capacity calculator") is the manual.
//
// The search per pool: replay `curve_points` sizes spread evenly over [min, max] (the curve),
// find the largest size that failed, then narrow the gap above it by replaying a fixed number of
// sizes inside it per round until the failing and the meeting size are neighbours. Each replay
// is independent (its own engine); a round's replays run on `threads` std::threads. The sizes
// tried depend only on the options, never on `threads`, so the answer is the same on any
// machine.
//
// On a long trace every size is first replayed on a prefix of it (PlanOptions::screen_jobs): a
// size that misses the first wait target on the prefix is reported as failing there and not
// replayed in full (SizePoint::screened_jobs; not a proof for the whole trace). The neighbours
// of the answer are always replayed on the whole trace: the answer meets the targets in a full
// replay, and one node less misses them in a full replay or one stopped by the exact early stop.
//
// Thread-safety: RunPlan is reentrant; the value types are plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"
#include "trace/model_builder.h"
#include "trace/replay.h"
#include "trace/trace.h"

namespace tessera::trace {

// One candidate node shape: the nodes of a planned cluster are of these. A pool with
// `fixed_nodes` is not sized: every replay has that many of its nodes beside the pool sized.
struct PoolShape {
  std::string name;
  int32_t gpus = 0;  // whole devices per node, >= 1
  std::string gpu_model;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t max_pods = 110;
  double price_per_node_hour = 0;  // dollars, before the spot discount
  // Spot (any of spot=, interruptions=, notice=): the replays interrupt its nodes as `sim
  // replay`'s spot node groups do (docs/autoscaling.md): each node at `interruptions_per_node_
  // hour`, announced `notice_seconds` before it goes, its workloads preempted, and a
  // replacement up `replace_seconds` later.
  bool spot = false;
  double spot_discount = 0;  // fraction taken off the price, [0, 1)
  double interruptions_per_node_hour = 0;
  double notice_seconds = 120;
  double replace_seconds = 300;
  int32_t fixed_nodes = 0;  // nodes=N: > 0, the pool is fixed at N nodes (not sized)

  // Unless interruptions= is given, a spot pool's nodes are interrupted this often: a
  // deliberately pessimistic guess (one a node every 100 hours), not any provider's figure.
  static constexpr double kDefaultInterruptionsPerNodeHour = 0.01;

  double NodeHourPrice() const { return price_per_node_hour * (1 - spot_discount); }
};

// "NAME:gpus=8,model=A100,cpu=96,memory=768Gi,price=32.77,spot=0.6[,interruptions=0.05]
// [,notice=2m][,replace=5m][,nodes=4]" (docs/autoscaling.md). The error names the pool text and
// the key at fault.
[[nodiscard]] absl::StatusOr<PoolShape> ParsePool(const std::string& text);

// The trace nodes of `nodes` nodes of `pool` (named <pool>-0 ..): plain nodes, or for a spot
// pool one node group of that many nodes (min = max, so an interrupted node is replaced).
std::vector<TraceNode> PoolNodes(const PoolShape& pool, int32_t nodes);

// What a cluster must achieve. Waits are of every job of the trace: a job never admitted (it can
// never fit, or still waits when the replay ends) fails every wait target.
struct Target {
  enum class Kind { kWaitMean, kWaitP50, kWaitP95, kWaitP99, kWaitMax, kUtilization };
  Kind kind = Kind::kWaitP95;
  // Seconds for waits (the wait must be at most this); for kUtilization the mean GPU allocation
  // (0..1) must be at most this: the cluster is big enough to run the trace with that headroom.
  double value = 0;
  std::string text;  // as given, for messages
};

// "wait-p95=30m", "wait-mean=90s", "utilization=0.8". Durations: a number with s, m, h or d.
[[nodiscard]] absl::StatusOr<Target> ParseTarget(const std::string& text);

struct PlanOptions {
  std::vector<PoolShape> pools;
  std::vector<Target> targets;  // all must hold
  int32_t min_nodes = 0;        // 0: the fewest nodes that hold the trace's largest job
  int32_t max_nodes = 0;        // 0: twice the nodes of the peak offered demand (see .cc)
  int32_t curve_points = 20;    // sizes of the curve, min and max included
  int32_t threads = 1;          // replays at once
  // Starts one replay thread; empty: std::thread. A thread that cannot be started (it throws
  // std::system_error, EAGAIN when the machine has no more) leaves the replays to those that
  // could, with a note. Tests make it fail.
  std::function<std::thread(std::function<void()>)> start_thread;
  // Stop a replay as soon as it is known to miss the first wait target (ReplayOptions::
  // early_stop): far too small clusters would otherwise replay their whole backlog.
  bool stop_early = true;
  // Screen sizes on the first `screen_jobs` jobs of the trace (by arrival) before replaying them
  // in full, with the early stop scaled to the prefix (its jobs and the manifests' workloads):
  // far too small sizes then cost a replay of the prefix, not a backlog of the whole trace's
  // size. -1: a tenth of the jobs, at least kDefaultScreenJobs, and no screen for traces under
  // twice that; 0: no screen. Only with stop_early and a wait target.
  int64_t screen_jobs = -1;
  static constexpr int64_t kDefaultScreenJobs = 10000;
  BuildOptions build;    // queues, placement, estimates of every replay
  ReplayOptions replay;  // cycle interval etc. of every replay
};

// One replay: a cluster of `nodes` nodes of the pool.
struct SizePoint {
  int32_t nodes = 0;
  int64_t gpus = 0;
  double span_seconds = 0;  // first arrival to the last event
  int64_t jobs = 0;
  int64_t unserved = 0;  // rejected (can never fit) or still pending at the end
  // Of the admitted jobs: to the first admission, plus the waits again after a preemption or a
  // spot interruption (ReplayResult::total_wait).
  Distribution wait;
  double utilization = 0;  // mean GPU allocation, 0..1, over the span
  double gpu_hours_allocated = 0;
  double gpu_hours_paid = 0;  // every GPU of the cluster over the span
  double effective_gpus = 0;  // allocated GPU-hours / span hours
  double wasted_gpus = 0;     // gpus - effective_gpus: paid, not used
  double cost_per_month = 0;  // nodes x price after discount x 720 h
  int64_t preemptions = 0;    // spot interruptions' included
  // Spot pools: nodes interrupted, and the GPU-hours of runs they cut short (rerun from the
  // start or the last checkpoint; a part of the preemptions' lost work).
  int64_t interruptions = 0;
  double gpu_hours_lost_to_interruptions = 0;
  // With GPU failures (ReplayOptions::gpu_failures): GPUs that failed, and the GPU-hours of runs
  // they cut short since the last checkpoint.
  int64_t gpu_failures = 0;
  double gpu_hours_lost_to_failures = 0;
  bool meets = false;
  std::string why_not;  // the first target missed, when !meets
  // Not empty: the replay stopped once the targets could no longer be met, and the figures
  // above cover it only up to there (the waits are of the jobs admitted by then).
  std::string stopped_early;
  // > 0: the size missed the targets on the trace's first `screened_jobs` jobs
  // (PlanOptions::screen_jobs) and was not replayed in full; `stopped_early` says where the
  // replay of the prefix stopped. Not a proof that the whole trace misses them.
  int64_t screened_jobs = 0;
};

struct PoolPlan {
  PoolShape pool;
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;
  std::vector<SizePoint> points;  // every size replayed, by nodes
  // The smallest size above which every replayed size met the targets; none when even
  // max_nodes did not (or the pool cannot run some job at all: `unfit_jobs`).
  std::optional<int32_t> answer;
  int64_t unfit_jobs = 0;             // jobs whose pods fit on no node of this shape
  std::string unfit_example;          // the first of them, with its place in the input
  std::vector<std::string> warnings;  // non-monotone curve and the like
  // The check of the answer: the replay at `answer` and at `answer - 1`, in words.
  std::string check;
  // With GPU failures (PlanOptions::replay.gpu_failures): the answer of the same search with no
  // GPU failing; `answer` minus it is the spare nodes the failures need (one draw of them:
  // --seed).
  std::optional<int32_t> answer_without_failures;

  const SizePoint* At(int32_t nodes) const;
};

struct PlanResult {
  std::vector<Target> targets;
  std::vector<PoolShape> fixed;  // pools with nodes=: in every replay, beside the pool sized
  std::vector<PoolPlan> pools;   // the pools sized
  // The pool whose answer costs least a month (then fewest GPUs, then first given); none when no
  // pool meets the targets.
  std::optional<size_t> best;
  int64_t jobs = 0;
  int64_t replays = 0;
  std::vector<std::string> notes;  // what the replays assumed (default queues etc.)
};

// Plans for every pool of `options` without nodes=, each beside the pools with nodes= (fixed).
// `trace` holds the jobs (its nodes are ignored); `base` the manifests' queues, flavors,
// priority classes and SchedulerConfig (no nodes, no NodePools; spot interruptions are drawn
// from its spec.autoscaler.seed). Fails when every pool is fixed (InvalidArgument), a replay
// fails (an engine invariant, or cycles that never settle) or the model cannot be built (a queue
// or priority that does not resolve).
[[nodiscard]] absl::StatusOr<PlanResult> RunPlan(const Trace& trace, const Model& base,
                                                 const PlanOptions& options);

// One replay of `trace` on its nodes (RunPlan's: the fixed pools) plus `nodes` nodes of `pool`,
// scored against `targets` (what RunPlan runs for each size; tests use it to check an answer on
// their own). `notes` (may be null) receives what the model builder assumed.
[[nodiscard]] absl::StatusOr<SizePoint> ReplayAtSize(const Trace& trace, const Model& base,
                                                     const PoolShape& pool, int32_t nodes,
                                                     const std::vector<Target>& targets,
                                                     const BuildOptions& build,
                                                     const ReplayOptions& replay,
                                                     std::vector<std::string>* notes);

// The metric a target reads from a point (seconds or a 0..1 fraction), and the target's words.
double TargetValue(const Target& t, const SizePoint& p);
std::string TargetName(Target::Kind kind);

// Output: a terminal table, JSON, CSV (one row per size and pool) and the HTML report.
std::string PlanTable(const PlanResult& r);
std::string PlanJson(const PlanResult& r);
std::string PlanCsv(const PlanResult& r);
std::string PlanHtml(const PlanResult& r, const std::string& title);
// plan.json, plan.csv and index.html into `dir` (created if missing).
[[nodiscard]] absl::Status WritePlanReport(const PlanResult& r, const std::string& dir,
                                           const std::string& title);

}  // namespace tessera::trace
