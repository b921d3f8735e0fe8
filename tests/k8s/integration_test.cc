// Tessera's Kubernetes mode against a real kube-apiserver and etcd on 127.0.0.1 (no mock): every
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
#include "k8s/controller.h"
#include "k8s/informer.h"
#include "k8s/leader_election.h"
#include "k8s/metrics.h"
#include "k8s/objects.h"
#include "k8s/proto.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

std::string ReadRepoFile(const std::string& rel) {
  std::ifstream in(TestCluster::RepoRoot() + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class K8sIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    bool not_built = false;
    cluster_ = TestCluster::Start(&why, &not_built);
    if (!cluster_) {
      if (not_built) GTEST_SKIP() << "SKIPPED (Kubernetes integration): " << why;
      FAIL() << why;
    }
    cluster_->Apply(ReadRepoFile("deploy/crds/tessera.dev_queues.yaml"));
    cluster_->Apply(ReadRepoFile("deploy/crds/scheduling.x-k8s.io_podgroups.yaml"));
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          for (const char* p : {"/apis/tessera.dev/v1alpha1/clusterqueues",
                                "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"}) {
            auto r = cluster_->client().Get(p);
            if (!r.ok() || r->status != 200) return false;
          }
          return true;
        },
        30))
        << "CRDs not served";
  }

  void TearDown() override {
    controllers_.clear();
    cluster_.reset();
  }

  Controller* StartTessera(ControllerOptions o = {}) {
    auto metrics = std::make_unique<Metrics>();
    o.status_period_s = 0.2;
    auto c = std::make_unique<Controller>(&cluster_->client(), o, metrics.get());
    c->Start();
    metrics_.push_back(std::move(metrics));
    controllers_.push_back(std::move(c));
    return controllers_.back().get();
  }

  json PodGroup(const std::string& ns, const std::string& name, int min_member) {
    return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
            {"kind", "PodGroup"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"minMember", min_member}}}};
  }

  // Creates `n` pods of `gpus` GPUs in pod group `group` (and the PodGroup itself).
  void CreateGang(const std::string& ns, const std::string& group, int n, int gpus,
                  json labels = json::object(), const std::string& priority_class = "") {
    cluster_->Create(PodGroup(ns, group, n));
    labels["scheduling.x-k8s.io/pod-group"] = group;
    for (int i = 0; i < n; ++i) {
      json pod = cluster_->PodSpec(ns, fmt::format("{}-{}", group, i), gpus, "tessera", labels);
      if (!priority_class.empty()) pod["spec"]["priorityClassName"] = priority_class;
      cluster_->Create(pod);
    }
  }

  int BoundWithPrefix(const std::string& ns, const std::string& prefix) {
    int n = 0;
    for (const auto& p : cluster_->Pods(ns))
      if (p["metadata"]["name"].get<std::string>().rfind(prefix, 0) == 0 &&
          !p["spec"].value("nodeName", "").empty())
        ++n;
    return n;
  }

  // The message of the pod's PodScheduled=False condition, "" when it has none.
  std::string WaitMessage(const std::string& ns, const std::string& pod) {
    json p = cluster_->Get(fmt::format("/api/v1/namespaces/{}/pods/{}", ns, pod));
    if (!p.is_object() || !p.contains("status")) return "";
    for (const auto& c : p["status"].value("conditions", json::array()))
      if (c["type"] == "PodScheduled" && c["status"] == "False") return c.value("message", "");
    return "";
  }

  // The pod's Events of `reason`.
  std::vector<json> EventsOf(const std::string& ns, const std::string& pod,
                             const std::string& reason) {
    json list = cluster_->Get(fmt::format(
        "/api/v1/namespaces/{}/events?fieldSelector=involvedObject.name%3D{}", ns, pod));
    std::vector<json> out;
    for (const auto& e : list.value("items", json::array()))
      if (e["reason"] == reason) out.push_back(e);
    return out;
  }

  int CountWithPrefix(const std::string& ns, const std::string& prefix) {
    int n = 0;
    for (const auto& p : cluster_->Pods(ns))
      if (p["metadata"]["name"].get<std::string>().rfind(prefix, 0) == 0) ++n;
    return n;
  }

  // No GPU device is given to two pods of a node, and no node holds more GPUs than it has.
  void ExpectNoDoubleBooking(const std::vector<std::string>& namespaces, int gpus_per_node) {
    std::map<std::string, std::multiset<int>> used;
    std::map<std::string, int> count;
    for (const auto& ns : namespaces) {
      for (const auto& p : cluster_->Pods(ns)) {
        std::string node = p["spec"].value("nodeName", "");
        if (node.empty()) continue;
        const json& req = p["spec"]["containers"][0]["resources"]["requests"];
        int g = req.contains("nvidia.com/gpu") ? std::stoi(req["nvidia.com/gpu"].get<std::string>())
                                               : 0;
        count[node] += g;
        // Pods of other schedulers may have no annotations at all.
        const json ann = p["metadata"].value("annotations", json::object());
        if (ann.is_object() && ann.contains("tessera.dev/gpu-indices")) {
          std::stringstream ss(ann["tessera.dev/gpu-indices"].get<std::string>());
          std::string part;
          int listed = 0;
          while (std::getline(ss, part, ',')) {
            used[node].insert(std::stoi(part));
            ++listed;
          }
          EXPECT_EQ(listed, g) << p["metadata"]["name"];
        }
      }
    }
    for (const auto& [node, n] : count) EXPECT_LE(n, gpus_per_node) << node;
    for (const auto& [node, ids] : used)
      for (int id : ids) {
        EXPECT_EQ(ids.count(id), 1u) << "GPU " << id << " of " << node << " given twice";
        EXPECT_LT(id, gpus_per_node);
      }
  }

  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::unique_ptr<Metrics>> metrics_;
  std::vector<std::unique_ptr<Controller>> controllers_;
};

