// v1 Pods, alone or as members of a pod group (a PodGroup object of the coscheduling plugin,
// scheduling.x-k8s.io or scheduling.sigs.k8s.io, or Kueue's plain-pod groups).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/kinds/registry.h"
#include "config/pod_template.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

// Labels that make a v1 Pod a member of a pod group.
constexpr std::string_view kPodGroupLabels[] = {"scheduling.x-k8s.io/pod-group",
                                                "pod-group.scheduling.sigs.k8s.io"};
// Kueue's plain-pod groups have no PodGroup object; the total count is an annotation.
constexpr std::string_view kKueuePodGroupLabel = "kueue.x-k8s.io/pod-group-name";
constexpr std::string_view kKueuePodGroupCount = "kueue.x-k8s.io/pod-group-total-count";

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

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
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

}  // namespace

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
    if (!w->non_preemptible) w->non_preemptible = gp.pod.non_preemptible;
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

JobKind PodKind() {
  JobKind k;
  k.group = "";
  k.versions = {"v1"};
  k.kind = "Pod";
  k.plural = "pods";
  k.read = ReadPod;
  return k;
}

JobKind PodGroupKind() {
  JobKind k;
  k.group = "scheduling.x-k8s.io";
  k.versions = {"v1alpha1"};
  k.kind = "PodGroup";
  k.plural = "podgroups";
  k.read = Read;
  return k;
}

// The coscheduling plugin's older API group, the same kind.
JobKind SigsPodGroupKind() {
  JobKind k = PodGroupKind();
  k.group = "scheduling.sigs.k8s.io";
  return k;
}

}  // namespace tessera::config_internal
