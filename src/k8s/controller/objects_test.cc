#include "k8s/controller/objects.h"

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/gang_assembly.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/object_cache.h"
#include "model/limits.h"
#include "model/resources.h"

namespace tessera::k8s {
namespace {

json Pod(const std::string& extra_spec = "{}") {
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "w-0", "namespace": "team-a", "uid": "u1", "resourceVersion": "7",
                 "labels": {"kueue.x-k8s.io/queue-name": "lq", "scheduling.x-k8s.io/pod-group": "g"},
                 "annotations": {"tessera.dev/gpu-indices": "1,3"}},
    "spec": {"schedulerName": "tessera", "nodeName": "n1", "terminationGracePeriodSeconds": 0,
             "containers": [
               {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"},
                                           "limits": {"nvidia.com/gpu": "2"}}},
               {"name": "b", "resources": {"requests": {"cpu": "1"}}}],
             "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
             "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]},
    "status": {"phase": "Pending", "conditions": [
      {"type": "PodScheduled", "status": "False", "message": "no room"}]}
  })");
  pod["spec"].update(json::parse(extra_spec));
  return pod;
}

TEST(ParsePod, ReadsRequestsGroupQueueAndGpuIndices) {
  auto p = ParsePod(Pod());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Key(), "team-a/w-0");
  EXPECT_EQ(p->set.requests[kCpu], 4000);  // the init container's 4 cpu beat 1.5 cpu
  EXPECT_EQ(p->set.requests[kGpu], 2);     // limits only: the request equals the limit
  EXPECT_EQ(p->set.requests[kMemory], int64_t{1} << 30);
  EXPECT_EQ(p->set.requests[kPods], 1);
  EXPECT_EQ(p->queue_name, "lq");
  EXPECT_EQ(p->GroupKey(), "PodGroup:team-a/g");
  EXPECT_EQ(p->gpu_indices, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(p->grace_period, 0);
  EXPECT_TRUE(p->Bound());
  EXPECT_EQ(p->scheduled_condition, "no room");
  ASSERT_EQ(p->set.tolerations.size(), 1u);
  EXPECT_EQ(p->set.tolerations[0].op, TolerationOp::kExists);
}

// KAI's label and Volcano's annotation name the queue after Kueue's and Tessera's markers
// (model/queue_markers.h); two that differ are a warning for the pod's Events.
TEST(ParsePod, ReadsKaiAndVolcanoQueueMarkers) {
  json pod = Pod();
  pod["metadata"]["labels"].erase("kueue.x-k8s.io/queue-name");
  pod["metadata"]["labels"]["kai.scheduler/queue"] = "team-q";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->queue_name, "team-q");
  EXPECT_TRUE(p->time_problems.empty());
  pod["metadata"]["labels"].erase("kai.scheduler/queue");
  pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "vq";
  EXPECT_EQ(ParsePod(pod)->queue_name, "vq");
  pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq";
  p = ParsePod(pod);
  EXPECT_EQ(p->queue_name, "lq");
  ASSERT_EQ(p->time_problems.size(), 1u);
  EXPECT_NE(p->time_problems[0].find("label kueue.x-k8s.io/queue-name=lq and annotation "
                                     "scheduling.volcano.sh/queue-name=vq"),
            std::string::npos)
      << p->time_problems[0];
}

TEST(ParseJob, ReadsTheJobsQueueMarkersThenItsTemplates) {
  auto j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns",
      "annotations": {"scheduling.volcano.sh/queue-name": "vq"}}, "spec": {}})"));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->queue_name, "vq");
  j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns"},
      "spec": {"template": {"metadata": {"labels": {"kai.scheduler/queue": "kq"}}}}})"));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->queue_name, "kq");
  j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns",
      "labels": {"tessera.dev/queue": "t", "kai.scheduler/queue": "k"}}, "spec": {}})"));
  EXPECT_EQ(j->queue_name, "t");
  EXPECT_EQ(j->time_problems.size(), 1u);
}