// Ten one-GPU pods of another scheduler hold 10 of 16 GPUs.
void CreateFillers(TestCluster& c) {
  for (int i = 0; i < 10; ++i) {
    json pod = c.PodSpec("default", fmt::format("filler-{}", i), 1, "other-scheduler");
    pod["spec"]["nodeName"] = fmt::format("gpu-{}", i % 2);
    c.Create(pod);
  }
}

TEST_F(K8sIntegration, GangBindsNoneUntilItFitsThenAll) {
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);
  Controller* tessera = StartTessera();
  MetricsServer server(
      metrics_.back().get(), [] { return true; }, [tessera] { return tessera->synced(); });
  int port = server.Start("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  CreateGang("default", "train", 8, 1);

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
  EXPECT_EQ(BoundWithPrefix("default", "train-"), 0);
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
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "train-") == 8; }, kTimeout));
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
    GTEST_SKIP() << "SKIPPED: kube-scheduler is not built (scripts/k8s/build-apiserver.sh "
                    "--with-scheduler); it is only the comparison";
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);
  // The same gang for kube-scheduler v1.20: it has no notion of the PodGroup.
  cluster_->Create(PodGroup("default", "train", 8));
  for (int i = 0; i < 8; ++i) {
    json pod = cluster_->PodSpec("default", fmt::format("train-{}", i), 1, "default-scheduler",
                                 {{"scheduling.x-k8s.io/pod-group", "train"}});
    cluster_->Create(pod);
  }
  int pid = TestCluster::Spawn({bin, "--kubeconfig=" + cluster_->kubeconfig_path(),
                                "--leader-elect=false", "--port=0", "--secure-port=0", "--v=0"},
                               cluster_->dir() + "/kube-scheduler.log");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "train-") >= 6; }, kTimeout));
  // Give it every chance to do something else: it will not, the other two pods cannot fit.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int bound = BoundWithPrefix("default", "train-");
  std::cout << "[ kube-scheduler ] bound " << bound
            << " of the 8-pod gang: those GPUs are held by a job that cannot start\n";
  EXPECT_EQ(bound, 6);
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
  CreateGang("team-a", "a1", 8, 1, queue);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("team-a", "a1-") == 8; }, kTimeout));
  // team-b's quota is idle: team-a borrows it.
  CreateGang("team-a", "a2", 8, 1, queue);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("team-a", "a2-") == 8; }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json cq = cluster_->Get("/apis/tessera.dev/v1alpha1/clusterqueues/team-a");
        return cq.value("/status/admittedWorkloads"_json_pointer, 0) == 2;
      },
      kTimeout))
      << "ClusterQueue status not written";
  // team-b wants its quota back: the borrowing workload (a2, whole) is evicted.
  CreateGang("team-b", "b1", 8, 1, queue);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("team-b", "b1-") == 8; }, kTimeout));
  EXPECT_EQ(BoundWithPrefix("team-a", "a1-"), 8);
  EXPECT_EQ(CountWithPrefix("team-a", "a2-"), 0) << "the borrower's pods were evicted";
  ExpectNoDoubleBooking({"team-a", "team-b"}, 8);
  EXPECT_EQ(metrics_.back()->preemptions.load(), 1);
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
  CreateGang("default", "low", 8, 1, queue, "low");
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "low-") == 8; }, kTimeout));
  CreateGang("default", "high", 4, 1, queue, "high");
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "high-") == 4; }, kTimeout));
  // The victim is the whole low gang, not just the four pods that were in the way.
  EXPECT_EQ(CountWithPrefix("default", "low-"), 0);
  ExpectNoDoubleBooking({"default"}, 8);
  json events =
      cluster_->Get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dlow-0");
  bool preempted = false;
  for (const auto& e : events["items"]) preempted |= e["reason"] == "Preempted";
  EXPECT_TRUE(preempted);
  EXPECT_GE(metrics_.back()->evictions_ok.load(), 8);
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
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return BoundWithPrefix("team-a", "llama-finetune-v3-") == 2; }, kTimeout));
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
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "p-") == 12; }, kTimeout));
  for (int i = 12; i < 24; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("p-{}", i), 1));
  CreateGang("default", "g", 8, 1);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return BoundWithPrefix("default", "p-") == 24 && BoundWithPrefix("default", "g-") == 8;
      },
      kTimeout));
  ExpectNoDoubleBooking({"default"}, 8);
  // Tessera made the binds: every one it saw succeed, plus any whose answer was lost while the
  // server went down (such a bind may have landed; the pod then shows up bound, once). The
  // snapshot is refreshed a little after the last bind, hence the wait.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return tessera->snapshot().pods_bound + metrics_.back()->binds_error.load() >= 32; },
      10))
      << tessera->snapshot().pods_bound << " binds succeeded, "
      << metrics_.back()->binds_error.load() << " failed";
}

