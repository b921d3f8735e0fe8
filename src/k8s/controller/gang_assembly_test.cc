// Gang assembly from pods as the API server sends them (parsed by ParsePod) and the objects that
// size gangs: when a gang waits and what it says, and the workload it becomes.
#include "k8s/controller/gang_assembly.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/resources.h"

namespace tessera::k8s {
namespace {

// A pending pod of Tessera's in namespace "d" asking for `gpus` GPUs, with extra labels and
// annotations, and spec.schedulingGates named `gates`.
PodInfo Pod(const std::string& name, const json& labels, const json& annotations = json::object(),
            int gpus = 1, const std::vector<std::string>& gates = {}) {
  json res = {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  json obj = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "d"},
        {"uid", "uid-" + name},
        {"labels", labels},
        {"annotations", annotations}}},
      {"spec",
       {{"schedulerName", "tessera"},
        {"containers", {{{"name", "main"}, {"resources", {{"requests", res}, {"limits", res}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
  for (const auto& g : gates) obj["spec"]["schedulingGates"].push_back({{"name", g}});
  auto p = ParsePod(obj);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

json PodGroupLabel(const std::string& group) { return {{kPodGroupLabel, group}}; }

// A one-GPU pod of PodGroup `group` (none when empty) held by scheduling `gates`.
PodInfo GatedPod(const std::string& name, const std::string& group,
                 const std::vector<std::string>& gates = {}) {
  return Pod(name, group.empty() ? json::object() : PodGroupLabel(group), json::object(), 1, gates);
}

// The gang of `pods` (all of one group), as the controller hands it over: members by pod key;
// those named in `bound` are bound.
Gang GangOf(const std::vector<PodInfo>& pods, const std::vector<std::string>& bound = {}) {
  Gang g;
  g.key = pods.front().GroupKey();
  g.kind = pods.front().group_kind;
  g.ns = pods.front().ns;
  g.name = pods.front().group_name;
  for (const PodInfo& p : pods)
    g.members.push_back({&p, std::find(bound.begin(), bound.end(), p.name) != bound.end()});
  std::sort(g.members.begin(), g.members.end(), [](const Gang::Member& a, const Gang::Member& b) {
    return a.pod->Key() < b.pod->Key();
  });
  return g;
}

GangSources WithPodGroup(const std::string& name, int32_t min_member) {
  GangSources s;
  PodGroupInfo pg;
  pg.ns = "d";
  pg.name = name;
  pg.min_member = min_member;
  s.podgroups["d/" + name] = pg;
  return s;
}

TEST(AssembleGang, PodGroupWaitsForItsMinMemberThenIsOnePodSet) {
  std::vector<PodInfo> pods;
  for (const char* n : {"p2", "p0", "p1"}) pods.push_back(Pod(n, PodGroupLabel("train")));
  const GangSources sources = WithPodGroup("train", 4);

  GangAssembly waiting = AssembleGang(GangOf(pods), sources);
  EXPECT_FALSE(waiting.complete);
  EXPECT_EQ(waiting.wait_reason, "waiting for the gang's pods: 3 of 4 exist");

  pods.push_back(Pod("p3", PodGroupLabel("train")));
  GangAssembly a = AssembleGang(GangOf(pods), sources);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.bound, 0u);
  const Workload& w = a.workload;
  EXPECT_EQ(w.kind, "PodGroup");
  EXPECT_EQ(w.Key(), "d/train");
  EXPECT_EQ(w.source, "PodGroup:d/train");
  EXPECT_EQ(w.min_count, 4);
  ASSERT_EQ(w.pod_sets.size(), 1u);
  EXPECT_EQ(w.pod_sets[0].name, "main");
  EXPECT_EQ(w.pod_sets[0].count, 4);
  EXPECT_EQ(w.pod_sets[0].requests[kGpu], 1);
  ASSERT_EQ(a.sets.size(), 1u);
  EXPECT_EQ(a.sets[0], (std::vector<std::string>{"d/p0", "d/p1", "d/p2", "d/p3"}));
}

TEST(AssembleGang, KaiPreemptibilityOfTheFirstMemberThatSaysIt) {
  json marked = PodGroupLabel("train");
  marked["kai.scheduler/preemptibility"] = "non-preemptible";
  std::vector<PodInfo> pods = {Pod("p0", PodGroupLabel("train")), Pod("p1", marked)};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 2));
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.non_preemptible, true);
  // Said as an annotation, the Tessera key: preemptible whatever its class says.
  pods = {Pod("p0", PodGroupLabel("train"), {{"tessera.dev/preemptibility", "preemptible"}}),
          Pod("p1", PodGroupLabel("train"))};
  a = AssembleGang(GangOf(pods), WithPodGroup("train", 2));
  EXPECT_EQ(a.workload.non_preemptible, false);
  pods = {Pod("p0", PodGroupLabel("train")), Pod("p1", PodGroupLabel("train"))};
  a = AssembleGang(GangOf(pods), WithPodGroup("train", 2));
  EXPECT_FALSE(a.workload.non_preemptible);
  // A value that is neither, or two keys that disagree: not used, and said on the pod.
  PodInfo bad = Pod("p0", PodGroupLabel("train"), {{"kai.scheduler/preemptibility", "never"}});
  EXPECT_FALSE(bad.non_preemptible);
  ASSERT_FALSE(bad.time_problems.empty());
  EXPECT_EQ(bad.time_problems.back(),
            "metadata.annotations.kai.scheduler/preemptibility: expected \"preemptible\" or "
            "\"non-preemptible\", got \"never\"");
  json both = PodGroupLabel("train");
  both["kai.scheduler/preemptibility"] = "non-preemptible";
  PodInfo split = Pod("p0", both, {{"tessera.dev/preemptibility", "preemptible"}});
  EXPECT_FALSE(split.non_preemptible);
  EXPECT_NE(split.time_problems.back().find("says otherwise"), std::string::npos);
}

TEST(AssembleGang, WaitsForAPodGroupThatDoesNotExist) {
  std::vector<PodInfo> pods = {Pod("p0", PodGroupLabel("train"))};
  GangAssembly a = AssembleGang(GangOf(pods), GangSources{});
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason,
            "waiting for PodGroup d/train (pods carry its label scheduling.x-k8s.io/pod-group)");
}

TEST(AssembleGang, PodsOfAGangThatAreAlreadyBoundAreRestoredEvenBelowTheMinimum) {
  // A restart finds 2 of a gang of 4 bound (the others were deleted): the 2 hold what they hold.
  std::vector<PodInfo> pods = {Pod("p0", PodGroupLabel("train")),
                               Pod("p1", PodGroupLabel("train"))};
  GangAssembly a = AssembleGang(GangOf(pods, {"p1"}), WithPodGroup("train", 4));
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.bound, 1u);
  EXPECT_EQ(a.workload.min_count, 2);  // no more than the pods it has
}

TEST(AssembleGang, PodsThatDifferAreOnePodSetEach) {
  std::vector<PodInfo> pods = {Pod("p0", PodGroupLabel("mixed"), json::object(), 1),
                               Pod("p1", PodGroupLabel("mixed"), json::object(), 2)};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("mixed", 2));
  ASSERT_TRUE(a.complete);
  ASSERT_EQ(a.workload.pod_sets.size(), 2u);
  EXPECT_EQ(a.workload.pod_sets[0].requests[kGpu], 1);
  EXPECT_EQ(a.workload.pod_sets[1].requests[kGpu], 2);
  EXPECT_EQ(a.sets, (std::vector<std::vector<std::string>>{{"d/p0"}, {"d/p1"}}));
  EXPECT_EQ(a.workload.min_count, 2);
}

TEST(AssembleGang, KueuePodGroupMembersMustAgreeOnTheSize) {
  auto member = [](const std::string& name, const std::string& total) {
    return Pod(name, {{kKueuePodGroupLabel, "g"}}, {{kKueuePodGroupTotalAnnotation, total}});
  };
  std::vector<PodInfo> agree = {member("a", "2"), member("b", "2")};
  GangAssembly a = AssembleGang(GangOf(agree), GangSources{});
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.kind, "KueuePodGroup");
  EXPECT_EQ(a.workload.min_count, 2);

