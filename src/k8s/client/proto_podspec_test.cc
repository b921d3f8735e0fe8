// A pod that sets every field of a Kubernetes 1.37 PodSpec and Container (k8s.io/api v0.37.2
// core/v1 generated.proto), and the newer nested messages, read from protobuf and from JSON: the
// decoder skips what Tessera does not read, however nested, and both encodings read the same.
// Then the newer fields that decide where and whether a pod may be bound: spec.schedulingGates
// (1.30+) and pod-level spec.resources (1.34+), with the request Kubernetes' rule gives
// (model/pod_requests.h).
#include <gtest/gtest.h>

#include "k8s/client/proto.h"
#include "k8s/client/proto_testing.h"
#include "k8s/controller/objects.h"
#include "model/resources.h"

namespace tessera::k8s::proto {
namespace {

using testing::Envelope;
using testing::Pb;

// Container, all 25 fields of 1.37 (EphemeralContainerCommon has the same numbers).
Pb FullContainer(std::string_view name, bool sidecar) {
  Pb exec;
  exec.Msg(1, Pb().Msg(1, Pb().Bytes(1, "true")));  // ProbeHandler {exec {command}}
  Pb c;
  c.Bytes(1, name)
      .Bytes(2, "registry.invalid/train:1")
      .Bytes(3, "python")
      .Bytes(4, "train.py")
      .Bytes(4, "--epochs=3")
      .Bytes(5, "/work")
      .Msg(6, Pb().Bytes(1, "metrics").Varint(3, 9400).Bytes(4, "TCP"))
      .Msg(19, Pb().Bytes(1, "CFG_").Msg(2, Pb().Msg(1, Pb().Bytes(1, "cfg")).Varint(2, 1)))
      .Msg(7, Pb().Bytes(1, "RANK").Bytes(2, "0"))
      // ResourceRequirements: limits, requests, and claims (1.31+) {name, request}.
      .Msg(8, Pb().Quantity(1, "nvidia.com/gpu", "2")
                  .Quantity(2, "nvidia.com/gpu", "2")
                  .Quantity(2, "cpu", "1500m")
                  .Quantity(2, "memory", "4Gi")
                  .Msg(3, Pb().Bytes(1, "nic").Bytes(2, "rdma")))
      .Msg(23, Pb().Bytes(1, "cpu").Bytes(2, "NotRequired"))  // resizePolicy
      // restartPolicyRules (1.34+): {action, exitCodes {operator, values}}, values both
      // unpacked and packed (the decoder must skip either).
      .Msg(25,
           Pb().Bytes(1, "Restart").Msg(2, Pb().Bytes(1, "In").Varint(2, 42).Bytes(2, "\x2b\x2c")))
      .Msg(9, Pb().Bytes(1, "scratch").Bytes(3, "/scratch").Bytes(7, "Disabled").Bytes(8, "rbind"))
      .Msg(21, Pb().Bytes(1, "blk").Bytes(2, "/dev/xvda"))
      .Msg(10, Pb().Msg(1, exec).Varint(2, 5).Varint(7, 10))
      .Msg(11, Pb().Msg(1, exec).Varint(4, 3))
      .Msg(22, Pb().Msg(1, exec).Varint(6, 30))
      .Msg(12, Pb().Msg(2, Pb().Msg(4, Pb().Varint(1, 5))).Bytes(3, "SIGUSR1"))  // preStop sleep
      .Bytes(13, "/dev/termination-log")
      .Bytes(20, "FallbackToLogsOnError")
      .Bytes(14, "IfNotPresent")
      .Msg(15, Pb().Msg(1, Pb().Bytes(1, "IPC_LOCK"))
                   .Varint(2, 0)
                   .Varint(4, 1000)
                   .Msg(12, Pb().Bytes(1, "RuntimeDefault")))
      .Varint(16, 0)
      .Varint(17, 0)
      .Varint(18, 0);
  if (sidecar) c.Bytes(24, "Always");
  return c;
}

Pb Requirement(std::string_view key, std::string_view op, std::string_view value) {
  return Pb().Bytes(1, key).Bytes(2, op).Bytes(3, value);
}

// PodSpec, every field of 1.37 (1-41, 43, 44; 42 is retired), and a field of a later version.
Pb FullPodSpec() {
  Pb affinity;
  affinity
      .Msg(1, Pb().Msg(1, Pb().Msg(1, Pb().Msg(1, Requirement("gpu", "In", "h100")))))
      // podAffinity: not read.
      .Msg(2, Pb().Msg(1, Pb().Msg(1, Requirement("app", "In", "db"))).Bytes(3, "zone"))
      .Msg(3,
           Pb().Msg(1,
                    Pb().Msg(1, Pb().Entry(1, "app", "train")).Bytes(3, "kubernetes.io/hostname")));
  Pb spec;
  spec.Msg(1, Pb().Bytes(1, "scratch").Msg(2, Pb().Msg(2, Pb().Bytes(1, "Memory"))))
      .Msg(20, FullContainer("proxy", true))
      .Msg(2, FullContainer("main", false))
      .Msg(34, Pb().Msg(1, FullContainer("debug", false)).Bytes(2, "main"))  // not counted
      .Bytes(3, "Never")
      .Varint(4, 15)
      .Varint(5, 3600)
      .Bytes(6, "ClusterFirst")
      .Entry(7, "pool", "gpu")
      .Bytes(8, "trainer")
      .Bytes(9, "trainer")
      .Varint(21, 0)
      .Varint(11, 0)
      .Varint(12, 0)
      .Varint(13, 0)
      .Varint(27, 1)
      .Msg(14, Pb().Varint(2, 1000)
                   .Varint(4, 2000)
                   .Varint(4, 3000)
                   .Varint(5, 2000)
                   .Msg(7, Pb().Bytes(1, "net.core.somaxconn").Bytes(2, "1024"))
                   .Bytes(12, "Strict")
                   .Bytes(13, "MountOption"))
      .Msg(15, Pb().Bytes(1, "regcred"))
      .Bytes(16, "w-0")
      .Bytes(17, "train")
      .Msg(18, affinity)
      .Bytes(19, "tessera")
      .Msg(22, Pb().Bytes(1, "nvidia.com/gpu").Bytes(2, "Exists").Bytes(4, "NoSchedule"))
      .Msg(23, Pb().Bytes(1, "10.0.0.9").Bytes(2, "store"))
      .Bytes(24, "high")
      .Varint(25, 1000)
      .Msg(26, Pb().Bytes(1, "1.1.1.1")
                   .Bytes(2, "svc.local")
                   .Msg(3, Pb().Bytes(1, "ndots").Bytes(2, "2")))
      .Msg(28, Pb().Bytes(1, "example.com/ready"))
      .Bytes(29, "nvidia")
      .Varint(30, 0)
      .Bytes(31, "PreemptLowerPriority")
      .Quantity(32, "cpu", "100m")
      .Msg(33, Pb().Varint(1, 1)
                   .Bytes(2, "zone")
                   .Bytes(3, "ScheduleAnyway")
                   .Msg(4, Pb().Entry(1, "app", "train"))
                   .Bytes(8, "pod-template-hash"))
      .Varint(35, 0)
      .Msg(36, Pb().Bytes(1, "linux"))                                            // os
      .Varint(37, 0)                                                              // hostUsers
      .Msg(38, Pb().Bytes(1, "example.com/quota"))                                // schedulingGates
      .Msg(39, Pb().Bytes(1, "nic").Bytes(4, "rdma-template"))                    // resourceClaims
      .Msg(40, Pb().Quantity(1, "memory", "16Gi").Quantity(2, "memory", "16Gi"))  // resources
      .Bytes(41, "w-0.train.example")                                             // hostname
      .Msg(43, Pb().Bytes(1, "train"))                                            // schedulingGroup
      .Msg(44, Pb().Bytes(1, "checkpointer").Varint(2, 10))                       // responders
      .Msg(45, Pb().Bytes(1, "a field of a later version"))
      .Fixed64(46, 7)
      .Fixed32(47, 7);
  return spec;
}

Pb FullPod() {
  Pb meta;
  meta.Bytes(1, "w-0")
      .Bytes(2, "w-")
      .Bytes(3, "team-a")
      .Bytes(5, "uid-1")
      .Bytes(6, "88")
      .Varint(7, 3)
      .Msg(8, Pb().Varint(1, 1767225600))
      .Varint(10, 30)
      .Entry(11, "app", "train")
      .Entry(11, "kueue.x-k8s.io/queue-name", "team-a")
      .Entry(12, "tessera.dev/max-wait", "30m")
      .Msg(13, Pb().Bytes(5, "batch/v1")
                   .Bytes(1, "Job")
                   .Bytes(3, "job-1")
                   .Bytes(4, "uid-j")
                   .Varint(6, 1)
                   .Varint(7, 1))
      .Bytes(14, "example.com/cleanup")
      .Msg(17, Pb().Bytes(1, "kube-controller-manager").Bytes(2, "Update").Bytes(3, "v1"));
  Pb status;
  status.Varint(17, 3)
      .Bytes(1, "Pending")
      .Msg(2, Pb().Bytes(1, "PodScheduled")
                  .Varint(7, 3)
                  .Bytes(2, "False")
                  .Msg(4, Pb().Varint(1, 1767225600))
                  .Bytes(5, "Unschedulable")
                  .Bytes(6, "waiting"))
      .Bytes(9, "Burstable")
      .Msg(15, Pb().Bytes(1, "nic").Bytes(2, "w-0-nic"))
      // containerStatuses: the kubelet's resource health (1.36+) of the main container's GPUs.
      .Msg(8,
           Pb().Bytes(1, "main")
               .Varint(4, 1)
               .Varint(5, 2)
               .Bytes(6, "trainer:1")
               .Quantity(10, "nvidia.com/gpu", "2")
               .Msg(14,
                    Pb().Bytes(1, "nvidia.com/gpu")
                        .Msg(2, Pb().Bytes(1, "GPU-a").Bytes(2, "Healthy"))
                        .Msg(2, Pb().Bytes(1, "GPU-b").Bytes(2, "Unhealthy").Bytes(6, "XID 79"))))
      .Msg(10, Pb().Bytes(1, "proxy").Varint(4, 1))
      .Quantity(19, "cpu", "1")
      .Msg(20, Pb().Quantity(2, "cpu", "1"));
  return Pb().Msg(1, meta).Msg(2, FullPodSpec()).Msg(3, status);
}

// The same container and pod as the API server writes them in JSON.
json FullContainerJson(const std::string& name, bool sidecar) {
  json exec = {{"exec", {{"command", {"true"}}}}};
  json c = json::parse(R"({
    "image": "registry.invalid/train:1", "command": ["python"], "args": ["train.py", "--epochs=3"],
    "workingDir": "/work", "ports": [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}],
    "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "cfg", "optional": true}}],
    "env": [{"name": "RANK", "value": "0"}],
    "resources": {"limits": {"nvidia.com/gpu": "2"},
                  "requests": {"nvidia.com/gpu": "2", "cpu": "1500m", "memory": "4Gi"},
                  "claims": [{"name": "nic", "request": "rdma"}]},
    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
    "restartPolicyRules": [{"action": "Restart", "exitCodes": {"operator": "In",
                                                               "values": [42, 43, 44]}}],
    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch", "recursiveReadOnly": "Disabled",
                      "bindMountOptions": ["rbind"]}],
    "volumeDevices": [{"name": "blk", "devicePath": "/dev/xvda"}],
    "lifecycle": {"preStop": {"sleep": {"seconds": 5}}, "stopSignal": "SIGUSR1"},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "FallbackToLogsOnError", "imagePullPolicy": "IfNotPresent",
    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "privileged": false,
                        "runAsUser": 1000, "appArmorProfile": {"type": "RuntimeDefault"}}})");
  c["name"] = name;
  c["livenessProbe"] = exec;
  c["livenessProbe"]["initialDelaySeconds"] = 5;
  c["livenessProbe"]["terminationGracePeriodSeconds"] = 10;
  c["readinessProbe"] = exec;
  c["readinessProbe"]["periodSeconds"] = 3;
  c["startupProbe"] = exec;
  c["startupProbe"]["failureThreshold"] = 30;
  if (sidecar) c["restartPolicy"] = "Always";
  return c;
}

