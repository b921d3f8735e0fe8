// The fields of time (docs/time.md) as the manifest loader reads them: runtime estimates, hard
// deadlines, wait limits, minimum runtimes and checkpoint intervals of workloads; the defaults a
// ClusterQueue gives its workloads; SchedulerConfig's backfill and runtime-estimate knobs.
// docs/manifests.md lists every field and the precedence rules.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/kinds.h"
#include "model/model.h"

namespace tessera::config_internal {

enum class Bound { kNonNegative, kPositive };

// The child `key` of `parent` as a duration (config/duration.h) at least 0 (or above 0);
// absent or null: std::nullopt without a diagnostic; otherwise errors name `path`.
std::optional<double> GetDuration(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                                  const std::string& path, Bound bound);

// Annotations and labels every workload kind shares: tessera.dev/runtime-estimate (> 0),
// tessera.dev/max-wait, tessera.dev/min-runtime, tessera.dev/checkpoint-interval (> 0), each a
// duration (config/duration.h); Kueue's label kueue.x-k8s.io/max-exec-time-seconds (an integer
// > 0), a hard limit like activeDeadlineSeconds (the smaller of the two wins).
void ReadWorkloadTimeMetadata(DocContext& ctx, const ObjectMeta& meta, Workload& w);

// `parent`.activeDeadlineSeconds (`parent_path` is the parent's path), Kubernetes' integer > 0:
// a batch Job's spec, a Pod's spec, a Kubeflow job's spec.runPolicy. The smaller of it and a
// deadline already set wins. Absent or null parent: nothing.
void ReadActiveDeadline(DocContext& ctx, const YAML::Node& parent, const std::string& parent_path,
                        Workload& w);

// Volcano's sla-waiting-time annotation (a Go duration) on a Volcano Job or a PodGroup: the
// workload's max_wait unless tessera.dev/max-wait is given, which wins.
void ReadSlaWaitingTime(DocContext& ctx, const ObjectMeta& meta, Workload& w);

// A pod group's workload takes from each member pod what the group does not set itself: the
// runtime estimate, max wait, min runtime and checkpoint interval (first pod that has one), and
// the smallest active deadline of its pods.
void MergeMemberTime(const Workload& pod, Workload& group);

// ClusterQueue metadata.annotations tessera.dev/max-wait and tessera.dev/min-runtime.
void ReadClusterQueueTime(DocContext& ctx, const ObjectMeta& meta, ClusterQueue& cq);

// SchedulerConfig spec.backfill and spec.runtimeEstimates (absent: the defaults of model.h).
void ReadBackfill(DocContext& ctx, const YAML::Node& spec, BackfillConfig& out);
void ReadRuntimeEstimates(DocContext& ctx, const YAML::Node& spec, EstimatorConfig& out);

// Most samples spec.runtimeEstimates.history (and minSamples) may ask for.
inline constexpr int64_t kMaxEstimateHistory = 10'000;

}  // namespace tessera::config_internal
