// ProvisioningRequests against a real kube-apiserver and etcd (issue 17, docs/autoscaling.md
// "Kubernetes mode"), with the request's CRD installed (tests/k8s/testdata/
// provisioningrequests-crd.yaml) and a small autoscaler in the test: it polls the requests, and
// for one it serves creates `count` Nodes of 8 GPUs and sets Accepted and Provisioned; for one it
// fails it sets Failed. A gang that does not fit on the nodes up gets a request, its pods say
// WaitingForProvisioning (no autoscaler scales for them pod by pod), no pod is bound before the
// new nodes exist, the gang is bound whole on them, and the request and its PodTemplates are then
// deleted. Skipped, with the reason printed, when the API server is not built.
#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "k8s/controller/controller.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/provisioning.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {
namespace {

using testing_queues::ClusterQueueObject;
using testing_queues::json;
using testing_queues::QueueClusterTest;
using testing_queues::ReadRepoFile;
using testing_queues::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

// The autoscaler's part: serves the requests it sees, in the order it sees them. The first
// `fail_first` requests get Failed=True instead. Nodes appear only when `go` is set.
class FakeAutoscaler {
 public:
  FakeAutoscaler(TestCluster* cluster, int fail_first)
      : cluster_(cluster), fail_first_(fail_first) {}
  ~FakeAutoscaler() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_) {
        if (go_) Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void Go() { go_ = true; }
  // Bound pods of `prefix` the autoscaler saw before it created the nodes of a request (must be
  // none: the gang waits for them).
  int bound_before_nodes() const { return bound_before_nodes_; }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> l(mu_);
    return seen_;
  }

 private:
  void Poll() {
    json list = cluster_->Get(std::string(kProvisioningPath));
    for (const json& pr : list.value("items", json::array())) {
      const std::string ns = pr["metadata"]["namespace"], name = pr["metadata"]["name"];
      {
        std::lock_guard<std::mutex> l(mu_);
        if (done_.count(name)) continue;
        done_.insert(name);
        seen_.push_back(name);
      }
      const std::string status_path = fmt::format(
          "/apis/autoscaling.x-k8s.io/v1/namespaces/{}/provisioningrequests/{}/status", ns, name);
      json conditions = json::array();
      const std::string now = "2026-11-24T00:00:00Z";
      if (failed_ < fail_first_) {
        ++failed_;
        conditions.push_back({{"type", "Failed"},
                              {"status", "True"},
                              {"reason", "OutOfResources"},
                              {"message", "no capacity in the zone"},
                              {"lastTransitionTime", now}});
      } else {
        int count = 0;
        for (const json& ps : pr["spec"]["podSets"]) {
          // The PodTemplate it names exists, with the pod's GPU request.
          json t = cluster_->Get(fmt::format("/api/v1/namespaces/{}/podtemplates/{}", ns,
                                             ps["podTemplateRef"]["name"].get<std::string>()));
          EXPECT_EQ(
              t["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"],
              "8")
              << t.dump();
          count += ps["count"].get<int>();
        }
        bound_before_nodes_ += cluster_->BoundPods(ns) - 1;  // less the filler
        cluster_->CreateNodes(count, 8, "auto-" + std::to_string(served_));
        ++served_;
        conditions.push_back({{"type", "Accepted"},
                              {"status", "True"},
                              {"reason", "Accepted"},
                              {"message", "accepted"},
                              {"lastTransitionTime", now}});
        conditions.push_back({{"type", "Provisioned"},
                              {"status", "True"},
                              {"reason", "Provisioned"},
                              {"message", "capacity is available"},
                              {"lastTransitionTime", now}});
      }
      auto r = cluster_->client().Patch(
          status_path, json{{"status", {{"conditions", conditions}}}}.dump(), PatchType::kMerge);
      EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : std::string("no answer"));
    }
  }

  TestCluster* const cluster_;
  const int fail_first_;
  std::atomic<bool> stop_{false}, go_{false};
  std::atomic<int> bound_before_nodes_{0};
  int served_ = 0, failed_ = 0;  // the thread's
  std::mutex mu_;
  std::set<std::string> done_;
  std::vector<std::string> seen_;
  std::thread thread_;  // last: it uses the members above
};

