// The fields of time in manifests; see time_fields.h.
#include "config/time_fields.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "config/duration.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kRuntimeEstimate = "tessera.dev/runtime-estimate";
constexpr std::string_view kMaxWait = "tessera.dev/max-wait";
constexpr std::string_view kMinRuntime = "tessera.dev/min-runtime";
constexpr std::string_view kCheckpointInterval = "tessera.dev/checkpoint-interval";
constexpr std::string_view kSlaWaitingTime = "sla-waiting-time";  // Volcano's sla plugin
constexpr std::string_view kMaxExecTime = "kueue.x-k8s.io/max-exec-time-seconds";  // a label

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The text of annotation (or label) `key`, with the node and path diagnostics name.
struct MetaValue {
  std::string text;
  YAML::Node at;
  std::string path;
};

std::optional<MetaValue> Find(const ObjectMeta& meta, std::string_view map_key,
                              std::string_view key) {
  const Labels& values = map_key == "labels" ? meta.labels : meta.annotations;
  auto it = values.find(std::string(key));
  if (it == values.end()) return std::nullopt;
  return MetaValue{it->second, Child(Child(meta.metadata, map_key), key),
                   JoinPath("metadata." + std::string(map_key), key)};
}

// A duration (config/duration.h) in `text`; errors name `path` at `at`.
std::optional<double> DurationText(DocContext& ctx, const YAML::Node& at, const std::string& path,
                                   std::string_view text, Bound bound) {
  absl::StatusOr<double> d = ParseDuration(text);
  if (!d.ok()) {
    ctx.Error(at, path, std::string(d.status().message()));
    return std::nullopt;
  }
  if (bound == Bound::kPositive && *d <= 0) {
    ctx.Error(at, path, "must be greater than 0, got \"" + std::string(text) + "\"");
    return std::nullopt;
  }
  return *d;
}

std::optional<double> AnnotationDuration(DocContext& ctx, const ObjectMeta& meta,
                                         std::string_view key, Bound bound) {
  auto v = Find(meta, "annotations", key);
  if (!v) return std::nullopt;
  return DurationText(ctx, v->at, v->path, v->text, bound);
}

// Kubernetes' integer seconds (activeDeadlineSeconds, max-exec-time-seconds): > 0. Kubernetes
// accepts values far beyond kMaxDurationSeconds (a Pod's up to 2^31-1); such a deadline is never
// reached, so it is ignored with a warning rather than dropping a manifest Kubernetes accepts.
std::optional<double> KubernetesSeconds(DocContext& ctx, const YAML::Node& at,
                                        const std::string& path, std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!all_digits) {
    ctx.Error(at, path,
              "expected a positive integer number of seconds, got \"" + std::string(text) + "\"");
    return std::nullopt;
  }
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (digits == "0") {
    ctx.Error(at, path, "must be greater than 0, got \"" + std::string(text) + "\"");
    return std::nullopt;
  }
  // kMaxDurationSeconds has 9 digits; a longer number cannot fit under it (nor overflow here).
  const double seconds =
      digits.size() > 9 ? kMaxDurationSeconds + 1 : std::stod(std::string(digits));
  if (seconds > kMaxDurationSeconds) {
    ctx.Warning(at, path,
                std::string(text) +
                    " seconds is longer than 10 years (315360000 seconds), the longest duration "
                    "Tessera accepts; Tessera treats the workload as having no deadline");
    return std::nullopt;
  }
  return seconds;
}

void SetSmaller(std::optional<double>& into, double value) {
  into = into ? std::min(*into, value) : value;
}

}  // namespace

// The child `key` of `parent` as a duration; absent or null: std::nullopt without a diagnostic.
std::optional<double> GetDuration(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                                  const std::string& path, Bound bound) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  if (!n.IsScalar()) {
    ctx.Error(n, path, std::string("expected a duration, got ") + TypeName(n));
    return std::nullopt;
  }
  return DurationText(ctx, n, path, n.Scalar(), bound);
}

void ReadWorkloadTimeMetadata(DocContext& ctx, const ObjectMeta& meta, Workload& w) {
  w.runtime_estimate = AnnotationDuration(ctx, meta, kRuntimeEstimate, Bound::kPositive);
  w.max_wait = AnnotationDuration(ctx, meta, kMaxWait, Bound::kNonNegative);
  w.min_runtime = AnnotationDuration(ctx, meta, kMinRuntime, Bound::kNonNegative);
  w.checkpoint_interval = AnnotationDuration(ctx, meta, kCheckpointInterval, Bound::kPositive);
  if (auto label = Find(meta, "labels", kMaxExecTime)) {
    if (auto s = KubernetesSeconds(ctx, label->at, label->path, label->text))
      SetSmaller(w.active_deadline, *s);
  }
}