TEST(ParsePod, GroupsByVolcanoAnnotationThenJobThenAlone) {
  json pod = Pod();
  pod["metadata"]["labels"].erase("scheduling.x-k8s.io/pod-group");
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "vg";
  EXPECT_EQ(ParsePod(pod)->GroupKey(), "Volcano:team-a/vg");
  pod["metadata"]["annotations"].erase("scheduling.k8s.io/group-name");
  pod["metadata"]["ownerReferences"] =
      json::parse(R"([{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "j"}])");
  EXPECT_EQ(ParsePod(pod)->GroupKey(), "Job:team-a/train");
  pod["metadata"].erase("ownerReferences");
  EXPECT_EQ(ParsePod(pod)->GroupKey(), "Pod:team-a/w-0");
}

TEST(ParsePod, BadQuantityNamesTheField) {
  json pod = Pod();
  pod["spec"]["containers"][1]["resources"]["requests"]["cpu"] = "lots";
  auto p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("spec.containers[1].resources.requests.cpu"),
            std::string::npos)
      << p.status();
}

TEST(ParsePod, MissingContainersIsAnError) {
  json pod = Pod();
  pod["spec"].erase("containers");
  EXPECT_FALSE(ParsePod(pod).ok());
}

TEST(ParseNode, ReadsAllocatableTaintsAndReadiness) {
  json node = json::parse(R"({
    "metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.product": "H100"}},
    "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"},
               "conditions": [{"type": "Ready", "status": "False"}]}
  })");
  bool ready = true;
  auto n = ParseNode(node, &ready);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_FALSE(ready);
  EXPECT_EQ(n->gpu_count(), 8);
  EXPECT_EQ(n->allocatable[kCpu], 64000);
  EXPECT_EQ(n->allocatable[kPods], 110);  // not given: the kubelet's default
  EXPECT_EQ(n->gpu_model, "H100");
  EXPECT_EQ(n->labels.at("kubernetes.io/hostname"), "gpu-1");
  ASSERT_EQ(n->taints.size(), 1u);
}

TEST(ParseNode, ReadsTheGpuLabelsAndAnnotationsAndSaysWhatItCannotUse) {
  json node = json::parse(R"({
    "metadata": {"name": "gpu-2",
                 "labels": {"nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.replicas": "2"},
                 "annotations": {"tessera.dev/gpu-layout": "nvlink=0,0,1,1"}},
    "status": {"allocatable": {"nvidia.com/gpu": "8"}}
  })");
  bool ready = true;
  std::vector<std::string> problems;
  auto n = ParseNode(node, &ready, &problems);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(n->gpu_memory_mib, 81559);
  EXPECT_EQ(n->gpu_replicas, 2);
  ASSERT_EQ(n->gpus.size(), 8u);
  EXPECT_EQ(n->gpus[6].nvlink, 1);  // slot 6 = replica 1 of GPU 2

  node["metadata"]["annotations"]["tessera.dev/gpu-layout"] = "nvlink=0,0,1";
  n = ParseNode(node, &ready, &problems);
  ASSERT_TRUE(n.ok()) << n.status();  // the node stays, without the layout
  EXPECT_TRUE(n->gpus.empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("metadata.annotations.tessera.dev/gpu-layout: nvlink lists 3"),
            std::string::npos)
      << problems[0];
}

TEST(ParsePod, GpuShareTopologyAndAntiAffinityAsTheLoaderReadsThem) {
  json pod = Pod();
  pod["metadata"]["labels"]["app"] = "infer";
  pod["metadata"]["annotations"] = {{"gpu-fraction", "0.5"},
                                    {"kueue.x-k8s.io/podset-required-topology", "rack"}};
  pod["metadata"]["ownerReferences"] =
      json::parse(R"([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "infer-5d9f"}])");
  pod["spec"]["affinity"] = json::parse(R"({"podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "infer"}}},
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "other"}}}],
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
          "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["infer"]}]}}}]}})");
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->set.requests[kGpuMilli], 500);
  EXPECT_EQ(p->set.requests[kGpu], 0);
  EXPECT_EQ(p->set.topology.level, "rack");
  EXPECT_TRUE(p->set.topology.required);
  // Only the preferred term is on the hostname and selects the pod's own labels.
  EXPECT_EQ(p->set.anti_affinity, HostnameAntiAffinity::kPreferred);
  EXPECT_EQ(p->owner_replicaset, "infer-5d9f");

  pod["metadata"]["annotations"]["gpu-fraction"] = "1.5";
  p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("metadata.annotations.gpu-fraction"), std::string::npos)
      << p.status();
}

