// Tessera's Kubernetes mode against a real kube-apiserver and etcd on 127.0.0.1 (no mock), part 2:
// leader election, the serve command, PodGroups of other APIs, GPU shares, protobuf. Every
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

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;
using testing_queues::ReadRepoFile;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

using testing_queues::CreateFillers;
using testing_queues::K8sIntegration;  // one class for both files' tests

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
  CreatePodGroup("default", "g", 2, 2);
  bool bound = TestCluster::WaitFor([&] { return Bound("default", "g-") == 2; }, kTimeout);
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
  CreatePodGroup("default", "g", 2, 2);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "g-") == 2; }, kTimeout))
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
      [&] { return Bound("default", "vg-") == 4 && Bound("default", "kg-") == 3; }, kTimeout));
  EXPECT_EQ(Bound("default", "nopg-"), 0);
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
  CreatePodGroup("default", "g", 2, 1);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "g-") == 2; }, kTimeout));
  const int64_t rebuilds = tessera->snapshot().rebuilds;
  const int64_t resubmits = metrics_list_.back()->resubmits.load();
  // Two more pods of the same PodGroup (minMember stays 2), e.g. elastic workers.
  for (int i = 2; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("g-{}", i), 1, "tessera",
                                       {{"scheduling.x-k8s.io/pod-group", "g"}}));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "g-") == 4; }, kTimeout));
  // And one leaves.
  cluster_->DeletePod("default", "g-0");
  for (int i = 0; i < 4; ++i)
    cluster_->Create(cluster_->PodSpec("default", fmt::format("single-{}", i), 1));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "single-") == 4; }, kTimeout));
  EXPECT_EQ(tessera->snapshot().rebuilds, rebuilds);
  EXPECT_GE(metrics_list_.back()->resubmits.load(), resubmits + 3);
  EXPECT_EQ(metrics_list_.back()->binds_conflict.load(), 0);
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
  CreatePodGroup("default", "train", 8, 1);
  ASSERT_TRUE(
      TestCluster::WaitFor([&] { return !WaitMessage("default", "train-0").empty(); }, kTimeout));
  // Other pods come and bind: each is a cycle that leaves the gang pending. They carry a runtime
  // estimate so that the gang's message stays the same: without one, each is one more "running
  // workload(s) have no runtime estimate" and every cycle's message (so its Event) is new, which
  // is what failed in CI (x1 for "1 running workload(s)", x1 for "2 ...", ...).
  const json estimate = {{"tessera.dev/runtime-estimate", "1h"}};
  for (int i = 0; i < 5; ++i) {
    cluster_->Create(cluster_->PodSpec("default", fmt::format("cpu-{}", i), 0, "tessera",
                                       json::object(), estimate));
    ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "cpu-") == i + 1; }, kTimeout));
  }
  int max_count = 0;
  // On a failure, the Events it saw.
  auto seen = [&] {
    std::string out;
    for (const auto& e : EventsOf("default", "train-0", "FailedScheduling"))
      out += fmt::format("\n  x{} {}", e.value("count", 0), e.value("message", ""));
    return out;
  };
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        max_count = 0;
        for (const auto& e : EventsOf("default", "train-0", "FailedScheduling"))
          max_count = std::max(max_count, e.value("count", 0));
        return max_count > 1;
      },
      kTimeout))
      << "FailedScheduling Events of train-0:" << seen();
  std::map<std::string, int> per_message;
  for (const auto& e : EventsOf("default", "train-0", "FailedScheduling")) {
    ++per_message[e.value("message", "")];
    std::cout << "[ tessera ] FailedScheduling x" << e.value("count", 0) << " ("
              << e.value("firstTimestamp", "") << " .. " << e.value("lastTimestamp", "")
              << "): " << e.value("message", "") << "\n";
  }
  for (const auto& [message, n] : per_message) EXPECT_EQ(n, 1) << message;
  EXPECT_EQ(Bound("default", "train-"), 0);
}

}  // namespace
}  // namespace tessera::k8s
