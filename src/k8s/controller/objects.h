// API objects as Tessera's Kubernetes mode reads them: Pods, Nodes, PodGroups, Jobs and
// PriorityClasses parsed from the API server's JSON into small structs, plus the names of the
// labels and annotations Tessera reads and writes.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "k8s/controller/gpu_health.h"
#include "k8s/controller/time_fields.h"
#include "model/node.h"
#include "model/queues.h"
#include "model/workload.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

using json = nlohmann::json;

// The annotation Tessera writes on a pod when it binds it: the GPU device indices it chose on the
// node, comma-separated ("0,3"). A device plugin or the node agent reads it to expose exactly those
// devices (NVIDIA_VISIBLE_DEVICES); a restarted Tessera reads it to rebuild GPU ownership.
inline constexpr const char* kGpuIndicesAnnotation = "tessera.dev/gpu-indices";
// On a node whose MIG layout Tessera chooses: the first memory slice (0-7) of each MIG instance,
// in the order of kGpuIndicesAnnotation's devices (docs/manifests.md, "MIG layouts").
inline constexpr const char* kMigStartsAnnotation = "tessera.dev/mig-starts";
inline constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kTesseraQueueLabel = "tessera.dev/queue";
inline constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr const char* kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";
// Kueue's plain-pod groups: every member carries the group's name as a label and the group's
// size as an annotation (https://kueue.sigs.k8s.io/docs/tasks/run/plain_pods/).
inline constexpr const char* kKueuePodGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr const char* kKueuePodGroupTotalAnnotation = "kueue.x-k8s.io/pod-group-total-count";
// The group kind of a pod that names a PodGroup of the Workload API (scheduling.k8s.io, Kubernetes
// 1.36+) in spec.schedulingGroup.podGroupName; workload_api.h reads that PodGroup.
inline constexpr const char* kWorkloadPodGroupKind = "WorkloadPodGroup";

struct PodInfo {
  std::string ns, name, uid, resource_version;
  std::string scheduler_name;
  std::string node_name;  // spec.nodeName: bound when not empty
  std::string phase;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::string created;    // metadata.creationTimestamp (RFC 3339, sorts as time)
  std::map<std::string, std::string> labels, annotations;
  PodSet set;  // count 1: this pod's requests, selector, affinity, tolerations
  std::string priority_class;
  std::optional<int32_t> priority;      // spec.priority, filled in by the admission plugin
  int64_t grace_period = 30;            // spec.terminationGracePeriodSeconds
  std::string queue_name;               // its queue markers (model/queue_markers.h)
  std::string workload_priority_class;  // kPriorityClassLabel
  // How the pod joins a workload: kind "WorkloadPodGroup", "PodGroup", "Volcano", "KueuePodGroup",
  // "Job" or "Pod",
  // and the group's name in the pod's namespace.
  std::string group_kind, group_name;
  // KueuePodGroup: kKueuePodGroupTotalAnnotation, the group's size; -1 when absent or malformed,
  // and then `group_error` says what is wrong with it (the group waits and shows it).
  int32_t group_total = -1;
  std::string group_error;
  std::string owner_replicaset;  // a Deployment's pod: its ReplicaSet (anti-affinity spans them)
  std::vector<int32_t> gpu_indices;  // kGpuIndicesAnnotation, empty when absent
  std::vector<int8_t> mig_starts;    // kMigStartsAnnotation, empty when absent
  // spec.schedulingGates' names: while any is there the pod is not to be bound (Kubernetes 1.30+);
  // gang assembly counts it as a pod not yet created.
  std::vector<std::string> scheduling_gates;
  std::string scheduled_condition;  // message of a PodScheduled=False condition, if any
  std::string scheduled_reason;     // ... and its reason
  // Devices of its containers the kubelet reports Unhealthy (gpu_health.h).
  std::vector<UnhealthyResource> unhealthy;
  // kai.scheduler/preemptibility or tessera.dev/preemptibility (node_policy.h): true for
  // non-preemptible; nullopt when it does not say.
  std::optional<bool> non_preemptible;
  // Its fields of time (time_fields.h: annotations, Kueue's label, spec.activeDeadlineSeconds),
  // and the values that could not be used ("metadata.annotations.KEY: why"), left out; also a
  // topology spread constraint left out ("spec.topologySpreadConstraints[i]...: why"). Each is
  // logged and becomes a Warning Event on the pod.
  TimeFields time;
  std::vector<std::string> time_problems;

