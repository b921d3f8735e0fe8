// Turns a scheduler's decisions, as its caller carries them out, into RunRecords: one per run of
// a workload, from its admission to its finish, preemption or failure (docs/accounting.md).
//
// Fed the way the cost ledger is (Admitted / ScaledUp when a workload is admitted or grows,
// Ended when it stops), so that any loop can record: the simulator's events after a run
// (accounting/sim_records.h), the replay inside its loop, and later `tessera serve` on every
// finish and preemption. Each record goes to the sink when its run ends; CloseAll ends the runs
// still open as kRunning. Cost comes from a cost::CostLedger of its own, priced by the model's
// SchedulerConfig spec.pricing (no prices: allocated_dollars stays std::nullopt).
//
// Thread-safety: not thread-safe. Keeps references to the model and the sink, which must
// outlive it; workloads may be added to the model while it records (the replay does).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "accounting/record.h"
#include "cost/ledger.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace tessera::accounting {

struct RecorderOptions {
  std::string source = "sim";  // RunRecord::source
  // Seconds since the Unix epoch of the caller's time 0: the simulator and the replay count from
  // 0, which is 1970-01-01T00:00:00Z; a live cluster passes 0 with Unix times.
  double epoch = 0;
};

// The record of a run of workload `id` admitted to `cluster_queue` with `flavors`, with what
// the model says of it: namespace, name, queues, cohort, labels (JSON), the priority as the
// engine resolves it and the flavors; the run's times and figures are the caller's.
RunRecord DescribeRun(const Model& model, WorkloadId id, int32_t cluster_queue,
                      const std::vector<int32_t>& flavors);
// The priority of `w` as the engine resolves it (workload priority class, PriorityClass, the
// global default).
int32_t PriorityOf(const Model& model, const Workload& w);

class RunRecorder {
 public:
  RunRecorder(const Model& model, RecordSink& sink, RecorderOptions options);

  // Workload `id`, submitted at `submit`, starts a run at `now` holding `pods`, admitted to
  // `cluster_queue` (-1: none) with `flavors` (WorkloadStatus::flavors). A run still open for
  // it is ended first as preempted (a caller that missed the eviction).
  void Admitted(WorkloadId id, double submit, int32_t cluster_queue,
                const std::vector<int32_t>& flavors, const std::vector<PodPlacement>& pods,
                double now);
  // The open run of `id` holds `pods` more from `now` on; nothing when it has none.
  void ScaledUp(WorkloadId id, const std::vector<PodPlacement>& pods, double now);
  // The open run of `id` ends at `now`; its record goes to the sink. Nothing when it has none.
  void Ended(WorkloadId id, RunEnd how, const std::string& reason, double now);
  // Every open run ends at `end` as kRunning, in workload order.
  void CloseAll(double end);
  // Workload `id` will not run again (it ended and its caller let go of it): its run and
  // preemption counts go. REQUIRES: no run of it open.
  void Forget(WorkloadId id) { counts_.erase(id); }

  int64_t recorded() const { return recorded_; }

 private:
  struct Open {
    RunRecord record;  // times still on the caller's clock
    int32_t cluster_queue = -1;
    std::vector<int32_t> flavors;
    int32_t pods = 0;  // held now
    double gpus = 0;
    std::set<std::string> gpu_models;
  };
  void Hold(Open& run, WorkloadId id, const std::vector<PodPlacement>& pods, double now);
  RunRecord Start(WorkloadId id, int32_t cluster_queue, const std::vector<int32_t>& flavors) const;

  const Model& model_;
  RecordSink& sink_;
  const RecorderOptions options_;
  cost::CostLedger ledger_;
  std::unordered_map<WorkloadId, Open> open_;
  std::unordered_map<WorkloadId, std::pair<int32_t, int32_t>> counts_;  // runs, preemptions
  int64_t recorded_ = 0;
};

}  // namespace tessera::accounting