TEST_F(K8sIntegration, SchedulerRestartRebuildsFromTheServer) {
  cluster_->CreateNodes(2, 8, "gpu");
  // The first instance reads JSON (--json-only), the second protobuf: either learns the same.
  ControllerOptions json_only;
  json_only.protobuf = false;
  StartTessera(json_only);
  CreateGang("default", "g", 4, 1);
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
  EXPECT_EQ(metrics_.back()->binds_conflict.load(), 0);
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

TEST_F(K8sIntegration, OnlyTheLeaderSchedules) {
  cluster_->CreateNodes(1, 8, "gpu");
  std::vector<Controller*> cs;
  std::vector<std::unique_ptr<LeaderElector>> electors;
  for (const char* id : {"replica-a", "replica-b"}) {
    Controller* c = StartTessera();
    c->SetActive(false);
    LeaderElectionOptions le;
    le.ns = "default";
    le.identity = id;
    le.lease_duration_s = 3;
    le.renew_deadline_s = 2;
    le.retry_period_s = 0.3;
    electors.push_back(std::make_unique<LeaderElector>(&cluster_->client(), le,
                                                       [c](bool leader) { c->SetActive(leader); }));
    electors.back()->Start();
    cs.push_back(c);
  }
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return electors[0]->is_leader() != electors[1]->is_leader(); }, kTimeout));
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("a-{}", i), 1));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 4; }, kTimeout));
  int leader = electors[0]->is_leader() ? 0 : 1;
  EXPECT_EQ(cs[leader]->snapshot().pods_bound, 4);
  EXPECT_EQ(cs[1 - leader]->snapshot().pods_bound, 0);
  // The leader steps down (graceful shutdown releases the lease); the other takes over.
  electors[leader]->Stop();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return electors[1 - leader]->is_leader(); }, kTimeout));
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("b-{}", i), 1));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 8; }, kTimeout));
  EXPECT_EQ(cs[1 - leader]->snapshot().pods_bound, 4);
  ExpectNoDoubleBooking({"default"}, 8);
  for (auto& e : electors) e->Stop();
}

