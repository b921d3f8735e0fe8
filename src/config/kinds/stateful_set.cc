// apps/v1 StatefulSet: one workload of `replicas` pods (default 1) from spec.template, as Kueue
// treats a StatefulSet: one pod group. With podManagementPolicy Parallel the controller creates
// every pod at once and the set is a gang; with OrderedReady (Kubernetes' default) it creates
// each pod once the one before is Ready, so no scheduler can hold them for a gang (the first
// would wait for pods that are never created): Tessera admits them as they come (a minimum of
// one pod), with a notice. volumeClaimTemplates are not simulated (storage is not scheduled).
//
// Kubernetes mode: the pods are linked by their controller ownerReference, the StatefulSet.
#include <string>

#include "config/kinds/registry.h"
#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "StatefulSet");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto replicas = GetInt(ctx, spec, "replicas", "spec.replicas", 0, kMaxDeploymentReplicas);
  auto policy = GetString(ctx, spec, "podManagementPolicy", "spec.podManagementPolicy")
                    .value_or("OrderedReady");
  if (policy != "OrderedReady" && policy != "Parallel") {
    ctx.Error(Child(spec, "podManagementPolicy"), "spec.podManagementPolicy",
              "unknown value \"" + policy + "\"; allowed: OrderedReady, Parallel");
    return;
  }
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, "spec.template", pod) || ctx.failed()) return;
  if (w.queue_name.empty())
    QueueFromTemplate(ctx, Child(Child(spec, "template"), "metadata"), "spec.template.metadata",
                      pod.labels, pod.set.annotations, w);
  if (YAML::Node v = Child(spec, "volumeClaimTemplates"); !IsNullish(v))
    ctx.Notice(v, "spec.volumeClaimTemplates",
               "storage is not scheduled by Tessera; the pods are placed as if their volumes "
               "were bound");
  const int64_t n = replicas.value_or(1);
  if (n == 0) {
    ctx.Warning(Child(spec, "replicas"), "spec.replicas", "the StatefulSet runs no pods");
    return;
  }
  if (policy == "OrderedReady" && n > 1) {
    YAML::Node at = Child(spec, "podManagementPolicy");
    ctx.Notice(IsNullish(at) ? spec : at,
               "spec.podManagementPolicy",
               "OrderedReady (the default): the controller creates each pod once the one before "
               "is Ready, so the set cannot start as a gang; Tessera admits its pods as they come "
               "(set Parallel to have them start together)");
    w.min_count = 1;
  }
  w.priority_class = pod.priority_class;
  pod.set.name = "main";
  pod.set.count = static_cast<int32_t>(n);
  w.pod_sets.push_back(std::move(pod.set));
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind StatefulSetKind() {
  JobKind k;
  k.group = "apps";
  k.versions = {"v1"};
  k.kind = "StatefulSet";
  k.plural = "statefulsets";
  k.read = Read;
  k.pods.owner_reference = true;
  return k;
}

}  // namespace tessera::config_internal