  std::vector<PodInfo> disagree = {member("a", "2"), member("b", "3")};
  GangAssembly b = AssembleGang(GangOf(disagree), GangSources{});
  EXPECT_FALSE(b.complete);
  EXPECT_EQ(b.wait_reason,
            "the pods of Kueue pod group d/g disagree on kueue.x-k8s.io/pod-group-total-count: "
            "d/a says 2, d/b says 3");
}

TEST(AssembleGang, JobSizesTheGangAndGivesItsQueueWhenThePodsNameNone) {
  json owner = {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "train"}, {"uid", "j"}}};
  std::vector<PodInfo> pods;
  for (const char* n : {"t-0", "t-1"}) {
    PodInfo p = Pod(n, json::object());
    p.group_kind = "Job";  // as ParsePod reads the Job owner reference
    p.group_name = "train";
    pods.push_back(p);
  }
  GangSources s;
  JobInfo job;
  job.ns = "d";
  job.name = "train";
  job.parallelism = 3;
  job.queue_name = "team-a";
  job.workload_priority_class = "high";
  s.jobs["d/train"] = job;
  EXPECT_FALSE(AssembleGang(GangOf(pods), s).complete);  // parallelism 3, 2 pods
  job.parallelism = 2;
  s.jobs["d/train"] = job;
  GangAssembly a = AssembleGang(GangOf(pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.queue_name, "team-a");
  EXPECT_EQ(a.workload.workload_priority_class, "high");
  EXPECT_EQ(a.workload.min_count, 2);

  // Pods that reach serve before their Job wait for it (the Job sizes the gang); once one of
  // them is bound (a restart), the pods that are here are the gang as before.
  GangSources early;
  GangAssembly waits = AssembleGang(GangOf(pods), early);
  EXPECT_FALSE(waits.complete);
  EXPECT_EQ(waits.wait_reason, "waiting for Job d/train, which has not reached the scheduler yet");
  EXPECT_TRUE(AssembleGang(GangOf(pods, {"t-0"}), early).complete);
}