class K8sProvisioning : public QueueClusterTest {
 protected:
  void SetUp() override {
    QueueClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cluster_->Apply(ReadRepoFile("tests/k8s/testdata/provisioningrequests-crd.yaml"));
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          auto r = cluster_->client().Get(kProvisioningPath);
          return r.ok() && r->status == 200;
        },
        30))
        << "the ProvisioningRequest CRD is not served";
    // One node of 8 GPUs, held by a filler pod; a queue that admits 32 GPUs.
    cluster_->CreateNodes(1, 8, "gpu");
    CreateFlavor();
    cluster_->Create(ClusterQueueObject("main", 32));
    CreateLocalQueue("default", "lq", "main");
  }

  void StartController(PodSetMergePolicy merge = PodSetMergePolicy::kNone) {
    ControllerOptions o;
    o.provisioning.enabled = true;
    o.provisioning.merge_policy = merge;
    o.provisioning.backoff_base_s = 1;
    StartTessera(o);
  }

  // The filler (8 GPUs, bound to gpu-0), then the PodGroup "train" of 2 pods of 8 GPUs each.
  void CreateFillerAndGang() {
    const json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
    cluster_->Create(cluster_->PodSpec("default", "filler", 8, "tessera", queue));
    ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "filler") == 1; }, kTimeout));
    cluster_->Create(testing_queues::PodGroupObject("default", "train", 2));
    json labels = queue;
    labels["scheduling.x-k8s.io/pod-group"] = "train";
    for (int i = 0; i < 2; ++i)
      cluster_->Create(
          cluster_->PodSpec("default", "train-" + std::to_string(i), 8, "tessera", labels));
  }

  // Every pod of `prefix` consumes `request` ("": none) by the Cluster Autoscaler's annotations,
  // with the class of the request.
  bool ConsumesRequest(const std::string& prefix, const std::string& request) {
    int n = 0;
    for (const json& p : cluster_->Pods("default")) {
      const std::string name = p["metadata"]["name"];
      if (name.rfind(prefix, 0) != 0) continue;
      ++n;
      const json a = p["metadata"].value("annotations", json::object());
      if (a.value(kConsumeRequestAnnotation, "") != request) return false;
      const std::string cls =
          request.empty() ? "" : "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
      if (a.value(kRequestClassAnnotation, "") != cls) return false;
    }
    return n > 0;
  }

  std::vector<std::string> Requests() {
    std::vector<std::string> out;
    for (const json& pr : cluster_->Get(kProvisioningPath).value("items", json::array()))
      out.push_back(pr["metadata"]["name"]);
    return out;
  }

  json Scheduled(const std::string& pod) {
    json p = cluster_->Get("/api/v1/namespaces/default/pods/" + pod);
    for (const json& c : p["status"].value("conditions", json::array()))
      if (c["type"] == "PodScheduled") return c;
    return json();
  }

  // The gang is bound whole on the autoscaler's nodes, protected from consolidation; its request
  // and PodTemplates are deleted after.
  void ExpectBoundOnNewNodesAndCleanedUp() {
    ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 2; }, kTimeout))
        << "the gang was never bound";
    for (const json& p : cluster_->Pods("default")) {
      const std::string name = p["metadata"]["name"];
      if (name.rfind("train-", 0) != 0) continue;
      EXPECT_EQ(p["spec"]["nodeName"].get<std::string>().rfind("auto-", 0), 0u) << p.dump();
      EXPECT_EQ(p["metadata"]["annotations"].value(kDoNotDisruptAnnotation, ""), "true");
      EXPECT_EQ(p["metadata"]["annotations"].value(kSafeToEvictAnnotation, ""), "false");
    }
    EXPECT_TRUE(TestCluster::WaitFor([&] { return Requests().empty(); }, kTimeout))
        << "the request was not deleted after the gang was bound";
    EXPECT_TRUE(TestCluster::WaitFor(
        [&] {
          return cluster_->Get("/api/v1/namespaces/default/podtemplates")
              .value("items", json::array())
              .empty();
        },
        kTimeout))
        << "its PodTemplates were not deleted";
  }
};

