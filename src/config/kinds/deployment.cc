// apps/v1 Deployment: each replica its own workload of one pod; anti-affinity spans them.
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

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto replicas = GetInt(ctx, spec, "replicas", "spec.replicas", 0, kMaxDeploymentReplicas);
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, "spec.template", pod)) return;
  Workload base = NewWorkload(ctx, meta, "Deployment");
  if (ctx.failed()) return;
  QueueFromTemplate(ctx, Child(Child(spec, "template"), "metadata"), "spec.template.metadata",
                    pod.labels, pod.set.annotations, base);
  base.priority_class = pod.priority_class;
  pod.set.name = "main";
  base.pod_sets.push_back(std::move(pod.set));
  base.spread_group = meta.ns + "/" + meta.name;  // anti-affinity spans the replicas
  int64_t n = replicas.value_or(1);
  for (int64_t i = 0; i < n; ++i) {
    Workload w = base;
    w.name = meta.name + "-" + std::to_string(i);
    out.model.workloads.push_back(std::move(w));
  }
}

}  // namespace

JobKind DeploymentKind() {
  JobKind k;
  k.group = "apps";
  k.versions = {"v1"};
  k.kind = "Deployment";
  k.plural = "deployments";
  k.read = Read;
  return k;
}

}  // namespace tessera::config_internal
