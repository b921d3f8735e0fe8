// Turns a Trace (and optional manifests) into the engine's Model, and trace jobs into Workloads.
//
// Nodes come from the trace (label nvidia.com/gpu.product from the GPU model, plus the labels
// column) after any Nodes of the manifests. Queues, flavors, priority classes and the
// SchedulerConfig come from the manifests; when they declare no ClusterQueue, every queue the
// trace names (or "default") becomes a ClusterQueue with an equal share of the cluster, all in
// one cohort that lends freely. docs/trace-replay.md gives the rules.
//
// Thread-safety: a JobConverter is immutable after construction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"
#include "trace/estimates.h"
#include "trace/job_source.h"
#include "trace/trace.h"

namespace tessera::trace {

struct BuildOptions {
  bool unqueued = false;   // no queues: placement only, no quota
  bool preemption = true;  // default queues: LowerPriority within, reclaim Any in the cohort
  std::optional<PlacementPolicy> placement;  // overrides the SchedulerConfig
  std::optional<bool> fair_sharing;          // overrides the SchedulerConfig
  std::optional<bool> backfill;              // overrides the SchedulerConfig's backfill.enable
  // Sets the queueing strategy of every ClusterQueue (manifests' and default ones).
  std::optional<QueueingStrategy> strategy;
  EstimateOptions estimates;  // Workload::runtime_estimate of trace jobs (default: none)
  // terminationGracePeriodSeconds of trace jobs (their CSVs have no pod spec): a preempted job
  // keeps its GPUs this long (docs/time.md, "Grace period"). 0 by default, not Kubernetes' 30 s,
  // so that results stay comparable with the replays before grace periods.
  double grace_period = 0;
  // > 0: trace jobs checkpoint this often, in seconds (tessera.dev/checkpoint-interval): a
  // preempted or interrupted job resumes from its last checkpoint (docs/time.md). 0: none, a
  // preempted job runs its whole duration again.
  double checkpoint_interval = 0;
};

// Maps trace jobs to Workloads for a Model built by BuildModel.
class JobConverter {
 public:
  // REQUIRES: `trace` outlives the converter.
  Workload Make(const TraceJob& job, int64_t index) const;

 private:
  friend absl::StatusOr<JobConverter> BuildModel(const Trace&, const JobSource&,
                                                 const BuildOptions&, Model&,
                                                 std::vector<std::string>&);
  const Trace* trace_ = nullptr;
  std::vector<std::string> queue_names_;     // per Trace::queues entry
  std::vector<std::string> priority_names_;  // PriorityClass per Trace::priorities entry
  std::vector<bool> workload_priority_;      // the name is a WorkloadPriorityClass
  EstimateOptions estimates_;
  double grace_period_ = 0;
  double checkpoint_interval_ = 0;
};

// Adds the trace's nodes, and the default queues and priority classes where the manifests
// already in `model` do not declare them, and checks that every queue and priority the trace
// names resolves. `notes` receives what was assumed (one line each).
[[nodiscard]] absl::StatusOr<JobConverter> BuildModel(const Trace& trace,
                                                      const BuildOptions& options, Model& model,
                                                      std::vector<std::string>& notes);
// As above with the trace's jobs as a stream (trace/job_source.h): `trace` gives the nodes and
// the names the jobs refer to (its own jobs are not read).
[[nodiscard]] absl::StatusOr<JobConverter> BuildModel(const Trace& trace, const JobSource& jobs,
                                                      const BuildOptions& options, Model& model,
                                                      std::vector<std::string>& notes);

// Nominal quota of nvidia.com/gpu (plus tessera.dev/gpu-milli / 1000) of a ClusterQueue, summed
// over its flavors, in GPUs.
double NominalGpus(const ClusterQueue& cq);

}  // namespace tessera::trace
