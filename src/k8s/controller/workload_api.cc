#include "k8s/controller/workload_api.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "k8s/controller/json_fields.h"
#include "model/json_text.h"
#include "model/limits.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

using json_fields::At;
using json_fields::Str;
using json_fields::StrMap;

// Set: present and neither null nor empty (the server leaves out what is unset, but a list or
// an object may come empty).
bool Set(const json& v) { return !v.is_null() && !(v.is_structured() && v.empty()); }

// The keys of `obj` other than `known`, in order.
std::vector<std::string> OtherKeys(const json& obj, std::initializer_list<std::string_view> known) {
  std::vector<std::string> out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) out.push_back(it.key());
  return out;
}

// spec.schedulingPolicy: exactly one of basic and gang {minCount}.
absl::Status ReadPolicy(const json& policy, WorkloadPodGroupInfo& g) {
  if (!policy.is_object())
    return absl::InvalidArgumentError("spec.schedulingPolicy: missing (expected basic or gang)");
  const bool basic = !At(policy, "basic").is_null();
  const json& gang = At(policy, "gang");
  const std::vector<std::string> others = OtherKeys(policy, {"basic", "gang"});
  if (basic && !gang.is_null())
    return absl::InvalidArgumentError("spec.schedulingPolicy: both basic and gang are set");
  if (!basic && gang.is_null())
    return absl::InvalidArgumentError(fmt::format(
        "spec.schedulingPolicy: neither basic nor gang{}: a policy Tessera does not know",
        others.empty() ? "" : fmt::format(" (it has {})", fmt::join(others, ", "))));
  for (const std::string& k : others)
    g.unread.push_back(fmt::format(
        "spec.schedulingPolicy.{}: a policy Tessera does not know; it schedules the group by its "
        "{} policy alone",
        k, basic ? "basic" : "gang"));
  if (basic) return absl::OkStatus();
  const json& min = At(gang, "minCount");
  if (!min.is_number_integer())
    return absl::InvalidArgumentError("spec.schedulingPolicy.gang.minCount: expected an integer");
  const bool in_range = min.is_number_unsigned()
                            ? min.get<uint64_t>() >= 1 &&
                                  min.get<uint64_t>() <= static_cast<uint64_t>(kMaxPodsPerWorkload)
                            : min.get<int64_t>() >= 1 && min.get<int64_t>() <= kMaxPodsPerWorkload;
  if (!in_range)
    return absl::InvalidArgumentError(fmt::format(
        "spec.schedulingPolicy.gang.minCount: {} is out of range (1..{})", DumpJson(min),
        kMaxPodsPerWorkload));
  g.gang = true;
  g.min_count = min.get<int32_t>();
  for (const std::string& k : OtherKeys(gang, {"minCount"}))
    g.unread.push_back(
        fmt::format("spec.schedulingPolicy.gang.{}: a field Tessera does not know; not read", k));
  return absl::OkStatus();
}

// disruptionMode: v1beta1 and v1alpha3 {single: {}} | {all: {}}, v1alpha2 "Pod" | "PodGroup".
// Tessera preempts whole workloads whatever it says (docs/kubernetes.md); only a mode it does
// not know is said.
void ReadDisruptionMode(const json& mode, WorkloadPodGroupInfo& g) {
  if (mode.is_null()) return;
  if (mode.is_string() && (mode == "Pod" || mode == "PodGroup")) return;
  if (mode.is_object() && mode.size() == 1 && (mode.contains("single") || mode.contains("all")))
    return;
  g.unread.push_back(fmt::format(
      "spec.disruptionMode: {} is not a mode Tessera knows; it preempts the whole gang",
      DumpJson(mode)));
}

// What is set on the spec beyond the policy: read (the template it came from, the priority
// class), passed over knowingly (priority: the class says it), or said in `unread`.
void ReadRest(const json& spec, WorkloadPodGroupInfo& g) {
  const json& ref = At(spec, "workloadRef");  // v1beta1, v1alpha3
  const json& old_ref = At(At(spec, "podGroupTemplateRef"), "workload");  // v1alpha2
  g.workload = ref.is_object() ? Str(ref, "workloadName") : Str(old_ref, "workloadName");
  g.template_name =
      ref.is_object() ? Str(ref, "templateName") : Str(old_ref, "podGroupTemplateName");
  g.priority_class = Str(spec, "priorityClassName");
  if (const json& topology = At(At(spec, "schedulingConstraints"), "topology"); Set(topology)) {
    std::vector<std::string> keys;
    if (topology.is_array())
      for (const json& t : topology) keys.push_back(Str(t, "key"));
    g.unread.push_back(fmt::format(
        "spec.schedulingConstraints.topology ({}): not read by Tessera: the gang is not kept "
        "inside one such domain (the pods' annotation kueue.x-k8s.io/podset-required-topology is "
        "read)",
        fmt::join(keys, ", ")));
  }
  for (const std::string& k : OtherKeys(At(spec, "schedulingConstraints"), {"topology"}))
    g.unread.push_back(
        fmt::format("spec.schedulingConstraints.{}: a constraint Tessera does not know; not read",
                    k));
  if (Set(At(spec, "resourceClaims")))
    g.unread.push_back(
        "spec.resourceClaims: not read by Tessera: it does not allocate the DRA claims a group "
        "shares");
  if (std::string parent = Str(spec, "parentCompositePodGroupName"); !parent.empty())
    g.unread.push_back(fmt::format(
        "spec.parentCompositePodGroupName: CompositePodGroup {} is not read by Tessera: this "
        "PodGroup is scheduled on its own, without the composite's policy",
        parent));
  if (Str(spec, "preemptionPolicy") == "Never")
    g.unread.push_back(
        "spec.preemptionPolicy: Never is not read by Tessera: the gang preempts as its pods' "
        "priority class says");
  ReadDisruptionMode(At(spec, "disruptionMode"), g);
  for (const std::string& k :
       OtherKeys(spec, {"parentCompositePodGroupName", "workloadRef", "podGroupTemplateRef",
                        "schedulingPolicy", "schedulingConstraints", "resourceClaims",
                        "disruptionMode", "priorityClassName", "priority", "preemptionPolicy"}))
    g.unread.push_back(fmt::format("spec.{}: a field Tessera does not know; not read", k));
}

}  // namespace

absl::StatusOr<WorkloadPodGroupInfo> ParseWorkloadPodGroup(const json& obj) {
  WorkloadPodGroupInfo g;
  const json& md = At(obj, "metadata");
  g.ns = Str(md, "namespace");
  g.name = Str(md, "name");
  if (g.name.empty()) return absl::InvalidArgumentError("metadata.name: missing");
  g.uid = Str(md, "uid");
  g.time = ReadTimeFields(StrMap(At(md, "labels")), StrMap(At(md, "annotations")), json(),
                          &g.time_problems);
  const json& spec = At(obj, "spec");
  if (absl::Status st = ReadPolicy(At(spec, "schedulingPolicy"), g); !st.ok()) return st;
  ReadRest(spec, g);
  return g;
}

}  // namespace tessera::k8s
