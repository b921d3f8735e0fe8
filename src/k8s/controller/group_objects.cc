// The objects that group pods (PodGroups of the scheduler-plugins and of Volcano, batch Jobs)
// and PriorityClasses, read from the API server's JSON (objects.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "k8s/controller/json_fields.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/objects.h"
#include "k8s/controller/objects_internal.h"
#include "k8s/controller/time_fields.h"
#include "model/limits.h"
#include "model/queue_markers.h"

namespace tessera::k8s {

using json_fields::At;
using json_fields::Str;
using json_fields::StrMap;
using objects_internal::CheckCount;
using objects_internal::ReadResources;

absl::StatusOr<PodGroupInfo> ParsePodGroup(const json& obj) {
  PodGroupInfo g;
  const json& md = At(obj, "metadata");
  g.ns = Str(md, "namespace");
  g.name = Str(md, "name");
  const json& mm = At(At(obj, "spec"), "minMember");
  if (auto st = CheckCount(mm, "spec.minMember", kMaxPodsPerWorkload); !st.ok()) return st;
  if (mm.is_number_integer()) g.min_member = std::max(1, mm.get<int32_t>());
  g.uid = Str(md, "uid");
  g.time = ReadTimeFields(StrMap(At(md, "labels")), StrMap(At(md, "annotations")), json(),
                          &g.time_problems);
  g.phase = Str(At(obj, "status"), "phase");
  if (const json& s = At(At(obj, "status"), "scheduled"); s.is_number_integer())
    g.scheduled = s.get<int32_t>();
  return g;
}

absl::StatusOr<VolcanoPodGroupInfo> ParseVolcanoPodGroup(const json& obj) {
  VolcanoPodGroupInfo g;
  const json& md = At(obj, "metadata");
  g.ns = Str(md, "namespace");
  g.name = Str(md, "name");
  if (g.name.empty()) return absl::InvalidArgumentError("metadata.name: missing");
  g.uid = Str(md, "uid");
  g.time = ReadTimeFields(StrMap(At(md, "labels")), StrMap(At(md, "annotations")), json(),
                          &g.time_problems);
  const json& spec = At(obj, "spec");
  const json& mm = At(spec, "minMember");
  if (!mm.is_null() && !mm.is_number_integer())
    return absl::InvalidArgumentError("spec.minMember: expected an integer");
  if (auto st = CheckCount(mm, "spec.minMember", kMaxPodsPerWorkload); !st.ok()) return st;
  if (mm.is_number_integer()) g.min_member = std::max(1, mm.get<int32_t>());
  g.queue = Str(spec, "queue");
  g.priority_class = Str(spec, "priorityClassName");
  if (auto st = ReadResources(At(spec, "minResources"), "spec.minResources", g.min_resources);
      !st.ok())
    return st;
  return g;
}

int32_t JobInfo::GangSize() const {
  int32_t n = parallelism;
  if (completions) n = std::min(n, *completions - succeeded);
  return std::max(n, 1);
}

absl::StatusOr<JobInfo> ParseJob(const json& obj) {
  JobInfo j;
  const json& md = At(obj, "metadata");
  j.ns = Str(md, "namespace");
  j.name = Str(md, "name");
  const json& spec = At(obj, "spec");
  // parallelism defaults to 1; 0 means suspended-like (no pods), which we treat as 1 since a
  // Job with pods present runs at least those.
  const json& par = At(spec, "parallelism");
  if (auto st = CheckCount(par, "spec.parallelism", kMaxPodsPerWorkload); !st.ok()) return st;
  if (auto st = CheckCount(At(spec, "completions"), "spec.completions", INT32_MAX); !st.ok())
    return st;
  if (auto st = CheckCount(At(At(obj, "status"), "succeeded"), "status.succeeded", INT32_MAX);
      !st.ok())
    return st;
  if (par.is_number_integer()) j.parallelism = std::max(1, par.get<int32_t>());
  if (const json& c = At(spec, "completions"); c.is_number_integer())
    j.completions = std::max(1, c.get<int32_t>());
  if (const json& s = At(At(obj, "status"), "succeeded"); s.is_number_integer())
    j.succeeded = std::max(0, s.get<int32_t>());
  auto labels = StrMap(At(md, "labels"));
  j.uid = Str(md, "uid");
  j.time = ReadTimeFields(labels, StrMap(At(md, "annotations")), At(spec, "activeDeadlineSeconds"),
                          &j.time_problems);
  // The Job's own markers, then its pod template's (KAI's quickstart labels the template).
  std::string conflict;
  j.queue_name =
      QueueFromMarkers(FindQueueMarkers(labels, StrMap(At(md, "annotations"))), &conflict);
  if (j.queue_name.empty()) {
    const json& tmd = At(At(spec, "template"), "metadata");
    j.queue_name = QueueFromMarkers(
        FindQueueMarkers(StrMap(At(tmd, "labels")), StrMap(At(tmd, "annotations"))), &conflict);
  }
  if (!conflict.empty()) j.time_problems.push_back(std::move(conflict));
  if (auto it = labels.find(kPriorityClassLabel); it != labels.end())
    j.workload_priority_class = it->second;
  return j;
}

absl::StatusOr<PriorityClass> ParsePriorityClass(const json& obj) {
  PriorityClass pc;
  pc.name = Str(At(obj, "metadata"), "name");
  if (const json& v = At(obj, "value"); v.is_number_integer()) pc.value = v.get<int32_t>();
  pc.global_default = At(obj, "globalDefault").is_boolean() && At(obj, "globalDefault").get<bool>();
  pc.preemption_never = Str(obj, "preemptionPolicy") == "Never";
  const json& md = At(obj, "metadata");  // a bad mark is the class's default: preemptible
  pc.non_preemptible =
      ReadNonPreemptible(StrMap(At(md, "labels")), StrMap(At(md, "annotations"))).value_or(false);
  pc.source = "PriorityClass " + pc.name;
  return pc;
}

}  // namespace tessera::k8s