// The `tessera serve` command itself: kubeconfig, leader election, probes, SIGTERM.
TEST_F(K8sIntegration, ServeCommandSchedulesAndShutsDownOnSigterm) {
  cluster_->CreateNodes(1, 8, "gpu");
  const std::string log = cluster_->dir() + "/serve.log";
  int pid =
      TestCluster::Spawn({TESSERA_BINARY, "serve", "--kubeconfig", cluster_->kubeconfig_path(),
                          "--leader-elect", "--lease-namespace", "default", "--identity",
                          "serve-test", "--metrics-address", "127.0.0.1", "--metrics-port", "-1"},
                         log);
  ASSERT_GT(pid, 0);
  CreateGang("default", "g", 2, 2);
  bool bound =
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "g-") == 2; }, kTimeout);
  json lease = cluster_->Get("/apis/coordination.k8s.io/v1/namespaces/default/leases/tessera");
  EXPECT_EQ(lease["spec"].value("holderIdentity", ""), "serve-test");
  kill(pid, SIGTERM);
  int status = 0;
  bool exited = TestCluster::WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 30);
  if (!exited) TestCluster::Kill(pid);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_TRUE(bound) << ss.str();
  ASSERT_TRUE(exited) << "no exit after SIGTERM\n" << ss.str();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ss.str();
  // The lease was given up, so that a successor need not wait for it to expire.
  lease = cluster_->Get("/apis/coordination.k8s.io/v1/namespaces/default/leases/tessera");
  EXPECT_EQ(lease["spec"].value("holderIdentity", "x"), "");
  ExpectNoDoubleBooking({"default"}, 8);
}

// `tessera serve` started while the API server is down retries (alive, not ready) instead of
// exiting; once the server is up it becomes ready, leads and binds. Then the API server is
// frozen (SIGSTOP: it accepts connections and answers nothing) and serve gets SIGTERM: it must
// exit well within a Deployment's 30 s grace period, not wait out its 60 s request timeouts.
TEST_F(K8sIntegration, ServeWaitsForTheApiServerAndStopsInTimeWhenItStalls) {
  cluster_->CreateNodes(1, 8, "gpu");
  // A port of 127.0.0.1 for the probes: bound and released.
  int probe_port = 0;
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    probe_port = ntohs(addr.sin_port);
  }
  KubeConfig probe_config;
  probe_config.server = fmt::format("http://127.0.0.1:{}", probe_port);
  KubeClient probes(probe_config);
  auto probe = [&](const char* path) -> long {
    auto r = probes.Get(path);
    return r.ok() ? r->status : -1;
  };
  ASSERT_TRUE(cluster_->StopApiServer());
  const std::string log = cluster_->dir() + "/serve.log";
  int pid = TestCluster::Spawn(
      {TESSERA_BINARY, "serve", "--kubeconfig", cluster_->kubeconfig_path(), "--leader-elect",
       "--lease-namespace", "default", "--identity", "serve-stall", "--metrics-address",
       "127.0.0.1", "--metrics-port", std::to_string(probe_port)},
      log);
  ASSERT_GT(pid, 0);
  auto read_log = [&] {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_TRUE(TestCluster::WaitFor([&] { return probe("/healthz") == 200; }, 30)) << read_log();
  EXPECT_EQ(probe("/readyz"), 503);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "serve exited without an API server\n"
                                               << read_log();
  ASSERT_TRUE(cluster_->StartApiServer());
  EXPECT_TRUE(TestCluster::WaitFor([&] { return probe("/readyz") == 200; }, kTimeout))
      << read_log();
  CreateGang("default", "g", 2, 2);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return BoundWithPrefix("default", "g-") == 2; }, kTimeout))
      << read_log();

  std::ifstream pid_file(cluster_->dir() + "/apiserver.pid");
  int apiserver = 0;
  pid_file >> apiserver;
  ASSERT_GT(apiserver, 0);
  ASSERT_EQ(kill(apiserver, SIGSTOP), 0);
  const auto t0 = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  const bool exited =
      TestCluster::WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 30);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  kill(apiserver, SIGCONT);
  if (!exited) TestCluster::Kill(pid);
  ASSERT_TRUE(exited) << "no exit within 30 s of SIGTERM\n" << read_log();
  EXPECT_LT(took, 12) << read_log();  // the bound is about 8 s (docs/kubernetes.md)
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_log();
}