TEST_F(K8sProvisioning, GangThatDoesNotFitGetsARequestAndIsBoundWholeOnTheNewNodes) {
  FakeAutoscaler autoscaler(cluster_.get(), /*fail_first=*/0);
  autoscaler.Start();
  StartController();
  CreateFillerAndGang();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Requests().size() == 1; }, kTimeout))
      << "no ProvisioningRequest for the gang";
  const std::string name = Requests()[0];
  EXPECT_EQ(name, "tessera-podgroup-train-1");
  const json pr = cluster_->Get(std::string("/apis/autoscaling.x-k8s.io/v1/namespaces/default/"
                                            "provisioningrequests/") +
                                name);
  EXPECT_EQ(pr["spec"]["provisioningClassName"],
            "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  ASSERT_EQ(pr["spec"]["podSets"].size(), 1u) << pr.dump();
  EXPECT_EQ(pr["spec"]["podSets"][0]["count"], 2);
  // Its PodTemplate belongs to it.
  const json t =
      cluster_->Get("/api/v1/namespaces/default/podtemplates/" +
                    pr["spec"]["podSets"][0]["podTemplateRef"]["name"].get<std::string>());
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json tt = cluster_->Get("/api/v1/namespaces/default/podtemplates/" +
                                t["metadata"]["name"].get<std::string>());
        return tt["metadata"].contains("ownerReferences") &&
               tt["metadata"]["ownerReferences"][0]["kind"] == "ProvisioningRequest";
      },
      kTimeout))
      << t.dump();
  // Meanwhile its pods say why, with a reason autoscalers do not scale pod by pod for.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json c = Scheduled("train-0");
        return c.is_object() && c.value("reason", "") == kWaitingForProvisioningReason &&
               c.value("message", "").find(name) != std::string::npos;
      },
      kTimeout))
      << Scheduled("train-0").dump();
  EXPECT_EQ(Bound("default", "train-"), 0);
  // ... and carry the Cluster Autoscaler's annotations for a request's pods, so that it leaves
  // them out of its own scale-ups.
  ASSERT_TRUE(TestCluster::WaitFor([&] { return ConsumesRequest("train-", name); }, kTimeout))
      << cluster_->Get("/api/v1/namespaces/default/pods/train-0")["metadata"].dump();

  autoscaler.Go();
  ExpectBoundOnNewNodesAndCleanedUp();
  EXPECT_EQ(autoscaler.bound_before_nodes(), 0) << "a pod of the gang was bound before its nodes";
  EXPECT_EQ(autoscaler.seen(), std::vector<std::string>{name});
  // Bound, they keep them (as Kueue's pods do), though the request is gone.
  EXPECT_TRUE(ConsumesRequest("train-", name));
}

// --provisioning-pod-set-merge-policy IdenticalWorkloadSchedulingRequirements: a gang whose pods
// are not alike (a launcher that tolerates a taint, two workers with labels of their own) is
// three pod sets; the request names two PodTemplates, the workers' one counting 2, and the gang
// is bound whole on the nodes made for it.
TEST_F(K8sProvisioning, PodSetsWithTheSameSchedulingRequirementsShareAPodTemplate) {
  FakeAutoscaler autoscaler(cluster_.get(), /*fail_first=*/0);
  autoscaler.Start();
  StartController(PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements);
  const json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  cluster_->Create(cluster_->PodSpec("default", "filler", 8, "tessera", queue));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "filler") == 1; }, kTimeout));
  cluster_->Create(testing_queues::PodGroupObject("default", "train", 3));
  json labels = queue;
  labels["scheduling.x-k8s.io/pod-group"] = "train";
  json launcher = cluster_->PodSpec("default", "train-launcher", 8, "tessera", labels);
  launcher["spec"]["tolerations"] = {{{"key", "dedicated"}, {"operator", "Exists"}}};
  cluster_->Create(launcher);
  for (int i = 0; i < 2; ++i) {
    json l = labels;
    l["index"] = std::to_string(i);
    cluster_->Create(
        cluster_->PodSpec("default", "train-worker-" + std::to_string(i), 8, "tessera", l));
  }
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Requests().size() == 1; }, kTimeout))
      << "no ProvisioningRequest for the gang";
  const json pr = cluster_->Get(
      "/apis/autoscaling.x-k8s.io/v1/namespaces/default/provisioningrequests/" + Requests()[0]);
  const json& sets = pr["spec"]["podSets"];
  ASSERT_EQ(sets.size(), 2u) << pr.dump();
  EXPECT_EQ(sets[0]["count"], 1);
  EXPECT_EQ(sets[1]["count"], 2);
  const json t0 = cluster_->Get("/api/v1/namespaces/default/podtemplates/" +
                                sets[0]["podTemplateRef"]["name"].get<std::string>());
  const json t1 = cluster_->Get("/api/v1/namespaces/default/podtemplates/" +
                                sets[1]["podTemplateRef"]["name"].get<std::string>());
  EXPECT_TRUE(t0["template"]["spec"].contains("tolerations")) << t0.dump();
  EXPECT_EQ(t1["template"]["metadata"]["labels"]["index"], "0") << t1.dump();
  // Only the two templates the request names exist.
  EXPECT_EQ(
      cluster_->Get("/api/v1/namespaces/default/podtemplates").value("items", json::array()).size(),
      2u);
  autoscaler.Go();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "train-") == 3; }, kTimeout))
      << "the gang was never bound";
  for (const json& p : cluster_->Pods("default")) {
    if (p["metadata"]["name"].get<std::string>().rfind("train-", 0) != 0) continue;
    EXPECT_EQ(p["spec"]["nodeName"].get<std::string>().rfind("auto-", 0), 0u) << p.dump();
  }
  EXPECT_EQ(autoscaler.bound_before_nodes(), 0);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return Requests().empty(); }, kTimeout));
}

