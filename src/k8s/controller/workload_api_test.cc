// The Workload API's PodGroups (workload_api.h) as serve reads them in each version, and the gangs
// they make of the pods that name them (gang_assembly.h).
#include "k8s/controller/workload_api.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "k8s/controller/gang_assembly.h"
#include "k8s/controller/objects.h"

namespace tessera::k8s {
namespace {

// A PodGroup of scheduling.k8s.io/v1beta1 (Kubernetes 1.37) with `spec`.
json PodGroupV1beta1(const std::string& name, const json& spec) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "d"}, {"uid", "uid-" + name}}},
          {"spec", spec}};
}

json GangPolicy(int min_count) { return {{"gang", {{"minCount", min_count}}}}; }

TEST(WorkloadApi, ReadsAGangPodGroupOfV1beta1) {
  json obj = PodGroupV1beta1("train", {{"workloadRef", {{"workloadName", "job-1"},
                                                        {"templateName", "workers"}}},
                                       {"schedulingPolicy", GangPolicy(4)},
                                       {"disruptionMode", {{"single", json::object()}}},
                                       {"priorityClassName", "high"},
                                       {"priority", 1000},
                                       {"preemptionPolicy", "PreemptLowerPriority"}});
  obj["metadata"]["annotations"] = {{"tessera.dev/runtime-estimate", "2h"}};
  auto g = ParseWorkloadPodGroup(obj);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->name, "train");
  EXPECT_EQ(g->uid, "uid-train");
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 4);
  EXPECT_EQ(g->workload, "job-1");
  EXPECT_EQ(g->template_name, "workers");
  EXPECT_EQ(g->priority_class, "high");
  EXPECT_EQ(g->time.runtime_estimate, 7200);
  // What the server defaults (single) and what the class already says are nothing to report.
  EXPECT_TRUE(g->unread.empty()) << g->unread.front();
}

TEST(WorkloadApi, ReadsAPodGroupOfV1alpha2AsKubernetes136ServesIt) {
  // 1.36: the template reference is spec.podGroupTemplateRef.workload, disruptionMode a string.
  json obj = PodGroupV1beta1(
      "train", {{"podGroupTemplateRef",
                 {{"workload", {{"workloadName", "job-1"}, {"podGroupTemplateName", "workers"}}}}},
                {"schedulingPolicy", GangPolicy(2)},
                {"disruptionMode", "PodGroup"}});
  obj["apiVersion"] = "scheduling.k8s.io/v1alpha2";
  auto g = ParseWorkloadPodGroup(obj);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 2);
  EXPECT_EQ(g->workload, "job-1");
  EXPECT_EQ(g->template_name, "workers");
  EXPECT_TRUE(g->unread.empty());
}

TEST(WorkloadApi, BasicPolicyIsNoGang) {
  auto g = ParseWorkloadPodGroup(PodGroupV1beta1("web", {{"schedulingPolicy",
                                                          {{"basic", json::object()}}}}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->gang);
}

TEST(WorkloadApi, APolicyThatCannotBeUsedRefusesTheObjectNamingTheField) {
  auto error = [](const json& policy) {
    auto g = ParseWorkloadPodGroup(PodGroupV1beta1("x", {{"schedulingPolicy", policy}}));
    return g.ok() ? std::string("ok") : std::string(g.status().message());
  };
  EXPECT_EQ(error(json()), "spec.schedulingPolicy: missing (expected basic or gang)");
  EXPECT_EQ(error({{"basic", json::object()}, {"gang", {{"minCount", 2}}}}),
            "spec.schedulingPolicy: both basic and gang are set");
  EXPECT_EQ(error({{"elastic", {{"minCount", 2}}}}),
            "spec.schedulingPolicy: neither basic nor gang (it has elastic): a policy Tessera "
            "does not know");
  EXPECT_EQ(error(GangPolicy(0)), "spec.schedulingPolicy.gang.minCount: 0 is out of range (1..1000000)");
  EXPECT_EQ(error({{"gang", {{"minCount", "4"}}}}),
            "spec.schedulingPolicy.gang.minCount: expected an integer");
  EXPECT_EQ(error({{"gang", json::object()}}),
            "spec.schedulingPolicy.gang.minCount: expected an integer");
}

TEST(WorkloadApi, WhatTesseraDoesNotActOnIsSaidNeverDroppedSilently) {
  json spec = {{"parentCompositePodGroupName", "job-1-all"},
               {"schedulingPolicy", {{"gang", {{"minCount", 2}, {"timeoutSeconds", 60}}},
                                     {"elastic", json::object()}}},
               {"schedulingConstraints", {{"topology", {{{"key", "topology.k8s.io/rack"}}}},
                                          {"distance", 2}}},
               {"resourceClaims", {{{"name", "nic"}, {"resourceClaimName", "rdma"}}}},
               {"disruptionMode", {{"some", json::object()}}},
               {"preemptionPolicy", "Never"},
               {"placementHints", {{"spread", true}}}};
  auto g = ParseWorkloadPodGroup(PodGroupV1beta1("x", spec));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->gang);
  EXPECT_EQ(g->min_count, 2);
  std::vector<std::string> fields;
  for (const std::string& u : g->unread) fields.push_back(u.substr(0, u.find(':')));
  std::sort(fields.begin(), fields.end());
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "spec.disruptionMode", "spec.parentCompositePodGroupName",
                        "spec.placementHints", "spec.preemptionPolicy", "spec.resourceClaims",
                        "spec.schedulingConstraints.distance",
                        "spec.schedulingConstraints.topology (topology.k8s.io/rack)",
                        "spec.schedulingPolicy.elastic",
                        "spec.schedulingPolicy.gang.timeoutSeconds"}));
}