// Volcano's PodGroup (its CRD installed, as Volcano does) sizes the gang of the pods annotated
// scheduling.k8s.io/group-name; Kueue's plain-pod group is the size its pods' annotation says.
// Neither binds a pod before the whole gang exists.
TEST_F(K8sIntegration, VolcanoAndKueuePodGroupsWaitForTheirWholeGang) {
  cluster_->Apply(ReadRepoFile("tests/k8s/testdata/volcano-podgroups-crd.yaml"));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        auto r = cluster_->client().Get("/apis/scheduling.volcano.sh/v1beta1/podgroups");
        return r.ok() && r->status == 200;
      },
      30))
      << "Volcano's PodGroup CRD not served";
  cluster_->CreateNodes(2, 8, "gpu");
  cluster_->Create(
      {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
       {"kind", "PodGroup"},
       {"metadata", {{"name", "vg"}, {"namespace", "default"}}},
       {"spec", {{"minMember", 4}, {"queue", "default"}, {"minResources", {{"cpu", "4"}}}}}});
  StartTessera();
  auto volcano_pod = [&](const std::string& group, int i) {
    cluster_->Create(cluster_->PodSpec("default", fmt::format("{}-{}", group, i), 1, "tessera",
                                       json::object(), {{"scheduling.k8s.io/group-name", group}}));
  };
  auto kueue_pod = [&](int i) {
    cluster_->Create(cluster_->PodSpec("default", fmt::format("kg-{}", i), 1, "tessera",
                                       {{"kueue.x-k8s.io/pod-group-name", "kg"}},
                                       {{"kueue.x-k8s.io/pod-group-total-count", "3"}}));
  };
  for (int i = 0; i < 2; ++i) {
    volcano_pod("vg", i);
    kueue_pod(i);
  }
  volcano_pod("nopg", 0);  // its Volcano PodGroup does not exist
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return WaitMessage("default", "vg-1").find("2 of 4 exist") != std::string::npos &&
               WaitMessage("default", "kg-1").find("2 of 3 exist") != std::string::npos &&
               WaitMessage("default", "nopg-0").find("waiting for Volcano PodGroup default/nopg") !=
                   std::string::npos;
      },
      kTimeout))
      << WaitMessage("default", "vg-1") << " / " << WaitMessage("default", "kg-1") << " / "
      << WaitMessage("default", "nopg-0");
  EXPECT_EQ(cluster_->BoundPods("default"), 0);
  for (int i = 2; i < 4; ++i) volcano_pod("vg", i);
  kueue_pod(2);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return BoundWithPrefix("default", "vg-") == 4 && BoundWithPrefix("default", "kg-") == 3;
      },
      kTimeout));
  EXPECT_EQ(BoundWithPrefix("default", "nopg-"), 0);
  ExpectNoDoubleBooking({"default"}, 8);
}

