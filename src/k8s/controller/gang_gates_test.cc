// Scheduling gates (spec.schedulingGates) in gang assembly: a gated pod is not yet a member of
// its gang, so a gang that needs it waits whole and says which gates hold it; once the gates go,
// the gang is complete.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "k8s/controller/gang_assembly.h"

namespace tessera::k8s {
namespace {

// A pending pod of PodGroup `group` in namespace "d" with one GPU and the given gates.
PodInfo Pod(const std::string& name, const std::string& group,
            const std::vector<std::string>& gates = {}) {
  json gate_list = json::array();
  for (const auto& g : gates) gate_list.push_back({{"name", g}});
  json res = {{"cpu", "1"}, {"nvidia.com/gpu", "1"}};
  json spec = {{"schedulerName", "tessera"},
               {"containers", {{{"name", "main"}, {"resources", {{"requests", res}}}}}}};
  if (!gates.empty()) spec["schedulingGates"] = gate_list;
  json labels = json::object();
  if (!group.empty()) labels[kPodGroupLabel] = group;
  json obj = {{"metadata", {{"name", name}, {"namespace", "d"}, {"labels", labels}}},
              {"spec", spec},
              {"status", {{"phase", "Pending"}}}};
  auto p = ParsePod(obj);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

Gang GangOf(const std::vector<PodInfo>& pods, const std::vector<std::string>& bound = {}) {
  Gang g{pods.front().GroupKey(), pods.front().group_kind, "d", pods.front().group_name, false, {}};
  for (const PodInfo& p : pods)
    g.members.push_back({&p, std::find(bound.begin(), bound.end(), p.name) != bound.end()});
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

TEST(GangGates, AGangWithAGatedMemberItNeedsWaitsAndNamesTheGate) {
  std::vector<PodInfo> pods = {Pod("p0", "train"), Pod("p1", "train"), Pod("p2", "train"),
                               Pod("p3", "train", {"example.com/data-ready"})};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 4));
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason,
            "waiting for the gang's pods: 3 of 4 exist without gates; held by scheduling gates: "
            "d/p3 (example.com/data-ready)");
  EXPECT_EQ(a.gated, std::vector<std::string>{"d/p3"});
  EXPECT_EQ(GatedMessage(pods[3]), "held by scheduling gates: example.com/data-ready");
}

TEST(GangGates, OnceTheGateGoesTheGangIsComplete) {
  std::vector<PodInfo> pods = {Pod("p0", "train"), Pod("p1", "train"), Pod("p2", "train"),
                               Pod("p3", "train")};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 4));
  ASSERT_TRUE(a.complete);
  EXPECT_TRUE(a.gated.empty());
  EXPECT_EQ(a.workload.min_count, 4);
  EXPECT_EQ(a.workload.pod_sets.at(0).count, 4);
}

TEST(GangGates, GatedPodsBeyondTheMinimumAreLeftOutOfTheWorkload) {
  std::vector<PodInfo> pods = {Pod("p0", "train"), Pod("p1", "train"),
                               Pod("p2", "train", {"a", "b"})};
  GangAssembly a = AssembleGang(GangOf(pods), WithPodGroup("train", 2));
  ASSERT_TRUE(a.complete);
  EXPECT_EQ(a.gated, std::vector<std::string>{"d/p2"});
  ASSERT_EQ(a.sets.size(), 1u);
  EXPECT_EQ(a.sets[0], (std::vector<std::string>{"d/p0", "d/p1"}));  // p2 is never bound
  EXPECT_EQ(a.workload.pod_sets[0].count, 2);
}

TEST(GangGates, ALoneGatedPodWaitsForItsGates) {
  std::vector<PodInfo> pods = {Pod("solo", "", {"example.com/a", "example.com/b"})};
  GangAssembly a = AssembleGang(GangOf(pods), GangSources{});
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.wait_reason, "held by scheduling gates: d/solo (example.com/a, example.com/b)");
}

TEST(GangGates, AGatedPodJoinsABoundGangOnlyOnceUngated) {
  std::vector<PodInfo> pods = {Pod("p0", "train"), Pod("p1", "train"),
                               Pod("p2", "train", {"g"})};
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
