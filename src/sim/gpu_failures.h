// GPUs that fail, injected into a simulation (`tessera sim --gpu-failures MTBF`, and `sim replay`,
// docs/gpu-failures.md): every healthy GPU of a node that is up fails after an exponential time
// of mean MTBF, drawn from a seeded generator, and is repaired `repair` seconds later. A failure
// marks the GPU failed in the engine (Scheduler::SetGpuFailed) and evicts the workloads on it,
// each whole (a gang leaves together and waits in its queue again); they lose the work since
// their last checkpoint (tessera.dev/checkpoint-interval), as a preemption victim does.
//
// The failures are one Poisson process over every GPU of the model (physical ones; a
// time-sliced GPU fails with all its replicas), thinned: a draw that lands on a GPU that is
// failed already or on a node that is not up is void. That is exactly a rate of 1/MTBF per
// healthy GPU that is up, whatever the autoscaler does, with one generator and no redraws.
//
// Thread-safety: not thread-safe; part of one run.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/scheduler.h"
#include "nlohmann/json_fwd.hpp"

namespace tessera {

struct GpuFailureOptions {
  double mtbf_seconds = 0;  // mean time between failures of one GPU; 0: none
  double repair_seconds = 24 * 3600;
  uint64_t seed = 1;
  bool enabled() const { return mtbf_seconds > 0; }
};

struct GpuFailureStats {
  int64_t failures = 0;       // GPUs that failed
  int64_t interruptions = 0;  // workloads evicted by a failure (a gang counts once)
  // GPU time of the runs the failures cut short, less what checkpoints saved.
  double gpu_hours_lost = 0;
  // What the same failures would have cut had nothing been checkpointed: all the work each
  // interrupted workload had done (this run and the progress its earlier runs saved).
  double gpu_hours_lost_without_checkpoints = 0;
  double failed_gpu_hours = 0;  // GPUs out x hours, up to the end of the run
};

// What --gpu-failures does not simulate of `model`, one message each: a ClusterQueue whose
// tessera.dev/gpu-failure-policy is LeaveToController (serve's: the workload's own controller
// decides what a failed GPU means) has its workloads requeued as under Requeue. The callers print
// them as warnings beside the manifests' diagnostics.
std::vector<std::string> UnsimulatedFailurePolicies(const Model& model);

class GpuFailures {
 public:
  GpuFailures(Scheduler& s, const GpuFailureOptions& o);

  // The next failure (a draw, perhaps void) and the next repair; +infinity when none.
  double NextFailure() const { return next_failure_; }
  double NextRepair() const {
    return repairs_.empty() ? std::numeric_limits<double>::infinity() : repairs_.begin()->first;
  }
  // The repairs and failures due at or before `now`, in time order: the kPreempt decisions of
  // the workloads evicted (EvictForNode), in the order they were evicted. A failure is an
  // instant of its own only while something else is due (the callers'); while the run waits for
  // a repair alone, those in between come at the next instant, each repaired from its own time.
  void Advance(double now, std::vector<Decision>& evicted);
  // A run cut short by a failure: it ran `ran` seconds on `gpus` GPUs, its checkpoints saved
  // `saved` of them, and its earlier runs had saved `before` seconds of progress.
  void Lost(double ran, double saved, double before, double gpus);
  // The end of the run: GPUs still failed count up to `end`.
  void Finish(double end);
  const GpuFailureStats& stats() const { return stats_; }

 private:
  double Draw();  // an exponential waiting time of the whole model's rate
  void Fail(double at, std::vector<Decision>& evicted);

  Scheduler& s_;
  GpuFailureOptions o_;
  std::mt19937_64 rng_;
  std::vector<int64_t> first_;  // per node: index of its first physical GPU; one past the end
  double next_failure_;
  std::set<std::pair<double, std::pair<NodeId, int32_t>>> repairs_;  // (due, (node, gpu))
  GpuFailureStats stats_;
};

// The report's lines ("  GPU failures ...", two spaces in, one per figure) and its JSON object
// (failures, interruptions, gpuHoursLost, gpuHoursLostWithoutCheckpoints, failedGpuHours).
std::string GpuFailureLines(const GpuFailureStats& st);
nlohmann::json GpuFailureJson(const GpuFailureStats& st);

}  // namespace tessera
