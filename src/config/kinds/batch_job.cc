// batch/v1 Job: one gang of min(parallelism, completions) pods, or fewer with Kueue's
// kueue.x-k8s.io/job-min-parallelism (partial admission).
#include "config/kinds/registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/time_fields.h"
#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kMinParallelism = "kueue.x-k8s.io/job-min-parallelism";

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "Job");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto parallelism = GetInt(ctx, spec, "parallelism", "spec.parallelism", 0, kMaxPods);
  auto completions = GetInt(ctx, spec, "completions", "spec.completions", 0, kMaxPods);
  ReadActiveDeadline(ctx, spec, "spec", w);
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, "spec.template", pod) || ctx.failed()) return;
  QueueFromTemplate(ctx, Child(Child(spec, "template"), "metadata"), "spec.template.metadata",
                    pod.labels, pod.set.annotations, w);
  int64_t count = parallelism.value_or(1);
  if (completions) count = std::min(count, *completions);
  pod.set.name = "main";
  pod.set.count = static_cast<int32_t>(count);
  if (count == 0) {
    ctx.Warning(Child(spec, parallelism == 0 ? "parallelism" : "completions"), "spec.parallelism",
                "the Job runs no pods");
  }
  if (auto it = meta.annotations.find(std::string(kMinParallelism)); it != meta.annotations.end()) {
    YAML::Node at = AnnotationNode(meta, kMinParallelism);
    int64_t min = 0;
    bool ok = !it->second.empty() && std::all_of(it->second.begin(), it->second.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    }) && it->second.size() < 10;
    if (ok) min = std::stoll(it->second);
    if (!ok || min < 1) {
      ctx.Error(at, AnnotationPath(kMinParallelism),
                "expected a positive integer, got \"" + it->second + "\"");
      return;
    }
    if (min > count) {
      ctx.Warning(
          at, AnnotationPath(kMinParallelism),
          "larger than the Job's " + std::to_string(count) + " pods; Tessera requires all of them");
    } else if (min < count) {
      w.min_count = static_cast<int32_t>(min);
    }
  }
  w.priority_class = pod.priority_class;
  w.pod_sets.push_back(std::move(pod.set));
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind BatchJobKind() {
  JobKind k;
  k.group = "batch";
  k.versions = {"v1"};
  k.kind = "Job";
  k.plural = "jobs";
  k.read = Read;
  return k;
}

}  // namespace tessera::config_internal
