// KubeRay's ray.io/v1 kinds: RayCluster, RayJob and RayService, each one workload (one gang)
// whose pod sets are Kueue's (pkg/controller/jobs/raycluster, rayjob, rayservice):
//   - "head": 1 pod of headGroupSpec.template;
//   - one per workerGroupSpecs[i], named by its groupName (lower-cased), of replicas (default 1)
//     x numOfHosts (default 1) pods;
//   - RayJob in submissionMode K8sJobMode (KubeRay's default) adds "submitter": 1 pod of
//     spec.submitterPodTemplate, or KubeRay's default submitter (500m CPU, 200Mi memory).
// Like Kueue, the gang is whole: no pod set has a minimum count of its own.
//
// Not honoured, each named in a notice: the Ray autoscaler (enableInTreeAutoscaling: Kueue
// refuses an autoscaling cluster unless elastic workload slicing is on; Tessera admits every
// group at its replicas and never scales it between minReplicas and maxReplicas), a worker
// group's suspend, a RayJob's clusterSelector (it runs on an existing cluster: no pods of its
// own, no workload), shutdownAfterJobFinishes false and ttlSecondsAfterFinished (the cluster's
// life after the job). KAI Scheduler's and Volcano's queue labels (kai.scheduler/queue,
// volcano.sh/queue-name) name the LocalQueue, as every queue marker does (model/queue_markers.h).
// A RayJob's activeDeadlineSeconds is its
// deadline. A RayService serves until deleted: it has no runtime unless tessera.dev/runtime
// gives one.
#include "config/kinds/registry.h"

#include <set>
#include <string>
#include <vector>

#include "config/pod_template.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

// KubeRay's label on every pod of a RayCluster: the cluster's name (ray-operator utils).
constexpr std::string_view kRayClusterLabel = "ray.io/cluster";

// Kueue's limit on a workload's pod sets (jobframework.MaxPodSets).
constexpr size_t kMaxPodSets = 8;

constexpr std::string_view kDefaultSubmitter = R"(template:
  spec:
    restartPolicy: Never
    containers:
    - name: ray-job-submitter
      resources:
        requests: {cpu: 500m, memory: 200Mi}
        limits: {cpu: "1", memory: 1Gi}
)";