TEST(GpuIndices, RoundTripAndIgnoreJunk) {
  EXPECT_EQ(FormatGpuIndices({0, 5, 7}), "0,5,7");
  EXPECT_EQ(ParseGpuIndices("0,5,7"), (std::vector<int32_t>{0, 5, 7}));
  EXPECT_EQ(ParseGpuIndices("x,-1,,2"), (std::vector<int32_t>{2}));
  json pod = Pod();
  pod["metadata"]["annotations"]["tessera.dev/mig-starts"] = "4,0,9";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mig_starts, (std::vector<int8_t>{4, 0}));  // 9 is no slice
}

TEST(ParsePodGroup, MinMemberAndStatus) {
  auto g = ParsePodGroup(json::parse(
      R"({"metadata": {"name": "g", "namespace": "ns"}, "spec": {"minMember": 8},
          "status": {"phase": "Scheduled", "scheduled": 8}})"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->min_member, 8);
  EXPECT_EQ(g->scheduled, 8);
}

TEST(ParsePod, KueuePlainPodGroupWithItsTotalCount) {
  json pod = Pod();
  pod["metadata"]["labels"].erase("scheduling.x-k8s.io/pod-group");
  pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = "sample-group";
  pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "3";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->GroupKey(), "KueuePodGroup:team-a/sample-group");
  EXPECT_EQ(p->group_total, 3);
  EXPECT_TRUE(p->group_error.empty());
  // The Volcano annotation, a stronger statement of the group, wins over Kueue's label.
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "vg";
  EXPECT_EQ(ParsePod(pod)->GroupKey(), "Volcano:team-a/vg");
}

TEST(ParsePod, KueuePlainPodGroupWithABadCountSaysWhichPodAndAnnotation) {
  json pod = Pod();
  pod["metadata"]["labels"].erase("scheduling.x-k8s.io/pod-group");
  pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = "sample-group";
  pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "two";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();  // the pod is kept; its group waits and says why
  EXPECT_EQ(p->group_total, -1);
  EXPECT_NE(p->group_error.find("team-a/w-0"), std::string::npos) << p->group_error;
  EXPECT_NE(p->group_error.find("kueue.x-k8s.io/pod-group-total-count: 'two'"), std::string::npos)
      << p->group_error;
  pod["metadata"]["annotations"].erase("kueue.x-k8s.io/pod-group-total-count");
  p = ParsePod(pod);
  EXPECT_NE(p->group_error.find("no annotation kueue.x-k8s.io/pod-group-total-count"),
            std::string::npos)
      << p->group_error;
  pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "0";
  EXPECT_FALSE(ParsePod(pod)->group_error.empty());
}

TEST(ParseVolcanoPodGroup, MinMemberQueueAndMinResources) {
  auto g = ParseVolcanoPodGroup(json::parse(R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "vg", "namespace": "ns"},
    "spec": {"minMember": 4, "queue": "research", "priorityClassName": "high",
             "minResources": {"cpu": "8", "nvidia.com/gpu": 4}}})"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->min_member, 4);
  EXPECT_EQ(g->queue, "research");
  EXPECT_EQ(g->priority_class, "high");
  EXPECT_EQ(g->min_resources[kCpu], 8000);
  EXPECT_EQ(g->min_resources[kGpu], 4);
}

