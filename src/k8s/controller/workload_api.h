// The Workload API (KEP-4671, group scheduling.k8s.io) as serve reads it: the PodGroups that make
// gangs of the pods naming them in spec.schedulingGroup.podGroupName.
//
// A Workload holds podGroupTemplates (a name and a scheduling policy, `basic` or `gang
// {minCount}`); the controller that owns the pods (or the user) creates PodGroups from them, each
// with the policy copied into its own spec. The PodGroup is therefore all a scheduler needs, and
// all serve watches: Workloads themselves are not read. The versions differ in shape, not in what
// serve reads: Kubernetes 1.36 serves v1alpha2 (spec.podGroupTemplateRef.workload, disruptionMode a
// string), 1.37 v1beta1 and v1alpha3 (spec.workloadRef, disruptionMode {single | all}, composite
// groups); ParseWorkloadPodGroup reads all three. A field serve does not act on is said, never
// dropped silently (WorkloadPodGroupInfo::unread); a scheduling policy it does not know refuses
// the object, and its pods wait, saying why.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "k8s/controller/time_fields.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// The PodGroup collections, most preferred first: Kubernetes 1.37's beta, 1.37's alpha, 1.36's
// alpha. The informer lists and watches the first one the server serves (none: no such gangs).
inline constexpr const char* kWorkloadPodGroupPaths[] = {
    "/apis/scheduling.k8s.io/v1beta1/podgroups", "/apis/scheduling.k8s.io/v1alpha3/podgroups",
    "/apis/scheduling.k8s.io/v1alpha2/podgroups"};

// A PodGroup of the Workload API (scheduling.k8s.io/v1beta1, v1alpha3 or v1alpha2).
struct WorkloadPodGroupInfo {
  std::string ns, name, uid;
  // spec.schedulingPolicy: `gang` (all-or-nothing, at least min_count pods at once) or `basic`
  // (false: no minimum, each pod starts when it fits).
  bool gang = false;
  int32_t min_count = 1;       // spec.schedulingPolicy.gang.minCount
  std::string workload;        // the Workload and template it was made from, for messages
  std::string template_name;   // (spec.workloadRef, or v1alpha2's spec.podGroupTemplateRef)
  std::string priority_class;  // spec.priorityClassName: the gang's where its pods name none
  TimeFields time;  // its annotations and labels (time_fields.h); the gang's first
  std::vector<std::string> time_problems;
  // What is set on it that serve does not act on ("spec.schedulingConstraints.topology: ..."):
  // logged and said as Warning Events on the PodGroup (reason UnsupportedField), once.
  std::vector<std::string> unread;
};

// Errors name the field ("spec.schedulingPolicy: ..."): the object is not used.
[[nodiscard]] absl::StatusOr<WorkloadPodGroupInfo> ParseWorkloadPodGroup(const nlohmann::json& obj);

}  // namespace tessera::k8s