// --- the gangs they make

// A pending pod of Tessera's in namespace "d" with one GPU; `group` in spec.schedulingGroup.
PodInfo Pod(const std::string& name, const std::string& group, const json& labels = json::object(),
            const std::string& priority_class = "") {
  json res = {{"nvidia.com/gpu", "1"}};
  json spec = {{"schedulerName", "tessera"},
               {"containers", {{{"name", "main"}, {"resources", {{"requests", res}}}}}}};
  if (!group.empty()) spec["schedulingGroup"] = {{"podGroupName", group}};
  if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
  json obj = {{"metadata",
               {{"name", name},
                {"namespace", "d"},
                {"labels", labels},
                {"ownerReferences",
                 {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "job-1"}}}}}},
              {"spec", spec}};
  auto p = ParsePod(obj);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

Gang GangOf(const std::vector<PodInfo>& pods) {
  Gang g;
  g.key = pods.front().GroupKey();
  g.kind = pods.front().group_kind;
  g.ns = pods.front().ns;
  g.name = pods.front().group_name;
  for (const PodInfo& p : pods) g.members.push_back({&p, false});
  return g;
}

GangSources Served(const std::string& name, const json& policy,
                   const std::string& priority_class = "") {
  GangSources s;
  s.workload_api_served = true;
  json spec = {{"schedulingPolicy", policy}};
  if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
  auto g = ParseWorkloadPodGroup(PodGroupV1beta1(name, spec));
  EXPECT_TRUE(g.ok()) << g.status();
  s.workload_podgroups["d/" + name] = *g;
  return s;
}

TEST(WorkloadApiGang, ThePodsSchedulingGroupComesBeforeLabelsAndTheirJob) {
  PodInfo p = Pod("w-0", "train", {{kPodGroupLabel, "other"}});
  EXPECT_EQ(p.GroupKey(), "WorkloadPodGroup:d/train");
  EXPECT_EQ(Pod("w-1", "").GroupKey(), "Job:d/job-1");
}

TEST(WorkloadApiGang, GangWaitsForMinCountPodsThenStartsWhole) {
  const GangSources s = Served("train", GangPolicy(3));
  std::vector<PodInfo> pods = {Pod("w-0", "train"), Pod("w-1", "train")};
  GangAssembly a = AssembleGang(GangOf(pods), s);
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason, "waiting for the gang's pods: 2 of 3 exist");
  pods.push_back(Pod("w-2", "train"));
  pods.push_back(Pod("w-3", "train"));  // one beyond the minimum: placed when it fits
  a = AssembleGang(GangOf(pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.min_count, 3);  // minCount, not the pods seen so far
  ASSERT_EQ(a.workload.pod_sets.size(), 1u);
  EXPECT_EQ(a.workload.pod_sets[0].count, 4);
  EXPECT_EQ(a.workload.kind, "WorkloadPodGroup");
}

TEST(WorkloadApiGang, BasicPolicyLetsEachPodStartWhenItFits) {
  const GangSources s = Served("web", {{"basic", json::object()}});
  std::vector<PodInfo> pods = {Pod("w-0", "web"), Pod("w-1", "web")};
  GangAssembly a = AssembleGang(GangOf(pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.min_count, 1);
}

TEST(WorkloadApiGang, PodsWaitForTheirPodGroupAndSayWhyWhenTheApiIsNotServed) {
  std::vector<PodInfo> pods = {Pod("w-0", "train")};
  GangSources s;
  s.workload_api_served = true;
  GangAssembly a = AssembleGang(GangOf(pods), s);
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason,
            "waiting for scheduling.k8s.io PodGroup d/train (its pods name it in "
            "spec.schedulingGroup.podGroupName)");
  s.workload_api_served = false;
  a = AssembleGang(GangOf(pods), s);
  EXPECT_FALSE(a.complete);
  EXPECT_NE(a.wait_reason.find("this API server does not serve the Workload API's PodGroups"),
            std::string::npos)
      << a.wait_reason;
  s.refused["WorkloadPodGroup:d/train"] = "spec.schedulingPolicy: both basic and gang are set";
  a = AssembleGang(GangOf(pods), s);
  EXPECT_EQ(a.wait_reason,
            "waiting for scheduling.k8s.io PodGroup d/train, which is not used: "
            "spec.schedulingPolicy: both basic and gang are set");
}

TEST(WorkloadApiGang, PriorityClassFromThePodGroupWhereThePodsNameNone) {
  const GangSources s = Served("train", GangPolicy(1), "high");
  std::vector<PodInfo> pods = {Pod("w-0", "train")};
  EXPECT_EQ(AssembleGang(GangOf(pods), s).workload.priority_class, "high");
  pods = {Pod("w-0", "train", json::object(), "low")};
  EXPECT_EQ(AssembleGang(GangOf(pods), s).workload.priority_class, "low");
}

}  // namespace
}  // namespace tessera::k8s