  std::string Key() const { return ns + "/" + name; }
  std::string GroupKey() const { return group_kind + ":" + ns + "/" + group_name; }
  bool Terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  bool Bound() const { return !node_name.empty(); }
  bool Gated() const { return !scheduling_gates.empty(); }
};

struct PodGroupInfo {
  std::string ns, name;
  int32_t min_member = 1;
  std::string phase;
  int32_t scheduled = -1;  // status.scheduled as last seen
  std::string uid;
  TimeFields time;  // its annotations and labels (time_fields.h); the gang's first
  std::vector<std::string> time_problems;
};

// Volcano's PodGroup (scheduling.volcano.sh/v1beta1), which Volcano's job controller (or the user)
// creates for the pods annotated kVolcanoGroupAnnotation.
struct VolcanoPodGroupInfo {
  std::string ns, name;
  int32_t min_member = 1;      // spec.minMember: pods that must start together
  std::string queue;           // spec.queue (Volcano's webhook defaults it to "default")
  std::string priority_class;  // spec.priorityClassName
  Resources min_resources;     // spec.minResources: what minMember pods need, per Volcano
  std::string uid;
  TimeFields time;  // its annotations (sla-waiting-time among them) and labels; the gang's first
  std::vector<std::string> time_problems;
};

// A batch Job: its parallelism is the gang size of its pods, and Kueue users put the queue and
// priority labels on the Job rather than on its pod template.
struct JobInfo {
  std::string ns, name;
  int32_t parallelism = 1;
  std::optional<int32_t> completions;  // spec.completions; absent: work queue, parallelism rules
  int32_t succeeded = 0;               // status.succeeded
  std::string queue_name;
  std::string workload_priority_class;
  std::string uid;
  // spec.activeDeadlineSeconds, Kueue's max-exec-time-seconds label and the time annotations on
  // the Job (time_fields.h); the gang's first.
  TimeFields time;
  std::vector<std::string> time_problems;

  // The pods the Job controller keeps active: min(parallelism, completions - succeeded), at
  // least 1.
  int32_t GangSize() const;
};

// Parses a v1 Pod. Errors name the field ("spec.containers[1].resources.requests.cpu: ...").
// Read as the manifest loader reads a pod: KAI's gpu-fraction / gpu-memory annotations make
// a GPU share, Kueue's podset-required/preferred-topology annotations a topology request, and
// podAntiAffinity on kubernetes.io/hostname that selects the pod's own labels spreads its
// group's pods (other anti-affinity terms are ignored).
[[nodiscard]] absl::StatusOr<PodInfo> ParsePod(const json& obj);
// One line with everything ParsePod read from a pod (for debug logs, and for tests that check
// two encodings of a pod read the same).
std::string Describe(const PodInfo& p);
// "entry=claim/template" for each of the pod's DRA claims (the claim's name once known).
std::vector<std::string> ClaimNames(const PodInfo& p);
// Parses a v1 Node into the model's Node (labels, taints, allocatable, unschedulable, and the GPU
// labels and annotations of config/gpu_fields.h). A node whose Ready condition is not True is
// reported through `ready`. A GPU label or annotation that cannot be used is left out of the
// node and said in `problems` ("metadata.annotations.tessera.dev/gpu-layout: ..."), if given.
[[nodiscard]] absl::StatusOr<Node> ParseNode(const json& obj, bool* ready,
                                             std::vector<std::string>* problems = nullptr);
[[nodiscard]] absl::StatusOr<PodGroupInfo> ParsePodGroup(const json& obj);
// Errors name the field ("spec.minResources.cpu: ...").
[[nodiscard]] absl::StatusOr<VolcanoPodGroupInfo> ParseVolcanoPodGroup(const json& obj);
[[nodiscard]] absl::StatusOr<JobInfo> ParseJob(const json& obj);
[[nodiscard]] absl::StatusOr<PriorityClass> ParsePriorityClass(const json& obj);

// "0,3" <-> {0, 3}. Parsing drops anything that is not a non-negative integer.
std::string FormatGpuIndices(const std::vector<int32_t>& gpus);
std::vector<int32_t> ParseGpuIndices(const std::string& text);

// "namespace/name" of an object's metadata.
std::string ObjectKey(const json& obj);

}  // namespace tessera::k8s
