// The Workload API (scheduling.k8s.io/v1beta1, Kubernetes 1.37 with GenericWorkload on; cluster.sh
// turns it on) on a real API server: a pod with every field of a 1.37 PodSpec the server accepts
// reads the same from JSON and protobuf, and a gang made by a Workload's PodGroup binds whole or
// not at all. Skipped where the API is not served (TESSERA_K8S_VERSION=1.34).
#include <iostream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "gtest/gtest.h"
#include "k8s/client/proto.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/objects.h"
#include "k8s/integration/queue_cluster_test.h"
#include "model/resources.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s::testing_queues {
namespace {

constexpr double kTimeout = 60;

class K8sWorkloadApi : public QueueClusterTest {
 protected:
  void SetUp() override {
    QueueClusterTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto r = cluster_->client().Get("/apis/scheduling.k8s.io/v1beta1/podgroups");
    if (!r.ok() || r->status != 200)
      GTEST_SKIP() << "SKIPPED: scheduling.k8s.io/v1beta1 PodGroups are not served by Kubernetes "
                   << TestCluster::Version();
  }
};

// Removes the field at a path as the API server names it in a Status cause
// ("spec.containers[0].lifecycle.stopSignal", "spec.resources.requests[memory]"); false when the
// object has no such field.
bool RemoveField(json& obj, const std::string& path) {
  std::vector<std::string> keys;
  std::string key;
  for (char c : path) {
    if (c == '.' || c == '[' || c == ']') {
      if (!key.empty()) keys.push_back(key);
      key.clear();
    } else {
      key.push_back(c);
    }
  }
  if (!key.empty()) keys.push_back(key);
  json* at = &obj;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool last = i + 1 == keys.size();
    if (at->is_array()) {
      if (keys[i].find_first_not_of("0123456789") != std::string::npos) return false;
      const size_t index = std::stoul(keys[i]);
      if (index >= at->size()) return false;
      if (last) {
        at->erase(index);
        return true;
      }
      at = &(*at)[index];
    } else if (at->is_object() && at->contains(keys[i])) {
      if (last) {
        at->erase(keys[i]);
        return true;
      }
      at = &(*at)[keys[i]];
    } else {
      return false;
    }
  }
  return false;
}

// A pod with every field of a 1.37 PodSpec and Container that can be set at creation
// (ephemeralContainers cannot: the unit test proto_podspec_test.cc has them).
json FullPod() {
  json c = json::parse(R"({
    "name": "main", "image": "registry.invalid/train:1", "command": ["python"],
    "args": ["train.py"], "workingDir": "/work",
    "ports": [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}],
    "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "cfg", "optional": true}}],
    "env": [{"name": "RANK", "value": "0"}],
    "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "4Gi"},
                  "requests": {"nvidia.com/gpu": "2", "cpu": "1500m", "memory": "4Gi"},
                  "claims": [{"name": "nic"}]},
    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
    "restartPolicy": "Never",
    "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In",
                                                               "values": [42]}}],
    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
    "volumeDevices": [{"name": "blk", "devicePath": "/dev/xvda"}],
    "livenessProbe": {"exec": {"command": ["true"]}, "initialDelaySeconds": 5,
                      "terminationGracePeriodSeconds": 10},
    "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 3},
    "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
    "lifecycle": {"preStop": {"sleep": {"seconds": 5}}, "stopSignal": "SIGUSR1"},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "FallbackToLogsOnError", "imagePullPolicy": "IfNotPresent",
    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "privileged": false,
                        "runAsUser": 1000, "appArmorProfile": {"type": "RuntimeDefault"}},
    "stdin": false, "stdinOnce": false, "tty": false})");
  json sidecar = {{"name", "proxy"},
                  {"image", "registry.invalid/proxy"},
                  {"restartPolicy", "Always"},
                  {"resources", {{"requests", {{"cpu", "250m"}, {"memory", "1Gi"}}}}}};
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "rich", "namespace": "wl",
      "labels": {"app": "train", "pod-template-hash": "abc"},
      "annotations": {"tessera.dev/max-wait": "30m"}},
    "spec": {
      "volumes": [{"name": "scratch", "emptyDir": {"medium": "Memory"}},
                  {"name": "blk", "persistentVolumeClaim": {"claimName": "blk"}}],
      "restartPolicy": "Never", "terminationGracePeriodSeconds": 15,
      "activeDeadlineSeconds": 3600, "dnsPolicy": "ClusterFirst", "nodeSelector": {"pool": "gpu"},
      "serviceAccountName": "trainer", "automountServiceAccountToken": false,
      "hostNetwork": false, "hostPID": false, "hostIPC": false, "shareProcessNamespace": true,
      "securityContext": {"runAsUser": 1000, "supplementalGroups": [2000], "fsGroup": 2000,
        "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
        "supplementalGroupsPolicy": "Strict", "seLinuxChangePolicy": "MountOption"},
      "imagePullSecrets": [{"name": "regcred"}], "hostname": "rich", "subdomain": "train",
      "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "train"}},
           "topologyKey": "kubernetes.io/hostname"}]}},
      "schedulerName": "tessera",
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "hostAliases": [{"ip": "10.0.0.9", "hostnames": ["store"]}],
      "priorityClassName": "wl-high",
      "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["svc.local"],
                    "options": [{"name": "ndots", "value": "2"}]},
      "readinessGates": [{"conditionType": "example.com/ready"}],
      "runtimeClassName": "wl-nvidia", "enableServiceLinks": false,
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
        "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "train"}},
        "matchLabelKeys": ["pod-template-hash"]}],
      "setHostnameAsFQDN": false, "os": {"name": "linux"}, "hostUsers": false,
      "schedulingGates": [{"name": "example.com/quota"}],
      "resourceClaims": [{"name": "nic", "resourceClaimTemplateName": "rdma"}],
      "resources": {"limits": {"memory": "16Gi"}, "requests": {"memory": "16Gi"}},
      "hostnameOverride": "rich.train.example",
      "schedulingGroup": {"podGroupName": "train"},
      "evictionResponders": [{"name": "checkpointer", "priority": 10}]}})");
  pod["spec"]["containers"] = {c};
  pod["spec"]["initContainers"] = {sidecar};
  return pod;
}

