// Tessera's Kubernetes mode against a real kube-apiserver and etcd on 127.0.0.1 (no mock), part 1:
// gangs, queues, preemption, restarts (part 2: integration_serve_test.cc). Every
// test starts its own control plane (scripts/k8s/cluster.sh), creates fake nodes, runs the
// controller in-process and checks what the API server ends up holding. Skipped, with the
// reason printed, only when the API server has not been built.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/informer.h"
#include "k8s/client/leader_election.h"
#include "k8s/client/proto.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/objects.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/metrics.h"
#include "tests/k8s/test_cluster.h"
#include "tests/k8s/workload_api.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;
using testing_queues::ReadRepoFile;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

using testing_queues::CreateFillers;
using testing_queues::K8sIntegration;  // one class for both files' tests

TEST_F(K8sIntegration, GangBindsNoneUntilItFitsThenAll) {
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);
  Controller* tessera = StartTessera();
  MetricsServer server(
      metrics_list_.back().get(), [] { return true; }, [tessera] { return tessera->synced(); });
  int port = server.Start("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  CreatePodGroup("default", "train", 8, 1);

  // 6 GPUs are free: the gang waits whole, and each pod says why.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        int told = 0;
        for (const auto& p : cluster_->Pods("default")) {
          if (p["metadata"]["name"].get<std::string>().rfind("train-", 0) != 0) continue;
          for (const auto& c : p["status"].value("conditions", json::array()))
            if (c["type"] == "PodScheduled" && c["status"] == "False" &&
                c["reason"] == "Unschedulable" && !c.value("message", "").empty())
              ++told;
        }
        return told == 8;
      },
      kTimeout))
      << "pods did not get PodScheduled=False";
  EXPECT_EQ(Bound("default", "train-"), 0);
  json pod0 = cluster_->Get("/api/v1/namespaces/default/pods/train-0");
  std::string message;
  for (const auto& c : pod0["status"]["conditions"])
    if (c["type"] == "PodScheduled") message = c["message"];
  std::cout << "[ tessera ] pending gang says: " << message << "\n";
  json events = cluster_->Get(
      "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dtrain-0");
  bool failed_scheduling = false;
  for (const auto& e : events["items"]) failed_scheduling |= e["reason"] == "FailedScheduling";
  EXPECT_TRUE(failed_scheduling);

  // Two GPUs free up: all 8 bind.
  cluster_->DeletePod("default", "filler-0");
  cluster_->DeletePod("default", "filler-1");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 8; }, kTimeout));
  ExpectNoDoubleBooking({"default"}, 8);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json pg =
            cluster_->Get("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/train");
        return pg.value("/status/phase"_json_pointer, std::string()) == "Scheduled" &&
               pg.value("/status/scheduled"_json_pointer, 0) == 8;
      },
      kTimeout))
      << "PodGroup status not written";

  KubeConfig plain;
  plain.server = fmt::format("http://127.0.0.1:{}", port);
  KubeClient http(plain);
  auto m = http.Get("/metrics");
  ASSERT_TRUE(m.ok());
  EXPECT_NE(m->body.find("tessera_binds_total{result=\"ok\"} 8"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("tessera_events_total{result=\"dropped\"} 0"), std::string::npos)
      << m->body;
  auto ready = http.Get("/readyz");
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->status, 200);
}

TEST_F(K8sIntegration, KubeSchedulerBindsPartOfTheGang) {
  const std::string bin = TestCluster::KubeSchedulerPath();
  if (bin.empty())
    GTEST_SKIP() << "SKIPPED: kube-scheduler is not built (scripts/k8s/build-apiserver.sh); "
                    "it is only the comparison";
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);
  // The same gang for kube-scheduler: a scheduler-plugins PodGroup means nothing to it.
  cluster_->Create(testing_queues::PodGroupObject("default", "train", 8));
  for (int i = 0; i < 8; ++i) {
    json pod = cluster_->PodSpec("default", fmt::format("train-{}", i), 1, "default-scheduler",
                                 {{"scheduling.x-k8s.io/pod-group", "train"}});
    cluster_->Create(pod);
  }
  int pid = TestCluster::Spawn({bin, "--kubeconfig=" + cluster_->kubeconfig_path(),
                                "--leader-elect=false", "--secure-port=0", "--v=0"},
                               cluster_->dir() + "/kube-scheduler.log");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") >= 6; }, kTimeout));
  // Give it every chance to do something else: it will not, the other two pods cannot fit.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int bound = Bound("default", "train-");
  std::cout << "[ kube-scheduler ] bound " << bound
            << " of the 8-pod gang: those GPUs are held by a job that cannot start\n";
  EXPECT_EQ(bound, 6);
  TestCluster::Kill(pid);
}

