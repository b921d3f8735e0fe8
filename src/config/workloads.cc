// Readers for the job kinds, each turned into a tessera::Workload: batch Job, Volcano Job,
// PodGroup + Pods, PyTorchJob, TFJob, Pod and Deployment. Pod templates are read once, here;
// their requests by Kubernetes' rule (config/pod_resources.h: limits default requests, init
// containers and sidecars, pod-level spec.resources, overhead).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "config/controller_fields.h"
#include "config/duration.h"
#include "config/gpu_fields.h"
#include "config/kinds.h"
#include "config/pod_placement.h"
#include "config/pod_resources.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"
#include "model/limits.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kMinParallelism = "kueue.x-k8s.io/job-min-parallelism";
// Labels that make a v1 Pod a member of a pod group.
constexpr std::string_view kPodGroupLabels[] = {"scheduling.x-k8s.io/pod-group",
                                                "pod-group.scheduling.sigs.k8s.io"};
// Kueue's plain-pod groups have no PodGroup object; the total count is an annotation.
constexpr std::string_view kKueuePodGroupLabel = "kueue.x-k8s.io/pod-group-name";
constexpr std::string_view kKueuePodGroupCount = "kueue.x-k8s.io/pod-group-total-count";

constexpr int64_t kMaxPods = kMaxPodsPerWorkload;        // model/limits.h
constexpr int64_t kDefaultTerminationGraceSeconds = 30;  // Kubernetes' default

// What a pod template or pod spec contributes.
struct PodInfo {
  PodSet set;
  std::string priority_class;
  Labels labels;  // the pod's (or template's) labels
  // podAntiAffinity terms on kubernetes.io/hostname, resolved against `labels` once known.
  std::vector<LabelSelector> anti_required, anti_preferred;
  YAML::Node anti_at;
  std::string anti_path;
  std::vector<SpreadTerm> spread_terms;  // resolved against `labels` once known
};