json FullPodJson() {
  json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "w-0", "generateName": "w-", "namespace": "team-a", "uid": "uid-1",
      "resourceVersion": "88", "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z",
      "deletionGracePeriodSeconds": 30,
      "labels": {"app": "train", "kueue.x-k8s.io/queue-name": "team-a"},
      "annotations": {"tessera.dev/max-wait": "30m"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "job-1",
                           "uid": "uid-j", "controller": true, "blockOwnerDeletion": true}],
      "finalizers": ["example.com/cleanup"],
      "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                         "apiVersion": "v1"}]},
    "spec": {
      "volumes": [{"name": "scratch", "emptyDir": {"medium": "Memory"}}],
      "restartPolicy": "Never", "terminationGracePeriodSeconds": 15,
      "activeDeadlineSeconds": 3600, "dnsPolicy": "ClusterFirst", "nodeSelector": {"pool": "gpu"},
      "serviceAccountName": "trainer", "serviceAccount": "trainer",
      "automountServiceAccountToken": false, "hostNetwork": false, "hostPID": false,
      "hostIPC": false, "shareProcessNamespace": true,
      "securityContext": {"runAsUser": 1000, "supplementalGroups": [2000, 3000], "fsGroup": 2000,
        "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
        "supplementalGroupsPolicy": "Strict", "seLinuxChangePolicy": "MountOption"},
      "imagePullSecrets": [{"name": "regcred"}], "hostname": "w-0", "subdomain": "train",
      "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}]}},
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In",
                                                   "values": ["db"]}]},
           "topologyKey": "zone"}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "train"}},
           "topologyKey": "kubernetes.io/hostname"}]}},
      "schedulerName": "tessera",
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "hostAliases": [{"ip": "10.0.0.9", "hostnames": ["store"]}],
      "priorityClassName": "high", "priority": 1000,
      "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["svc.local"],
                    "options": [{"name": "ndots", "value": "2"}]},
      "readinessGates": [{"conditionType": "example.com/ready"}],
      "runtimeClassName": "nvidia", "enableServiceLinks": false,
      "preemptionPolicy": "PreemptLowerPriority", "overhead": {"cpu": "100m"},
      "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
        "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "train"}},
        "matchLabelKeys": ["pod-template-hash"]}],
      "setHostnameAsFQDN": false, "os": {"name": "linux"}, "hostUsers": false,
      "schedulingGates": [{"name": "example.com/quota"}],
      "resourceClaims": [{"name": "nic", "resourceClaimTemplateName": "rdma-template"}],
      "resources": {"limits": {"memory": "16Gi"}, "requests": {"memory": "16Gi"}},
      "hostnameOverride": "w-0.train.example",
      "schedulingGroup": {"podGroupName": "train"},
      "evictionResponders": [{"name": "checkpointer", "priority": 10}]},
    "status": {"observedGeneration": 3, "phase": "Pending",
      "conditions": [{"type": "PodScheduled", "observedGeneration": 3, "status": "False",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Unschedulable",
        "message": "waiting"}],
      "qosClass": "Burstable",
      "resourceClaimStatuses": [{"name": "nic", "resourceClaimName": "w-0-nic"}],
      "containerStatuses": [{"name": "main", "ready": true, "restartCount": 2,
        "image": "trainer:1", "allocatedResources": {"nvidia.com/gpu": "2"},
        "allocatedResourcesStatus": [{"name": "nvidia.com/gpu", "resources": [
          {"resourceID": "GPU-a", "health": "Healthy"},
          {"resourceID": "GPU-b", "health": "Unhealthy", "message": "XID 79"}]}]}],
      "initContainerStatuses": [{"name": "proxy", "ready": true}],
      "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "1"}}}})");
  pod["spec"]["initContainers"] = {FullContainerJson("proxy", true)};
  pod["spec"]["containers"] = {FullContainerJson("main", false)};
  json debug = FullContainerJson("debug", false);
  debug["targetContainerName"] = "main";
  pod["spec"]["ephemeralContainers"] = {debug};
  return pod;
}