// kube-scheduler 1.37 has gangs of its own: the Workload API (beta, feature GenericWorkload),
// whose gate also puts its GangScheduling plugin in the default profile. The same gang as above
// as a Workload and its PodGroup binds none while it does not fit, then all 8 together.
TEST_F(K8sIntegration, KubeSchedulerWorkloadGangIsAllOrNothing) {
  const std::string bin = TestCluster::KubeSchedulerPath();
  if (bin.empty())
    GTEST_SKIP() << "SKIPPED: kube-scheduler is not built (scripts/k8s/build-apiserver.sh); "
                    "it is only the comparison";
  if (!testing::ServesWorkloadApi(*cluster_))
    GTEST_SKIP() << "SKIPPED: this server does not serve the Workload API (1.37 and "
                    "GenericWorkload=true)";
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);  // 6 GPUs free
  cluster_->Create(testing::WorkloadObject("default", "train", 8));
  cluster_->Create(testing::WorkloadPodGroupObject("default", "train", 8));
  for (int i = 0; i < 8; ++i) {
    json pod = cluster_->PodSpec("default", fmt::format("train-{}", i), 1, "default-scheduler");
    testing::JoinWorkloadPodGroup(pod, "train");
    cluster_->Create(pod);
  }
  int pid = TestCluster::Spawn({bin, "--kubeconfig=" + cluster_->kubeconfig_path(),
                                "--leader-elect=false", "--secure-port=0", "--v=2",
                                "--feature-gates=" + cluster_->FeatureGates()},
                               cluster_->dir() + "/kube-scheduler.log");
  ASSERT_GT(pid, 0);
  const std::string group = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/train";
  // Its verdict on the whole group is a condition of the PodGroup.
  auto scheduled = [&](const std::string& status) {
    for (const auto& c : cluster_->Get(group)["status"].value("conditions", json::array()))
      if (c.value("type", "") == "PodGroupInitiallyScheduled" && c.value("status", "") == status)
        return true;
    return false;
  };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return scheduled("False"); }, kTimeout));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(Bound("default", "train-"), 0) << "6 GPUs free: the gang of 8 binds none";
  cluster_->DeletePod("default", "filler-0");
  cluster_->DeletePod("default", "filler-1");
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 8; }, kTimeout));
  EXPECT_TRUE(TestCluster::WaitFor([&] { return scheduled("True"); }, kTimeout));
  TestCluster::Kill(pid);
}

json ClusterQueue(const std::string& name, int gpus, const json& preemption) {
  return {{"apiVersion", "tessera.dev/v1alpha1"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"cohort", "org"},
            {"namespaceSelector", json::object()},
            {"preemption", preemption},
            {"resourceGroups",
             {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
               {"flavors",
                {{{"name", "default"},
                  {"resources",
                   {{{"name", "cpu"}, {"nominalQuota", 64}},
                    {{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}}}}}}}}}}}};
}

json LocalQueue(const std::string& ns, const std::string& cq) {
  return {{"apiVersion", "tessera.dev/v1alpha1"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", "lq"}, {"namespace", ns}}},
          {"spec", {{"clusterQueue", cq}}}};
}

json Flavor(const std::string& name) {
  return {{"apiVersion", "tessera.dev/v1alpha1"},
          {"kind", "ResourceFlavor"},
          {"metadata", {{"name", name}}},
          {"spec", json::object()}};
}

TEST_F(K8sIntegration, BorrowingThenReclaim) {
  cluster_->CreateNodes(2, 8, "gpu");
  cluster_->CreateNamespace("team-a");
  cluster_->CreateNamespace("team-b");
  cluster_->Create(Flavor("default"));
  cluster_->Create(ClusterQueue("team-a", 8, {{"reclaimWithinCohort", "Any"}}));
  cluster_->Create(ClusterQueue("team-b", 8, {{"reclaimWithinCohort", "Any"}}));
  cluster_->Create(LocalQueue("team-a", "team-a"));
  cluster_->Create(LocalQueue("team-b", "team-b"));
  StartTessera();
  json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  CreatePodGroup("team-a", "a1", 8, 1, queue);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a1-") == 8; }, kTimeout));
  // team-b's quota is idle: team-a borrows it.
  CreatePodGroup("team-a", "a2", 8, 1, queue);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-a", "a2-") == 8; }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json cq = cluster_->Get("/apis/tessera.dev/v1alpha1/clusterqueues/team-a");
        return cq.value("/status/admittedWorkloads"_json_pointer, 0) == 2;
      },
      kTimeout))
      << "ClusterQueue status not written";
  // team-b wants its quota back: the borrowing workload (a2, whole) is evicted.
  CreatePodGroup("team-b", "b1", 8, 1, queue);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("team-b", "b1-") == 8; }, kTimeout));
  EXPECT_EQ(Bound("team-a", "a1-"), 8);
  EXPECT_EQ(CountWithPrefix("team-a", "a2-"), 0) << "the borrower's pods were evicted";
  ExpectNoDoubleBooking({"team-a", "team-b"}, 8);
  EXPECT_EQ(metrics_list_.back()->preemptions.load(), 1);
}