// The request goes while the gang still waits (its queue's quota no longer admits it): its pods'
// consume annotations go with it, so that the autoscaler does not ignore them for a request that
// no longer exists.
TEST_F(K8sProvisioning, ConsumeAnnotationsGoWhenTheRequestGoesBeforeTheGangIsBound) {
  StartController();
  CreateFillerAndGang();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Requests().size() == 1; }, kTimeout));
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return ConsumesRequest("train-", "tessera-podgroup-train-1"); }, kTimeout));
  // 8 GPUs of quota, all the filler's: the gang cannot be admitted, it needs no capacity.
  auto r = cluster_->client().Patch("/apis/tessera.dev/v1alpha1/clusterqueues/main",
                                    json{{"spec", ClusterQueueObject("main", 8)["spec"]}}.dump(),
                                    PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : std::string("no answer"));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Requests().empty(); }, kTimeout))
      << "the request was not deleted";
  EXPECT_TRUE(TestCluster::WaitFor([&] { return ConsumesRequest("train-", ""); }, kTimeout))
      << cluster_->Get("/api/v1/namespaces/default/pods/train-0")["metadata"].dump();
  EXPECT_EQ(Bound("default", "train-"), 0);
}

// Scheduler::NeedCapacity is not run again while nothing changes (a backlog that waits for its
// nodes costs no planning at every turn of the loop), and is as soon as something does: a new
// gang gets its own request, and one that fits once a pod ends loses its.
TEST_F(K8sProvisioning, NeedsAreWorkedOutAgainOnlyWhenSomethingChanges) {
  StartController();
  CreateFillerAndGang();
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return ConsumesRequest("train-", "tessera-podgroup-train-1"); }, kTimeout));
  auto plans = [&] { return metrics_list_.back()->capacity_plans.load(); };
  // Settled: the pods say why they wait and consume the request. Two seconds of turns of the
  // loop (status period 0.2 s) plan nothing.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        json c = Scheduled("train-1");
        return c.is_object() && c.value("reason", "") == kWaitingForProvisioningReason;
      },
      kTimeout));
  const int64_t settled = plans();
  EXPECT_GT(settled, 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(plans(), settled);
  // A new workload: planned again, it gets a request of its own.
  const json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  cluster_->Create(cluster_->PodSpec("default", "solo", 8, "tessera", queue));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Requests().size() == 2; }, kTimeout))
      << "no request for the new pod";
  EXPECT_GT(plans(), settled);
  // The filler ends: solo takes its node, and its request goes; the gang keeps its own.
  cluster_->DeletePod("default", "filler");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "solo") == 1; }, kTimeout));
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return Requests() == std::vector<std::string>{"tessera-podgroup-train-1"}; },
      kTimeout));
  EXPECT_EQ(Bound("default", "train-"), 0);
}

