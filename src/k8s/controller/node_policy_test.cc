// Serve's rules for nodes autoscalers add and remove (node_policy.h).
#include "k8s/controller/node_policy.h"

#include <gtest/gtest.h>

#include "k8s/controller/object_cache.h"

namespace tessera::k8s {
namespace {

Node WithTaint(const std::string& key, const std::string& value, TaintEffect effect) {
  Node n;
  n.taints.push_back({key, value, effect});
  return n;
}

TEST(NodePolicy, NodesBeingRemovedAreRecognised) {
  EXPECT_FALSE(BeingRemoved(Node{}));
  EXPECT_TRUE(BeingRemoved(
      WithTaint("ToBeDeletedByClusterAutoscaler", "1732400000", TaintEffect::kNoSchedule)));
  EXPECT_TRUE(BeingRemoved(WithTaint("karpenter.sh/disrupted", "", TaintEffect::kNoSchedule)));
  EXPECT_TRUE(
      BeingRemoved(WithTaint("karpenter.sh/disruption", "disrupting", TaintEffect::kNoSchedule)));
  // The Cluster Autoscaler's soft mark is not a removal.
  EXPECT_FALSE(BeingRemoved(
      WithTaint("DeletionCandidateOfClusterAutoscaler", "1", TaintEffect::kPreferNoSchedule)));
  EXPECT_FALSE(
      BeingRemoved(WithTaint("karpenter.sh/disrupted", "", TaintEffect::kPreferNoSchedule)));
}

TEST(NodePolicy, SpotLabels) {
  NodePolicyOptions o;
  Node n;
  EXPECT_FALSE(IsSpot(n, o));
  n.labels["karpenter.sh/capacity-type"] = "on-demand";
  EXPECT_FALSE(IsSpot(n, o));
  n.labels["karpenter.sh/capacity-type"] = "spot";
  EXPECT_TRUE(IsSpot(n, o));
  Node g;
  g.labels["cloud.google.com/gke-spot"] = "true";
  EXPECT_TRUE(IsSpot(g, o));
  Node e;
  e.labels["eks.amazonaws.com/capacityType"] = "SPOT";
  EXPECT_TRUE(IsSpot(e, o));
  Node mine;
  mine.labels["pool"] = "cheap";
  EXPECT_FALSE(IsSpot(mine, o));
  o.spot_labels.push_back({"pool", "cheap"});
  EXPECT_TRUE(IsSpot(mine, o));
}

TEST(NodePolicy, SpotNodesAreForTheInterruptibleAndPreferredByThem) {
  NodePolicyOptions o;
  Node spot, on_demand, other;
  spot.labels = {{"karpenter.sh/capacity-type", "spot"}, {"zone", "a"}};
  on_demand.labels = {{"karpenter.sh/capacity-type", "on-demand"}, {"zone", "a"}};
  other.labels = {{"zone", "b"}};

  Workload w;
  PodSet plain, tolerant, zoned;
  tolerant.annotations[kInterruptibleAnnotation] = "true";
  zoned.affinity.required_terms.push_back({{{"zone", SelectorOp::kIn, {"a"}}}});
  w.pod_sets = {plain, tolerant, zoned};
  ApplySpotPolicy(w, o);
  const PodSet& p = w.pod_sets[0];
  EXPECT_FALSE(Matches(p.affinity, spot.labels));
  EXPECT_TRUE(Matches(p.affinity, on_demand.labels));
  EXPECT_TRUE(Matches(p.affinity, other.labels));  // no label at all: not spot
  const PodSet& t = w.pod_sets[1];
  EXPECT_TRUE(Matches(t.affinity, spot.labels));
  EXPECT_TRUE(Matches(t.affinity, on_demand.labels));
  EXPECT_GT(PreferredAffinityScore(t.affinity, spot.labels),
            PreferredAffinityScore(t.affinity, on_demand.labels));
  // The pod's own rule still holds, and spot is kept out of it.
  const PodSet& z = w.pod_sets[2];
  EXPECT_FALSE(Matches(z.affinity, spot.labels));
  EXPECT_TRUE(Matches(z.affinity, on_demand.labels));
  EXPECT_FALSE(Matches(z.affinity, other.labels));

  // Off: nothing changes.
  Workload off;
  off.pod_sets = {plain};
  o.spot_policy = false;
  ApplySpotPolicy(off, o);
  EXPECT_TRUE(off.pod_sets[0].affinity.required_terms.empty());
}

TEST(NodePolicy, TheInterruptibleMarkIsTrueOrFalseAndAnythingElseIsSaid) {
  std::string problem;
  EXPECT_EQ(ReadInterruptible({}, &problem), std::nullopt);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(ReadInterruptible({{kInterruptibleAnnotation, "true"}}, &problem), true);
  EXPECT_EQ(ReadInterruptible({{kInterruptibleAnnotation, "false"}}, &problem), false);
  EXPECT_EQ(problem, "");
  EXPECT_EQ(ReadInterruptible({{kInterruptibleAnnotation, "yes"}}, &problem), std::nullopt);
  EXPECT_EQ(problem,
            "metadata.annotations.tessera.dev/interruptible: expected \"true\" or \"false\", got "
            "\"yes\"");
  // A pod's own mark wins over the workload's; a bad one counts as absent.
  PodSet ps;
  EXPECT_FALSE(Interruptible(ps));
  EXPECT_TRUE(Interruptible(ps, true));
  ps.annotations[kInterruptibleAnnotation] = "false";
  EXPECT_FALSE(Interruptible(ps, true));
  ps.annotations[kInterruptibleAnnotation] = "True";
  EXPECT_TRUE(Interruptible(ps, true));
  EXPECT_FALSE(Interruptible(ps, false));
}

// Most specific first: WorkloadPriorityClass, PriorityClass (or the global default), LocalQueue,
// ClusterQueue; "false" at a more specific level keeps the workload off spot nodes.
TEST(NodePolicy, AWorkloadTakesItsMarkFromTheMostSpecificObjectThatSays) {
  Model m;
  m.local_queues.push_back({"team", "lq", "batch", "", 1.0});
  m.local_queues.push_back({"team", "other", "steady", "", 1.0});
  m.priority_classes.push_back({"normal", 0, /*global_default=*/true, false, "", false});
  InterruptibleMarks marks;
  Workload w;
  w.ns = "team";
  w.queue_name = "lq";
  EXPECT_EQ(DefaultInterruptible(w, marks, m).value, std::nullopt);
  EXPECT_EQ(DefaultInterruptible(w, marks, m).from, "");

  marks.cluster_queues["batch"] = true;
  InterruptibleDefault d = DefaultInterruptible(w, marks, m);
  EXPECT_EQ(d.value, true);
  EXPECT_EQ(d.from, "ClusterQueue batch");
  marks.local_queues["team/lq"] = false;
  d = DefaultInterruptible(w, marks, m);
  EXPECT_EQ(d.value, false);
  EXPECT_EQ(d.from, "LocalQueue team/lq");
  // No priority class named: the global default's mark.
  marks.priority_classes["normal"] = true;
  d = DefaultInterruptible(w, marks, m);
  EXPECT_EQ(d.value, true);
  EXPECT_EQ(d.from, "PriorityClass normal");
  w.priority_class = "critical";
  marks.priority_classes["critical"] = false;
  EXPECT_EQ(DefaultInterruptible(w, marks, m).value, false);
  w.workload_priority_class = "spot-ok";
  marks.workload_priority_classes["spot-ok"] = true;
  d = DefaultInterruptible(w, marks, m);
  EXPECT_EQ(d.value, true);
  EXPECT_EQ(d.from, "WorkloadPriorityClass spot-ok");

  // Another queue, no marks on the way: its ClusterQueue says nothing either.
  Workload plain;
  plain.ns = "team";
  plain.queue_name = "other";
  plain.priority_class = "unmarked";
  EXPECT_EQ(DefaultInterruptible(plain, marks, m).value, std::nullopt);
  // A queue that does not exist, or none: nothing.
  plain.queue_name = "missing";
  EXPECT_EQ(DefaultInterruptible(plain, marks, m).value, std::nullopt);
}

TEST(NodePolicy, TheWorkloadsMarkSendsItsUnmarkedPodSetsToSpot) {
  NodePolicyOptions o;
  const Labels spot = {{"karpenter.sh/capacity-type", "spot"}};
  const Labels on_demand = {{"karpenter.sh/capacity-type", "on-demand"}};
  Workload w;
  PodSet unmarked, refuses;
  refuses.annotations[kInterruptibleAnnotation] = "false";
  w.pod_sets = {unmarked, refuses};
  ApplySpotPolicy(w, o, /*fallback=*/true);
  EXPECT_TRUE(Matches(w.pod_sets[0].affinity, spot));
  EXPECT_GT(PreferredAffinityScore(w.pod_sets[0].affinity, spot),
            PreferredAffinityScore(w.pod_sets[0].affinity, on_demand));
  // The launcher that says "false" stays off spot whatever its queue says.
  EXPECT_FALSE(Matches(w.pod_sets[1].affinity, spot));
  EXPECT_TRUE(Matches(w.pod_sets[1].affinity, on_demand));
}

// The cache reads the marks of PriorityClasses and of the queue objects; a bad one is left out.
TEST(NodePolicy, TheObjectCacheReadsTheMarksOfPriorityClassesAndQueues) {
  ObjectCache cache;
  auto apply = [&](const char* resource, const char* text) {
    WatchEvent ev;
    ev.type = WatchEvent::Type::kAdded;
    ev.resource = resource;
    ev.object = json::parse(text);
    cache.Apply(ev);
  };
  apply("priorityclasses", R"({"metadata": {"name": "spot-ok",
      "annotations": {"tessera.dev/interruptible": "true"}}, "value": 10})");
  apply("priorityclasses", R"({"metadata": {"name": "bad",
      "annotations": {"tessera.dev/interruptible": "maybe"}}, "value": 5})");
  apply("workloadpriorityclasses", R"({"apiVersion": "tessera.dev/v1alpha1",
      "kind": "WorkloadPriorityClass", "metadata": {"name": "cheap",
      "annotations": {"tessera.dev/interruptible": "true"}}, "value": 1})");
  apply("clusterqueues", R"({"apiVersion": "tessera.dev/v1alpha1", "kind": "ClusterQueue",
      "metadata": {"name": "batch", "annotations": {"tessera.dev/interruptible": "true"}},
      "spec": {"namespaceSelector": {}, "resourceGroups": []}})");
  apply("localqueues", R"({"apiVersion": "tessera.dev/v1alpha1", "kind": "LocalQueue",
      "metadata": {"name": "lq", "namespace": "team",
                   "annotations": {"tessera.dev/interruptible": "false"}},
      "spec": {"clusterQueue": "batch"}})");
  std::vector<std::string> names;
  const Model m = cache.Snapshot(&names);
  const InterruptibleMarks& marks = cache.interruptible_marks();
  EXPECT_EQ(marks.priority_classes, (std::map<std::string, bool>{{"spot-ok", true}}));
  EXPECT_EQ(marks.workload_priority_classes, (std::map<std::string, bool>{{"cheap", true}}));
  EXPECT_EQ(marks.cluster_queues, (std::map<std::string, bool>{{"batch", true}}));
  EXPECT_EQ(marks.local_queues, (std::map<std::string, bool>{{"team/lq", false}}));
  ASSERT_EQ(m.local_queues.size(), 1u);
  EXPECT_EQ(m.local_queues[0].cluster_queue, "batch");
  // Deleted: its mark goes with it.
  WatchEvent del;
  del.type = WatchEvent::Type::kDeleted;
  del.resource = "priorityclasses";
  del.object = json::parse(R"({"metadata": {"name": "spot-ok"}, "value": 10})");
  cache.Apply(del);
  cache.Snapshot(&names);
  EXPECT_TRUE(cache.interruptible_marks().priority_classes.empty());
}