TEST_F(K8sIntegration, PriorityPreemptionThroughEvictions) {
  cluster_->CreateNodes(1, 8, "gpu");
  for (auto [name, value] : {std::pair{"low", 100}, std::pair{"high", 1000}})
    cluster_->Create({{"apiVersion", "scheduling.k8s.io/v1"},
                      {"kind", "PriorityClass"},
                      {"metadata", {{"name", name}}},
                      {"value", value}});
  cluster_->Create(Flavor("default"));
  cluster_->Create(ClusterQueue("main", 8, {{"withinClusterQueue", "LowerPriority"}}));
  cluster_->Create(LocalQueue("default", "main"));
  StartTessera();
  json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  CreatePodGroup("default", "low", 8, 1, queue, "low");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "low-") == 8; }, kTimeout));
  CreatePodGroup("default", "high", 4, 1, queue, "high");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "high-") == 4; }, kTimeout));
  // The victim is the whole low gang, not just the four pods that were in the way.
  EXPECT_EQ(CountWithPrefix("default", "low-"), 0);
  ExpectNoDoubleBooking({"default"}, 8);
  json events =
      cluster_->Get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dlow-0");
  bool preempted = false;
  for (const auto& e : events["items"]) preempted |= e["reason"] == "Preempted";
  EXPECT_TRUE(preempted);
  EXPECT_GE(metrics_list_.back()->evictions_ok.load(), 8);
}

TEST_F(K8sIntegration, KueueUsersQueuesWithOnlyTheApiVersionChanged) {
  // deploy/examples/kueue-queues-and-job.yaml is ../shared/manifests/field/
  // kueue-queues-and-job.yaml with kueue.x-k8s.io/v1beta1 replaced by tessera.dev/v1alpha1.
  const std::string text = ReadRepoFile("deploy/examples/kueue-queues-and-job.yaml");
  ASSERT_FALSE(text.empty());
  json a100 = {{"accelerator", "nvidia-a100-80gb"}};
  json taint = {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}};
  cluster_->CreateNodes(2, 8, "a100", a100, taint);
  cluster_->CreateNamespace("team-a");
  cluster_->Create({{"apiVersion", "tessera.dev/v1alpha1"},
                    {"kind", "WorkloadPriorityClass"},
                    {"metadata", {{"name", "high-priority"}}},
                    {"value", 1000}});
  json job;
  for (auto& obj : testing::YamlToJson(text)) {
    json created = cluster_->Create(obj);
    if (obj["kind"] == "Job") job = created;
  }
  ASSERT_TRUE(job.is_object());
  StartTessera();
  // No Job controller runs here: make its two pods as the Job controller would, Tessera's.
  json tmpl = job["spec"]["template"];
  for (int i = 0; i < 2; ++i) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", fmt::format("llama-finetune-v3-{}", i)},
                  {"namespace", "team-a"},
                  {"ownerReferences",
                   {{{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"name", "llama-finetune-v3"},
                     {"uid", job["metadata"]["uid"]},
                     {"controller", true}}}}}},
                {"spec", tmpl["spec"]}};
    pod["spec"]["schedulerName"] = "tessera";
    pod["spec"]["terminationGracePeriodSeconds"] = 0;
    cluster_->Create(pod);
  }
  // As in Kueue, a ClusterQueue without namespaceSelector admits no namespace: say so.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json p = cluster_->Get("/api/v1/namespaces/team-a/pods/llama-finetune-v3-0");
        for (const auto& c : p["status"].value("conditions", json::array()))
          if (c["type"] == "PodScheduled" &&
              c.value("message", "").find("namespaceSelector") != std::string::npos)
            return true;
        return false;
      },
      kTimeout));
  auto r = cluster_->client().Patch("/apis/tessera.dev/v1alpha1/clusterqueues/ml-training-cluster",
                                    R"({"spec":{"namespaceSelector":{}}})");
  ASSERT_TRUE(r.ok() && r->status == 200);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return Bound("team-a", "llama-finetune-v3-") == 2; }, kTimeout));
  ExpectNoDoubleBooking({"team-a"}, 8);
}