TEST_F(K8sProvisioning, FailedRequestIsRetriedAfterABackoffAndTheNextAttemptIsServed) {
  FakeAutoscaler autoscaler(cluster_.get(), /*fail_first=*/1);
  autoscaler.Start();
  autoscaler.Go();
  StartController();
  CreateFillerAndGang();
  ExpectBoundOnNewNodesAndCleanedUp();
  EXPECT_EQ(autoscaler.bound_before_nodes(), 0);
  // The first attempt failed; the second (after the 1 s backoff) was served.
  EXPECT_EQ(autoscaler.seen(),
            (std::vector<std::string>{"tessera-podgroup-train-1", "tessera-podgroup-train-2"}));
  // The pods consume the attempt that was served.
  EXPECT_TRUE(TestCluster::WaitFor(
      [&] { return ConsumesRequest("train-", "tessera-podgroup-train-2"); }, kTimeout));
}

// Without requests: a node the Cluster Autoscaler is removing takes no new pod, even one that
// tolerates every taint, and a spot node takes only the interruptible pod.
TEST_F(K8sProvisioning, NodesBeingRemovedAndSpotNodesTakeOnlyWhatTheyMay) {
  StartTessera();
  const json queue = {{"kueue.x-k8s.io/queue-name", "lq"}};
  cluster_->Create(cluster_->PodSpec("default", "filler", 8, "tessera", queue));
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("default", "filler") == 1; }, kTimeout));
  cluster_->CreateNodes(1, 8, "spot", {{"karpenter.sh/capacity-type", "spot"}});
  cluster_->CreateNodes(1, 8, "leaving", json::object(),
                        {{{"key", "ToBeDeletedByClusterAutoscaler"},
                          {"value", "1732400000"},
                          {"effect", "NoSchedule"}}});
  const json everything = json::array({{{"operator", "Exists"}}});
  json steady = cluster_->PodSpec("default", "steady", 8, "tessera", queue);
  steady["spec"]["tolerations"] = everything;
  json cheap = cluster_->PodSpec("default", "cheap", 8, "tessera", queue,
                                 {{kInterruptibleAnnotation, "true"}});
  cheap["spec"]["tolerations"] = everything;
  cluster_->Create(steady);
  cluster_->Create(cheap);
  auto node_of = [&](const std::string& pod) {
    return cluster_->Get("/api/v1/namespaces/default/pods/" + pod)["spec"].value("nodeName", "");
  };
  ASSERT_TRUE(TestCluster::WaitFor([&] { return node_of("cheap") == "spot-0"; }, kTimeout))
      << node_of("cheap");
  // steady was looked at (it says why it waits) and left pending: not on spot, not on the
  // node being removed.
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Scheduled("steady").is_object(); }, kTimeout));
  EXPECT_EQ(node_of("steady"), "");
  // The autoscaler changes its mind: the node takes pods again.
  auto r = cluster_->client().Patch("/api/v1/nodes/leaving-0",
                                    json{{"spec", {{"taints", json::array()}}}}.dump(),
                                    PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200);
  EXPECT_TRUE(TestCluster::WaitFor([&] { return node_of("steady") == "leaving-0"; }, kTimeout))
      << node_of("steady");
  // Single pods are not protected from consolidation (--protect-gangs-min-pods 2).
  json p = cluster_->Get("/api/v1/namespaces/default/pods/cheap");
  EXPECT_FALSE(
      p["metadata"].value("annotations", json::object()).contains(kDoNotDisruptAnnotation));
}