TEST(ParseVolcanoPodGroup, DefaultsAndErrorsNameTheField) {
  auto g = ParseVolcanoPodGroup(json::parse(R"({"metadata": {"name": "vg", "namespace": "ns"}})"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->min_member, 1);
  auto bad = ParseVolcanoPodGroup(
      json::parse(R"({"metadata": {"name": "vg"}, "spec": {"minResources": {"cpu": "lots"}}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("spec.minResources.cpu"), std::string::npos)
      << bad.status();
  bad = ParseVolcanoPodGroup(
      json::parse(R"({"metadata": {"name": "vg"}, "spec": {"minMember": "4"}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("spec.minMember"), std::string::npos);
}

TEST(ParseJob, GangIsParallelismCappedByTheCompletionsLeft) {
  auto j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns"},
                                    "spec": {"parallelism": 8}})"));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->GangSize(), 8);  // a work queue: parallelism pods
  j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns"},
                               "spec": {"parallelism": 8, "completions": 10},
                               "status": {"succeeded": 7}})"));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->GangSize(), 3);
  j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns"}, "spec": {}})"));
  EXPECT_EQ(j->GangSize(), 1);
}

}  // namespace
}  // namespace tessera::k8s

namespace tessera::k8s {
namespace {

// One Node from the API server with an absurd GPU count crashed `tessera serve` on every restart
// (a 32-bit count, then an allocation of that size). ParseNode now refuses it with the field, and
// the object cache logs the reason and goes on without the node.
TEST(ParseNode, RefusesAGpuCountBeyondTheLimit) {
  for (const char* gpus : {"1025", "2147483647", "2147483648", "4294967296"}) {
    json node = json::parse(std::string(R"({
      "metadata": {"name": "huge"},
      "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": ")") +
                            gpus + R"("}}
    })");
    bool ready = true;
    auto n = ParseNode(node, &ready);
    ASSERT_FALSE(n.ok()) << gpus;
    EXPECT_NE(n.status().message().find("status.allocatable.nvidia.com/gpu"), std::string::npos)
        << n.status();
    EXPECT_NE(n.status().message().find("at most 1024"), std::string::npos) << n.status();
  }
  json capacity = json::parse(R"({"metadata": {"name": "c"},
      "status": {"capacity": {"nvidia.com/gpu": "5000"}}})");
  auto c = ParseNode(capacity, nullptr);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("status.capacity.nvidia.com/gpu"), std::string::npos)
      << c.status();
  json fine = json::parse(R"({"metadata": {"name": "f"},
      "status": {"allocatable": {"nvidia.com/gpu": "1024"}}})");
  auto f = ParseNode(fine, nullptr);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->gpu_count(), 1024);
}

// In serve, the bad Node is a logged skip: the other nodes are kept and nothing aborts.
TEST(ParseNode, TheObjectCacheSkipsANodeItRefuses) {
  WatchEvent ev;
  ev.type = WatchEvent::Type::kReplace;
  ev.resource = "nodes";
  ev.objects.push_back(json::parse(R"({"metadata": {"name": "huge"},
      "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "2147483648"}}})"));
  ev.objects.push_back(json::parse(R"({"metadata": {"name": "fine"},
      "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "8"}}})"));
  ObjectCache cache;
  cache.Apply(ev);
  EXPECT_EQ(cache.num_nodes(), 1u);
  std::vector<std::string> names;
  Model m = cache.Snapshot(&names);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "fine");
  EXPECT_EQ(m.nodes[0].gpu_count(), 8);
}

TEST(ParseJob, RefusesAParallelismBeyondThePodsOfAWorkload) {
  json job = json::parse(R"({"metadata": {"name": "j", "namespace": "d"},
      "spec": {"parallelism": 4294967297}})");
  auto j = ParseJob(job);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("spec.parallelism"), std::string::npos) << j.status();
  json pg = json::parse(R"({"metadata": {"name": "g", "namespace": "d"},
      "spec": {"minMember": 2147483648}})");
  EXPECT_FALSE(ParsePodGroup(pg).ok());
  EXPECT_FALSE(ParseVolcanoPodGroup(pg).ok());
}

