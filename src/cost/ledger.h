// The cost ledger: what every workload held, for how long, at what price (docs/cost.md).
//
// Fed with the engine's decisions as a caller carries them out (the simulator, the replay):
// Hold when a workload is admitted or scaled up, Release when it finishes, fails or is
// preempted. Report sums at any time: per workload, then by namespace, LocalQueue,
// ClusterQueue, cohort and each label key of spec.pricing.rollupLabels, with the idle GPUs of
// the cluster (capacity nobody held since time 0) as a row of their own.
//
// Three kinds of cost, as OpenCost separates them: allocated (held x price), idle (capacity
// nobody held x price, not shared out), effective (allocated x utilization; the simulator has
// no utilization, so it stays std::nullopt rather than a guess).
//
// Thread-safety: not thread-safe. Keeps a reference to the model, which must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/pricing.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace tessera::cost {

// One row: capacity held and what it cost. Hours are unit-hours (a GPU held two hours: 2).
struct CostLine {
  double gpu_hours = 0;  // whole GPUs, shares as their fraction
  double cpu_hours = 0;  // CPU core-hours
  double memory_gib_hours = 0;
  double gpu_dollars = 0;
  double cpu_dollars = 0;
  double memory_dollars = 0;
  // GPU-hours held for which no price applies (no key of gpuHour and no default).
  double unpriced_gpu_hours = 0;
  // Allocated x utilization; std::nullopt where no utilization is known (the simulator).
  std::optional<double> effective_dollars;
  int64_t runs = 0;  // admissions (a preempted workload admitted again counts twice)

  double allocated_dollars() const { return gpu_dollars + cpu_dollars + memory_dollars; }
  void Add(const CostLine& o);
};

// GPUs of the cluster that no workload held, from time 0 to the end.
struct IdleCost {
  double gpu_hours = 0;
  double dollars = 0;
  double unpriced_gpu_hours = 0;
};

// GPUs a pod with requests `r` holds on `node`: whole devices, a share in milli as its fraction,
// a share by memory as the fraction of the node's device it takes.
double HeldGpus(const Resources& r, const Node& node);

using CostRows = std::map<std::string, CostLine>;  // by name; "(none)" for no queue/label

struct CostReport {
  double end_time = 0;
  CostRows by_workload;  // NAMESPACE/NAME
  CostRows by_namespace;
  CostRows by_local_queue;  // NAMESPACE/QUEUE
  CostRows by_cluster_queue;
  CostRows by_cohort;                        // the ClusterQueue's own cohort, not its ancestors
  std::map<std::string, CostRows> by_label;  // label key -> label value -> row
  CostLine allocated;                        // every workload together
  IdleCost idle;
  double total_dollars() const { return allocated.allocated_dollars() + idle.dollars; }
};

class CostLedger {
 public:
  // `by_workload`: keep a row per workload (CostReport::by_workload); the replay of a large
  // trace leaves it off and keeps only the rollups.
  explicit CostLedger(const Model& model, bool by_workload = true);

  // Workload `id` holds `pods` from `now` on, in addition to what it already holds (an
  // admission or a scale-up). `cluster_queue` is its ClusterQueue (-1: none) and `flavors` the
  // flavor chosen for each of that queue's resource groups (WorkloadStatus::flavors).
  void Hold(WorkloadId id, int32_t cluster_queue, const std::vector<int32_t>& flavors,
            const std::vector<PodPlacement>& pods, double now);
  // Workload `id` gives back all it holds at `now` (finished, failed, preempted); nothing
  // when it holds nothing.
  void Release(WorkloadId id, double now);

  // The sums as if every workload still holding released at `end`, with the idle GPUs over
  // [start, end] (the replay starts at its first arrival). REQUIRES: `end` is at or after every
  // time passed to Hold and Release, `start` at or before every time passed to Hold.
  CostReport Report(double end, double start = 0) const;
  // Elastic clusters (docs/autoscaling.md): the seconds each node was up, in place of
  // [start, end], for the idle GPUs of Report. Empty: every node was up the whole time.
  void SetNodeUptime(std::vector<double> seconds) { uptime_ = std::move(seconds); }
  // What workload `id`'s current run (what it holds now, since it last held nothing) has cost
  // from its start up to `now`; std::nullopt when it holds nothing. The accounting store's
  // per-run records (docs/accounting.md). REQUIRES: `now` as for Report's `end`.
  std::optional<CostLine> OpenRun(WorkloadId id, double now) const;

 private:
  // One pod held since `start`, with the prices that apply to it (after spot discounts).
  struct Held {
    double start = 0;
    NodeId node = -1;
    double gpus = 0, cpus = 0, gib = 0;
    std::optional<double> gpu_price;  // per GPU-hour; none: unpriced
    double cpu_price = 0, memory_price = 0;
  };
  // What one workload holds now.
  struct Run {
    int32_t cluster_queue = -1;
    int64_t runs = 0;
    std::vector<Held> pods;
  };
  Held Price(int32_t cluster_queue, const std::vector<int32_t>& flavors, const PodPlacement& p,
             const Workload& w, double now) const;
  // `flavors`: per pod set and resource group, flattened (WorkloadStatus::flavors), or one per
  // resource group for all pod sets.
  std::string FlavorFor(int32_t cluster_queue, const std::vector<int32_t>& flavors, int pod_set,
                        ResourceId r, NodeId node) const;
  // The cost of `run` from its pods' starts to `end`; adds its GPU-seconds per node (when given).
  static CostLine Charge(const Run& run, double end, std::vector<double>* node_gpu_seconds);
  // Adds `line`, a run of workload `id` in `cluster_queue`, to every row it belongs to.
  void AddToRows(WorkloadId id, int32_t cluster_queue, const CostLine& line,
                 CostReport& report) const;

  const Model& model_;
  const bool by_workload_;
  NodeFlavors node_flavors_;
  std::map<WorkloadId, Run> open_;        // workloads holding something now
  CostReport closed_;                     // runs released so far
  std::vector<double> node_gpu_seconds_;  // per node: GPU-seconds of released runs
  std::vector<double> uptime_;            // per node, seconds up; empty: all of [start, end]
};

}  // namespace tessera::cost
