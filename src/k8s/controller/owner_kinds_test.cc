// The job kinds whose controllers create the pods, as Kubernetes mode reads them: an object read
// through its plugin into gangs, a pod linked to its object by the controller's labels, and the
// gang sized by the object rather than by the pods seen so far.
#include "k8s/controller/owner_kinds.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "k8s/controller/gang_assembly.h"

namespace tessera::k8s {
namespace {

// A PyTorchJob as the API server sends it: a Master and `workers` Workers of one GPU each.
json PyTorchJob(const std::string& name, int workers, const json& labels = json::object()) {
  json tmpl = {{"spec",
                {{"containers",
                  {{{"name", "pytorch"},
                    {"image", "x"},
                    {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", name},
            {"namespace", "d"},
            {"uid", "uid-" + name},
            {"labels", labels},
            {"managedFields", json::array({{{"manager", "kubectl"}}})}}},
          {"spec",
           {{"pytorchReplicaSpecs",
             {{"Master", {{"replicas", 1}, {"template", tmpl}}},
              {"Worker", {{"replicas", workers}, {"template", tmpl}}}}}}},
          {"status", {{"conditions", json::array()}}}};
}

// A pending pod the training-operator made for PyTorchJob `job`.
PodInfo OperatorPod(const std::string& name, const std::string& job,
                    const std::string& operator_name = "pytorchjob-controller") {
  json res = {{"nvidia.com/gpu", "1"}};
  json obj = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "d"},
                {"uid", "uid-" + name},
                {"labels",
                 {{"training.kubeflow.org/job-name", job},
                  {"training.kubeflow.org/operator-name", operator_name}}}}},
              {"spec",
               {{"schedulerName", "tessera"},
                {"containers", {{{"name", "c"}, {"resources", {{"limits", res}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
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

TEST(OwnerKinds, TheTrainingOperatorsKindsAreWatchedInEveryVersionTheirPluginsKnow) {
  const OwnerKind* k = OwnerKindNamed("PyTorchJob");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->api_version, "kubeflow.org/v1");
  ASSERT_FALSE(k->paths.empty());
  EXPECT_EQ(k->paths.front(), "/apis/kubeflow.org/v1/pytorchjobs");
  EXPECT_EQ(OwnerKindOfResource(k->resource), k);
  EXPECT_EQ(OwnerKindNamed("Pod"), nullptr);  // linked otherwise
}

TEST(OwnerKinds, AnObjectIsReadThroughItsPluginIntoOneGangWithItsQueue) {
  auto gangs = ReadOwnerObject(*OwnerKindNamed("PyTorchJob"),
                               PyTorchJob("train", 3, {{"kueue.x-k8s.io/queue-name", "team-a"}}));
  ASSERT_TRUE(gangs.ok()) << gangs.status();
  ASSERT_EQ(gangs->size(), 1u);
  const OwnerGang& g = gangs->front();
  EXPECT_EQ(g.ns, "d");
  EXPECT_EQ(g.name, "train");
  EXPECT_EQ(g.kind, "PyTorchJob");
  EXPECT_EQ(g.api_version, "kubeflow.org/v1");
  EXPECT_EQ(g.uid, "uid-train");
  EXPECT_EQ(g.pods, 4);
  EXPECT_EQ(g.min_member, 4);
  EXPECT_EQ(g.queue_name, "team-a");
}

TEST(OwnerKinds, AnObjectThePluginRefusesSaysWhereItIsWrong) {
  json bad = PyTorchJob("train", 3);
  bad["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = -2;
  auto gangs = ReadOwnerObject(*OwnerKindNamed("PyTorchJob"), bad);
  ASSERT_FALSE(gangs.ok());
  EXPECT_NE(std::string(gangs.status().message()).find("spec.pytorchReplicaSpecs.Worker.replicas"),
            std::string::npos)
      << gangs.status();
}

TEST(OwnerKinds, APodJoinsTheGangOfTheKindWhoseLabelsItCarries) {
  std::string kind, name;
  ASSERT_TRUE(LinkPodToOwner({{"training.kubeflow.org/job-name", "a"},
                              {"training.kubeflow.org/operator-name", "tfjob-controller"}},
                             json(), &kind, &name));
  EXPECT_EQ(kind, "TFJob");
  EXPECT_EQ(name, "a");
  // The name label alone is not enough where two operators share it.
  EXPECT_FALSE(LinkPodToOwner({{"training.kubeflow.org/job-name", "a"}}, json(), &kind, &name));
  EXPECT_FALSE(LinkPodToOwner({{"app", "a"}}, json(), &kind, &name));
  PodInfo p = OperatorPod("train-worker-0", "train");
  EXPECT_EQ(p.GroupKey(), "PyTorchJob:d/train");
}

TEST(OwnerKinds, TheGangIsAsBigAsItsObjectSaysNotAsThePodsSeenSoFar) {
  std::vector<PodInfo> two = {OperatorPod("train-master-0", "train"),
                              OperatorPod("train-worker-0", "train")};
  GangSources sources;
  sources.owner_kinds_served.insert("PyTorchJob");
  // The object is not known yet: its pods wait for it.
  GangAssembly a = AssembleGang(GangOf(two), sources);
  EXPECT_FALSE(a.complete);
  EXPECT_NE(a.wait_reason.find("waiting for PyTorchJob d/train"), std::string::npos)
      << a.wait_reason;
  // Known, of four pods: two are not enough.
  auto gangs = ReadOwnerObject(*OwnerKindNamed("PyTorchJob"),
                               PyTorchJob("train", 3, {{"kueue.x-k8s.io/queue-name", "team-a"}}));
  ASSERT_TRUE(gangs.ok());
  sources.owner_gangs["PyTorchJob:d/train"] = gangs->front();
  a = AssembleGang(GangOf(two), sources);
  EXPECT_FALSE(a.complete);
  // All four: one workload, queued as the object says (the pods name no queue).
  std::vector<PodInfo> four = two;
  four.push_back(OperatorPod("train-worker-1", "train"));
  four.push_back(OperatorPod("train-worker-2", "train"));
  a = AssembleGang(GangOf(four), sources);
  ASSERT_TRUE(a.complete) << a.wait_reason;
  EXPECT_EQ(a.workload.TotalPods(), 4);
  EXPECT_EQ(a.workload.queue_name, "team-a");
  // Refused: its pods say why.
  sources.owner_gangs.clear();
  sources.refused["PyTorchJob:d/train"] = "spec.x: bad";
  a = AssembleGang(GangOf(two), sources);
  EXPECT_NE(a.wait_reason.find("which is not used: spec.x: bad"), std::string::npos)
      << a.wait_reason;
  // The kind is not served at all: the pods present are the gang.
  sources.refused.clear();
  sources.owner_kinds_served.clear();
  a = AssembleGang(GangOf(two), sources);
  EXPECT_TRUE(a.complete) << a.wait_reason;
}

}  // namespace
}  // namespace tessera::k8s