// A gang that gains pods after it was admitted is updated in place: the new pods are placed
// beside the bound ones, and the engine is not rebuilt from the server.
// Pods and nodes are read as the manifest loader reads them: KAI's gpu-fraction shares one GPU
// between two pods, a time-sliced node (GFD's nvidia.com/gpu.replicas) gives a pod a replica of
// its least loaded GPU, and hostname anti-affinity spreads a Deployment's pods over nodes.
TEST_F(K8sIntegration, GpuSharesTimeSlicingAndAntiAffinityFromPodAndNodeFields) {
  cluster_->CreateNodes(1, 1, "share");
  cluster_->CreateNodes(1, 6, "ts", {{"nvidia.com/gpu.replicas", "3"}});  // 2 GPUs x 3
  cluster_->CreateNodes(2, 8, "spread", {{"pool", "spread"}});
  auto pinned = [&](const std::string& name, int gpus, const std::string& node,
                    const json& annotations) {
    json pod = cluster_->PodSpec("default", name, gpus, "tessera", json::object(), annotations);
    pod["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", node}};
    cluster_->Create(pod);
  };
  pinned("half-a", 1, "share-0", {{"gpu-fraction", "0.5"}});
  pinned("half-b", 1, "share-0", {{"gpu-fraction", "0.5"}});
  for (int i = 0; i < 5; ++i) pinned(fmt::format("replica-{}", i), 1, "ts-0", json::object());
  for (int i = 0; i < 2; ++i) {
    json pod =
        cluster_->PodSpec("default", fmt::format("infer-{}", i), 1, "tessera", {{"app", "infer"}});
    pod["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                           {"kind", "ReplicaSet"},
                                           {"name", "infer-7c9d"},
                                           {"uid", "0b7a2c1e-0000-4000-8000-000000000001"}}};
    pod["spec"]["nodeSelector"] = {{"pool", "spread"}};
    pod["spec"]["affinity"] = json::parse(R"({"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"topologyKey": "kubernetes.io/hostname",
           "labelSelector": {"matchLabels": {"app": "infer"}}}]}})");
    cluster_->Create(pod);
  }
  StartTessera();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 9; }, kTimeout))
      << cluster_->BoundPods("default") << " of 9 bound";
  auto by_name = [&] {
    std::map<std::string, json> out;
    for (const auto& p : cluster_->Pods("default")) out[p["metadata"]["name"]] = p;
    return out;
  };
  auto pods = by_name();
  auto indices = [&](const std::string& pod) {
    return pods[pod]["metadata"]["annotations"].value("tessera.dev/gpu-indices", "");
  };
  // Two halves on the one GPU of share-0.
  EXPECT_EQ(pods["half-a"]["spec"]["nodeName"], "share-0");
  EXPECT_EQ(pods["half-b"]["spec"]["nodeName"], "share-0");
  EXPECT_EQ(indices("half-a"), "0");
  EXPECT_EQ(indices("half-b"), "0");
  // The Deployment's pods on two nodes, where binpack alone would stack them.
  EXPECT_NE(pods["infer-0"]["spec"]["nodeName"], pods["infer-1"]["spec"]["nodeName"]);
  // ts-0: slot s is replica s / 2 of GPU s % 2. Five replicas hold slots 0-4; free slots 0 and
  // 3: GPU 0 then holds slots 2, 4 (two replicas) and GPU 1 only slot 1. A new replica goes to
  // GPU 1 (slot 3), not to the lowest free slot (0, on the busier GPU 0).
  std::map<std::string, std::string> by_slot;
  for (int i = 0; i < 5; ++i)
    by_slot[indices(fmt::format("replica-{}", i))] = fmt::format("replica-{}", i);
  ASSERT_EQ(by_slot.size(), 5u);
  cluster_->DeletePod("default", by_slot["0"]);
  cluster_->DeletePod("default", by_slot["3"]);
  pinned("replica-new", 1, "ts-0", json::object());
  ASSERT_TRUE(TestCluster::WaitFor([&] { return cluster_->BoundPods("default") == 8; }, kTimeout));
  pods = by_name();
  EXPECT_EQ(indices("replica-new"), "3");

  // A pod wanting the whole GPU of share-0 waits: the device is shared.
  pinned("whole", 1, "share-0", json::object());
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "whole").empty(); }, kTimeout));
  EXPECT_EQ(cluster_->BoundPods("default"), 8);
}

