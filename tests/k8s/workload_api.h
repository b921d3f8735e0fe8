// Gangs through Kubernetes' own Workload API (scheduling.k8s.io/v1beta1, served by 1.37 with the
// GenericWorkload feature gate): a Workload with one gang PodGroupTemplate, the PodGroup made
// from it, and pods that name that PodGroup in spec.schedulingGroup. kube-scheduler 1.37 with the
// same gate schedules such a group all-or-nothing (its GangScheduling plugin and its pod group
// scheduling cycle); the benchmark and the integration tests use these objects to compare it
// with Tessera, which reads scheduler-plugins PodGroups.
//
// Thread-safety: free functions over values; ServesWorkloadApi only uses the cluster's client.
#pragma once

#include <string>

#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing {

// A Workload named `name` with one PodGroupTemplate "workers" of gang policy `min_count`.
inline json WorkloadObject(const std::string& ns, const std::string& name, int min_count) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "Workload"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"podGroupTemplates",
             {{{"name", "workers"}, {"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}}}}}};
}

// The PodGroup of WorkloadObject(ns, name, ...)'s template, named like the Workload: what a
// workload controller (the Job controller with WorkloadWithJob) would create. The policy is the
// PodGroup's own: kube-scheduler reads it, not the template's.
inline json WorkloadPodGroupObject(const std::string& ns, const std::string& name, int min_count) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"workloadRef", {{"workloadName", name}, {"templateName", "workers"}}},
            {"schedulingPolicy", {{"gang", {{"minCount", min_count}}}}}}}};
}

// Makes `pod` a member of the Workload API PodGroup `group` (spec.schedulingGroup, immutable).
inline void JoinWorkloadPodGroup(json& pod, const std::string& group) {
  pod["spec"]["schedulingGroup"] = {{"podGroupName", group}};
}

// Whether the server serves the Workload API's PodGroups (1.37 with GenericWorkload on).
inline bool ServesWorkloadApi(TestCluster& c) {
  json group = c.Get("/apis/scheduling.k8s.io/v1beta1");
  if (!group.is_object() || !group["resources"].is_array()) return false;
  for (const auto& r : group["resources"])
    if (r.value("name", "") == "podgroups") return true;
  return false;
}

}  // namespace tessera::k8s::testing