// What the loader refuses in a manifest is refused in an object from the API server too (a
// real one validates both; a broken one may not): a fractional GPU count, which ParseQuantity
// would round up to one GPU, and a Gt value that is not one integer.
TEST(ParsePod, RefusesFractionalGpusAndGtValuesThatAreNotIntegers) {
  json pod = Pod();
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "0.0001";
  auto p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("nvidia.com/gpu"), std::string::npos) << p.status();
  pod = Pod(R"({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["8Gi"]}]}]}}}})");
  p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("operator Gt needs exactly one whole number"),
            std::string::npos)
      << p.status();
  pod = Pod(R"({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["8"]}]}]}}}})");
  EXPECT_TRUE(ParsePod(pod).ok());
}

// serve read neither (issue 15: the loader honoured them, Kubernetes mode dropped them).
TEST(ParsePod, TopologySpreadAndPreferredNodeAffinityAsTheLoaderReadsThem) {
  json pod =
      Pod(R"({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
      [{"weight": 80, "preference": {"matchExpressions": [
         {"key": "zone", "operator": "In", "values": ["a"]}]}}]}},
    "topologySpreadConstraints": [
      {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "minDomains": 3,
       "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}},
      {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["x"],
       "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}},
      {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchLabels": {"app": "other"}}}]})");
  pod["metadata"]["labels"]["app"] = "web";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->set.affinity.preferred_terms.size(), 1u);
  EXPECT_EQ(PreferredAffinityScore(p->set.affinity, {{"zone", "a"}}), 80);
  ASSERT_EQ(p->set.spread.size(), 2u);
  EXPECT_EQ(p->set.spread[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_TRUE(p->set.spread[0].required);
  EXPECT_EQ(p->set.spread[0].min_domains, 3);
  EXPECT_FALSE(p->set.spread[1].required);
  EXPECT_EQ(p->set.spread[1].max_skew, 2);
  // What is left out is said (logged, and a Warning Event on the pod).
  ASSERT_EQ(p->time_problems.size(), 2u) << fmt::format("{}", fmt::join(p->time_problems, "; "));
  EXPECT_EQ(p->time_problems[0].rfind("spec.topologySpreadConstraints[1].matchLabelKeys", 0), 0u);
  EXPECT_EQ(p->time_problems[1].rfind("spec.topologySpreadConstraints[2].labelSelector", 0), 0u);

  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z",
                "whenUnsatisfiable": "DoNotSchedule"}]})",
            "spec.topologySpreadConstraints[0].maxSkew"},
           {R"({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z",
                "whenUnsatisfiable": "Sometimes"}]})",
            "whenUnsatisfiable: 'Sometimes'"},
           {R"({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "minDomains": 2,
                "whenUnsatisfiable": "ScheduleAnyway"}]})",
            "spec.topologySpreadConstraints[0].minDomains"},
           {R"({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
                [{"weight": 101, "preference": {}}]}}})",
            "preferredDuringSchedulingIgnoredDuringExecution[0].weight"}}) {
    auto r = ParsePod(Pod(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status();
  }
}

// A Deployment's replicas with a spread constraint are one spread group, as with anti-affinity.
TEST(AssembleGang, ReplicasWithATopologySpreadShareASpreadGroup) {
  PodInfo p;
  p.ns = "d";
  p.name = "web-abc";
  p.owner_replicaset = "web-5f7";
  p.group_kind = "Pod";
  p.set.spread.push_back(TopologySpread{"zone", 1, true, 0});
  Gang g;
  g.kind = "Pod";
  g.ns = "d";
  g.name = p.name;
  g.foreign = false;
  g.members.push_back({&p, false});
  GangSources sources;
  GangAssembly a = AssembleGang(g, sources);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.spread_group, "d/ReplicaSet:web-5f7");
  ASSERT_EQ(a.workload.pod_sets.size(), 1u);
  EXPECT_EQ(a.workload.pod_sets[0].spread.size(), 1u);
}