// The API server's protobuf for pods and nodes (what Tessera's informers read by default) gives
// the same pods and nodes as its JSON, through a get, a list and a watch: the field numbers in
// proto.h are right for a real server, not only for the unit test's own encoder.
TEST_F(K8sIntegration, ProtobufReadsPodsAndNodesAsJsonDoes) {
  cluster_->Create(json::parse(R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
      "metadata": {"name": "proto-high"}, "value": 1000})"));
  cluster_->CreateNodes(
      1, 4, "gpu",
      {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/gpu.replicas", "2"}},
      json::parse(R"([{"key": "dedicated", "value": "ml",
                                         "effect": "NoSchedule"}])"));
  cluster_->CreateNamespace("proto");
  json pod = cluster_->PodSpec("proto", "rich", 1, "tessera",
                               {{"kueue.x-k8s.io/queue-name", "team-a"}, {"app", "train"}},
                               {{"gpu-fraction", "0.5"}, {"tessera.dev/note", "x"}});
  pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", "Job"},
                                         {"name", "train"},
                                         {"uid", "0b7a2c1e-0000-4000-8000-000000000002"}}};
  pod["spec"]["priorityClassName"] = "proto-high";
  pod["spec"]["nodeSelector"] = {{"pool", "gpu"}};
  pod["spec"]["initContainers"] = json::parse(R"([{"name": "setup", "image": "x",
      "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}])");
  pod["spec"]["tolerations"] = json::parse(R"([
      {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
      {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}])");
  pod["spec"]["affinity"] = json::parse(R"({
      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                               "values": ["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100"]}]},
        {"matchExpressions": [{"key": "pool", "operator": "Exists"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 30, "preference":
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
          "labelSelector": {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["train"]}]}}}]}})");
  pod["spec"]["topologySpreadConstraints"] = json::parse(R"([
      {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchLabels": {"app": "train"}}},
      {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
       "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}])");
  cluster_->Create(pod);
  auto& client = cluster_->client();

  auto as_json = [&](const std::string& path) {
    auto r = client.Get(path);
    EXPECT_TRUE(r.ok() && r->status == 200) << path;
    EXPECT_FALSE(proto::IsProtobuf(r->content_type));
    return json::parse(r->body);
  };
  auto as_proto = [&](const std::string& path) -> json {
    auto r = client.Get(path, proto::kAccept);
    EXPECT_TRUE(r.ok() && r->status == 200) << path;
    EXPECT_TRUE(proto::IsProtobuf(r->content_type)) << r->content_type;
    auto decoded = proto::DecodeObject(r->body);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    return decoded.ok() ? *decoded : json();
  };
  auto describe = [](const json& obj) {
    auto p = ParsePod(obj);
    return p.ok() ? Describe(*p) : std::string(p.status().message());
  };
  const std::string pod_path = "/api/v1/namespaces/proto/pods/rich";
  const std::string want = describe(as_json(pod_path));
  // Spot checks that the pod has what it should, so that equality means something.
  auto parsed = ParsePod(as_json(pod_path));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->priority, 1000);  // filled in by the Priority admission plugin
  EXPECT_EQ(parsed->group_kind, "Job");
  EXPECT_EQ(parsed->set.affinity.required_terms.size(), 2u);
  EXPECT_EQ(parsed->set.anti_affinity, HostnameAntiAffinity::kPreferred);
  EXPECT_EQ(parsed->set.affinity.preferred_terms.size(), 1u);
  EXPECT_EQ(parsed->set.spread.size(), 2u);
  EXPECT_EQ(parsed->set.tolerations.size(), 2u);
  EXPECT_EQ(describe(as_proto(pod_path)), want);
  json list = as_proto("/api/v1/namespaces/proto/pods");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(describe(list["items"][0]), want);
  EXPECT_FALSE(list["metadata"].value("resourceVersion", "").empty());

  auto node_text = [](const json& obj) {
    bool ready = false;
    auto n = ParseNode(obj, &ready, nullptr);
    if (!n.ok()) return std::string(n.status().message());
    std::string s =
        fmt::format("{} ready={} unschedulable={} alloc=[{}] model={} replicas={}", n->name, ready,
                    n->unschedulable, n->allocatable.ToString(), n->gpu_model, n->gpu_replicas);
    for (const auto& t : n->taints)
      s += fmt::format(" taint:{}={}:{}", t.key, t.value, static_cast<int>(t.effect));
    for (const auto& [k, v] : n->labels) s += fmt::format(" {}={}", k, v);
    return s;
  };
  const std::string node_want = node_text(as_json("/api/v1/nodes/gpu-0"));
  EXPECT_NE(node_want.find("taint:dedicated=ml"), std::string::npos) << node_want;
  EXPECT_NE(node_want.find("replicas=2"), std::string::npos) << node_want;
  EXPECT_EQ(node_text(as_proto("/api/v1/nodes/gpu-0")), node_want);
  EXPECT_EQ(node_text(as_proto("/api/v1/nodes")["items"][0]), node_want);

  // A watch in protobuf sees the bind, with the annotation the Binding carried.
  std::mutex mu;
  json last;
  Informer informer(
      &client, "proto-pods", "/api/v1/namespaces/proto/pods",
      [&](WatchEvent ev) {
        std::lock_guard<std::mutex> l(mu);
        if (ev.type == WatchEvent::Type::kModified) last = ev.object;
      },
      /*optional=*/false, /*protobuf=*/true);
  informer.Start();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return informer.synced(); }, kTimeout));
  auto bind = client.Post("/api/v1/namespaces/proto/pods/rich/binding", R"({
      "apiVersion": "v1", "kind": "Binding",
      "metadata": {"name": "rich", "annotations": {"tessera.dev/gpu-indices": "1"}},
      "target": {"apiVersion": "v1", "kind": "Node", "name": "gpu-0"}})");
  ASSERT_TRUE(bind.ok() && bind->status == 201) << (bind.ok() ? bind->body : "");
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        std::lock_guard<std::mutex> l(mu);
        return last.is_object() && last["spec"].value("nodeName", "") == "gpu-0";
      },
      kTimeout));
  informer.Stop();
  EXPECT_GT(informer.stats().protobuf_messages.load(), 1);
  EXPECT_EQ(informer.stats().errors.load(), 0);
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(describe(last), describe(as_json(pod_path)));
  EXPECT_NE(describe(last).find("gpus=1"), std::string::npos);
}