TEST_F(K8sWorkloadApi, APodWithEveryFieldTheServerAcceptsReadsTheSameFromJsonAndProtobuf) {
  cluster_->CreateNamespace("wl");
  cluster_->Create(json::parse(R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
      "metadata": {"name": "wl-high"}, "value": 1000})"));
  // Its overhead is copied onto the pod by the RuntimeClass admission plugin.
  cluster_->Create(json::parse(R"({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
      "metadata": {"name": "wl-nvidia"}, "handler": "nvidia",
      "overhead": {"podFixed": {"cpu": "100m"}}})"));
  json pod = FullPod();
  std::vector<std::string> refused;
  auto& client = cluster_->client();
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 20) << "the server keeps refusing the pod: " << refused.size();
    auto r = client.Post("/api/v1/namespaces/wl/pods", pod.dump());
    ASSERT_TRUE(r.ok()) << r.status();
    if (r->status == 201) break;
    ASSERT_EQ(r->status, 422) << r->body;
    // A field this server refuses (a feature gate that is off, a combination it forbids): left
    // out, and said, so that the test keeps every field it does accept.
    bool removed = false;
    for (const json& cause : json::parse(r->body)["details"].value("causes", json::array())) {
      const std::string field = cause.value("field", "");
      if (RemoveField(pod, field)) {
        refused.push_back(field + ": " + cause.value("message", ""));
        removed = true;
      }
    }
    ASSERT_TRUE(removed) << r->body;
  }
  const json as_json = cluster_->Get("/api/v1/namespaces/wl/pods/rich");
  // What the server dropped without a word (a field of a gate that is off; a false boolean is
  // only left out), and refused.
  std::vector<std::string> dropped;
  auto absent = [&](const json& in, const json& back, const std::string& prefix) {
    for (auto it = in.begin(); it != in.end(); ++it)
      if (!back.contains(it.key()) && it.value() != false) dropped.push_back(prefix + it.key());
  };
  absent(pod["spec"], as_json["spec"], "spec.");
  absent(pod["spec"]["containers"][0], as_json["spec"]["containers"][0], "spec.containers[0].");
  std::cout << "Kubernetes " << TestCluster::Version() << " refused: " << fmt::format("{}", refused)
            << "\nnot kept (absent when read back): " << fmt::format("{}", dropped) << "\n";
  EXPECT_TRUE(as_json["spec"].contains("schedulingGroup")) << "GenericWorkload is off?";

  auto describe = [](const json& obj) {
    auto p = ParsePod(obj);
    return p.ok() ? Describe(*p) : std::string(p.status().message());
  };
  auto as_proto = [&](const std::string& path) -> json {
    auto r = client.Get(path, proto::kAccept);
    EXPECT_TRUE(r.ok() && r->status == 200) << path;
    EXPECT_TRUE(proto::IsProtobuf(r->content_type)) << r->content_type;
    auto decoded = proto::DecodeObject(r->body);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    return decoded.ok() ? *decoded : json();
  };
  const std::string want = describe(as_json);
  auto parsed = ParsePod(as_json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->GroupKey(), "WorkloadPodGroup:wl/train");
  EXPECT_EQ(parsed->priority, 1000);  // filled in by the Priority admission plugin
  EXPECT_EQ(parsed->set.requests.Get(kGpu), 2);
  EXPECT_EQ(parsed->set.anti_affinity, HostnameAntiAffinity::kRequired);
  EXPECT_EQ(parsed->time.max_wait, 1800);
  EXPECT_EQ(describe(as_proto("/api/v1/namespaces/wl/pods/rich")), want);
  json list = as_proto("/api/v1/namespaces/wl/pods");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(describe(list["items"][0]), want);
}