// A PodGroup the cache refuses is not used (it was kept in its last good version, or never
// said anything): the cache logs it, and the gang's pods say why they wait.
TEST(ParseJob, ARefusedPodGroupIsNotUsedAndItsPodsSayWhy) {
  ObjectCache cache;
  WatchEvent ev;
  ev.type = WatchEvent::Type::kAdded;
  ev.resource = "podgroups";
  ev.object = json::parse(R"({"metadata": {"name": "g", "namespace": "d"},
      "spec": {"minMember": 2}})");
  cache.Apply(ev);
  ASSERT_EQ(cache.gang_sources().podgroups.count("d/g"), 1u);
  ev.type = WatchEvent::Type::kModified;
  ev.object["spec"]["minMember"] = 2147483648;
  cache.Apply(ev);
  EXPECT_EQ(cache.gang_sources().podgroups.count("d/g"), 0u) << "the old version was kept";
  PodInfo pod;
  pod.ns = "d";
  pod.name = "p";
  Gang gang{"PodGroup:d/g", "PodGroup", "d", "g", false, {{&pod, false}}};
  const GangAssembly a = AssembleGang(gang, cache.gang_sources());
  EXPECT_FALSE(a.complete);
  EXPECT_NE(a.wait_reason.find("waiting for PodGroup d/g, which is not used: spec.minMember"),
            std::string::npos)
      << a.wait_reason;
  // Fixed again: used again, and no longer said to be refused.
  ev.object["spec"]["minMember"] = 1;
  cache.Apply(ev);
  EXPECT_TRUE(AssembleGang(gang, cache.gang_sources()).complete);
}

// serve did not check the cluster's total: nodes beyond kMaxClusterGpuSlots GPU device slots
// are left out of the engine's model (said once), the rest is scheduled.
TEST(ParseNode, NodesBeyondTheClustersGpuLimitAreLeftOut) {
  WatchEvent ev;
  ev.type = WatchEvent::Type::kReplace;
  ev.resource = "nodes";
  const int64_t per_node = kMaxGpuSlotsPerNode;
  const int64_t fit = kMaxClusterGpuSlots / per_node;
  for (int64_t i = 0; i <= fit; ++i)
    ev.objects.push_back(
        {{"metadata", {{"name", fmt::format("n{:05}", i)}}},
         {"status",
          {{"allocatable", {{"cpu", "8"}, {"nvidia.com/gpu", std::to_string(per_node)}}}}}});
  ObjectCache cache;
  cache.Apply(ev);
  EXPECT_EQ(cache.num_nodes(), static_cast<size_t>(fit + 1));
  std::vector<std::string> names;
  Model m = cache.Snapshot(&names);
  EXPECT_EQ(m.nodes.size(), static_cast<size_t>(fit));
  EXPECT_EQ(names.size(), m.nodes.size());
  EXPECT_EQ(names.back(), fmt::format("n{:05}", fit - 1));
}

// Objects whose metadata is not an object, or whose name is not a string, are malformed, not a
// reason to throw out of the controller's loop.
TEST(ParseJob, MalformedMetadataNeverThrowsOutOfTheCache) {
  ObjectCache cache;
  for (const char* resource : {"nodes", "namespaces", "podgroups", "volcanopodgroups", "jobs",
                               "priorityclasses", "clusterqueues", "localqueues"}) {
    for (const char* text : {R"({"metadata": "x"})", R"({"metadata": {"name": 7}})",
                             R"({"metadata": [1, 2]})", R"({})"}) {
      for (auto type :
           {WatchEvent::Type::kAdded, WatchEvent::Type::kDeleted, WatchEvent::Type::kReplace}) {
        WatchEvent ev;
        ev.type = type;
        ev.resource = resource;
        if (type == WatchEvent::Type::kReplace)
          ev.objects.push_back(json::parse(text));
        else
          ev.object = json::parse(text);
        EXPECT_NO_THROW(cache.Apply(ev)) << resource << " " << text;
      }
    }
  }
  std::vector<std::string> names;
  EXPECT_NO_THROW(cache.Snapshot(&names));
}

}  // namespace
}  // namespace tessera::k8s

