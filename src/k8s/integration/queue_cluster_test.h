// The fixture the Kubernetes integration tests of Tessera's queues share: a real kube-apiserver
// and etcd (tests/k8s/test_cluster.h) serving Tessera's queue CRDs and PodGroups, and the
// objects the tests make (flavors, queues, gangs). Skipped, with the reason printed, when the API
// server is not built.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing_queues {

using ::tessera::k8s::testing::json;
using ::tessera::k8s::testing::TestCluster;

inline std::string ReadRepoFile(const std::string& rel) {
  std::ifstream in(TestCluster::RepoRoot() + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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

  void TearDown() override { cluster_.reset(); }

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

  // A PodGroup `group` of `n` pods of one GPU each, `group`-0 ... in LocalQueue "lq".
  void CreateGang(const std::string& ns, const std::string& group, int n, json labels) {
    cluster_->Create({{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                      {"kind", "PodGroup"},
                      {"metadata", {{"name", group}, {"namespace", ns}}},
                      {"spec", {{"minMember", n}}}});
    labels["scheduling.x-k8s.io/pod-group"] = group;
    labels["kueue.x-k8s.io/queue-name"] = "lq";
    for (int i = 0; i < n; ++i)
      cluster_->Create(cluster_->PodSpec(ns, fmt::format("{}-{}", group, i), 1, "tessera", labels));
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

  std::unique_ptr<TestCluster> cluster_;
};

}  // namespace tessera::k8s::testing_queues
