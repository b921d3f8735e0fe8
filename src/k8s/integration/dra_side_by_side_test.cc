// Tessera's DRA allocation beside kube-scheduler 1.37's on one API server (docs/dra.md,
// "Side by side with kube-scheduler"): a randomized corpus of ResourceSlices and ResourceClaims
// (exact counts, CEL selectors on attributes, firstAvailable, matchAttribute, allocationMode
// All, several requests, devices shared by memory through consumable capacity), each claim tried on
// each kind of node by both schedulers at once. Every (claim, node) pair is a node of its own for
// each scheduler, and its pod is held there by a nodeSelector, so the answers do not depend on what
// else was placed: the pair is feasible or not, and when it is, both allocate some devices. They
// must agree on every pair; the devices chosen are compared and the differences printed.
// TESSERA_DRA_SEED picks another corpus.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "gtest/gtest.h"
#include "k8s/integration/queue_cluster_test.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 120;
constexpr const char* kDriver = "gpu.example.com";

std::string Attr(const std::string& name) {
  return fmt::format("device.attributes['{}'].{}", kDriver, name);
}

// A node kind: the devices of its one slice.
json RandomDevices(std::mt19937& rng) {
  const char* models[] = {"a100", "h100", "l4"};
  json devices = json::array();
  const int n = 2 + static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i)
    devices.push_back({{"name", fmt::format("gpu-{}", i)},
                       {"attributes",
                        {{"model", {{"string", models[rng() % 3]}}},
                         {"pcieRoot", {{"string", rng() % 2 ? "p1" : "p0"}}},
                         {"numa", {{"int", static_cast<int>(rng() % 2)}}},
                         {"index", {{"int", i}}}}}});
  // A device in six is tainted (DeviceTaint, stable in 1.37): only a claim that tolerates it
  // may have it.
  for (json& d : devices)
    if (rng() % 6 == 0)
      d["taints"] = {
          {{"key", "example.com/unhealthy"}, {"value", "xid"}, {"effect", "NoSchedule"}}};
  // A node kind in three shares its GPUs by memory (consumable capacity, KEP-5075, beta and on
  // since 1.36): several claims, and several requests of one claim, may take one device while
  // what they consume fits; a request is rounded up by the capacity's requestPolicy.
  if (rng() % 3 == 0) {
    const bool range = rng() % 2 == 0;
    const json policy =
        range ? json{{"default", "10Gi"},
                     {"validRange", {{"min", "10Gi"}, {"step", "10Gi"}, {"max", "80Gi"}}}}
              : json{{"default", "20Gi"}, {"validValues", {"20Gi", "40Gi", "80Gi"}}};
    for (json& d : devices) {
      d["allowMultipleAllocations"] = true;
      d["capacity"] = {{"memory", {{"value", "80Gi"}, {"requestPolicy", policy}}}};
    }
  }
  return devices;
}

// The specs of the slices of a node kind of partitionable GPUs, as the NVIDIA driver publishes MIG:
// each GPU's whole device and its two halves draw on one counter set of that GPU, so a half
// excludes the whole and the whole excludes both halves.
json PartitionedSpec(const std::string& pool, const std::string& node, int gpus) {
  json counters = json::array(), devices = json::array();
  for (int g = 0; g < gpus; ++g) {
    const std::string set = fmt::format("gpu-{}-counters", g);
    counters.push_back({{"name", set}, {"counters", {{"memory", {{"value", "80Gi"}}}}}});
    auto device = [&](const std::string& name, const char* memory, bool whole) {
      devices.push_back(
          {{"name", name},
           {"attributes",
            {{"model", {{"string", "h100"}}},
             {"mig", {{"bool", !whole}}},
             {"pcieRoot", {{"string", g % 2 ? "p1" : "p0"}}},
             {"numa", {{"int", g % 2}}},
             {"index", {{"int", g}}}}},
           {"consumesCounters",
            {{{"counterSet", set}, {"counters", {{"memory", {{"value", memory}}}}}}}}});
    };
    device(fmt::format("gpu-{}", g), "80Gi", true);
    device(fmt::format("gpu-{}-mig-0", g), "40Gi", false);
    device(fmt::format("gpu-{}-mig-1", g), "40Gi", false);
  }
  // Counter sets in a slice of their own (API servers 1.35+ refuse both in one), same pool.
  json base = {{"driver", kDriver},
               {"nodeName", node},
               {"pool", {{"name", pool}, {"generation", 1}, {"resourceSliceCount", 2}}}};
  json with_counters = base, with_devices = base;
  with_counters["sharedCounters"] = counters;
  with_devices["devices"] = devices;
  return json::array({with_counters, with_devices});
}

json Exactly(const std::string& cls, int count, const std::string& cel = "") {
  json e = {{"deviceClassName", cls}, {"count", count}};
  if (!cel.empty()) e["selectors"] = {{{"cel", {{"expression", cel}}}}};
  return e;
}

// One device of `memory` (consumable capacity).
json Share(const std::string& name, const std::string& memory) {
  json e = Exactly("gpu.example.com", 1);
  e["capacity"] = {{"requests", {{"memory", memory}}}};
  return {{"name", name}, {"exactly", e}};
}