// The object that owns a gang's pods (a batch Job, a PodGroup, a Volcano PodGroup, which carries
// its Volcano Job's annotations) marks it too, before its priority classes and queues; a bad mark
// on any of these objects is handed over once (for a Warning Event on it) while it lasts.
TEST(NodePolicy, JobsAndPodGroupsMarkTheirGangsAndBadMarksAreSaidOnce) {
  ObjectCache cache;
  auto apply = [&](const char* resource, const std::string& text,
                   WatchEvent::Type type = WatchEvent::Type::kAdded) {
    WatchEvent ev;
    ev.type = type;
    ev.resource = resource;
    ev.object = json::parse(text);
    cache.Apply(ev);
  };
  auto job = [](const std::string& mark) {
    return R"({"metadata": {"name": "train", "namespace": "ml", "uid": "u-job",
        "annotations": {"tessera.dev/interruptible": ")" +
           mark + R"("}}, "spec": {"parallelism": 2}})";
  };
  apply("priorityclasses", R"({"metadata": {"name": "steady", "uid": "u-pc",
      "annotations": {"tessera.dev/interruptible": "false"}}, "value": 10})");
  apply("jobs", job("true"));
  apply("volcanopodgroups", R"({"metadata": {"name": "vc", "namespace": "ml",
      "annotations": {"tessera.dev/interruptible": "false"}}, "spec": {"minMember": 2}})");
  apply("podgroups", R"({"metadata": {"name": "pg", "namespace": "ml", "uid": "u-pg",
      "annotations": {"tessera.dev/interruptible": "yes"}}, "spec": {"minMember": 2}})");
  std::vector<std::string> names;
  Model m = cache.Snapshot(&names);
  EXPECT_EQ(cache.interruptible_marks().owners,
            (std::map<std::string, bool>{{"Job:ml/train", true}, {"Volcano:ml/vc", false}}));
  // The Job says "true" where its PriorityClass says "false": the Job is the more specific.
  Workload w;
  w.ns = "ml";
  w.source = "Job:ml/train";
  w.priority_class = "steady";
  InterruptibleDefault d = DefaultInterruptible(w, cache.interruptible_marks(), m);
  EXPECT_EQ(d.value, true);
  EXPECT_EQ(d.from, "Job ml/train");
  w.source = "Volcano:ml/vc";
  EXPECT_EQ(DefaultInterruptible(w, cache.interruptible_marks(), m).from, "Volcano PodGroup ml/vc");
  // The bad PodGroup mark falls through to the PriorityClass.
  w.source = "PodGroup:ml/pg";
  EXPECT_EQ(DefaultInterruptible(w, cache.interruptible_marks(), m).from, "PriorityClass steady");
  auto problems = cache.TakeMarkProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].first.kind, "PodGroup");
  EXPECT_EQ(problems[0].first.api_version, "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(problems[0].first.ns, "ml");
  EXPECT_EQ(problems[0].first.name, "pg");
  EXPECT_EQ(problems[0].first.uid, "u-pg");
  EXPECT_EQ(problems[0].second,
            "metadata.annotations.tessera.dev/interruptible: expected \"true\" or \"false\", "
            "got \"yes\"; the value is ignored");
  // The same bad value again (an update, a relist, a rebuild): not said again. A Job that goes
  // bad is said; its mark is gone.
  apply("podgroups", R"({"metadata": {"name": "pg", "namespace": "ml", "uid": "u-pg",
      "annotations": {"tessera.dev/interruptible": "yes"}}, "spec": {"minMember": 3}})",
        WatchEvent::Type::kModified);
  apply("jobs", job("sometimes"), WatchEvent::Type::kModified);
  cache.Snapshot(&names);
  problems = cache.TakeMarkProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].first.kind, "Job");
  EXPECT_EQ(problems[0].first.api_version, "batch/v1");
  EXPECT_EQ(problems[0].first.uid, "u-job");
  EXPECT_EQ(cache.interruptible_marks().owners.count("Job:ml/train"), 0u);
  // Bad marks on a priority class and a queue: said at the Snapshot, once while they last.
  apply("priorityclasses", R"({"metadata": {"name": "steady", "uid": "u-pc",
      "annotations": {"tessera.dev/interruptible": "False"}}, "value": 10})",
        WatchEvent::Type::kModified);
  apply("clusterqueues", R"({"apiVersion": "tessera.dev/v1alpha1", "kind": "ClusterQueue",
      "metadata": {"name": "batch", "uid": "u-cq",
                   "annotations": {"tessera.dev/interruptible": "1"}},
      "spec": {"namespaceSelector": {}, "resourceGroups": []}})");
  EXPECT_TRUE(cache.TakeMarkProblems().empty()) << "said before the Snapshot reads them";
  cache.Snapshot(&names);
  problems = cache.TakeMarkProblems();
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].first.kind, "PriorityClass");
  EXPECT_EQ(problems[0].first.ns, "");
  EXPECT_EQ(problems[0].first.uid, "u-pc");
  EXPECT_EQ(problems[1].first.kind, "ClusterQueue");
  EXPECT_EQ(problems[1].first.api_version, "tessera.dev/v1alpha1");
  EXPECT_EQ(problems[1].first.name, "batch");
  EXPECT_EQ(problems[1].first.uid, "u-cq");
  cache.Snapshot(&names);
  EXPECT_TRUE(cache.TakeMarkProblems().empty());
  // A relist without the PodGroup forgets it: the Job's owner mark stays as it is.
  WatchEvent relist;
  relist.type = WatchEvent::Type::kReplace;
  relist.resource = "podgroups";
  cache.Apply(relist);
  apply("podgroups", R"({"metadata": {"name": "pg", "namespace": "ml", "uid": "u-pg2",
      "annotations": {"tessera.dev/interruptible": "yes"}}, "spec": {"minMember": 2}})");
  EXPECT_EQ(cache.TakeMarkProblems().size(), 1u) << "a new PodGroup of the same name is said";
}

}  // namespace
}  // namespace tessera::k8s
