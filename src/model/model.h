// Everything a manifest set declares, before any scheduling: the input of the engine and the
// output of the config loader.
//
// Thread-safety: value type.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dra/model.h"
#include "model/id_pages.h"
#include "model/node.h"
#include "model/node_pool.h"
#include "model/pricing.h"
#include "model/queues.h"
#include "model/workload.h"

namespace tessera {

// How a pod's node is chosen. binpack / spread: by free GPUs (buckets), then the least / most
// allocated. The others are the FGD paper's policies (docs/fgd.md), scored on a bounded set of
// candidate nodes; kTesseraFgd is FGD with used nodes first among equal scores. kTesseraPlan is
// TesseraPlan online (placement/plan_placement.h): FGD over every node, the CPU/memory balance,
// and a share plan over the pending sharing pods.
enum class PlacementPolicy {
  kBinpack,
  kSpread,
  kRandom,
  kDotProd,
  kGpuClustering,
  kGpuPacking,
  kBestFit,
  kFgd,
  kTesseraFgd,
  kTesseraPlan,
};

enum class FairSharingStrategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };

// Reservations and backfill (SchedulerConfig spec.backfill; docs/time.md), after Slurm's
// backfill scheduler, whose parameter each knob names.
struct BackfillConfig {
  bool enable = true;  // spec.backfill.enable
  // spec.backfill.reservationsPerQueue: heads per ClusterQueue that get a reservation; 0: every
  // pending workload that cannot start (conservative backfill).
  int32_t reservations_per_queue = 1;
  double window = 86400;       // spec.backfill.window (bf_window): no reservation starts later
  double resolution = 60;      // spec.backfill.resolution (bf_resolution): ends rounded up to it
  int32_t max_job_test = 100;  // spec.backfill.maxJobTest (bf_max_job_test): reservations a cycle
};

// Runtime estimates learned from finished workloads (spec.runtimeEstimates; docs/time.md).
struct EstimatorConfig {
  double quantile = 0.9;    // spec.runtimeEstimates.quantile of recent runtimes
  int32_t history = 50;     // spec.runtimeEstimates.history: runtimes kept per key
  int32_t min_samples = 3;  // spec.runtimeEstimates.minSamples before any estimate is given
  std::optional<double> default_estimate;  // spec.runtimeEstimates.default: none by default
};

// Usage-based admission fair sharing (SchedulerConfig spec.admissionFairSharing, Kueue's field
// names; docs/time.md): per LocalQueue, usage decays with a half-life, sampled every interval.
struct AdmissionFairSharingConfig {
  bool enabled = false;             // the section is present
  double usage_half_life = 604800;  // usageHalfLifeTime (0: no memory, the current usage only)
  double sampling_interval = 300;   // usageSamplingInterval
  // resourceWeights (per unit: a GPU, a CPU core, a GiB); empty: GPUs only, weight 1.
  std::vector<std::pair<ResourceId, double>> resource_weights;
};

// How the simulator's autoscaler adds nodes to elastic NodePools (SchedulerConfig
// spec.autoscaler; docs/autoscaling.md).
enum class ScaleUpMode {
  kGangAware,  // nodes for a pending workload only when its whole gang then fits, in one request
  kPodByPod,   // nodes for whichever pending pods do not fit, gang or not (today's autoscalers)
};
struct AutoscalerConfig {
  ScaleUpMode scale_up = ScaleUpMode::kGangAware;  // spec.autoscaler.scaleUp
  uint64_t seed = 1;  // spec.autoscaler.seed: spot interruptions are drawn from it
  // spec.autoscaler.maxWorkloadsPerPlan: pending workloads one scale-up decision looks at, in
  // queue order (bounds the work of an instant on a long backlog).
  int32_t max_workloads_per_plan = 256;
};

// spec.consolidation (engine/actions/consolidate.h): the bounds of the `consolidate` action.
struct ConsolidationConfig {
  // maxLostWork: a workload is moved only when the work it loses (seconds since its last
  // checkpoint, tessera.dev/checkpoint-interval, else since its start) is at most this.
  double max_lost_work_seconds = 600;
  int32_t max_moves_per_cycle = 16;  // maxMovesPerCycle: workloads moved in one cycle
  int32_t max_nodes_per_head = 8;    // maxNodesPerHead: nodes tried for one pending head
  int32_t max_heads_per_cycle = 32;  // maxHeadsPerCycle: pending heads tried in one cycle
};

// tessera.dev/v1alpha1 SchedulerConfig. Defaults are the documented ones.
struct SchedulerConfig {
  bool fair_sharing = false;  // spec.fairSharing.enable
  std::vector<FairSharingStrategy> fair_sharing_strategies = {
      FairSharingStrategy::kLessThanOrEqualToFinalShare,
      FairSharingStrategy::kLessThanInitialShare};
  PlacementPolicy placement = PlacementPolicy::kBinpack;  // spec.placement
  // spec.actions: the steps of a cycle, in order (engine/actions/action.h).
  std::vector<std::string> actions = {"admit", "preempt", "scale-up"};
  // Not a manifest field: time each action of every cycle (Scheduler::stats().actions[i]
  // .seconds). Off by default: two clock reads per action cost about a tenth of a one-workload
  // cycle.
  bool time_actions = false;
  BackfillConfig backfill;
  EstimatorConfig estimates;
  AdmissionFairSharingConfig admission_fair_sharing;
  PricingConfig pricing;        // spec.pricing (docs/cost.md)
  AutoscalerConfig autoscaler;  // spec.autoscaler (docs/autoscaling.md)
  // spec.quotaCheckStrategy (Kueue's resources.quotaCheckStrategy): BlockUndeclared (true)
  // keeps a workload that asks for a resource its ClusterQueue does not cover pending, as Kueue
  // does by default; IgnoreUndeclared (false, Tessera's default: its examples quota GPUs only)
  // leaves such resources to node capacity. GPU shares (tessera.dev/gpu-milli, gpu-memory) are
  // never blocked: Kueue does not know them.
  bool block_undeclared = false;
  // spec.staleGangGracePeriod (KAI's globalDefaultStalenessGracePeriod, default 60 s): how long
  // a gang restored below its minimum may wait for its missing pods before it is evicted whole
  // (engine/stale_gangs.h).
  double stale_gang_grace_seconds = 60;
  ConsolidationConfig consolidation;  // spec.consolidation
};

struct Model {
  std::vector<Node> nodes;
  std::vector<NodePoolSpec> node_pools;  // every NodePool, in manifest order
  std::vector<ResourceFlavor> flavors;
  std::vector<Topology> topologies;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::vector<LocalQueue> local_queues;
  std::vector<PriorityClass> priority_classes;
  std::vector<WorkloadPriorityClass> workload_priority_classes;
  // By WorkloadId. The engine retires a finished workload when its owner asks (a long replay,
  // Scheduler::Retire); until then this reads as a vector.
  IdPages<Workload> workloads;
  std::map<std::string, Labels> namespace_labels;  // from v1 Namespace objects
  SchedulerConfig config;
  dra::DraModel dra;  // Dynamic Resource Allocation (docs/dra.md)
};

}  // namespace tessera