// A claim's spec.devices, of one of thirteen shapes.
json RandomClaim(std::mt19937& rng) {
  const char* models[] = {"a100", "h100", "l4"};
  const int count = 1 + static_cast<int>(rng() % 3);
  switch (rng() % 13) {
    case 10:  // a share, rounded up by the policy (30Gi or 40Gi)
      return {{"requests", {Share("gpu", "25Gi")}}};
    case 11:  // two shares of one device (one index): only a shared device holds both
      return {{"requests", {Share("a", "40Gi"), Share("b", "30Gi")}},
              {"constraints",
               {{{"requests", {"a", "b"}}, {"matchAttribute", fmt::format("{}/index", kDriver)}}}}};
    case 12:  // more than a shared device allows
      return {{"requests", {Share("gpu", "90Gi")}}};
    case 7:  // halves of partitioned GPUs
      return {{"requests",
               {{{"name", "gpu"},
                 {"exactly", Exactly("gpu.example.com", 1 + count, Attr("mig") + " == true")}}}}};
    case 8: {  // whole GPUs, tolerating the taint
      json e = Exactly("gpu.example.com", count);
      e["tolerations"] = {{{"key", "example.com/unhealthy"}, {"operator", "Exists"}}};
      return {{"requests", {{{"name", "gpu"}, {"exactly", e}}}}};
    }
    case 9:  // a whole GPU and a half of another
      return {{"requests",
               {{{"name", "whole"},
                 {"exactly", Exactly("gpu.example.com", 1, "!(" + Attr("mig") + " == true)")}},
                {{"name", "half"},
                 {"exactly", Exactly("gpu.example.com", 1, Attr("mig") + " == true")}}}}};
    case 0:
      return {{"requests", {{{"name", "gpu"}, {"exactly", Exactly("gpu.example.com", count)}}}}};
    case 1:
      return {
          {"requests",
           {{{"name", "gpu"},
             {"exactly", Exactly("gpu.example.com", count,
                                 fmt::format("{} == '{}'", Attr("model"), models[rng() % 3]))}}}}};
    case 2:
      return {{"requests", {{{"name", "gpu"}, {"exactly", Exactly("h100.example.com", count)}}}}};
    case 3:
      return {{"requests",
               {{{"name", "gpu"},
                 {"firstAvailable",
                  {{{"name", "big"}, {"deviceClassName", "h100.example.com"}, {"count", 2}},
                   {{"name", "small"}, {"deviceClassName", "gpu.example.com"}, {"count", 1}}}}}}}};
    case 4:
      return {{"requests", {{{"name", "gpu"}, {"exactly", Exactly("gpu.example.com", 1 + count)}}}},
              {"constraints", {{{"matchAttribute", fmt::format("{}/pcieRoot", kDriver)}}}}};
    case 5: {
      json e = {{"deviceClassName", "gpu.example.com"},
                {"allocationMode", "All"},
                {"selectors", {{{"cel", {{"expression", Attr("numa") + " == 0"}}}}}}};
      return {{"requests", {{{"name", "gpu"}, {"exactly", e}}}}};
    }
    default:
      return {{"requests",
               {{{"name", "fast"}, {"exactly", Exactly("h100.example.com", 1)}},
                {{"name", "other"},
                 {"exactly", Exactly("gpu.example.com", count, Attr("model") + " != 'h100'")}}}}};
  }
}

class K8sDraSideBySide : public testing_queues::QueueClusterTest {};