TEST(ProtoPodSpec, EveryFieldOfA137PodSpecDecodesToWhatJsonReads) {
  auto decoded = DecodeObject(Envelope("Pod", FullPod()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto from_proto = ParsePod(*decoded);
  auto from_json = ParsePod(FullPodJson());
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(Describe(*from_proto), Describe(*from_json));
  // What Tessera reads, read (so that the equality is about something).
  EXPECT_EQ(from_proto->GroupKey(), "WorkloadPodGroup:team-a/train");  // spec.schedulingGroup
  EXPECT_EQ(from_proto->scheduler_name, "tessera");
  EXPECT_EQ(from_proto->priority, 1000);
  EXPECT_EQ(from_proto->grace_period, 15);
  EXPECT_EQ(from_proto->time.active_deadline, 3600);
  EXPECT_EQ(from_proto->time.max_wait, 1800);
  EXPECT_EQ(from_proto->queue_name, "team-a");
  EXPECT_EQ(from_proto->scheduled_condition, "waiting");
  ASSERT_EQ(from_proto->unhealthy.size(), 1u);  // the kubelet's resource health
  EXPECT_EQ(from_proto->unhealthy[0], (UnhealthyResource{"nvidia.com/gpu", "GPU-b", "XID 79"}));
  EXPECT_EQ(from_proto->set.anti_affinity, HostnameAntiAffinity::kRequired);
  EXPECT_EQ(from_proto->set.affinity.required_terms.size(), 1u);
  EXPECT_EQ(from_proto->set.tolerations.size(), 1u);
  EXPECT_EQ(from_proto->set.node_selector.at("pool"), "gpu");
  // The main container's 2 GPUs and the sidecar's 2: the ephemeral container's are not counted
  // (nor are the resource claims, the resize policy or the rules, all skipped).
  EXPECT_EQ(from_proto->set.requests.Get(kGpu), 4);
}

// The fields Tessera does not read, one by one beside a minimal pod: each decodes without error
// and leaves what is read the same as without it. (schedulingGates and the pod-level resources
// are read by Tessera, and checked in the test above through JSON.)
TEST(ProtoPodSpec, EachNewerFieldAloneIsSkipped) {
  auto base = [] {
    return Pb()
        .Bytes(19, "tessera")
        .Msg(2, Pb().Bytes(1, "c").Msg(8, Pb().Quantity(2, "cpu", "1")));
  };
  auto describe = [](const Pb& spec) {
    auto decoded =
        DecodeObject(Envelope("Pod", Pb().Msg(1, Pb().Bytes(1, "p").Bytes(3, "ns")).Msg(2, spec)));
    if (!decoded.ok()) return std::string(decoded.status().message());
    auto p = ParsePod(*decoded);
    return p.ok() ? Describe(*p) : std::string(p.status().message());
  };
  const std::string want = describe(base());
  const std::pair<int, Pb> fields[] = {{34, Pb().Msg(1, FullContainer("debug", false))},
                                       {36, Pb().Bytes(1, "linux")},
                                       {44, Pb().Bytes(1, "r").Varint(2, 1)},
                                       {14, Pb().Varint(4, 1).Varint(4, 2)},
                                       {1, Pb().Bytes(1, "v")}};
  for (const auto& [number, msg] : fields) {
    Pb spec = base();
    spec.Msg(number, msg);
    EXPECT_EQ(describe(spec), want) << "PodSpec field " << number;
  }
  // resourceClaims (39) are read now (DRA, docs/dra.md): the same as from JSON.
  {
    Pb spec = base();
    spec.Msg(39, Pb().Bytes(1, "nic").Bytes(3, "claim"));
    EXPECT_NE(describe(spec).find("claims=[nic=claim/]"), std::string::npos) << describe(spec);
  }
  for (int varint : {21, 27, 30, 35, 37}) {
    Pb spec = base();
    spec.Varint(varint, 1);
    EXPECT_EQ(describe(spec), want) << "PodSpec field " << varint;
  }
  for (int text : {3, 6, 8, 16, 17, 29, 31, 41}) {
    Pb spec = base();
    spec.Bytes(text, "x");
    EXPECT_EQ(describe(spec), want) << "PodSpec field " << text;
  }
}

// A gated pod with pod-level cpu and memory and a GPU container, field numbers from
// k8s.io/api v0.37.2 core/v1 generated.proto: PodSpec.schedulingGates = 38
// (PodSchedulingGate.name = 1), PodSpec.resources = 40 (ResourceRequirements: limits 1,
// requests 2).
Pb GatedPod() {
  Pb meta;
  meta.Bytes(1, "w-0").Bytes(3, "team-a").Entry(11, "scheduling.x-k8s.io/pod-group", "train");
  Pb container;
  container.Bytes(1, "main").Msg(8, Pb().Quantity(1, "nvidia.com/gpu", "2")
                                        .Quantity(2, "cpu", "1")
                                        .Quantity(2, "nvidia.com/gpu", "2"));
  Pb spec;
  spec.Msg(2, container)
      .Bytes(19, "tessera")
      .Msg(38, Pb().Bytes(1, "example.com/quota-check"))
      .Msg(38, Pb().Bytes(1, "example.com/data-ready"))
      .Msg(40, Pb().Quantity(1, "memory", "64Gi")
                   .Quantity(2, "cpu", "60")
                   .Quantity(2, "memory", "32Gi")
                   .Quantity(2, "nvidia.com/gpu", "8"))  // not a pod-level resource: ignored
      .Quantity(32, "cpu", "500m");
  Pb pod;
  pod.Msg(1, meta).Msg(2, spec).Msg(3, Pb().Bytes(1, "Pending"));
  return pod;
}

json GatedPodJson() {
  return json::parse(R"({
    "metadata": {"name": "w-0", "namespace": "team-a",
                 "labels": {"scheduling.x-k8s.io/pod-group": "train"}},
    "spec": {
      "containers": [{"name": "main", "resources": {
        "limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}],
      "schedulerName": "tessera",
      "schedulingGates": [{"name": "example.com/quota-check"}, {"name": "example.com/data-ready"}],
      "resources": {"limits": {"memory": "64Gi"},
                    "requests": {"cpu": "60", "memory": "32Gi", "nvidia.com/gpu": "8"}},
      "overhead": {"cpu": "500m"}},
    "status": {"phase": "Pending"}})");
}

TEST(ProtoPodSpec, GatesAndPodLevelResourcesReadAsFromJson) {
  auto decoded = DecodeObject(Envelope("Pod", GatedPod()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto from_proto = ParsePod(*decoded);
  auto from_json = ParsePod(GatedPodJson());
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(Describe(*from_proto), Describe(*from_json));
  EXPECT_EQ(from_proto->scheduling_gates,
            (std::vector<std::string>{"example.com/quota-check", "example.com/data-ready"}));
  EXPECT_TRUE(from_proto->Gated());
  // cpu and memory from the pod level (60 + 0.5 overhead; 32Gi), GPUs from the container.
  EXPECT_EQ(from_proto->set.requests.Get(kCpu), 60500);
  EXPECT_EQ(from_proto->set.requests.Get(kMemory), int64_t{32} << 30);
  EXPECT_EQ(from_proto->set.requests.Get(kGpu), 2);
}

TEST(ProtoPodSpec, PodLevelLimitAloneIsTheRequest) {
  json pod = GatedPodJson();
  pod["spec"].erase("schedulingGates");
  pod["spec"]["resources"] = json::parse(R"({"limits": {"cpu": "48", "memory": "8Gi"}})");
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->Gated());
  // cpu: the containers' aggregate (1) when they name it; memory: the pod-level limit.
  EXPECT_EQ(p->set.requests.Get(kCpu), 1500);
  EXPECT_EQ(p->set.requests.Get(kMemory), int64_t{8} << 30);
}

TEST(ProtoPodSpec, APodLevelQuantityThatDoesNotParseNamesTheField) {
  json pod = GatedPodJson();
  pod["spec"]["resources"]["requests"]["cpu"] = "sixty";
  auto p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("spec.resources.requests.cpu"), std::string::npos)
      << p.status();
}

}  // namespace
}  // namespace tessera::k8s::proto