bool ReadPodSpec(DocContext& ctx, const YAML::Node& spec, const std::string& path, PodInfo& out) {
  if (IsNullish(spec)) {
    ctx.Error(spec, path, "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, spec, path)) return false;
  PodSet& ps = out.set;
  YAML::Node containers = Child(spec, "containers");
  if (IsNullish(containers)) {
    ctx.Error(spec, path + ".containers", "required field is missing");
    return false;
  }
  ps.requests = ReadPodRequests(ctx, spec, path);
  // In a cluster a gate's owner removes it; in a simulation nobody would (docs/manifests.md).
  if (YAML::Node gates = Child(spec, "schedulingGates"); !IsNullish(gates))
    ctx.Warning(gates, path + ".schedulingGates",
                "scheduling gates are not simulated (nothing would remove them): the pod is "
                "scheduled as if its gates were gone");

  ReadLabels(ctx, Child(spec, "nodeSelector"), path + ".nodeSelector", ps.node_selector);
  ReadTolerations(ctx, Child(spec, "tolerations"), path + ".tolerations", ps.tolerations);
  out.priority_class =
      GetString(ctx, spec, "priorityClassName", path + ".priorityClassName").value_or("");
  // Kubernetes defaults it to 30 s; a preempted pod keeps its place that long (docs/time.md).
  ps.termination_grace = static_cast<double>(GetInt(ctx, spec, "terminationGracePeriodSeconds",
                                                    path + ".terminationGracePeriodSeconds", 0,
                                                    static_cast<int64_t>(kMaxDurationSeconds))
                                                 .value_or(kDefaultTerminationGraceSeconds));
  YAML::Node affinity = Child(spec, "affinity");
  if (ExpectMap(ctx, affinity, path + ".affinity")) {
    const std::string napath = path + ".affinity.nodeAffinity";
    YAML::Node na = Child(affinity, "nodeAffinity");
    if (ExpectMap(ctx, na, napath)) {
      const std::string rpath = napath + ".requiredDuringSchedulingIgnoredDuringExecution";
      YAML::Node required = Child(na, "requiredDuringSchedulingIgnoredDuringExecution");
      if (ExpectMap(ctx, required, rpath)) {
        ForEachSeq(ctx, Child(required, "nodeSelectorTerms"), rpath + ".nodeSelectorTerms",
                   [&](size_t, const YAML::Node& term, const std::string& tpath) {
                     if (!ExpectMap(ctx, term, tpath)) {
                       if (!ctx.failed()) ctx.Error(term, tpath, "expected a term, got null");
                       return false;
                     }
                     NodeSelectorTerm t;
                     ReadRequirements(ctx, Child(term, "matchExpressions"),
                                      tpath + ".matchExpressions", /*allow_gt_lt=*/true,
                                      t.match_expressions);
                     if (!IsNullish(Child(term, "matchFields"))) {
                       ctx.Warning(Child(term, "matchFields"), tpath + ".matchFields",
                                   "matchFields is not supported; Tessera ignores it");
                     }
                     ps.affinity.required_terms.push_back(std::move(t));
                     return !ctx.failed();
                   });
      }
      ReadPreferredNodeAffinity(ctx, na, napath, ps.affinity);
    }
    const std::string papath = path + ".affinity.podAntiAffinity";
    YAML::Node paa = Child(affinity, "podAntiAffinity");
    if (ExpectMap(ctx, paa, papath)) {
      out.anti_at = paa;
      out.anti_path = papath;
      auto read_term = [&](const YAML::Node& term, const std::string& tpath, bool required) {
        if (!ExpectMap(ctx, term, tpath)) return false;
        std::string key = GetString(ctx, term, "topologyKey", tpath + ".topologyKey").value_or("");
        LabelSelector sel;
        ReadLabelSelector(ctx, Child(term, "labelSelector"), tpath + ".labelSelector", sel);
        if (key != "kubernetes.io/hostname") {
          ctx.Warning(term, tpath + ".topologyKey",
                      "Tessera honours pod anti-affinity on kubernetes.io/hostname only; this "
                      "term is ignored");
          return !ctx.failed();
        }
        (required ? out.anti_required : out.anti_preferred).push_back(std::move(sel));
        return !ctx.failed();
      };
      ForEachSeq(ctx, Child(paa, "requiredDuringSchedulingIgnoredDuringExecution"),
                 papath + ".requiredDuringSchedulingIgnoredDuringExecution",
                 [&](size_t, const YAML::Node& term, const std::string& tpath) {
                   return read_term(term, tpath, true);
                 });
      ForEachSeq(ctx, Child(paa, "preferredDuringSchedulingIgnoredDuringExecution"),
                 papath + ".preferredDuringSchedulingIgnoredDuringExecution",
                 [&](size_t, const YAML::Node& term, const std::string& tpath) {
                   if (!ExpectMap(ctx, term, tpath)) return false;
                   return read_term(Child(term, "podAffinityTerm"), tpath + ".podAffinityTerm",
                                    false);
                 });
    }
  }
  ReadTopologySpread(ctx, spec, path, out.spread_terms);
  return !ctx.failed();
}

// Pod-level placement wishes that need the pod's labels and annotations: anti-affinity among
// the workload's own pods, and Kueue's topology annotations.
void ResolvePlacement(DocContext& ctx, const YAML::Node& annotations_at,
                      const std::string& annotations_path, PodInfo& pod) {
  PodSet& ps = pod.set;
  auto own = [&](const std::vector<LabelSelector>& terms) {
    bool any = false;
    for (const LabelSelector& sel : terms) {
      if (Matches(sel, pod.labels)) {
        any = true;
      } else {
        ctx.Warning(pod.anti_at, pod.anti_path,
                    "a podAntiAffinity term that does not select the pod's own labels is "
                    "ignored (Tessera spreads a workload's own pods only)");
      }
    }
    return any;
  };
  if (own(pod.anti_required)) {
    ps.anti_affinity = HostnameAntiAffinity::kRequired;
  } else if (own(pod.anti_preferred)) {
    ps.anti_affinity = HostnameAntiAffinity::kPreferred;
  }
  ResolveTopologySpread(ctx, pod.spread_terms, pod.labels, ps);
  for (const FieldProblem& p : ApplyTopologyAnnotations(ps.annotations, ps.topology))
    ctx.Error(annotations_at, JoinPath(annotations_path, p.key), p.message);
}

// A pod template: metadata (labels, annotations) and spec.

// KAI Scheduler's pod annotations for a share of one GPU (gpu-fraction, gpu-memory; see
// config/gpu_fields.h). Applied after the spec is read, so that they replace a whole-GPU request
// the pod may carry for the device plugin.
void ApplyGpuFraction(DocContext& ctx, const YAML::Node& at, const std::string& path, PodSet& set) {
  for (const FieldProblem& p : ApplyGpuShareAnnotations(set.annotations, set.requests))
    ctx.Error(at, JoinPath(path, p.key), p.message);
}

// A pod template: metadata (labels, annotations) and spec.
bool ReadPodTemplate(DocContext& ctx, const YAML::Node& parent, const std::string& path,
                     PodInfo& out) {
  YAML::Node tmpl = Child(parent, "template");
  if (IsNullish(tmpl)) {
    ctx.Error(parent, path, "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, tmpl, path)) return false;
  YAML::Node md = Child(tmpl, "metadata");
  if (ExpectMap(ctx, md, path + ".metadata")) {
    ReadLabels(ctx, Child(md, "labels"), path + ".metadata.labels", out.labels);
    Labels annotations;
    ReadLabels(ctx, Child(md, "annotations"), path + ".metadata.annotations", annotations);
    out.set.annotations.insert(annotations.begin(), annotations.end());
  }
  if (ctx.failed()) return false;
  if (!ReadPodSpec(ctx, Child(tmpl, "spec"), path + ".spec", out)) return false;
  ApplyGpuFraction(ctx, md, path + ".metadata.annotations", out.set);
  ResolvePlacement(ctx, md, path + ".metadata.annotations", out);
  return !ctx.failed();
}

YAML::Node RequireSpec(DocContext& ctx, const ObjectMeta& meta) {
  YAML::Node spec = Child(meta.root, "spec");
  if (IsNullish(spec)) {
    ctx.Error(meta.root, "spec", "required field is missing");
    return YAML::Node();
  }
  if (!ExpectMap(ctx, spec, "spec")) return YAML::Node();
  return spec;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Kubeflow's training jobs: one pod set per replica type, in the order the operators start them.
void ReadKubeflowJob(DocContext& ctx, const ObjectMeta& meta, Staged& out,
                     std::string_view specs_key, std::vector<std::string_view> order) {
  Workload w = NewWorkload(ctx, meta, meta.kind);
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  const std::string specs_path = "spec." + std::string(specs_key);
  YAML::Node specs = Child(spec, specs_key);
  if (IsNullish(specs)) {
    ctx.Error(spec, specs_path, "required field is missing");
    return;
  }
  struct Replica {
    std::string type;
    YAML::Node node;
    std::string path;
  };
  std::vector<Replica> replicas;
  ForEachMap(ctx, specs, specs_path,
             [&](const std::string& type, const YAML::Node& node, const std::string& path) {
               replicas.push_back({type, node, path});
               return true;
             });
  auto rank = [&](const std::string& type) {
    auto it = std::find(order.begin(), order.end(), type);
    return static_cast<size_t>(it - order.begin());
  };
  // Sort indices, not the Replicas: assigning a YAML::Node rebinds the node it refers to, so
  // moving Nodes around in a vector would rewrite the document.
  std::vector<size_t> order_idx(replicas.size());
  for (size_t i = 0; i < order_idx.size(); ++i) order_idx[i] = i;
  std::stable_sort(order_idx.begin(), order_idx.end(), [&](size_t a, size_t b) {
    return rank(replicas[a].type) < rank(replicas[b].type);
  });
  std::string template_priority;
  for (size_t idx : order_idx) {
    const Replica& r = replicas[idx];
    if (!ExpectMap(ctx, r.node, r.path)) {
      if (!ctx.failed()) ctx.Error(r.node, r.path, "expected a replica spec, got null");
      return;
    }
    auto count = GetInt(ctx, r.node, "replicas", r.path + ".replicas", 0, kMaxPods);
    PodInfo pod;
    if (!ReadPodTemplate(ctx, r.node, r.path + ".template", pod)) return;
    pod.set.name = Lower(r.type);
    pod.set.count = static_cast<int32_t>(count.value_or(1));
    if (template_priority.empty()) template_priority = pod.priority_class;
    w.pod_sets.push_back(std::move(pod.set));
  }
  if (specs_key == "pytorchReplicaSpecs") ReadElasticPolicy(ctx, spec, w);
  YAML::Node policy = Child(Child(spec, "runPolicy"), "schedulingPolicy");
  const std::string ppath = "spec.runPolicy.schedulingPolicy";
  if (ExpectMap(ctx, Child(spec, "runPolicy"), "spec.runPolicy") && ExpectMap(ctx, policy, ppath)) {
    if (auto min = GetInt(ctx, policy, "minAvailable", ppath + ".minAvailable", 0, kMaxPods))
      w.min_count = static_cast<int32_t>(*min);
    if (w.queue_name.empty())
      w.queue_name = GetString(ctx, policy, "queue", ppath + ".queue").value_or("");
    w.priority_class =
        GetString(ctx, policy, "priorityClass", ppath + ".priorityClass").value_or("");
  }
  if (w.priority_class.empty()) w.priority_class = template_priority;
  ReadActiveDeadline(ctx, Child(spec, "runPolicy"), "spec.runPolicy", w);
  if (ctx.failed()) return;
  out.model.workloads.push_back(std::move(w));
}

// The pod group a v1 Pod belongs to, if any; `kueue` tells Kueue's plain-pod groups apart.
std::string PodGroupOf(const ObjectMeta& meta, bool& kueue) {
  kueue = false;
  for (std::string_view label : kPodGroupLabels) {
    if (auto g = Lookup(meta.labels, label); !g.empty()) return g;
  }
  if (auto g = Lookup(meta.labels, kKueuePodGroupLabel); !g.empty()) {
    kueue = true;
    return g;
  }
  return "";
}

}  // namespace

void ReadJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "Job");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto parallelism = GetInt(ctx, spec, "parallelism", "spec.parallelism", 0, kMaxPods);
  auto completions = GetInt(ctx, spec, "completions", "spec.completions", 0, kMaxPods);
  ReadActiveDeadline(ctx, spec, "spec", w);
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, "spec.template", pod) || ctx.failed()) return;
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

void ReadVolcanoJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "Volcano Job");
  ReadSlaWaitingTime(ctx, meta, w);
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node tasks = Child(spec, "tasks");
  if (IsNullish(tasks)) {
    ctx.Error(spec, "spec.tasks", "required field is missing");
    return;
  }
  NoticeVolcanoJobFields(ctx, spec);
  std::string template_priority;
  ForEachSeq(ctx, tasks, "spec.tasks", [&](size_t i, const YAML::Node& t, const std::string& p) {
    if (!ExpectMap(ctx, t, p)) {
      if (!ctx.failed()) ctx.Error(t, p, "expected a task, got null");
      return false;
    }
    auto name = GetString(ctx, t, "name", p + ".name");
    auto replicas = GetInt(ctx, t, "replicas", p + ".replicas", 0, kMaxPods);
    PodInfo pod;
    if (!ReadPodTemplate(ctx, t, p + ".template", pod)) return false;
    pod.set.name = name && !name->empty() ? *name : "task" + std::to_string(i);
    pod.set.count = static_cast<int32_t>(replicas.value_or(1));
    if (template_priority.empty()) template_priority = pod.priority_class;
    w.pod_sets.push_back(std::move(pod.set));
    return true;
  });
  auto min = GetInt(ctx, spec, "minAvailable", "spec.minAvailable", 0, kMaxPods);
  if (w.queue_name.empty()) w.queue_name = GetString(ctx, spec, "queue", "spec.queue").value_or("");
  w.priority_class =
      GetString(ctx, spec, "priorityClassName", "spec.priorityClassName").value_or("");
  if (w.priority_class.empty()) w.priority_class = template_priority;
  // spec.networkTopology {mode: hard|soft, highestTierAllowed: N}: every task's pods within one
  // domain of tier N (hard) or as few domains as possible (soft).
  YAML::Node nt = Child(spec, "networkTopology");
  if (ExpectMap(ctx, nt, "spec.networkTopology")) {
    auto mode = GetString(ctx, nt, "mode", "spec.networkTopology.mode").value_or("hard");
    auto tier =
        GetInt(ctx, nt, "highestTierAllowed", "spec.networkTopology.highestTierAllowed", 1, 16);
    if (mode != "hard" && mode != "soft") {
      ctx.Error(Child(nt, "mode"), "spec.networkTopology.mode",
                "unknown value \"" + mode + "\"; allowed: hard, soft");
    }
    for (PodSet& ps : w.pod_sets) {
      if (ps.topology.present()) continue;  // a Kueue annotation on the task wins
      ps.topology.tier = static_cast<int32_t>(tier.value_or(1));
      ps.topology.required = mode == "hard";
    }
  }
  if (ctx.failed()) return;
  // Volcano's webhook defaults minAvailable 0 to every pod.
  if (min && *min > 0) {
    if (*min > w.TotalPods()) {
      ctx.Warning(Child(spec, "minAvailable"), "spec.minAvailable",
                  "minAvailable is larger than the job's " + std::to_string(w.TotalPods()) +
                      " pods; Volcano rejects this; Tessera requires all of them");
    } else {
      w.min_count = static_cast<int32_t>(*min);
    }
  }
  out.model.workloads.push_back(std::move(w));
}