TEST_F(K8sIntegration, AdmittedGangThatGrowsIsUpdatedWithoutARebuild) {
  cluster_->CreateNodes(2, 8, "gpu");
  Controller* tessera = StartTessera();
  CreateGang("default", "g", 2, 1);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "g-") == 2; }, kTimeout));
  const int64_t rebuilds = tessera->snapshot().rebuilds;
  const int64_t resubmits = metrics_.back()->resubmits.load();
  // Two more pods of the same PodGroup (minMember stays 2), e.g. elastic workers.
  for (int i = 2; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("g-{}", i), 1, "tessera",
                                       {{"scheduling.x-k8s.io/pod-group", "g"}}));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "g-") == 4; }, kTimeout));
  // And one leaves.
  cluster_->DeletePod("default", "g-0");
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("single-{}", i), 1));
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return BoundWithPrefix("default", "single-") == 4; }, kTimeout));
  EXPECT_EQ(tessera->snapshot().rebuilds, rebuilds);
  EXPECT_GE(metrics_.back()->resubmits.load(), resubmits + 3);
  EXPECT_EQ(metrics_.back()->binds_conflict.load(), 0);
  ExpectNoDoubleBooking({"default"}, 8);
}

// A pod that stays pending through many cycles has one FailedScheduling Event per message, its
// count raised, as kube's EventCorrelator does, instead of a new Event each time.
TEST_F(K8sIntegration, PendingPodHasOneFailedSchedulingEventWithACount) {
  cluster_->CreateNodes(2, 8, "gpu");
  CreateFillers(*cluster_);
  ControllerOptions o;
  o.failed_event_interval_s = 0;  // every cycle that leaves it pending counts
  StartTessera(o);
  CreateGang("default", "train", 8, 1);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "train-0").empty(); }, kTimeout));
  // Other pods come and bind: each is a cycle that leaves the gang pending.
  for (int i = 0; i < 5; ++i) {
    cluster_->Create(cluster_->PodSpec("default", fmt::format("cpu-{}", i), 0));
    ASSERT_TRUE(TestCluster::WaitFor([&] { return BoundWithPrefix("default", "cpu-") == i + 1; },
                                     kTimeout));
  }
  int max_count = 0;
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        max_count = 0;
        for (const auto& e : EventsOf("default", "train-0", "FailedScheduling"))
          max_count = std::max(max_count, e.value("count", 0));
        return max_count > 1;
      },
      kTimeout));
  std::map<std::string, int> per_message;
  for (const auto& e : EventsOf("default", "train-0", "FailedScheduling")) {
    ++per_message[e.value("message", "")];
    std::cout << "[ tessera ] FailedScheduling x" << e.value("count", 0) << " ("
              << e.value("firstTimestamp", "") << " .. " << e.value("lastTimestamp", "")
              << "): " << e.value("message", "") << "\n";
  }
  for (const auto& [message, n] : per_message) EXPECT_EQ(n, 1) << message;
  EXPECT_EQ(BoundWithPrefix("default", "train-"), 0);
}

}  // namespace
}  // namespace tessera::k8s