TEST(AssembleGang, VolcanoDefaultQueueCountsOnlyWhenThatLocalQueueExists) {
  std::vector<PodInfo> pods = {Pod("v0", json::object(), {{kVolcanoGroupAnnotation, "vg"}})};
  ASSERT_EQ(pods[0].group_kind, "Volcano");
  GangSources s;
  s.volcano_served = true;
  GangAssembly missing = AssembleGang(GangOf(pods), s);
  EXPECT_FALSE(missing.complete);
  EXPECT_NE(missing.wait_reason.find("waiting for Volcano PodGroup d/vg"), std::string::npos);

  VolcanoPodGroupInfo vg;
  vg.ns = "d";
  vg.name = "vg";
  vg.min_member = 1;
  vg.queue = "default";
  vg.priority_class = "urgent";
  s.volcano_groups["d/vg"] = vg;
  GangAssembly a = AssembleGang(GangOf(pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.queue_name, "");  // Volcano's webhook default says nothing
  EXPECT_EQ(a.workload.priority_class, "urgent");
  s.local_queues.insert("d/default");
  EXPECT_EQ(AssembleGang(GangOf(pods), s).workload.queue_name, "default");
}

TEST(AssembleGang, VolcanoNotInstalledMeansThePodsPresentAreTheGang) {
  std::vector<PodInfo> pods = {Pod("v0", json::object(), {{kVolcanoGroupAnnotation, "vg"}}),
                               Pod("v1", json::object(), {{kVolcanoGroupAnnotation, "vg"}})};
  GangAssembly a = AssembleGang(GangOf(pods), GangSources{});  // volcano_served: false
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.min_count, 2);
}

TEST(AssembleGang, ForeignPodTakesCapacityAsAPodOfItsOwn) {
  // Another scheduler's bound pod of a PodGroup: the controller makes it a group of its own.
  std::vector<PodInfo> pods = {Pod("other", PodGroupLabel("their-group"))};
  pods[0].group_kind = "Foreign";
  pods[0].group_name = "other";
  Gang g = GangOf(pods, {"other"});
  g.foreign = true;
  GangAssembly a = AssembleGang(g, GangSources{});
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.kind, "Pod");
  EXPECT_EQ(a.workload.queue_name, "");
  EXPECT_EQ(a.workload.min_count, 1);
}

}  // namespace
}  // namespace tessera::k8s

