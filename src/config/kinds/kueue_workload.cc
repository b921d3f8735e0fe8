// Kueue's own Workload object (kueue.x-k8s.io), read as the workload it describes.
#include "config/kinds/registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

// Kueue's Workload: spec.queueName, spec.priorityClassName (a WorkloadPriorityClass when
// spec.priorityClassSource says so) and spec.podSets[] {name, count, minCount, template}. A
// Workload Kueue made for a job (one with ownerReferences) is skipped: the job is the workload.
void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  if (YAML::Node owners = Child(meta.metadata, "ownerReferences"); !IsNullish(owners)) {
    ctx.Notice(owners, "metadata.ownerReferences",
               "skipped: a Workload Kueue made for its owner, which is read as the workload");
    return;
  }
  Workload w = NewWorkload(ctx, meta, "Workload");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  if (auto q = GetString(ctx, spec, "queueName", "spec.queueName")) w.queue_name = *q;
  auto pc = GetString(ctx, spec, "priorityClassName", "spec.priorityClassName").value_or("");
  auto source = GetString(ctx, spec, "priorityClassSource", "spec.priorityClassSource");
  (source == "kueue.x-k8s.io/workloadpriorityclass" ? w.workload_priority_class
                                                    : w.priority_class) = pc;
  if (!IsNullish(Child(spec, "priority")))
    ctx.Notice(Child(spec, "priority"), "spec.priority",
               "Kueue sets it from the priority class; Tessera uses the class");
  ForEachSeq(ctx, Child(spec, "podSets"), "spec.podSets",
             [&](size_t i, const YAML::Node& n, const std::string& p) {
               if (!ExpectMap(ctx, n, p)) return false;
               auto count = GetInt(ctx, n, "count", p + ".count", 0, kMaxPods);
               auto min = GetInt(ctx, n, "minCount", p + ".minCount", 0, kMaxPods);
               PodInfo pod;
               if (!ReadPodTemplate(ctx, n, p + ".template", pod)) return false;
               pod.set.name = GetString(ctx, n, "name", p + ".name").value_or("");
               if (pod.set.name.empty()) pod.set.name = i == 0 ? "main" : "ps" + std::to_string(i);
               pod.set.count = static_cast<int32_t>(count.value_or(1));
               if (min && *min > pod.set.count) {
                 ctx.Warning(Child(n, "minCount"), p + ".minCount",
                             "larger than count; Kueue rejects this; Tessera requires all " +
                                 std::to_string(pod.set.count) + " pods");
               } else if (min) {
                 pod.set.min_count = static_cast<int32_t>(*min);
               }
               if (w.priority_class.empty() && w.workload_priority_class.empty())
                 w.priority_class = pod.priority_class;
               w.pod_sets.push_back(std::move(pod.set));
               return true;
             });
  if (ctx.failed()) return;
  if (w.pod_sets.empty()) ctx.Error(spec, "spec.podSets", "required field is missing");
  if (ctx.failed()) return;
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind KueueWorkloadKind() {
  JobKind k;
  k.group = "kueue.x-k8s.io";
  k.versions = {"v1beta1", "v1beta2", "v1alpha1"};
  k.kind = "Workload";
  k.plural = "";
  k.read = Read;
  return k;
}

}  // namespace tessera::config_internal