// A workload is interruptible by its PriorityClass or its queue, not only by its pods' annotation;
// a more specific "false" keeps it off spot nodes that its queue would send it to; a mark that is
// neither "true" nor "false" is said on the pod (node_policy.h).
TEST_F(K8sProvisioning, PriorityClassesAndQueuesMarkWorkloadsInterruptible) {
  auto priority_class = [](const std::string& name, const std::string& mark) {
    return json{{"apiVersion", "scheduling.k8s.io/v1"},
                {"kind", "PriorityClass"},
                {"metadata", {{"name", name}, {"annotations", {{kInterruptibleAnnotation, mark}}}}},
                {"value", 10}};
  };
  cluster_->Create(priority_class("spot-ok", "true"));
  cluster_->Create(priority_class("steady", "false"));
  // Every workload of ClusterQueue "batch" is interruptible unless something more specific says.
  json batch = ClusterQueueObject("batch", 32);
  batch["metadata"]["annotations"] = {{kInterruptibleAnnotation, "true"}};
  cluster_->Create(batch);
  CreateLocalQueue("default", "batch-lq", "batch");
  // gpu-0 is full; three spot nodes are free.
  json filler = cluster_->PodSpec("default", "filler", 8, "other-scheduler");
  filler["spec"]["nodeName"] = "gpu-0";
  cluster_->Create(filler);
  cluster_->CreateNodes(3, 8, "spot", {{"karpenter.sh/capacity-type", "spot"}});
  StartTessera();

  auto pod = [&](const std::string& name, const std::string& queue, const std::string& pc,
                 const json& annotations = json::object()) {
    json p = cluster_->PodSpec("default", name, 8, "tessera",
                               {{"kueue.x-k8s.io/queue-name", queue}}, annotations);
    if (!pc.empty()) p["spec"]["priorityClassName"] = pc;
    cluster_->Create(p);
  };
  pod("by-class", "lq", "spot-ok");      // queue "main" says nothing; its PriorityClass does
  pod("by-queue", "batch-lq", "");       // its ClusterQueue says
  pod("refuses", "batch-lq", "steady");  // its PriorityClass says "false": off spot
  pod("odd", "lq", "", {{kInterruptibleAnnotation, "maybe"}});
  auto node_of = [&](const std::string& name) {
    return cluster_->Get("/api/v1/namespaces/default/pods/" + name)["spec"].value("nodeName", "");
  };
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return node_of("by-class").rfind("spot-", 0) == 0 &&
               node_of("by-queue").rfind("spot-", 0) == 0;
      },
      kTimeout))
      << "by-class on '" << node_of("by-class") << "', by-queue on '" << node_of("by-queue") << "'";
  // Both were looked at and left pending, with a spot node free.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return Scheduled("refuses").is_object() && Scheduled("odd").is_object(); }, kTimeout));
  EXPECT_EQ(node_of("refuses"), "");
  EXPECT_EQ(node_of("odd"), "");
  // The bad mark is said on its pod, naming the annotation.
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return !EventsOf("default", "odd", "InvalidAnnotation").empty(); }, kTimeout));
  const json ev = EventsOf("default", "odd", "InvalidAnnotation")[0];
  EXPECT_NE(ev.value("message", "")
                .find("tessera.dev/interruptible: expected \"true\" or "
                      "\"false\", got \"maybe\""),
            std::string::npos)
      << ev.dump();
  // Corrected on the waiting pod: acted on at once, it takes the spot node left.
  auto r = cluster_->client().Patch(
      "/api/v1/namespaces/default/pods/odd",
      json{{"metadata", {{"annotations", {{kInterruptibleAnnotation, "true"}}}}}}.dump(),
      PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : std::string("no answer"));
  EXPECT_TRUE(TestCluster::WaitFor([&] { return node_of("odd").rfind("spot-", 0) == 0; }, kTimeout))
      << node_of("odd");
  EXPECT_EQ(node_of("refuses"), "");
}

