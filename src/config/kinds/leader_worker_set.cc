// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): spec.replicas groups (default 1), each its own
// workload named "<name>-<index>", as Kueue's LeaderWorkerSet integration admits each group on
// its own: pod set "leader" (1 pod, leaderWorkerTemplate.leaderTemplate, or the worker template
// when there is none) and pod set "worker" (size - 1 pods of workerTemplate; size default 1).
// Each group is a gang.
//
// Not honoured, each named in a notice: startupPolicy LeaderReady (the workers are created once
// the leader is ready; Tessera starts the group together), subGroupPolicy (sub-groups placed
// apart), and the exclusive-topology annotation (one group per topology domain).
//
// Kubernetes mode: the pods carry leaderworkerset.sigs.k8s.io/name and group-index; the gang is
// "<name>-<group-index>" (its pods are owned by StatefulSets, which do not size it).
#include <string>

#include "config/kinds/registry.h"
#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kExclusiveTopology = "leaderworkerset.sigs.k8s.io/exclusive-topology";
constexpr int64_t kMaxGroups = 100000;  // as Deployment replicas (model/limits.h)

// The pod template at `key` of `lwt` (a PodTemplateSpec, not under a "template" key).
bool ReadTemplateAt(DocContext& ctx, const YAML::Node& lwt, const char* key,
                    const std::string& path, PodInfo& pod) {
  YAML::Node parent(YAML::NodeType::Map);
  parent["template"] = Child(lwt, key);
  return ReadPodTemplate(ctx, parent, path, pod);
}

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload base = NewWorkload(ctx, meta, "LeaderWorkerSet");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto replicas = GetInt(ctx, spec, "replicas", "spec.replicas", 0, kMaxGroups);
  const std::string lp = "spec.leaderWorkerTemplate";
  YAML::Node lwt = Child(spec, "leaderWorkerTemplate");
  if (IsNullish(lwt)) {
    ctx.Error(spec, lp, "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, lwt, lp)) return;
  auto size = GetInt(ctx, lwt, "size", lp + ".size", 1, kMaxPods);
  if (IsNullish(Child(lwt, "workerTemplate"))) {
    ctx.Error(lwt, lp + ".workerTemplate", "required field is missing");
    return;
  }
  PodInfo worker;
  if (!ReadTemplateAt(ctx, lwt, "workerTemplate", lp + ".workerTemplate", worker)) return;
  PodInfo leader = worker;
  if (!IsNullish(Child(lwt, "leaderTemplate"))) {
    leader = PodInfo{};
    if (!ReadTemplateAt(ctx, lwt, "leaderTemplate", lp + ".leaderTemplate", leader)) return;
  }
  if (auto sp = GetString(ctx, spec, "startupPolicy", "spec.startupPolicy"); sp == "LeaderReady")
    ctx.Notice(Child(spec, "startupPolicy"), "spec.startupPolicy",
               "LeaderWorkerSet creates the workers once the leader is ready; Tessera admits and "
               "starts each group together");
  if (YAML::Node sg = Child(lwt, "subGroupPolicy"); !IsNullish(sg))
    ctx.Notice(sg, lp + ".subGroupPolicy",
               "sub-groups are not placed apart; each group is placed as one gang");
  if (meta.annotations.count(std::string(kExclusiveTopology)))
    ctx.Notice(AnnotationNode(meta, kExclusiveTopology), AnnotationPath(kExclusiveTopology),
               "exclusive placement (one group per topology domain) is not honoured; use "
               "Kueue's kueue.x-k8s.io/podset-required-topology on the templates instead");
  if (ctx.failed()) return;
  if (base.queue_name.empty())
    QueueFromTemplate(ctx, Child(Child(lwt, "workerTemplate"), "metadata"),
                      lp + ".workerTemplate.metadata", worker.labels, worker.set.annotations,
                      base);
  base.priority_class = leader.priority_class.empty() ? worker.priority_class
                                                      : leader.priority_class;
  leader.set.name = "leader";
  leader.set.count = 1;
  base.pod_sets.push_back(leader.set);
  if (size.value_or(1) > 1) {
    worker.set.name = "worker";
    worker.set.count = static_cast<int32_t>(*size - 1);
    base.pod_sets.push_back(worker.set);
  }
  for (int64_t i = 0; i < replicas.value_or(1); ++i) {
    Workload w = base;
    w.name = meta.name + "-" + std::to_string(i);
    out.model.workloads.push_back(std::move(w));
  }
}

}  // namespace

JobKind LeaderWorkerSetKind() {
  JobKind k;
  k.group = "leaderworkerset.x-k8s.io";
  k.versions = {"v1"};
  k.kind = "LeaderWorkerSet";
  k.plural = "leaderworkersets";
  k.read = Read;
  k.pods.name_label = "leaderworkerset.sigs.k8s.io/name";
  k.pods.index_label = "leaderworkerset.sigs.k8s.io/group-index";
  return k;
}

}  // namespace tessera::config_internal