namespace tessera::k8s {
namespace {

// The fields of time (time_fields.h) on a live pod, as the manifest loader reads them from a
// manifest: durations in seconds or Go's form, Kueue's label and spec.activeDeadlineSeconds
// (the smaller), Volcano's sla-waiting-time where tessera.dev/max-wait is not given.
TEST(ParsePod, ReadsTheFieldsOfTime) {
  json pod = Pod(R"({"activeDeadlineSeconds": 7200})");
  auto& ann = pod["metadata"]["annotations"];
  ann[kRuntimeEstimateAnnotation] = "1h30m";
  ann[kMaxWaitAnnotation] = "30m";
  ann[kSlaWaitingTimeAnnotation] = "2h";
  ann[kMinRuntimeAnnotation] = "600";
  ann[kCheckpointIntervalAnnotation] = "15m";
  pod["metadata"]["labels"][kMaxExecTimeLabel] = "3600";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->time_problems.empty());
  EXPECT_EQ(p->time.runtime_estimate, 5400);
  EXPECT_EQ(p->time.max_wait, 1800);  // tessera.dev/max-wait wins over sla-waiting-time
  EXPECT_EQ(p->time.min_runtime, 600);
  EXPECT_EQ(p->time.checkpoint_interval, 900);
  EXPECT_EQ(p->time.active_deadline, 3600);  // the smaller of the label and the spec
  ann.erase(kMaxWaitAnnotation);
  EXPECT_EQ(ParsePod(pod)->time.max_wait, 7200);  // Volcano's limit
  // None given: none.
  auto plain = ParsePod(Pod());
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->time.empty());
}

// An interruptible mark that is neither "true" nor "false" is said like a bad time value (a
// Warning Event on the pod, node_policy.h); the pod stays.
TEST(ParsePod, ABadInterruptibleMarkIsSaid) {
  json pod = Pod();
  pod["metadata"]["annotations"][kInterruptibleAnnotation] = "yes";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->time_problems.size(), 1u);
  EXPECT_EQ(p->time_problems[0],
            "metadata.annotations.tessera.dev/interruptible: expected \"true\" or \"false\", "
            "got \"yes\"");
  EXPECT_STREQ(TimeProblemReason(p->time_problems[0]), "InvalidAnnotation");
  pod["metadata"]["annotations"][kInterruptibleAnnotation] = "false";
  EXPECT_TRUE(ParsePod(pod)->time_problems.empty());
}

// A value that cannot be used leaves that field out and is said, naming the field; the pod and
// its other fields stay.
TEST(ParsePod, ABadTimeValueIsLeftOutAndSaidNeverDropsThePod) {
  json pod = Pod(R"({"activeDeadlineSeconds": 0})");
  auto& ann = pod["metadata"]["annotations"];
  ann[kRuntimeEstimateAnnotation] = "2d";  // Go has no unit d
  ann[kMaxWaitAnnotation] = "-5m";
  ann[kCheckpointIntervalAnnotation] = "0s";  // must be > 0
  ann[kMinRuntimeAnnotation] = "10m";
  pod["metadata"]["labels"][kMaxExecTimeLabel] = "soon";
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->time.runtime_estimate);
  EXPECT_FALSE(p->time.max_wait);
  EXPECT_FALSE(p->time.checkpoint_interval);
  EXPECT_FALSE(p->time.active_deadline);
  EXPECT_EQ(p->time.min_runtime, 600);
  ASSERT_EQ(p->time_problems.size(), 5u);
  std::string all;
  for (const auto& s : p->time_problems) all += s + "\n";
  for (const char* field :
       {"metadata.annotations.tessera.dev/runtime-estimate: ",
        "metadata.annotations.tessera.dev/max-wait: ",
        "metadata.annotations.tessera.dev/checkpoint-interval: must be greater than 0, got \"0s\"",
        "spec.activeDeadlineSeconds: expected a positive integer number of seconds, got 0",
        "metadata.labels.kueue.x-k8s.io/max-exec-time-seconds: expected a positive integer"})
    EXPECT_NE(all.find(field), std::string::npos) << field << " in\n" << all;
  EXPECT_STREQ(TimeProblemReason(p->time_problems[0]), "InvalidAnnotation");
  EXPECT_STREQ(TimeProblemReason("metadata.labels.x: y"), "InvalidLabel");
  EXPECT_STREQ(TimeProblemReason("spec.activeDeadlineSeconds: y"), "InvalidField");
  // A deadline beyond 10 years is never reached: no deadline, and nothing to say.
  pod = Pod(R"({"activeDeadlineSeconds": 2147483647})");
  pod["metadata"]["labels"][kMaxExecTimeLabel] = "99999999999999999999";
  p = ParsePod(pod);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->time.active_deadline);
  EXPECT_TRUE(p->time_problems.empty());
}