void ReadPodGroup(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "PodGroup");
  ReadSlaWaitingTime(ctx, meta, w);
  YAML::Node spec = Child(meta.root, "spec");
  if (!IsNullish(spec) && !ExpectMap(ctx, spec, "spec")) return;
  auto min = GetInt(ctx, spec, "minMember", "spec.minMember", 0, kMaxPods);
  w.priority_class =
      GetString(ctx, spec, "priorityClassName", "spec.priorityClassName").value_or("");
  if (ctx.failed()) return;
  if (min && *min > 0) w.min_count = static_cast<int32_t>(*min);
  out.model.workloads.push_back(std::move(w));
}

void ReadPod(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "Pod");
  PodInfo pod;
  if (!ReadPodSpec(ctx, Child(meta.root, "spec"), "spec", pod)) return;
  ReadActiveDeadline(ctx, Child(meta.root, "spec"), "spec", w);
  pod.set.name = "main";
  pod.set.annotations = meta.annotations;
  ApplyGpuFraction(ctx, meta.metadata, "metadata.annotations", pod.set);
  pod.labels = meta.labels;
  ResolvePlacement(ctx, meta.metadata, "metadata.annotations", pod);
  if (ctx.failed()) return;
  w.priority_class = pod.priority_class;
  bool kueue = false;
  std::string group = PodGroupOf(meta, kueue);
  if (group.empty()) {
    w.pod_sets.push_back(std::move(pod.set));
    out.model.workloads.push_back(std::move(w));
    return;
  }
  pod.set.name = meta.name;
  w.pod_sets.push_back(std::move(pod.set));
  if (kueue) {
    // Kueue's plain-pod groups: the group needs all of its pod-group-total-count pods.
    if (auto it = meta.annotations.find(std::string(kKueuePodGroupCount));
        it != meta.annotations.end()) {
      const std::string& s = it->second;
      bool digits = !s.empty() && s.size() < 8 && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
      if (!digits) {
        ctx.Error(AnnotationNode(meta, kKueuePodGroupCount), AnnotationPath(kKueuePodGroupCount),
                  "expected a positive integer, got \"" + s + "\"");
        return;
      }
      w.min_count = static_cast<int32_t>(std::stol(s));
    }
  }
  GroupPod gp;
  gp.ns = meta.ns;
  gp.group = group;
  gp.source = meta.source;
  gp.kueue = kueue;
  gp.pod = std::move(w);
  out.group_pods.push_back(std::move(gp));
}

void ReadPyTorchJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ReadKubeflowJob(ctx, meta, out, "pytorchReplicaSpecs", {"Master", "Worker"});
}

void ReadTFJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ReadKubeflowJob(ctx, meta, out, "tfReplicaSpecs",
                  {"Chief", "Master", "PS", "Worker", "Evaluator"});
}

void ReadDeployment(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  auto replicas = GetInt(ctx, spec, "replicas", "spec.replicas", 0, kMaxDeploymentReplicas);
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, "spec.template", pod)) return;
  Workload base = NewWorkload(ctx, meta, "Deployment");
  if (ctx.failed()) return;
  if (base.queue_name.empty()) base.queue_name = QueueOf(pod.labels, pod.set.annotations);
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

// Kueue's Workload: spec.queueName, spec.priorityClassName (a WorkloadPriorityClass when
// spec.priorityClassSource says so) and spec.podSets[] {name, count, minCount, template}. A
// Workload Kueue made for a job (one with ownerReferences) is skipped: the job is the workload.
void ReadKueueWorkload(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
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

void ResolvePodGroups(std::vector<GroupPod> pods, Model& model, std::vector<Diagnostic>& out) {
  if (pods.empty()) return;
  std::map<std::string, size_t> groups;  // "ns/name" -> index in model.workloads
  for (size_t i = 0; i < model.workloads.size(); ++i) {
    if (model.workloads[i].kind == "PodGroup") groups.emplace(model.workloads[i].Key(), i);
  }
  // Groups without a PodGroup object, in the order their first pod appeared.
  std::vector<std::string> implicit_order;
  std::map<std::string, Workload> implicit;
  std::map<std::string, bool> implicit_is_kueue;
  for (GroupPod& gp : pods) {
    std::string key = gp.ns + "/" + gp.group;
    Workload* w = nullptr;
    if (auto it = groups.find(key); it != groups.end()) {
      w = &model.workloads[it->second];
    } else if (auto it2 = implicit.find(key); it2 != implicit.end()) {
      w = &it2->second;
    } else {
      Workload g = gp.pod;  // the first pod gives queue, priority, arrival and runtime
      g.name = gp.group;
      g.kind = "PodGroup";
      g.pod_sets.clear();
      implicit_order.push_back(key);
      implicit_is_kueue[key] = gp.kueue;
      w = &implicit.emplace(key, std::move(g)).first->second;
    }
    if (w->queue_name.empty()) w->queue_name = gp.pod.queue_name;
    if (w->priority_class.empty()) w->priority_class = gp.pod.priority_class;
    if (w->workload_priority_class.empty())
      w->workload_priority_class = gp.pod.workload_priority_class;
    MergeMemberTime(gp.pod, *w);
    for (PodSet& ps : gp.pod.pod_sets) w->pod_sets.push_back(std::move(ps));
  }
  for (const std::string& key : implicit_order) {
    Workload& w = implicit[key];
    if (!implicit_is_kueue[key]) {
      Diagnostic d;
      d.severity = Diagnostic::Severity::kWarning;
      ParseSource(w.source, d.file, d.line);
      d.message = "pod group " + w.name + " has no PodGroup object in namespace " + w.ns +
                  "; its " + std::to_string(w.TotalPods()) +
                  " labelled pods form a gang that needs all of them";
      w.min_count = -1;
      out.push_back(std::move(d));
    }
    model.workloads.push_back(std::move(w));
  }
}

void ParseSource(const std::string& source, std::string& file, int& line) {
  auto colon = source.rfind(':');
  file = source;
  line = 0;
  if (colon == std::string::npos) return;
  std::string digits = source.substr(colon + 1);
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return;
  file = source.substr(0, colon);
  line = std::stoi(digits);
}

}  // namespace tessera::config_internal
