// Serve's rules for nodes an autoscaler adds and takes away (docs/autoscaling.md, "Kubernetes
// mode"): nodes being removed take no new pods, spot nodes are for workloads that tolerate
// interruption, and the running pods of a gang are marked so that a consolidating autoscaler
// leaves their nodes alone.
//
// Apart from the controller because these are policies over the model's plain values (a Node, a
// Workload), testable without a cluster; the controller applies them where it builds the engine's
// model (object_cache.cc, controller_decisions.cc).
//
// Thread-safety: pure functions over values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/node.h"
#include "model/workload.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// The annotation saying whether a workload may be interrupted: one that may runs, and prefers to
// run, on spot nodes. "true" or "false"; on a pod (or its template), on a PriorityClass or a
// WorkloadPriorityClass, on a LocalQueue or on a ClusterQueue; the most specific that says wins
// (InterruptibleMarks).
inline constexpr const char* kInterruptibleAnnotation = "tessera.dev/interruptible";
// What serve puts on the bound pods of a gang (NodePolicyOptions::protect_min_pods) so that
// consolidation does not take their nodes: Karpenter's annotation, and the Cluster Autoscaler's.
inline constexpr const char* kDoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt";
inline constexpr const char* kSafeToEvictAnnotation =
    "cluster-autoscaler.kubernetes.io/safe-to-evict";

struct NodePolicyOptions {
  // Bound pods of a workload of at least this many pods carry kDoNotDisruptAnnotation "true" and
  // kSafeToEvictAnnotation "false", set in the Binding (no write of its own). 0: off; 1: every pod.
  int protect_min_pods = 2;
  // Spot nodes (a node with one of these labels) take only interruptible workloads, which prefer
  // them. Off: spot nodes are nodes like the others.
  bool spot_policy = true;
  std::vector<std::pair<std::string, std::string>> spot_labels = {
      {"karpenter.sh/capacity-type", "spot"},
      {"cloud.google.com/gke-spot", "true"},
      {"eks.amazonaws.com/capacityType", "SPOT"},
  };
};

// The node is being taken away by an autoscaler: the Cluster Autoscaler's
// ToBeDeletedByClusterAutoscaler taint, or Karpenter's karpenter.sh/disrupted (v1) or
// karpenter.sh/disruption=disrupting (before v1) NoSchedule taint. Such a node takes no new pods;
// what runs there stays.
bool BeingRemoved(const Node& node);
// The node carries one of the spot labels.
bool IsSpot(const Node& node, const NodePolicyOptions& options);
// The value of kInterruptibleAnnotation in `annotations`: nullopt when absent, and when neither
// "true" nor "false" (then `problem`, if given, says so: "metadata.annotations.
// tessera.dev/interruptible: expected \"true\" or \"false\", got \"yes\"").
std::optional<bool> ReadInterruptible(const std::map<std::string, std::string>& annotations,
                                      std::string* problem = nullptr);

// KAI's non-preemptible workloads (docs/manifests.md, "Non-preemptible workloads"): the label or
// annotation kai.scheduler/preemptibility (KAI's) or tessera.dev/preemptibility, on a pod or a
// PriorityClass: "non-preemptible" (true) or "preemptible" (false). nullopt when absent, and when
// another value or two that disagree (then `problem`, if given, names the key).
std::optional<bool> ReadNonPreemptible(const std::map<std::string, std::string>& labels,
                                       const std::map<std::string, std::string>& annotations,
                                       std::string* problem = nullptr);

// The marks of the objects a workload may take its interruptibility from when its pods do not
// say, as serve last read them (object_cache.h); an object without a valid mark is absent.
struct InterruptibleMarks {
  // The object that owns the gang's pods, by group key: a batch Job ("Job:ns/name", where Kueue
  // users put their labels), a scheduling.x-k8s.io PodGroup ("PodGroup:ns/name", which Kubeflow's
  // training operator makes) or a Volcano PodGroup ("Volcano:ns/name", which carries its Volcano
  // Job's annotations).
  std::map<std::string, bool> owners;
  std::map<std::string, bool> priority_classes;           // scheduling.k8s.io PriorityClass
  std::map<std::string, bool> workload_priority_classes;  // by name
  std::map<std::string, bool> local_queues;               // "ns/name"
  std::map<std::string, bool> cluster_queues;
};
// What a workload's pod sets without a mark of their own take, and where it comes from ("" when
// nothing says: not interruptible). Most specific first: the object that owns its pods (its
// Job or PodGroup, by Workload::source), its WorkloadPriorityClass
// (kueue.x-k8s.io/priority-class), its PriorityClass (or the global default one when it names
// none), its LocalQueue, its LocalQueue's ClusterQueue. A level that says "false" stops the
// search: that is how a more specific object keeps a workload off spot nodes that its queue
// would send there. `m` gives the LocalQueues' ClusterQueues and the default PriorityClass.
struct InterruptibleDefault {
  std::optional<bool> value;
  std::string from;  // "PriorityClass spot-ok", "ClusterQueue batch", ...
};
InterruptibleDefault DefaultInterruptible(const Workload& w, const InterruptibleMarks& marks,
                                          const Model& m);

// Whether pod set `ps` tolerates interruption: its own kInterruptibleAnnotation when it is
// "true" or "false", else `fallback` (absent: not interruptible).
bool Interruptible(const PodSet& ps, std::optional<bool> fallback = std::nullopt);
// With the spot policy on: every pod set that is not interruptible (Interruptible(ps, fallback))
// is kept off spot nodes (a NotIn requirement per spot label in every required node affinity
// term), and every one that is prefers them (a preferred term of weight 100 per spot label).
// Only the engine's copy of the workload changes; the pods keep their own spec.
void ApplySpotPolicy(Workload& w, const NodePolicyOptions& options,
                     std::optional<bool> fallback = std::nullopt);
// The same rules written into a pod spec (the JSON of a ProvisioningRequest's PodTemplate), so
// that an autoscaler adds spot nodes only for the interruptible: a NotIn requirement per spot
// label in every required node selector term, or a preferred term of weight 100 per spot label.
// A spec whose affinity is not an object is left as it is.
void ApplySpotPolicyToPodSpec(nlohmann::json& spec, bool interruptible,
                              const NodePolicyOptions& options);

}  // namespace tessera::k8s