// Reads a RayClusterSpec at `path` into w's pod sets; the first priorityClassName of its
// templates into `priority`. False after an error.
bool ReadRayClusterSpec(DocContext& ctx, const YAML::Node& spec, const std::string& path,
                        Workload& w, std::string& priority) {
  if (!ExpectMap(ctx, spec, path)) {
    if (!ctx.failed()) ctx.Error(spec, path, "required field is missing");
    return false;
  }
  const std::string head_path = path + ".headGroupSpec";
  YAML::Node head = Child(spec, "headGroupSpec");
  if (!ExpectMap(ctx, head, head_path)) {
    if (!ctx.failed()) ctx.Error(spec, head_path, "required field is missing");
    return false;
  }
  PodInfo head_pod;
  if (!ReadPodTemplate(ctx, head, head_path + ".template", head_pod)) return false;
  head_pod.set.name = "head";
  head_pod.set.count = 1;
  priority = head_pod.priority_class;
  w.pod_sets.push_back(std::move(head_pod.set));

  const std::string groups_path = path + ".workerGroupSpecs";
  YAML::Node groups = Child(spec, "workerGroupSpecs");
  if (!IsNullish(groups) && !ExpectSeq(ctx, groups, groups_path)) return false;
  std::set<std::string> names = {"head"};
  int64_t total = 1;
  ForEachSeq(ctx, groups, groups_path, [&](size_t, const YAML::Node& g, const std::string& gp) {
    if (!ExpectMap(ctx, g, gp)) {
      if (!ctx.failed()) ctx.Error(g, gp, "expected a worker group, got null");
      return false;
    }
    auto name = RequireString(ctx, g, "groupName", gp + ".groupName");
    if (!name) return false;
    std::string ps_name = Lower(*name);
    if (ps_name == "head") {
      ctx.Error(Child(g, "groupName"), gp + ".groupName",
                "\"head\" is reserved for the head group");
      return false;
    }
    if (!names.insert(ps_name).second) {
      ctx.Error(Child(g, "groupName"), gp + ".groupName",
                "duplicate worker group \"" + *name + "\"");
      return false;
    }
    auto replicas = GetInt(ctx, g, "replicas", gp + ".replicas", 0, kMaxPods);
    auto hosts = GetInt(ctx, g, "numOfHosts", gp + ".numOfHosts", 1, kMaxPods);
    auto min = GetInt(ctx, g, "minReplicas", gp + ".minReplicas", 0, kMaxPods);
    auto max = GetInt(ctx, g, "maxReplicas", gp + ".maxReplicas", 0, kMaxPods);
    auto suspend = GetBool(ctx, g, "suspend", gp + ".suspend");
    if (ctx.failed()) return false;
    if (min && max && *min > *max) {
      ctx.Error(Child(g, "minReplicas"), gp + ".minReplicas",
                "larger than maxReplicas " + std::to_string(*max));
      return false;
    }
    int64_t count = replicas.value_or(1) * hosts.value_or(1);
    total += count;
    if (count > kMaxPods || total > kMaxPods) {
      ctx.Error(g, gp, "the cluster's pods (replicas x numOfHosts) exceed " +
                           std::to_string(kMaxPods));
      return false;
    }
    PodInfo pod;
    if (!ReadPodTemplate(ctx, g, gp + ".template", pod)) return false;
    if (suspend.value_or(false)) {
      ctx.Notice(Child(g, "suspend"), gp + ".suspend",
                 "KubeRay deletes a suspended group's pods; Tessera admits the group at its "
                 "replicas like the others");
    }
    pod.set.name = ps_name;
    pod.set.count = static_cast<int32_t>(count);
    if (priority.empty()) priority = pod.priority_class;
    w.pod_sets.push_back(std::move(pod.set));
    return true;
  });
  if (ctx.failed()) return false;
  if (w.pod_sets.size() > kMaxPodSets) {
    ctx.Error(groups, groups_path,
              std::to_string(w.pod_sets.size()) + " pod sets (the head and " +
                  std::to_string(w.pod_sets.size() - 1) + " worker groups); Kueue allows " +
                  std::to_string(kMaxPodSets));
    return false;
  }
  auto autoscaling =
      GetBool(ctx, spec, "enableInTreeAutoscaling", path + ".enableInTreeAutoscaling");
  if (ctx.failed()) return false;
  if (autoscaling.value_or(false)) {
    ctx.Notice(Child(spec, "enableInTreeAutoscaling"), path + ".enableInTreeAutoscaling",
               "the Ray autoscaler is not simulated: Tessera admits each worker group at its "
               "replicas and never scales it between minReplicas and maxReplicas (Kueue refuses "
               "an autoscaling cluster unless elastic workload slicing is enabled)");
  }
  return true;
}

// Adds the object's workload once its pod sets are read.
void Finish(DocContext& ctx, const ObjectMeta& meta, Workload& w, const std::string& priority,
            Staged& out) {
  if (ctx.failed()) return;
  if (w.priority_class.empty()) w.priority_class = priority;
  out.model.workloads.push_back(std::move(w));
}

void ReadRayCluster(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "RayCluster");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  std::string priority;
  // RayCluster's spec is itself a RayClusterSpec.
  if (!ReadRayClusterSpec(ctx, spec, "spec", w, priority)) return;
  Finish(ctx, meta, w, priority, out);
}

// The submitter pod of a RayJob in K8sJobMode.
bool ReadSubmitter(DocContext& ctx, const YAML::Node& spec, Workload& w) {
  PodInfo pod;
  YAML::Node custom = Child(spec, "submitterPodTemplate");
  if (!IsNullish(custom)) {
    // ReadPodTemplate reads parent.template; the submitter's template has another key.
    YAML::Node parent(YAML::NodeType::Map);
    parent["template"] = custom;
    if (!ReadPodTemplate(ctx, parent, "spec.submitterPodTemplate", pod)) return false;
  } else {
    YAML::Node parent = YAML::Load(std::string(kDefaultSubmitter));
    if (!ReadPodTemplate(ctx, parent, "spec.submitterPodTemplate", pod)) return false;
  }
  pod.set.name = "submitter";
  pod.set.count = 1;
  w.pod_sets.push_back(std::move(pod.set));
  return true;
}

void ReadRayJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "RayJob");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node selector = Child(spec, "clusterSelector");
  YAML::Node cluster = Child(spec, "rayClusterSpec");
  if (ExpectMap(ctx, selector, "spec.clusterSelector") && selector.size() > 0) {
    ctx.Notice(selector, "spec.clusterSelector",
               "the job runs on an existing RayCluster and has no pods of its own to schedule; "
               "Tessera makes no workload of it (nor does Kueue)");
    if (!IsNullish(cluster)) {
      ctx.Warning(cluster, "spec.rayClusterSpec",
                  "ignored by KubeRay when clusterSelector is set (Kueue refuses the "
                  "combination)");
    }
    return;
  }
  if (ctx.failed()) return;
  if (IsNullish(cluster)) {
    ctx.Error(spec, "spec.rayClusterSpec", "required field is missing (or a clusterSelector)");
    return;
  }
  std::string priority;
  if (!ReadRayClusterSpec(ctx, cluster, "spec.rayClusterSpec", w, priority)) return;
  // Only K8sJobMode runs a pod of its own: the other modes submit from the operator
  // (HTTPMode), from the user (InteractiveMode) or from a container in the head (SidecarMode).
  bool k8s_job_mode = true;
  if (YAML::Node m = Child(spec, "submissionMode"); !IsNullish(m)) {
    auto parsed = ParseEnum<bool>(ctx, m, "spec.submissionMode",
                                  {{"K8sJobMode", true}, {"HTTPMode", false},
                                   {"InteractiveMode", false}, {"SidecarMode", false}});
    if (!parsed) return;
    k8s_job_mode = *parsed;
  }
  if (k8s_job_mode && !ReadSubmitter(ctx, spec, w)) return;
  ReadActiveDeadline(ctx, spec, "spec", w);
  auto shutdown =
      GetBool(ctx, spec, "shutdownAfterJobFinishes", "spec.shutdownAfterJobFinishes");
  auto ttl = GetInt(ctx, spec, "ttlSecondsAfterFinished", "spec.ttlSecondsAfterFinished", 0,
                    int64_t{1} << 31);
  if (ctx.failed()) return;
  if (!shutdown.value_or(false)) {
    ctx.Notice(IsNullish(Child(spec, "shutdownAfterJobFinishes"))
                   ? spec
                   : Child(spec, "shutdownAfterJobFinishes"),
               "spec.shutdownAfterJobFinishes",
               "false: KubeRay keeps the cluster (and its resources) after the job ends; Tessera "
               "releases them when the job ends (Kueue refuses such a RayJob)");
  } else if (ttl.value_or(0) > 0) {
    ctx.Notice(Child(spec, "ttlSecondsAfterFinished"), "spec.ttlSecondsAfterFinished",
               "the cluster's life after the job is not simulated; Tessera releases its "
               "resources when the job ends");
  }
  Finish(ctx, meta, w, priority, out);
}

void ReadRayService(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "RayService");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  std::string priority;
  if (!ReadRayClusterSpec(ctx, Child(spec, "rayClusterConfig"), "spec.rayClusterConfig", w,
                          priority)) {
    return;
  }
  Finish(ctx, meta, w, priority, out);
}

JobKind RayKind(std::string_view kind, std::string_view plural,
                void (*read)(DocContext&, const ObjectMeta&, Staged&)) {
  JobKind k;
  k.group = "ray.io";
  k.versions = {"v1"};
  k.kind = kind;
  k.plural = plural;
  k.read = read;
  return k;
}

}  // namespace

JobKind RayClusterKind() {
  JobKind k = RayKind("RayCluster", "rayclusters", ReadRayCluster);
  k.pods = {kRayClusterLabel, "", "", ""};
  return k;
}

// A RayJob's and a RayService's pods belong to the RayCluster KubeRay creates for them (their
// ray.io/cluster label names that cluster, not the RayJob or RayService), which Kubernetes mode
// links through the RayCluster kind.
JobKind RayJobKind() { return RayKind("RayJob", "rayjobs", ReadRayJob); }
JobKind RayServiceKind() { return RayKind("RayService", "rayservices", ReadRayService); }

}  // namespace tessera::config_internal
