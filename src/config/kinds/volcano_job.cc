// Volcano's Job (batch.volcano.sh/v1alpha1): one pod set per task, minAvailable, spec.queue,
// networkTopology. A task's dependsOn (Volcano creates its pods once the tasks it names run) is
// not honoured: the simulator has no staged start within a gang, so every task's pods are
// admitted and started together, with a notice.
#include "config/kinds/registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/controller_fields.h"
#include "config/time_fields.h"
#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
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
  struct Dependency {
    YAML::Node at;
    std::string path;
    std::vector<std::string> names;
  };
  std::vector<Dependency> dependencies;
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
    // dependsOn {name: [tasks], iteration: any|all}.
    if (YAML::Node dep = Child(t, "dependsOn"); !IsNullish(dep)) {
      const std::string dpath = p + ".dependsOn";
      if (!ExpectMap(ctx, dep, dpath)) return false;
      auto names = GetStringList(ctx, dep, "name", dpath + ".name");
      auto iteration = GetString(ctx, dep, "iteration", dpath + ".iteration").value_or("any");
      if (iteration != "any" && iteration != "all") {
        ctx.Error(Child(dep, "iteration"), dpath + ".iteration",
                  "unknown value \"" + iteration + "\"; allowed: any, all");
      }
      if (ctx.failed()) return false;
      dependencies.push_back({dep, dpath, names.value_or(std::vector<std::string>{})});
    }
    return true;
  });
  for (const Dependency& d : dependencies) {
    std::string list;
    for (const std::string& n : d.names) {
      if (std::none_of(w.pod_sets.begin(), w.pod_sets.end(),
                       [&](const PodSet& ps) { return ps.name == n; })) {
        ctx.Warning(Child(d.at, "name"), d.path + ".name",
                    "no task is named \"" + n + "\" in this job");
      }
      list += (list.empty() ? "" : ", ") + n;
    }
    if (list.empty()) continue;  // names no task: Volcano starts the task at once
    ctx.Notice(d.at, d.path,
               "not honoured: the task's pods are admitted and started together with the tasks "
               "it depends on (Volcano creates them only once " +
                   list + " run)");
  }
  auto min = GetInt(ctx, spec, "minAvailable", "spec.minAvailable", 0, kMaxPods);
  if (w.queue_name.empty()) w.queue_name = GetString(ctx, spec, "queue", "spec.queue").value_or("");
  // The tasks' templates name a queue only when the Job names none (Volcano reads spec.queue).
  ForEachSeq(ctx, tasks, "spec.tasks", [&](size_t, const YAML::Node& t, const std::string& p) {
    Labels labels, annotations;
    YAML::Node md = Child(Child(t, "template"), "metadata");
    if (!t.IsMap() || !md.IsMap()) return true;
    ReadLabels(ctx, Child(md, "labels"), p + ".template.metadata.labels", labels);
    ReadLabels(ctx, Child(md, "annotations"), p + ".template.metadata.annotations", annotations);
    QueueFromTemplate(ctx, md, p + ".template.metadata", labels, annotations, w);
    return true;
  });
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

}  // namespace

JobKind VolcanoJobKind() {
  JobKind k;
  k.group = "batch.volcano.sh";
  k.versions = {"v1alpha1"};
  k.kind = "Job";
  k.plural = "jobs";
  k.read = Read;
  return k;
}

}  // namespace tessera::config_internal
