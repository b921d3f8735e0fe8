// The fixture the Kubernetes integration tests of Tessera's queues share: a real kube-apiserver
// and etcd (tests/k8s/test_cluster.h) serving Tessera's queue CRDs and PodGroups, and the
// objects the tests make (flavors, queues, gangs). Skipped, with the reason printed, when the API
// server is not built.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/observe/metrics.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing_queues {

using ::tessera::k8s::testing::json;
using ::tessera::k8s::testing::TestCluster;

inline std::string ReadRepoFile(const std::string& rel) {
  return testing::ReadFile(TestCluster::RepoRoot() + "/" + rel);
}

// A ClusterQueue with one flavor "default" of 64 cores and `gpus` GPUs; `cohort` empty: none.
inline json ClusterQueueObject(const std::string& name, int gpus, const std::string& cohort = "",
                               const json& preemption = json::object()) {
  json spec = {{"namespaceSelector", json::object()},
               {"resourceGroups",
                {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
                  {"flavors",
                   {{{"name", "default"},
                     {"resources",
                      {{{"name", "cpu"}, {"nominalQuota", 64}},
                       {{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}}}}}}}}}};
  if (!cohort.empty()) spec["cohort"] = cohort;
  if (!preemption.empty()) spec["preemption"] = preemption;
  return {{"apiVersion", "tessera.dev/v1alpha1"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

// Ten one-GPU pods of another scheduler hold 10 of 16 GPUs.
inline void CreateFillers(TestCluster& c) {
  for (int i = 0; i < 10; ++i) {
    json pod = c.PodSpec("default", fmt::format("filler-{}", i), 1, "other-scheduler");
    pod["spec"]["nodeName"] = fmt::format("gpu-{}", i % 2);
    c.Create(pod);
  }
}

// A scheduling.x-k8s.io PodGroup of `min_member`.
inline json PodGroupObject(const std::string& ns, const std::string& name, int min_member) {
  return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"minMember", min_member}}}};
}

class QueueClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    bool not_built = false;
    cluster_ = TestCluster::Start(&why, &not_built);
    if (!cluster_) {
      if (not_built) GTEST_SKIP() << "SKIPPED (Kubernetes integration): " << why;
      FAIL() << why;
    }
    cluster_->ApplyRepoFile("deploy/crds/tessera.dev_queues.yaml");
    cluster_->ApplyRepoFile("deploy/crds/scheduling.x-k8s.io_podgroups.yaml");
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

  // Statuses, gauges and dcgm-exporter readings each this often: short, so tests see them soon.
  double status_period_s_ = 0.2;

  void TearDown() override {
    controllers_.clear();
    cluster_.reset();
  }

  // A controller of its own (metrics_list_.back() are its metrics), stopped at the end of the test.
  Controller* StartTessera(ControllerOptions o = {}) {
    auto metrics = std::make_unique<Metrics>();
    o.status_period_s = status_period_s_;
    auto c = std::make_unique<Controller>(&cluster_->client(), o, metrics.get());
    c->Start();
    metrics_list_.push_back(std::move(metrics));
    controllers_.push_back(std::move(c));
    return controllers_.back().get();
  }

  void CreateFlavor(const std::string& name = "default") {
    cluster_->Create({{"apiVersion", "tessera.dev/v1alpha1"},
                      {"kind", "ResourceFlavor"},
                      {"metadata", {{"name", name}}},
                      {"spec", json::object()}});
  }

  void CreateLocalQueue(const std::string& ns, const std::string& name,
                        const std::string& cluster_queue) {
    cluster_->Create({{"apiVersion", "tessera.dev/v1alpha1"},
                      {"kind", "LocalQueue"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"spec", {{"clusterQueue", cluster_queue}}}});
  }

  // A PodGroup `group` (minMember `n`) and its `n` pods of `gpus` GPUs each, `group`-0 ...
  void CreatePodGroup(const std::string& ns, const std::string& group, int n, int gpus,
                      json labels = json::object(), const std::string& priority_class = "") {
    cluster_->Create(PodGroupObject(ns, group, n));
    labels["scheduling.x-k8s.io/pod-group"] = group;
    for (int i = 0; i < n; ++i) {
      json pod = cluster_->PodSpec(ns, fmt::format("{}-{}", group, i), gpus, "tessera", labels);
      if (!priority_class.empty()) pod["spec"]["priorityClassName"] = priority_class;
      cluster_->Create(pod);
    }
  }

  // A PodGroup `group` of `n` pods of `gpus` GPUs each (one by default) in LocalQueue "lq".
  void CreateGang(const std::string& ns, const std::string& group, int n, json labels,
                  int gpus = 1) {
    labels["kueue.x-k8s.io/queue-name"] = "lq";
    CreatePodGroup(ns, group, n, gpus, std::move(labels));
  }

  // Pods of `ns` whose name starts with `prefix` and that are bound to a node.
  int Bound(const std::string& ns, const std::string& prefix) {
    int n = 0;
    for (const auto& p : cluster_->Pods(ns))
      if (p["metadata"]["name"].get<std::string>().rfind(prefix, 0) == 0 &&
          !p["spec"].value("nodeName", "").empty())
        ++n;
    return n;
  }

  int CountWithPrefix(const std::string& ns, const std::string& prefix) {
    int n = 0;
    for (const auto& p : cluster_->Pods(ns))
      if (p["metadata"]["name"].get<std::string>().rfind(prefix, 0) == 0) ++n;
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
  std::vector<std::unique_ptr<Metrics>> metrics_list_;  // of the controllers StartTessera made
  std::vector<std::unique_ptr<Controller>> controllers_;
};

// The fixture of tests/k8s/integration_test.cc and integration_serve_test.cc: one class (not one
// per file), since Google Test wants one fixture class per test suite.
class K8sIntegration : public QueueClusterTest {};

}  // namespace tessera::k8s::testing_queues
