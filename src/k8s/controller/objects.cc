#include "k8s/controller/objects.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "config/gpu_fields.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "k8s/controller/dra_objects.h"
#include "k8s/controller/json_fields.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/objects_internal.h"
#include "k8s/controller/owner_kinds.h"
#include "model/json_text.h"
#include "model/limits.h"
#include "model/pod_requests.h"
#include "model/quantity.h"
#include "model/queue_markers.h"
#include "model/resources.h"

namespace tessera::k8s {

using objects_internal::CheckCount;
using objects_internal::ReadResources;

namespace {

constexpr int64_t kDefaultMaxPods = 110;  // the kubelet's default --max-pods

using json_fields::At;
using json_fields::Str;
using json_fields::StrMap;

// A resource list and which resources it names (pod_requests.h: a named 0 counts).
// A name the registry has no room for goes to `untracked` (ReadResources).
absl::Status ReadResourceList(const json& list, const std::string& path, ResourceList& out,
                              std::vector<std::string>* untracked) {
  if (auto st = ReadResources(list, path, out.values, untracked); !st.ok()) return st;
  if (list.is_object())
    for (auto it = list.begin(); it != list.end(); ++it)
      if (const ResourceId r = ResourceRegistry::Global().Find(it.key()); r >= 0)
        out.named |= 1u << r;
  return absl::OkStatus();
}

absl::Status ReadResourceRequirements(const json& res, const std::string& path,
                                      ResourceList& requests, ResourceList& limits,
                                      std::vector<std::string>* untracked) {
  if (auto st = ReadResourceList(At(res, "requests"), path + ".requests", requests, untracked);
      !st.ok())
    return st;
  return ReadResourceList(At(res, "limits"), path + ".limits", limits, untracked);
}

std::optional<TaintEffect> Effect(const std::string& s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  return std::nullopt;
}

absl::Status ReadRequirements(const json& list, const std::string& path,
                              std::vector<SelectorRequirement>& out) {
  if (list.is_null()) return absl::OkStatus();
  if (!list.is_array()) return absl::InvalidArgumentError(path + ": expected a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    SelectorRequirement r;
    r.key = Str(e, "key");
    const std::string op = Str(e, "operator");
    if (op == "In")
      r.op = SelectorOp::kIn;
    else if (op == "NotIn")
      r.op = SelectorOp::kNotIn;
    else if (op == "Exists")
      r.op = SelectorOp::kExists;
    else if (op == "DoesNotExist")
      r.op = SelectorOp::kDoesNotExist;
    else if (op == "Gt")
      r.op = SelectorOp::kGt;
    else if (op == "Lt")
      r.op = SelectorOp::kLt;
    else
      return absl::InvalidArgumentError(
          fmt::format("{}[{}].operator: unknown operator '{}'", path, i, op));
    const json& values = At(e, "values");
    if (values.is_array())
      for (const auto& v : values)
        if (v.is_string()) r.values.push_back(v.get<std::string>());
    // Gt and Lt compare one 64-bit integer (as the loader checks): "8Gi" would match nothing.
    int64_t number = 0;
    if ((r.op == SelectorOp::kGt || r.op == SelectorOp::kLt) &&
        (r.values.size() != 1 || !absl::SimpleAtoi(r.values[0], &number)))
      return absl::InvalidArgumentError(fmt::format(
          "{}[{}].values: operator {} needs exactly one whole number (a 64-bit integer)", path, i,
          op));
    out.push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace

namespace objects_internal {

absl::Status CheckCount(const json& v, std::string_view path, int64_t max) {
  if (!v.is_number_integer()) return absl::OkStatus();
  const bool ok = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(max)
                                         : v.get<int64_t>() >= 0 && v.get<int64_t>() <= max;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("{}: {} is out of range (0..{})", path, DumpJson(v), max));
}

absl::Status ReadResources(const json& list, const std::string& path, Resources& out,
                           std::vector<std::string>* untracked) {
  if (list.is_null()) return absl::OkStatus();
  if (!list.is_object()) return absl::InvalidArgumentError(path + ": expected a map");
  for (auto it = list.begin(); it != list.end(); ++it) {
    std::string text;
    if (it.value().is_string()) {
      text = it.value().get<std::string>();
    } else if (it.value().is_number()) {
      text = DumpJson(it.value());
    } else {
      return absl::InvalidArgumentError(fmt::format("{}.{}: expected a quantity", path, it.key()));
    }
    auto id = ResourceRegistry::Global().Intern(it.key());
    if (!id.ok() && untracked && absl::IsResourceExhausted(id.status())) {
      untracked->push_back(fmt::format("{}.{}", path, it.key()));
      continue;
    }
    if (!id.ok())
      return absl::InvalidArgumentError(
          fmt::format("{}.{}: {}", path, it.key(), std::string(id.status().message())));
    // As the loader (and the API server's own validation): "0.0001" nvidia.com/gpu is not a
    // GPU, though ParseQuantity would round it up to one.
    if (IsExtendedResourceName(it.key()))
      if (absl::Status whole = CheckWholeQuantity(text); !whole.ok())
        return absl::InvalidArgumentError(
            fmt::format("{}.{}: {}", path, it.key(), std::string(whole.message())));
    auto q = ParseQuantity(text, *id == kCpu);
    if (!q.ok())
      return absl::InvalidArgumentError(
          fmt::format("{}.{}: {}", path, it.key(), std::string(q.status().message())));
    out.Set(*id, *q);
  }
  return absl::OkStatus();
}

}  // namespace objects_internal

std::string ObjectKey(const json& obj) {
  const json& md = At(obj, "metadata");
  return Str(md, "namespace") + "/" + Str(md, "name");
}

std::string FormatGpuIndices(const std::vector<int32_t>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(gpus[i]);
  }
  return out;
}

std::vector<int32_t> ParseGpuIndices(const std::string& text) {
  std::vector<int32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int32_t v;
    if (absl::SimpleAtoi(part, &v) && v >= 0) out.push_back(v);
  }
  return out;
}

namespace {

// The pod's identity and the scheduling-relevant scalars of metadata, spec and status; a pod
// without metadata.name is an error.
absl::Status ReadPodHeader(const json& obj, PodInfo& p) {
  const json& md = At(obj, "metadata");
  p.ns = Str(md, "namespace");
  p.name = Str(md, "name");
  if (p.name.empty()) return absl::InvalidArgumentError("metadata.name: missing");
  p.uid = Str(md, "uid");
  p.resource_version = Str(md, "resourceVersion");
  p.created = Str(md, "creationTimestamp");
  p.deleting = !At(md, "deletionTimestamp").is_null();
  p.labels = StrMap(At(md, "labels"));
  p.annotations = StrMap(At(md, "annotations"));
  const json& spec = At(obj, "spec");
  p.scheduler_name = Str(spec, "schedulerName");
  if (p.scheduler_name.empty()) p.scheduler_name = "default-scheduler";
  p.node_name = Str(spec, "nodeName");
  p.priority_class = Str(spec, "priorityClassName");
  if (const json& pr = At(spec, "priority"); pr.is_number_integer()) p.priority = pr.get<int32_t>();
  if (const json& g = At(spec, "terminationGracePeriodSeconds"); g.is_number_integer())
    p.grace_period = g.get<int64_t>();
  const json& status = At(obj, "status");
  p.phase = Str(status, "phase");
  p.unhealthy = ParseUnhealthyResources(status);
  if (const json& conds = At(status, "conditions"); conds.is_array()) {
    for (const auto& c : conds) {
      if (Str(c, "type") != "PodScheduled" || Str(c, "status") != "False") continue;
      p.scheduled_condition = Str(c, "message");
      p.scheduled_reason = Str(c, "reason");
    }
  }
  return absl::OkStatus();
}

// The pod's effective request by Kubernetes' rule (model/pod_requests.h): the containers'
// aggregate, pod-level spec.resources where set, the overhead, and one pod. Names the registry
// has no room for go to `untracked`, left out of the request.
absl::StatusOr<Resources> PodRequest(const json& spec, std::vector<std::string>& untracked) {
  PodResources pod;
  const json& containers = At(spec, "containers");
  if (!containers.is_array()) return absl::InvalidArgumentError("spec.containers: missing");
  for (const char* kind : {"containers", "initContainers"}) {
    const json& list = At(spec, kind);
    if (!list.is_array()) continue;
    auto& into = std::string_view(kind) == "containers" ? pod.containers : pod.init_containers;
    for (size_t i = 0; i < list.size(); ++i) {
      ContainerResources& c = into.emplace_back();
      if (auto st = ReadResourceRequirements(At(list[i], "resources"),
                                             fmt::format("spec.{}[{}].resources", kind, i),
                                             c.requests, c.limits, &untracked);
          !st.ok())
        return st;
      c.sidecar = Str(list[i], "restartPolicy") == "Always";  // beside the app containers
    }
  }
  if (auto st = ReadResourceRequirements(At(spec, "resources"), "spec.resources", pod.requests,
                                         pod.limits, &untracked);
      !st.ok())
    return st;
  if (auto st = ReadResourceList(At(spec, "overhead"), "spec.overhead", pod.overhead, &untracked);
      !st.ok())
    return st;
  return EffectivePodRequests(pod);
}

// spec.tolerations into the pod set; an unknown effect is left unset.
void ReadPodTolerations(const json& spec, PodSet& ps) {
  if (const json& tols = At(spec, "tolerations"); tols.is_array()) {
    for (const auto& t : tols) {
      Toleration tol;
      tol.key = Str(t, "key");
      tol.op = Str(t, "operator") == "Exists" ? TolerationOp::kExists : TolerationOp::kEqual;
      tol.value = Str(t, "value");
      if (auto e = Str(t, "effect"); !e.empty()) tol.effect = Effect(e);
      ps.tolerations.push_back(std::move(tol));
    }
  }
}

// The required node affinity's terms into the pod set; an unknown operator is an error.
absl::Status ReadRequiredNodeAffinity(const json& spec, PodSet& ps) {
  const json& terms = At(At(At(At(spec, "affinity"), "nodeAffinity"),
                            "requiredDuringSchedulingIgnoredDuringExecution"),
                         "nodeSelectorTerms");
  if (terms.is_array()) {
    for (size_t i = 0; i < terms.size(); ++i) {
      NodeSelectorTerm term;
      auto st = ReadRequirements(
          At(terms[i], "matchExpressions"),
          fmt::format("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                      "nodeSelectorTerms[{}].matchExpressions",
                      i),
          term.match_expressions);
      if (!st.ok()) return st;
      ps.affinity.required_terms.push_back(std::move(term));
    }
  }
  return absl::OkStatus();
}

// Preferred node affinity (a score among the nodes the required terms allow), as the loader
// reads it (config/pod_placement.cc): weight 1..100 and a preference are required.
absl::Status ReadPreferredNodeAffinity(const json& spec, PodSet& ps) {
  const std::string path =
      "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";
  const json& terms = At(At(At(spec, "affinity"), "nodeAffinity"),
                         "preferredDuringSchedulingIgnoredDuringExecution");
  if (!terms.is_array()) return absl::OkStatus();
  for (size_t i = 0; i < terms.size(); ++i) {
    const json& w = At(terms[i], "weight");
    if (!w.is_number_integer() || w.get<int64_t>() < 1 || w.get<int64_t>() > 100)
      return absl::InvalidArgumentError(
          fmt::format("{}[{}].weight: must be an integer from 1 to 100", path, i));
    PreferredSchedulingTerm t;
    t.weight = static_cast<int32_t>(w.get<int64_t>());
    if (auto st = ReadRequirements(At(At(terms[i], "preference"), "matchExpressions"),
                                   fmt::format("{}[{}].preference.matchExpressions", path, i),
                                   t.term.match_expressions);
        !st.ok())
      return st;
    ps.affinity.preferred_terms.push_back(std::move(t));
  }
  return absl::OkStatus();
}

// topologySpreadConstraints over the pod's own kind, as the loader reads them (docs/manifests.md):
// a constraint whose labelSelector does not select the pod's own labels is left out, and said
// in `problems`; what Tessera does not honour (matchLabelKeys, non-default policies) too.
absl::Status ReadTopologySpread(const json& spec, const std::map<std::string, std::string>& labels,
                                PodSet& ps, std::vector<std::string>& problems) {
  const json& list = At(spec, "topologySpreadConstraints");
  if (!list.is_array()) return absl::OkStatus();
  for (size_t i = 0; i < list.size(); ++i) {
    const json& c = list[i];
    const std::string path = fmt::format("spec.topologySpreadConstraints[{}]", i);
    TopologySpread t;
    const json& skew = At(c, "maxSkew");
    if (!skew.is_number_integer() || skew.get<int64_t>() < 1 || skew.get<int64_t>() > (1 << 30))
      return absl::InvalidArgumentError(path + ".maxSkew: must be a positive integer");
    t.max_skew = static_cast<int32_t>(skew.get<int64_t>());
    t.topology_key = Str(c, "topologyKey");
    if (t.topology_key.empty())
      return absl::InvalidArgumentError(path + ".topologyKey: must not be empty");
    const std::string when = Str(c, "whenUnsatisfiable");
    if (when != "DoNotSchedule" && when != "ScheduleAnyway")
      return absl::InvalidArgumentError(fmt::format(
          "{}.whenUnsatisfiable: '{}' is neither DoNotSchedule nor ScheduleAnyway", path, when));
    t.required = when == "DoNotSchedule";
    if (const json& md = At(c, "minDomains"); !md.is_null()) {
      if (!md.is_number_integer() || md.get<int64_t>() < 1 || md.get<int64_t>() > (1 << 30) ||
          !t.required)
        return absl::InvalidArgumentError(
            path +
            ".minDomains: must be a positive integer, with whenUnsatisfiable: DoNotSchedule");
      t.min_domains = static_cast<int32_t>(md.get<int64_t>());
    }
    const json& sel = At(c, "labelSelector");
    LabelSelector ls;
    ls.present = sel.is_object();
    ls.match_labels = StrMap(At(sel, "matchLabels"));
    if (auto st = ReadRequirements(At(sel, "matchExpressions"),
                                   path + ".labelSelector.matchExpressions", ls.match_expressions);
        !st.ok())
      return st;
    if (!ls.present || !Matches(ls, labels)) {
      problems.push_back(path +
                         ".labelSelector: does not select the pod's own labels (Tessera spreads a "
                         "workload's own pods, a Deployment's replicas)");
      continue;
    }
    if (!At(c, "matchLabelKeys").is_null())
      problems.push_back(path + ".matchLabelKeys: not read (Tessera counts the workload's pods)");
    if (auto v = Str(c, "nodeAffinityPolicy"); !v.empty() && v != "Honor")
      problems.push_back(path + ".nodeAffinityPolicy: only Honor (the default) is honoured");
    if (auto v = Str(c, "nodeTaintsPolicy"); !v.empty() && v != "Ignore")
      problems.push_back(path + ".nodeTaintsPolicy: only Ignore (the default) is honoured");
    ps.spread.push_back(std::move(t));
  }
  return absl::OkStatus();
}

// Tessera's GPU-share and topology annotations into the pod set; the first value that cannot be
// used is an error.
absl::Status ApplyPodAnnotations(const std::map<std::string, std::string>& annotations,
                                 PodSet& ps) {
  for (const FieldProblem& fp : ApplyGpuShareAnnotations(annotations, ps.requests))
    if (fp.error)
      return absl::InvalidArgumentError(
          fmt::format("metadata.annotations.{}: {}", fp.key, fp.message));
  for (const FieldProblem& fp : ApplyTopologyAnnotations(annotations, ps.topology))
    if (fp.error)
      return absl::InvalidArgumentError(
          fmt::format("metadata.annotations.{}: {}", fp.key, fp.message));
  return absl::OkStatus();
}

// Whether a pod anti-affinity term keeps the pod off hosts that run its own kind: topology key
// kubernetes.io/hostname and a label selector the pod's own labels match.
absl::StatusOr<bool> IsOwnHostnameTerm(const json& term, const std::string& path,
                                       const std::map<std::string, std::string>& labels) {
  if (Str(term, "topologyKey") != "kubernetes.io/hostname") return false;
  const json& sel = At(term, "labelSelector");
  LabelSelector ls;
  ls.present = sel.is_object();
  ls.match_labels = StrMap(At(sel, "matchLabels"));
  if (auto st = ReadRequirements(At(sel, "matchExpressions"),
                                 path + ".labelSelector.matchExpressions", ls.match_expressions);
      !st.ok())
    return st;
  return ls.present && Matches(ls, labels);
}

// Hostname anti-affinity among the pod's own kind (its gang, or its Deployment's replicas):
// required wins over preferred.
absl::Status ReadHostnameAntiAffinity(const json& spec,
                                      const std::map<std::string, std::string>& labels,
                                      PodSet& ps) {
  const json& anti = At(At(spec, "affinity"), "podAntiAffinity");
  const std::string anti_path = "spec.affinity.podAntiAffinity";
  if (const json& req = At(anti, "requiredDuringSchedulingIgnoredDuringExecution");
      req.is_array()) {
    for (size_t i = 0; i < req.size(); ++i) {
      auto own = IsOwnHostnameTerm(
          req[i],
          fmt::format("{}.requiredDuringSchedulingIgnoredDuringExecution[{}]", anti_path, i),
          labels);
      if (!own.ok()) return own.status();
      if (*own) ps.anti_affinity = HostnameAntiAffinity::kRequired;
    }
  }
  if (const json& pref = At(anti, "preferredDuringSchedulingIgnoredDuringExecution");
      pref.is_array() && ps.anti_affinity == HostnameAntiAffinity::kNone) {
    for (size_t i = 0; i < pref.size(); ++i) {
      auto own = IsOwnHostnameTerm(At(pref[i], "podAffinityTerm"),
                                   fmt::format("{}.preferredDuringSchedulingIgnoredDuringExecution"
                                               "[{}].podAffinityTerm",
                                               anti_path, i),
                                   labels);
      if (!own.ok()) return own.status();
      if (*own) ps.anti_affinity = HostnameAntiAffinity::kPreferred;
    }
  }
  return absl::OkStatus();
}

// Which gang the pod belongs to, first match wins: the Workload API's spec.schedulingGroup (a
// field the API server checks and kube-scheduler reads), a PodGroup label, a Volcano annotation,
// a Kueue pod-group label (with its total), a batch Job owner, else the pod alone.
void ReadPodGroupRef(const json& md, const json& spec, PodInfo& p) {
  if (std::string pg = Str(At(spec, "schedulingGroup"), "podGroupName"); !pg.empty()) {
    p.group_kind = kWorkloadPodGroupKind;
    p.group_name = std::move(pg);
  } else if (auto it = p.labels.find(kPodGroupLabel); it != p.labels.end() && !it->second.empty()) {
    p.group_kind = "PodGroup";
    p.group_name = it->second;
  } else if (auto it2 = p.annotations.find(kVolcanoGroupAnnotation);
             it2 != p.annotations.end() && !it2->second.empty()) {
    p.group_kind = "Volcano";
    p.group_name = it2->second;
  } else if (auto it3 = p.labels.find(kKueuePodGroupLabel);
             it3 != p.labels.end() && !it3->second.empty()) {
    p.group_kind = "KueuePodGroup";
    p.group_name = it3->second;
    auto total = p.annotations.find(kKueuePodGroupTotalAnnotation);
    int32_t n = 0;
    if (total == p.annotations.end()) {
      p.group_error = fmt::format("pod {} has label {} but no annotation {}", p.Key(),
                                  kKueuePodGroupLabel, kKueuePodGroupTotalAnnotation);
    } else if (!absl::SimpleAtoi(total->second, &n) || n < 1) {
      p.group_error = fmt::format("pod {}: annotation {}: '{}' is not a positive integer", p.Key(),
                                  kKueuePodGroupTotalAnnotation, total->second);
    } else {
      p.group_total = n;
    }
  } else if (LinkPodToOwner(p.labels, At(md, "ownerReferences"), &p.group_kind, &p.group_name)) {
    // A pod of a JobSet, LeaderWorkerSet, RayCluster ... (owner_kinds.h): the object's gang,
    // not its batch Job's or StatefulSet's.
  } else {
    p.group_kind.clear();
    p.group_name.clear();
    if (const json& owners = At(md, "ownerReferences"); owners.is_array()) {
      for (const auto& o : owners) {
        if (Str(o, "kind") == "Job" && Str(o, "apiVersion").rfind("batch/", 0) == 0) {
          p.group_kind = "Job";
          p.group_name = Str(o, "name");
        }
      }
    }
    if (p.group_kind.empty()) {
      p.group_kind = "Pod";
      p.group_name = p.name;
    }
  }
}

// The pod's owning ReplicaSet, and the GPUs and MIG slices the binder recorded on it.
void ReadOwnerAndDevices(const json& md, PodInfo& p) {
  if (const json& owners = At(md, "ownerReferences"); owners.is_array())
    for (const auto& o : owners)
      if (Str(o, "kind") == "ReplicaSet" && Str(o, "apiVersion").rfind("apps/", 0) == 0)
        p.owner_replicaset = Str(o, "name");
  if (auto it = p.annotations.find(kGpuIndicesAnnotation); it != p.annotations.end())
    p.gpu_indices = ParseGpuIndices(it->second);
  if (auto it = p.annotations.find(kMigStartsAnnotation); it != p.annotations.end())
    for (int32_t s : ParseGpuIndices(it->second))
      if (s <= 7) p.mig_starts.push_back(static_cast<int8_t>(s));
}

}  // namespace

absl::StatusOr<PodInfo> ParsePod(const json& obj) {
  PodInfo p;
  if (absl::Status st = ReadPodHeader(obj, p); !st.ok()) return st;
  const json& md = At(obj, "metadata");
  const json& spec = At(obj, "spec");

  PodSet& ps = p.set;
  ps.name = p.name;
  ps.count = 1;
  std::vector<std::string> untracked;
  absl::StatusOr<Resources> requests = PodRequest(spec, untracked);
  if (!requests.ok()) return requests.status();
  // A resource name beyond the registry's room: no node's amount of it is tracked either (a
  // node offering it would have named it first), so a bound pod is modelled without it; a pod
  // to place cannot be, and says so.
  if (!untracked.empty() && p.node_name.empty())
    return absl::InvalidArgumentError(fmt::format(
        "{}: not tracked: Tessera tracks at most {} distinct resource names and has no room for "
        "this one, so it cannot place a pod that requests it",
        untracked.front(), kMaxResources));
  ps.requests = *requests;
  ps.node_selector = StrMap(At(spec, "nodeSelector"));
  ReadPodTolerations(spec, ps);
  if (absl::Status st = ReadRequiredNodeAffinity(spec, ps); !st.ok()) return st;
  ps.annotations = p.annotations;
  if (absl::Status st = ApplyPodAnnotations(p.annotations, ps); !st.ok()) return st;
  if (absl::Status st = ReadHostnameAntiAffinity(spec, p.labels, ps); !st.ok()) return st;
  if (absl::Status st = ReadPreferredNodeAffinity(spec, ps); !st.ok()) return st;

  // Kueue's, Tessera's, KAI's and Volcano's markers (model/queue_markers.h); a conflict is said
  // as a Warning Event on the pod.
  std::string conflict;
  p.queue_name = QueueFromMarkers(FindQueueMarkers(p.labels, p.annotations), &conflict);
  if (!conflict.empty()) p.time_problems.push_back(std::move(conflict));
  if (auto it = p.labels.find(kPriorityClassLabel); it != p.labels.end())
    p.workload_priority_class = it->second;
  ReadPodGroupRef(md, spec, p);
  ReadOwnerAndDevices(md, p);
  ReadPodClaims(spec, At(obj, "status"), ps);
  if (const json& gates = At(spec, "schedulingGates"); gates.is_array())
    for (const json& g : gates) p.scheduling_gates.push_back(Str(g, "name"));
  p.time =
      ReadTimeFields(p.labels, p.annotations, At(spec, "activeDeadlineSeconds"), &p.time_problems);
  if (absl::Status st = ReadTopologySpread(spec, p.labels, ps, p.time_problems); !st.ok())
    return st;
  // Said as a Warning Event on the pod, as the values above (node_policy.h reads the mark).
  if (std::string problem; !ReadInterruptible(p.annotations, &problem) && !problem.empty())
    p.time_problems.push_back(std::move(problem));
  std::string problem;
  p.non_preemptible = ReadNonPreemptible(p.labels, p.annotations, &problem);
  if (!problem.empty()) p.time_problems.push_back(std::move(problem));
  return p;
}

std::vector<std::string> ClaimNames(const PodInfo& p) {
  std::vector<std::string> out;
  for (const dra::PodClaim& c : p.set.claims)
    out.push_back(fmt::format("{}={}/{}", c.name, c.claim_name, c.template_name));
  return out;
}

std::string Describe(const PodInfo& p) {
  std::string s = fmt::format(
      "{} uid={} rv={} scheduler={} node={} phase={} deleting={} created={} priorityClass={} "
      "priority={} grace={} queue={} workloadPriorityClass={} group={} total={} groupError={} "
      "replicaset={} condition={} requests=[{}] topology={}/{}/{} antiAffinity={}",
      p.Key(), p.uid, p.resource_version, p.scheduler_name, p.node_name, p.phase, p.deleting,
      p.created, p.priority_class, p.priority ? std::to_string(*p.priority) : "none",
      p.grace_period, p.queue_name, p.workload_priority_class, p.GroupKey(), p.group_total,
      p.group_error, p.owner_replicaset, p.scheduled_condition, p.set.requests.ToString(),
      p.set.topology.level, p.set.topology.tier, p.set.topology.required,
      static_cast<int>(p.set.anti_affinity));
  for (const auto& t : p.set.spread)
    s += fmt::format(" spread={}/{}/{}/{}", t.topology_key, t.max_skew, t.required, t.min_domains);
  for (const auto& t : p.set.affinity.preferred_terms)
    s += fmt::format(" prefer={}x{}", t.weight, t.term.match_expressions.size());
  for (const auto& u : p.unhealthy)
    s += fmt::format(" unhealthy={}/{}/{}", u.name, u.id, u.message);
  if (p.non_preemptible) s += fmt::format(" nonPreemptible={}", *p.non_preemptible);
  s += " " + DescribeTime(p.time);
  s += fmt::format(" gates=[{}]", fmt::join(p.scheduling_gates, ","));
  s += fmt::format(" claims=[{}]", fmt::join(ClaimNames(p), ","));
  s += " gpus=" + FormatGpuIndices(p.gpu_indices);
  s += " migStarts=" +
       FormatGpuIndices(std::vector<int32_t>(p.mig_starts.begin(), p.mig_starts.end()));
  for (const auto& [k, v] : p.labels) s += fmt::format(" label:{}={}", k, v);
  for (const auto& [k, v] : p.annotations) s += fmt::format(" annotation:{}={}", k, v);
  for (const auto& [k, v] : p.set.node_selector) s += fmt::format(" nodeSelector:{}={}", k, v);
  for (const auto& t : p.set.tolerations)
    s += fmt::format(" toleration:{}/{}/{}/{}", t.key, static_cast<int>(t.op), t.value,
                     t.effect ? static_cast<int>(*t.effect) : -1);
  for (size_t i = 0; i < p.set.affinity.required_terms.size(); ++i)
    for (const auto& r : p.set.affinity.required_terms[i].match_expressions)
      s += fmt::format(" term{}:{}/{}/{}", i, r.key, static_cast<int>(r.op),
                       fmt::join(r.values, ","));
  return s;
}

absl::StatusOr<Node> ParseNode(const json& obj, bool* ready, std::vector<std::string>* problems) {
  Node n;
  const json& md = At(obj, "metadata");
  n.name = Str(md, "name");
  if (n.name.empty()) return absl::InvalidArgumentError("metadata.name: missing");
  n.labels = StrMap(At(md, "labels"));
  n.labels.try_emplace("kubernetes.io/hostname", n.name);
  const json& spec = At(obj, "spec");
  n.unschedulable = At(spec, "unschedulable").is_boolean() && At(spec, "unschedulable").get<bool>();
  if (const json& taints = At(spec, "taints"); taints.is_array()) {
    for (const auto& t : taints) {
      auto e = Effect(Str(t, "effect"));
      if (!e) continue;
      n.taints.push_back(Taint{Str(t, "key"), Str(t, "value"), *e});
    }
  }
  const json& status = At(obj, "status");
  const json& alloc =
      At(status, "allocatable").is_null() ? At(status, "capacity") : At(status, "allocatable");
  // A resource name beyond the registry's room is left out of the node (said in `problems`);
  // the node itself is kept, with every resource that is tracked.
  std::vector<std::string> untracked;
  if (auto st = ReadResources(alloc, "status.allocatable", n.allocatable, &untracked); !st.ok())
    return st;
  if (problems)
    for (const std::string& u : untracked)
      problems->push_back(fmt::format(
          "{}: not tracked: Tessera tracks at most {} distinct resource names; pods that request "
          "it are not placed by Tessera",
          u, kMaxResources));
  // A count beyond the limit would become an allocation the size of the number (model/limits.h):
  // the node is refused, and the caller logs it and goes on without it.
  if (std::string err = CheckGpuSlots(n.allocatable[kGpu]); !err.empty())
    return absl::InvalidArgumentError(fmt::format(
        "{}.{}: {}", At(status, "allocatable").is_null() ? "status.capacity" : "status.allocatable",
        kGpuResourceName, err));
  if (!alloc.is_object() || !alloc.contains("pods")) n.allocatable.Set(kPods, kDefaultMaxPods);
  if (auto it = n.labels.find("nvidia.com/gpu.product"); it != n.labels.end())
    n.gpu_model = it->second;
  n.source = "node " + n.name;
  // GFD's labels, tessera.dev/gpu-layout, gpu-replicas and mig: a value that cannot be used is
  // left out (the node keeps running what it runs) and said.
  CountUnhealthyGpus(status, n);  // before the layout, which is of every device
  for (const FieldProblem& fp : ApplyNodeGpuFields(StrMap(At(md, "annotations")), n))
    if (problems)
      problems->push_back(fmt::format("metadata.{}.{}: {}", fp.in_labels ? "labels" : "annotations",
                                      fp.key, fp.message));
  UncountTimeSliced(n);
  if (ready) {
    // No Ready condition at all (a node object without a kubelet that never reported) counts as
    // ready: the conditions are the kubelet's word, and an operator may create nodes by hand.
    *ready = true;
    if (const json& conds = At(status, "conditions"); conds.is_array())
      for (const auto& c : conds)
        if (Str(c, "type") == "Ready") *ready = Str(c, "status") == "True";
  }
  return n;
}

}  // namespace tessera::k8s