// A batch Job annotated tessera.dev/interruptible "true" sends its pods to spot nodes (they carry
// no mark of their own); a bad mark on a Job, a PriorityClass or a LocalQueue is a Warning Event
// on that object, once: not again at the rebuilds that follow.
TEST_F(K8sProvisioning, JobsMarkTheirGangsAndBadMarksAreEventsOnTheirObjects) {
  json filler = cluster_->PodSpec("default", "filler", 8, "other-scheduler");
  filler["spec"]["nodeName"] = "gpu-0";
  cluster_->Create(filler);
  cluster_->CreateNodes(2, 8, "spot", {{"karpenter.sh/capacity-type", "spot"}});
  StartTessera();
  auto job = [&](const std::string& name, const std::string& mark) {
    json tmpl = cluster_->PodSpec("default", "x", 8, "tessera");
    return cluster_->Create(
        {{"apiVersion", "batch/v1"},
         {"kind", "Job"},
         {"metadata",
          {{"name", name},
           {"namespace", "default"},
           {"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}},
           {"annotations", {{kInterruptibleAnnotation, mark}}}}},
         {"spec",
          {{"parallelism", 2},
           {"template",
            {{"spec",
              {{"containers", tmpl["spec"]["containers"]}, {"restartPolicy", "Never"}}}}}}}});
  };
  const json spot_job = job("spot-job", "true");
  // No Job controller runs here: its two pods as the Job controller makes them (no mark).
  for (int i = 0; i < 2; ++i) {
    json pod = cluster_->PodSpec("default", "spot-job-" + std::to_string(i), 8, "tessera");
    pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                           {"kind", "Job"},
                                           {"name", "spot-job"},
                                           {"uid", spot_job["metadata"]["uid"]},
                                           {"controller", true}}};
    cluster_->Create(pod);
  }
  auto node_of = [&](const std::string& name) {
    return cluster_->Get("/api/v1/namespaces/default/pods/" + name)["spec"].value("nodeName", "");
  };
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return node_of("spot-job-0").rfind("spot-", 0) == 0 &&
               node_of("spot-job-1").rfind("spot-", 0) == 0;
      },
      kTimeout))
      << "'" << node_of("spot-job-0") << "', '" << node_of("spot-job-1") << "'";
  // Bad marks: on a Job, a PriorityClass (cluster-scoped: its Event is in "default"), a
  // LocalQueue.
  job("odd-job", "yes");
  cluster_->Create(
      {{"apiVersion", "scheduling.k8s.io/v1"},
       {"kind", "PriorityClass"},
       {"metadata", {{"name", "odd-class"}, {"annotations", {{kInterruptibleAnnotation, "True"}}}}},
       {"value", 10}});
  json lq = cluster_->Get("/apis/tessera.dev/v1alpha1/namespaces/default/localqueues/lq");
  auto r = cluster_->client().Patch(
      "/apis/tessera.dev/v1alpha1/namespaces/default/localqueues/lq",
      json{{"metadata", {{"annotations", {{kInterruptibleAnnotation, "1"}}}}}}.dump(),
      PatchType::kMerge);
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : std::string("no answer"));
  auto said = [&](const std::string& name, const std::string& kind, const std::string& got) {
    for (const json& e : EventsOf("default", name, "InvalidAnnotation"))
      if (e["involvedObject"].value("kind", "") == kind && e.value("type", "") == "Warning" &&
          e.value("message", "").find("got \"" + got + "\"; the value is ignored") !=
              std::string::npos)
        return e;
    return json();
  };
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        return said("odd-job", "Job", "yes").is_object() &&
               said("odd-class", "PriorityClass", "True").is_object() &&
               said("lq", "LocalQueue", "1").is_object();
      },
      kTimeout))
      << said("odd-job", "Job", "yes").dump() << said("odd-class", "PriorityClass", "True").dump()
      << said("lq", "LocalQueue", "1").dump();
  EXPECT_EQ(said("odd-job", "Job", "yes")["involvedObject"]["uid"],
            cluster_->Get("/apis/batch/v1/namespaces/default/jobs/odd-job")["metadata"]["uid"]);
  EXPECT_EQ(said("lq", "LocalQueue", "1")["involvedObject"]["uid"], lq["metadata"]["uid"]);
  // A rebuild (a node comes) reads the marks again: nothing is said again.
  const int64_t rebuilds = metrics_list_.back()->rebuilds.load();
  cluster_->CreateNodes(1, 8, "late");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return metrics_list_.back()->rebuilds.load() > rebuilds; },
                                   kTimeout));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& [name, kind, got] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"odd-job", "Job", "yes"},
           {"odd-class", "PriorityClass", "True"},
           {"lq", "LocalQueue", "1"}}) {
    EXPECT_EQ(said(name, kind, got).value("count", 0), 1) << said(name, kind, got).dump();
    EXPECT_EQ(EventsOf("default", name, "InvalidAnnotation").size(), 1u) << name;
  }
}

}  // namespace
}  // namespace tessera::k8s