TEST(ParseJob, ReadsItsDeadlineLabelAndAnnotations) {
  auto j = ParseJob(json::parse(R"({
    "metadata": {"name": "j", "namespace": "ns", "uid": "uid-j",
                 "labels": {"kueue.x-k8s.io/max-exec-time-seconds": "900"},
                 "annotations": {"tessera.dev/runtime-estimate": "10m"}},
    "spec": {"parallelism": 2, "activeDeadlineSeconds": 1200}})"));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->uid, "uid-j");
  EXPECT_EQ(j->time.active_deadline, 900);
  EXPECT_EQ(j->time.runtime_estimate, 600);
  j = ParseJob(json::parse(R"({"metadata": {"name": "j", "namespace": "ns"},
                               "spec": {"activeDeadlineSeconds": "1h"}})"));
  ASSERT_TRUE(j.ok()) << j.status();  // the Job stays; the field is left out and said
  EXPECT_FALSE(j->time.active_deadline);
  ASSERT_EQ(j->time_problems.size(), 1u);
  EXPECT_EQ(j->time_problems[0],
            "spec.activeDeadlineSeconds: expected a positive integer number of seconds, got "
            "\"1h\"");
}

TEST(ParseVolcanoPodGroup, SlaWaitingTimeIsItsMaxWait) {
  auto g = ParseVolcanoPodGroup(json::parse(R"({
    "metadata": {"name": "vg", "namespace": "ns", "uid": "uid-vg",
                 "annotations": {"sla-waiting-time": "1h2m3s"}}})"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->uid, "uid-vg");
  EXPECT_EQ(g->time.max_wait, 3723);
  auto pg = ParsePodGroup(json::parse(R"({
    "metadata": {"name": "g", "namespace": "ns", "uid": "uid-g",
                 "annotations": {"sla-waiting-time": "soon", "tessera.dev/min-runtime": "5m"}}})"));
  ASSERT_TRUE(pg.ok());
  EXPECT_FALSE(pg->time.max_wait);
  EXPECT_EQ(pg->time.min_runtime, 300);
  ASSERT_EQ(pg->time_problems.size(), 1u);
  EXPECT_EQ(pg->time_problems[0].rfind("metadata.annotations.sla-waiting-time: ", 0), 0u)
      << pg->time_problems[0];
}

TEST(ObjectsTest, PriorityClassPreemptibilityFromKaiOrTesseraKeys) {
  auto pc = ParsePriorityClass(json::parse(R"({"metadata": {"name": "train",
      "labels": {"kai.scheduler/preemptibility": "non-preemptible"}}, "value": 100})"));
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(pc->value, 100);
  EXPECT_TRUE(pc->non_preemptible);
  pc = ParsePriorityClass(json::parse(R"({"metadata": {"name": "x",
      "annotations": {"tessera.dev/preemptibility": "sometimes"}}, "value": 1})"));
  ASSERT_TRUE(pc.ok());
  EXPECT_FALSE(pc->non_preemptible);  // not a value: the default
  pc = ParsePriorityClass(json::parse(R"({"metadata": {"name": "y"}, "value": 1000})"));
  ASSERT_TRUE(pc.ok());
  EXPECT_FALSE(pc->non_preemptible);  // KAI's "100 and above" rule is not applied
}

}  // namespace
}  // namespace tessera::k8s