void ReadActiveDeadline(DocContext& ctx, const YAML::Node& parent, const std::string& parent_path,
                        Workload& w) {
  if (IsNullish(parent) || !parent.IsMap()) return;  // the caller reports a wrong parent
  YAML::Node n = Child(parent, "activeDeadlineSeconds");
  if (IsNullish(n)) return;
  const std::string path = parent_path + ".activeDeadlineSeconds";
  if (!n.IsScalar()) {
    ctx.Error(n, path,
              std::string("expected a positive integer number of seconds, got ") + TypeName(n));
    return;
  }
  if (auto s = KubernetesSeconds(ctx, n, path, n.Scalar())) SetSmaller(w.active_deadline, *s);
}

void ReadSlaWaitingTime(DocContext& ctx, const ObjectMeta& meta, Workload& w) {
  auto sla = AnnotationDuration(ctx, meta, kSlaWaitingTime, Bound::kNonNegative);
  if (sla && !meta.annotations.contains(std::string(kMaxWait))) w.max_wait = sla;
}

void MergeMemberTime(const Workload& pod, Workload& group) {
  for (auto field : {&Workload::runtime_estimate, &Workload::max_wait, &Workload::min_runtime,
                     &Workload::checkpoint_interval}) {
    if (!(group.*field)) group.*field = pod.*field;
  }
  if (pod.active_deadline) SetSmaller(group.active_deadline, *pod.active_deadline);
}

void ReadClusterQueueTime(DocContext& ctx, const ObjectMeta& meta, ClusterQueue& cq) {
  cq.max_wait = AnnotationDuration(ctx, meta, kMaxWait, Bound::kNonNegative);
  cq.min_runtime = AnnotationDuration(ctx, meta, kMinRuntime, Bound::kNonNegative);
}

void ReadBackfill(DocContext& ctx, const YAML::Node& spec, BackfillConfig& out) {
  const std::string path = "spec.backfill";
  YAML::Node bf = Child(spec, "backfill");
  if (!ExpectMap(ctx, bf, path)) return;
  if (auto v = GetBool(ctx, bf, "enable", path + ".enable")) out.enable = *v;
  if (auto v =
          GetInt(ctx, bf, "reservationsPerQueue", path + ".reservationsPerQueue", 0, kInt32Max))
    out.reservations_per_queue = static_cast<int32_t>(*v);
  if (auto v = GetDuration(ctx, bf, "window", path + ".window", Bound::kPositive)) out.window = *v;
  if (auto v = GetDuration(ctx, bf, "resolution", path + ".resolution", Bound::kPositive))
    out.resolution = *v;
  if (auto v = GetInt(ctx, bf, "maxJobTest", path + ".maxJobTest", 1, kInt32Max))
    out.max_job_test = static_cast<int32_t>(*v);
}

void ReadRuntimeEstimates(DocContext& ctx, const YAML::Node& spec, EstimatorConfig& out) {
  const std::string path = "spec.runtimeEstimates";
  YAML::Node re = Child(spec, "runtimeEstimates");
  if (!ExpectMap(ctx, re, path)) return;
  if (YAML::Node q = Child(re, "quantile"); !IsNullish(q)) {
    std::optional<double> v;
    if (q.IsScalar()) v = ParseNonNegativeNumber(q.Scalar());
    if (v && *v > 0 && *v <= 1) {
      out.quantile = *v;
    } else {
      ctx.Error(q, path + ".quantile",
                "expected a number in (0, 1], got " +
                    (q.IsScalar() ? "\"" + q.Scalar() + "\"" : std::string(TypeName(q))));
    }
  }
  if (auto v = GetInt(ctx, re, "history", path + ".history", 1, kMaxEstimateHistory))
    out.history = static_cast<int32_t>(*v);
  if (auto v = GetInt(ctx, re, "minSamples", path + ".minSamples", 1, kMaxEstimateHistory))
    out.min_samples = static_cast<int32_t>(*v);
  if (auto v = GetDuration(ctx, re, "default", path + ".default", Bound::kPositive))
    out.default_estimate = *v;
  if (!ctx.failed() && out.min_samples > out.history) {
    YAML::Node at = Child(re, "minSamples");
    ctx.Warning(IsNullish(at) ? Child(re, "history") : at, path + ".minSamples",
                "minSamples " + std::to_string(out.min_samples) + " is more than history " +
                    std::to_string(out.history) + ": no runtime estimate is ever learned");
  }
}

}  // namespace tessera::config_internal