TEST_F(K8sDraSideBySide, SameFeasibilityAsKubeSchedulerOnARandomCorpus) {
  const std::string bin = TestCluster::KubeSchedulerPath();
  ASSERT_FALSE(bin.empty()) << "kube-scheduler is not built (scripts/k8s/build-apiserver.sh)";
  const char* seed_env = std::getenv("TESSERA_DRA_SEED");
  const unsigned seed = seed_env ? static_cast<unsigned>(std::atoi(seed_env)) : 1;
  std::mt19937 rng(seed);
  constexpr int kNodeKinds = 5, kClaims = 16;  // the last node kind: partitioned GPUs
  std::vector<json> kinds, claims;
  for (int t = 0; t + 1 < kNodeKinds; ++t) kinds.push_back(RandomDevices(rng));
  kinds.push_back(json());  // PartitionedSpec, 2 GPUs
  for (int k = 0; k < kClaims; ++k) claims.push_back(RandomClaim(rng));

  for (const auto& [name, cel] : std::vector<std::pair<std::string, std::string>>{
           {"gpu.example.com", fmt::format("device.driver == '{}'", kDriver)},
           {"h100.example.com",
            fmt::format("device.driver == '{}' && {} == 'h100'", kDriver, Attr("model"))}})
    cluster_->Create({{"apiVersion", "resource.k8s.io/v1"},
                      {"kind", "DeviceClass"},
                      {"metadata", {{"name", name}}},
                      {"spec", {{"selectors", {{{"cel", {{"expression", cel}}}}}}}}});
  const char* stacks[] = {"default-scheduler", "tessera"};
  auto pair_name = [](int s, int k, int t) { return fmt::format("s{}-c{}-n{}", s, k, t); };
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < kClaims; ++k)
      for (int t = 0; t < kNodeKinds; ++t) {
        const std::string p = pair_name(s, k, t);
        cluster_->CreateNodes(1, 0, p, {{"tessera.dev/pair", p}});
        json specs =
            kinds[t].is_null()
                ? PartitionedSpec(p, p + "-0", 2)
                : json::array(
                      {{{"driver", kDriver},
                        {"nodeName", p + "-0"},
                        {"pool", {{"name", p}, {"generation", 1}, {"resourceSliceCount", 1}}},
                        {"devices", kinds[t]}}});
        for (size_t i = 0; i < specs.size(); ++i)
          cluster_->Create({{"apiVersion", "resource.k8s.io/v1"},
                            {"kind", "ResourceSlice"},
                            {"metadata", {{"name", fmt::format("{}-{}", p, i)}}},
                            {"spec", specs[i]}});
        cluster_->Create({{"apiVersion", "resource.k8s.io/v1"},
                          {"kind", "ResourceClaim"},
                          {"metadata", {{"name", p}, {"namespace", "default"}}},
                          {"spec", {{"devices", claims[k]}}}});
        json pod = cluster_->PodSpec("default", p, 0, stacks[s]);
        pod["spec"]["nodeSelector"] = {{"tessera.dev/pair", p}};
        pod["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", p}}};
        pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
        cluster_->Create(pod);
      }
  std::vector<std::string> argv = {bin, "--kubeconfig=" + cluster_->kubeconfig_path(),
                                   "--leader-elect=false", "--secure-port=0", "--v=0"};
  if (!cluster_->FeatureGates().empty())
    argv.push_back("--feature-gates=" + cluster_->FeatureGates());
  int pid = TestCluster::Spawn(argv, cluster_->dir() + "/kube-scheduler.log");
  ASSERT_GT(pid, 0);
  StartTessera();

  // Every pod bound, or told why not (PodScheduled=False), by its scheduler.
  auto settled = [&] {
    int n = 0;
    for (const json& p : cluster_->Pods("default")) {
      bool done = !p["spec"].value("nodeName", "").empty();
      for (const json& c : p["status"].value("conditions", json::array()))
        done = done || (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False");
      n += done;
    }
    return n == 2 * kClaims * kNodeKinds;
  };
  ASSERT_TRUE(TestCluster::WaitFor(settled, kTimeout)) << "not every pod was decided";
  std::this_thread::sleep_for(std::chrono::seconds(3));  // a retry that binds one late
  ASSERT_TRUE(TestCluster::WaitFor(settled, kTimeout));

  std::map<std::string, bool> bound;
  for (const json& p : cluster_->Pods("default"))
    bound[p["metadata"].value("name", "")] = !p["spec"].value("nodeName", "").empty();
  std::map<std::string, std::set<std::string>> devices;
  json list = cluster_->Get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims");
  for (const json& c : list.value("items", json::array())) {
    auto& d = devices[c["metadata"].value("name", "")];
    const json& a = c["status"].value("allocation", json());
    if (a.is_object())
      for (const json& r : a["devices"].value("results", json::array()))
        d.insert(r.value("request", "") + ":" + r.value("device", ""));
  }
  int agree = 0, feasible = 0, same_devices = 0;
  for (int k = 0; k < kClaims; ++k)
    for (int t = 0; t < kNodeKinds; ++t) {
      const std::string ks = pair_name(0, k, t), ts = pair_name(1, k, t);
      EXPECT_EQ(bound[ks], bound[ts])
          << "claim " << k << " " << claims[k].dump() << " on node kind " << t << " "
          << kinds[t].dump() << ": kube-scheduler " << (bound[ks] ? "binds" : "does not bind")
          << ", Tessera " << (bound[ts] ? "binds" : "does not bind");
      agree += bound[ks] == bound[ts];
      if (!(bound[ks] && bound[ts])) continue;
      ++feasible;
      EXPECT_EQ(devices[ks].size(), devices[ts].size()) << "claim " << k << " node kind " << t;
      if (devices[ks] == devices[ts]) {
        ++same_devices;
      } else {
        std::cout << fmt::format(
            "[ devices ] claim {} node kind {}: kube-scheduler {}, Tessera {}\n  claim {}\n  "
            "devices {}\n",
            k, t, fmt::join(devices[ks], ","), fmt::join(devices[ts], ","), claims[k].dump(),
            kinds[t].is_null() ? "partitioned" : kinds[t].dump());
      }
    }
  std::cout << fmt::format(
      "[ side by side ] seed {}: {} of {} (claim, node) pairs decided alike; {} feasible for "
      "both, {} of them with the same devices\n",
      seed, agree, kClaims * kNodeKinds, feasible, same_devices);
  EXPECT_GT(feasible, 0);
  EXPECT_LT(feasible, kClaims * kNodeKinds);  // the corpus has both answers
  TestCluster::Kill(pid);
}

}  // namespace
}  // namespace tessera::k8s