namespace tessera::k8s {
namespace {

// The gang's fields of time: its group object's, else its first pod's (by pod key) that has
// one, field by field; the active deadline is the smallest of all.
TEST(AssembleGang, TimeFromTheGroupObjectElseTheFirstPodDeadlinesTheSmallest) {
  std::vector<PodInfo> pods = {
      Pod("p1", PodGroupLabel("train"),
          {{kRuntimeEstimateAnnotation, "2h"}, {kCheckpointIntervalAnnotation, "10m"}}),
      Pod("p0", PodGroupLabel("train"), {{kRuntimeEstimateAnnotation, "1h"}}),
      Pod("p2", PodGroupLabel("train"), {{kMaxWaitAnnotation, "5m"}})};
  pods[2].time.active_deadline = 7200;  // as spec.activeDeadlineSeconds would
  GangSources s = WithPodGroup("train", 3);
  GangAssembly a = AssembleGang(GangOf(pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.runtime_estimate, 3600);  // p0 comes first
  EXPECT_EQ(a.workload.checkpoint_interval, 600);
  EXPECT_EQ(a.workload.max_wait, 300);
  EXPECT_EQ(a.workload.active_deadline, 7200);
  EXPECT_FALSE(a.workload.min_runtime);

  // The PodGroup's own values win; its deadline is one more candidate for the smallest.
  s.podgroups["d/train"].time.runtime_estimate = 60;
  s.podgroups["d/train"].time.max_wait = 0;
  s.podgroups["d/train"].time.active_deadline = 9000;
  a = AssembleGang(GangOf(pods), s);
  EXPECT_EQ(a.workload.runtime_estimate, 60);
  EXPECT_EQ(a.workload.max_wait, 0);
  EXPECT_EQ(a.workload.active_deadline, 7200);
  s.podgroups["d/train"].time.active_deadline = 100;
  EXPECT_EQ(AssembleGang(GangOf(pods), s).workload.active_deadline, 100);
}

TEST(AssembleGang, JobDeadlineAndVolcanoSlaReachTheWorkload) {
  std::vector<PodInfo> job_pods = {Pod("t-0", json::object())};
  job_pods[0].group_kind = "Job";
  job_pods[0].group_name = "train";
  job_pods[0].time.active_deadline = 3600;
  GangSources s;
  JobInfo job;
  job.ns = "d";
  job.name = "train";
  job.time.active_deadline = 1800;  // spec.activeDeadlineSeconds of the Job
  s.jobs["d/train"] = job;
  GangAssembly a = AssembleGang(GangOf(job_pods), s);
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.workload.active_deadline, 1800);
  EXPECT_FALSE(a.workload.runtime_estimate);  // a deadline is not an estimate (the engine's call)

  std::vector<PodInfo> vpods = {
      Pod("v0", json::object(), {{kVolcanoGroupAnnotation, "vg"}, {kMaxWaitAnnotation, "1h"}})};
  VolcanoPodGroupInfo vg;
  vg.ns = "d";
  vg.name = "vg";
  vg.time.max_wait = 1800;  // its sla-waiting-time
  s.volcano_served = true;
  s.volcano_groups["d/vg"] = vg;
  EXPECT_EQ(AssembleGang(GangOf(vpods), s).workload.max_wait, 1800);
  s.volcano_groups["d/vg"].time = {};
  EXPECT_EQ(AssembleGang(GangOf(vpods), s).workload.max_wait, 3600);
}

// Scheduling gates (spec.schedulingGates): a gated pod is not yet a member of its gang, so a gang
// that needs it waits whole and says which gates hold it; once the gates go, it is complete.

TEST(GangGates, AGangWithAGatedMemberItNeedsWaitsAndNamesTheGate) {
  std::vector<PodInfo> pods = {GatedPod("p0", "train"), GatedPod("p1", "train"),
                               GatedPod("p2", "train"),
                               GatedPod("p3", "train", {"example.com/data-ready"})};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 4));
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason,
            "waiting for the gang's pods: 3 of 4 exist without gates; held by scheduling gates: "
            "d/p3 (example.com/data-ready)");
  EXPECT_EQ(a.gated, std::vector<std::string>{"d/p3"});
  EXPECT_EQ(GatedMessage(pods[3]), "held by scheduling gates: example.com/data-ready");
}

TEST(GangGates, OnceTheGateGoesTheGangIsComplete) {
  std::vector<PodInfo> pods = {GatedPod("p0", "train"), GatedPod("p1", "train"),
                               GatedPod("p2", "train"), GatedPod("p3", "train")};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 4));
  ASSERT_TRUE(a.complete);
  EXPECT_TRUE(a.gated.empty());
  EXPECT_EQ(a.workload.min_count, 4);
  EXPECT_EQ(a.workload.pod_sets.at(0).count, 4);
}

TEST(GangGates, GatedPodsBeyondTheMinimumAreLeftOutOfTheWorkload) {
  std::vector<PodInfo> pods = {GatedPod("p0", "train"), GatedPod("p1", "train"),
                               GatedPod("p2", "train", {"a", "b"})};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 2));
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.gated, std::vector<std::string>{"d/p2"});
  ASSERT_EQ(a.sets.size(), 1u);
  EXPECT_EQ(a.sets[0], (std::vector<std::string>{"d/p0", "d/p1"}));  // p2 is never bound
  EXPECT_EQ(a.workload.pod_sets[0].count, 2);
}

TEST(GangGates, ALoneGatedPodWaitsForItsGates) {
  std::vector<PodInfo> pods = {GatedPod("solo", "", {"example.com/a", "example.com/b"})};
  GangAssembly a = AssembleGang(GangOf(pods), GangSources{});
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason, "held by scheduling gates: d/solo (example.com/a, example.com/b)");
}

TEST(GangGates, AGatedPodJoinsABoundGangOnlyOnceUngated) {
  std::vector<PodInfo> pods = {GatedPod("p0", "train"), GatedPod("p1", "train"),
                               GatedPod("p2", "train", {"g"})};
  GangAssembly a = AssembleGang(GangOf(pods, {"p0", "p1"}), WithPodGroup("train", 2));
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.bound, 2u);
  EXPECT_EQ(a.sets.at(0).size(), 2u);
  pods[2].scheduling_gates.clear();
  GangAssembly b = AssembleGang(GangOf(pods, {"p0", "p1"}), WithPodGroup("train", 2));
  EXPECT_EQ(b.sets.at(0).size(), 3u);
}

}  // namespace
}  // namespace tessera::k8s