TEST_F(K8sIntegration, ApiServerRestartLosesNothingAndDoubleBindsNothing) {
  cluster_->CreateNodes(4, 8, "gpu");
  Controller* tessera = StartTessera();
  for (int i = 0; i < 12; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("p-{}", i), 1));
  // Down while binds are in flight, then up again on the same etcd.
  ASSERT_TRUE(cluster_->StopApiServer());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(cluster_->StartApiServer());
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "p-") == 12; }, kTimeout));
  for (int i = 12; i < 24; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("p-{}", i), 1));
  CreatePodGroup("default", "g", 8, 1);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return Bound("default", "p-") == 24 && Bound("default", "g-") == 8; }, kTimeout));
  ExpectNoDoubleBooking({"default"}, 8);
  // Tessera made the binds: every one it saw succeed, plus any whose answer was lost while the
  // server went down (such a bind may have landed; the pod then shows up bound, once). The
  // snapshot is refreshed a little after the last bind, hence the wait.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] {
        return tessera->snapshot().pods_bound + metrics_list_.back()->binds_error.load() >= 32;
      },
      10))
      << tessera->snapshot().pods_bound << " binds succeeded, "
      << metrics_list_.back()->binds_error.load() << " failed";
}

TEST_F(K8sIntegration, SchedulerRestartRebuildsFromTheServer) {
  cluster_->CreateNodes(2, 8, "gpu");
  // The first instance reads JSON (--json-only), the second protobuf: either learns the same.
  ControllerOptions json_only;
  json_only.protobuf = false;
  StartTessera(json_only);
  CreatePodGroup("default", "g", 4, 1);
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("a-{}", i), 1));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 8; }, kTimeout));
  controllers_.back()->Stop();
  for (int i = 0; i < 8; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("b-{}", i), 1));
  // A new instance: it learns the 8 bound pods (and their GPU indices) from the server.
  Controller* second = StartTessera();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 16; }, kTimeout));
  EXPECT_EQ(second->snapshot().pods_bound, 8);
  EXPECT_EQ(metrics_list_.back()->binds_conflict.load(), 0);
  ExpectNoDoubleBooking({"default"}, 8);
}

// Dynamic MIG: the first slice of each instance goes with the bind (tessera.dev/mig-starts), so
// that the node side can create it there and a restarted Tessera knows which slices are taken.
TEST_F(K8sIntegration, DynamicMigSlicesSurviveASchedulerRestart) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", "a100-0"},
                 {"labels",
                  {{"kubernetes.io/hostname", "a100-0"},
                   {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                   {"nvidia.com/gpu.memory", "40960"}}},
                 {"annotations", {{"tessera.dev/mig", "dynamic"}}}}}};
  cluster_->Create(node);
  json cap = {{"cpu", "96"}, {"memory", "1024Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "1"}};
  json status = {{"status", {{"capacity", cap}, {"allocatable", cap}}}};
  auto r = cluster_->client().Patch("/api/v1/nodes/a100-0/status", status.dump());
  ASSERT_TRUE(r.ok() && r->status == 200);
  auto mig_pod = [&](const std::string& name) {
    json pod = cluster_->PodSpec("default", name, 0);
    for (const char* k : {"requests", "limits"})
      pod["spec"]["containers"][0]["resources"][k]["nvidia.com/mig-3g.20gb"] = "1";
    return pod;
  };
  auto annotation = [&](const std::string& pod, const char* key) {
    json p = cluster_->Get("/api/v1/namespaces/default/pods/" + pod);
    return p["metadata"].value("annotations", json::object()).value(key, "");
  };
  StartTessera();
  cluster_->Create(mig_pod("mig-a"));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 1; }, kTimeout));
  EXPECT_EQ(annotation("mig-a", "tessera.dev/gpu-indices"), "0");
  const std::string first = annotation("mig-a", "tessera.dev/mig-starts");
  controllers_.back()->Stop();
  // A new instance learns the taken slices from the pod, and puts the next 3g.20gb at the other
  // start NVIDIA allows (0 or 4), not on top of the first.
  cluster_->Create(mig_pod("mig-b"));
  StartTessera();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 2; }, kTimeout));
  EXPECT_EQ(annotation("mig-b", "tessera.dev/gpu-indices"), "0");
  EXPECT_EQ((std::set<std::string>{first, annotation("mig-b", "tessera.dev/mig-starts")}),
            (std::set<std::string>{"0", "4"}));
  // The device is full of 3g.20gb now: a third waits.
  cluster_->Create(mig_pod("mig-c"));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "mig-c").empty(); }, kTimeout));
  EXPECT_EQ(cluster_->BoundPods("default"), 2);
}

}  // namespace
}  // namespace tessera::k8s