json WorkloadObject(const std::string& ns, const std::string& name, const json& policy) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "Workload"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"controllerRef", {{"apiGroup", "batch"}, {"kind", "Job"}, {"name", name}}},
            {"podGroupTemplates", {{{"name", "workers"}, {"schedulingPolicy", policy}}}}}}};
}

// The PodGroup a Workload's controller makes from its template "workers".
json PodGroupOf(const std::string& ns, const std::string& workload, const json& policy) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", workload + "-workers"}, {"namespace", ns}}},
          {"spec",
           {{"workloadRef", {{"workloadName", workload}, {"templateName", "workers"}}},
            {"schedulingPolicy", policy}}}};
}

TEST_F(K8sWorkloadApi, GangOfAWorkloadPodGroupBindsWholeOrNotAtAll) {
  cluster_->CreateNodes(1, 8, "gpu");
  cluster_->CreateNamespace("wl");
  Controller* tessera = StartTessera();
  ASSERT_TRUE(TestCluster::WaitFor([&] { return tessera->synced(); }, kTimeout));
  const json gang = {{"gang", {{"minCount", 4}}}};
  cluster_->Create(WorkloadObject("wl", "train", gang));
  cluster_->Create(PodGroupOf("wl", "train", gang));
  auto pod = [&](const std::string& name, const std::string& group, int gpus) {
    json p = cluster_->PodSpec("wl", name, gpus);
    p["spec"]["schedulingGroup"] = {{"podGroupName", group}};
    cluster_->Create(p);
  };
  // 1. Three of the gang's four pods, every GPU free: none is bound; the gang's size is its
  // minCount, not the pods that exist.
  for (int i = 0; i < 3; ++i) pod(fmt::format("train-{}", i), "train-workers", 1);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] { return WaitMessage("wl", "train-0") == "waiting for the gang's pods: 3 of 4 exist"; },
      kTimeout))
      << WaitMessage("wl", "train-0");
  EXPECT_EQ(Bound("wl", "train-"), 0);
  // 2. Another scheduler's pod holds 6 of the 8 GPUs; the fourth pod comes: the gang cannot fit
  // whole, and none of it is bound (two would fit).
  json filler = cluster_->PodSpec("wl", "filler", 6, "other-scheduler");
  filler["spec"]["nodeName"] = "gpu-0";
  cluster_->Create(filler);
  pod("train-3", "train-workers", 1);
  ASSERT_TRUE(TestCluster::WaitFor(
      [&] {
        const std::string m = WaitMessage("wl", "train-3");
        return !m.empty() && m.find("exist") == std::string::npos;
      },
      kTimeout))
      << WaitMessage("wl", "train-3");
  EXPECT_EQ(Bound("wl", "train-"), 0) << WaitMessage("wl", "train-3");
  // 3. The other pod ends: the whole gang is bound.
  cluster_->DeletePod("wl", "filler");
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("wl", "train-") == 4; }, kTimeout))
      << WaitMessage("wl", "train-0");
  // 4. A basic PodGroup is no gang: of three 2-GPU pods, the two that fit in the 4 GPUs left are
  // bound, the third waits.
  // Its claim shared by the group (DRAWorkloadResourceClaims) is not Tessera's to allocate: said
  // on the PodGroup, where the server keeps the field.
  const json basic = {{"basic", json::object()}};
  cluster_->Create(WorkloadObject("wl", "web", basic));
  json web = PodGroupOf("wl", "web", basic);
  web["spec"]["resourceClaims"] = {{{"name", "nic"}, {"resourceClaimTemplateName", "rdma"}}};
  const json created = cluster_->Create(web);
  for (int i = 0; i < 3; ++i) pod(fmt::format("web-{}", i), "web-workers", 2);
  ASSERT_TRUE(TestCluster::WaitFor([&] { return Bound("wl", "web-") == 2; }, kTimeout));
  EXPECT_EQ(Bound("wl", "train-"), 4);
  ExpectNoDoubleBooking({"wl"}, 8);
  if (created["spec"].contains("resourceClaims")) {
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] { return !EventsOf("wl", "web-workers", "UnsupportedField").empty(); }, kTimeout));
    const json event = EventsOf("wl", "web-workers", "UnsupportedField")[0];
    EXPECT_EQ(event["involvedObject"]["kind"], "PodGroup");
    EXPECT_EQ(event["type"], "Warning");
    EXPECT_EQ(event["message"].get<std::string>().rfind("spec.resourceClaims: not read", 0), 0u)
        << event["message"];
  } else {
    std::cout << "PodGroup spec.resourceClaims is not kept by this server (gate off)\n";
  }
}

}  // namespace
}  // namespace tessera::k8s::testing_queues
