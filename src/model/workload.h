// A workload: a gang of pods admitted together, as Kueue's Workload. Every supported job kind
// (batch Job, Volcano Job, PodGroup + Pods, PyTorchJob, TFJob, Pod, Deployment replica) becomes
// one of these.
//
// Thread-safety: value types.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dra/model.h"
#include "model/labels.h"
#include "model/resources.h"

namespace tessera {

using WorkloadId = int32_t;

// Where a pod set's pods must (or should) be, in the topology of the nodes. Kueue's pod template
// annotations kueue.x-k8s.io/podset-required-topology / podset-preferred-topology name a level
// by its node label; Volcano's spec.networkTopology names a tier (1 = the level just above the
// nodes, then outward), resolved against the flavor's Topology levels.
struct TopologyRequest {
  std::string level;  // node label of the level; empty when `tier` is used
  int32_t tier = 0;
  bool required = false;  // all pods in one domain, else not admitted; false: as few as possible
  // Pod sets of one workload with the same non-empty group are placed in one domain together, at
  // the level of the first one's request (Kueue's podset-group-name).
  std::string group;
  bool present() const { return !level.empty() || tier > 0; }
};

// podAntiAffinity among a pod set's own pods on kubernetes.io/hostname.
enum class HostnameAntiAffinity : int8_t { kNone, kPreferred, kRequired };

// A pod template's topologySpreadConstraints entry whose labelSelector selects the pod's own
// labels: the pods of the workload's spread group (the workload; a Deployment's replicas) are
// spread over the domains (values of `topology_key`) of the nodes the pod may use. `required`
// (whenUnsatisfiable: DoNotSchedule): a pod goes only to a node with the key, in a domain whose
// count after placing it exceeds the smallest count by at most `max_skew`; else
// (ScheduleAnyway) domains with fewer of the group's pods are preferred.
struct TopologySpread {
  std::string topology_key;
  int32_t max_skew = 1;
  bool required = true;
  // minDomains (DoNotSchedule only; 0: unset): while the pod may use fewer domains than this,
  // the smallest count is taken as 0, so each domain holds at most max_skew pods.
  int32_t min_domains = 0;
};

// Pods with one template.
struct PodSet {
  std::string name;
  int32_t count = 1;
  Resources requests;  // per pod (max of requests and limits where only limits are given)
  Labels node_selector;
  NodeAffinity affinity;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> annotations;  // pod template annotations
  TopologyRequest topology;
  HostnameAntiAffinity anti_affinity = HostnameAntiAffinity::kNone;
  std::vector<TopologySpread> spread;  // topologySpreadConstraints
  // Pods of this set that must start together (Kueue's per-pod-set minCount, a Kueue Workload's
  // spec.podSets[].minCount); -1: none of its own (the workload's min_count applies).
  int32_t min_count = -1;
  // The pods' terminationGracePeriodSeconds: how long a preempted pod is given to stop. The
  // manifest loader fills in Kubernetes' default (30) where the template says nothing; a pod set
  // built in code, or from a trace, has none (0).
  double termination_grace = 0;
  // spec.resourceClaims: DRA claims every pod of the set needs allocated on its node.
  std::vector<dra::PodClaim> claims;
};

struct Workload {
  std::string ns = "default";
  std::string name;
  std::string kind;            // "Job", "Volcano Job", "PodGroup", "PyTorchJob", ... for messages
  std::string queue_name;      // LocalQueue in `ns`; empty: not queued (placement only, no quota)
  std::string priority_class;  // PriorityClass name, may be empty
  std::string workload_priority_class;  // kueue.x-k8s.io/priority-class, wins when set
  std::vector<PodSet> pod_sets;
  int32_t min_count = -1;         // pods that must start together; -1: all of them
  double arrival = 0;             // seconds after start (tessera.dev/arrival)
  std::optional<double> runtime;  // seconds once admitted (tessera.dev/runtime); absent: forever
  // The FIFO key among equal priorities (tessera.dev/created, seconds after the simulation
  // starts; may precede the arrival); absent: the arrival.
  std::optional<double> created;
  // metadata.creationTimestamp as Unix seconds, as the manifest loader read it; the loader maps
  // it onto `created` (relative to the input's earliest, docs/manifests.md).
  std::optional<double> creation_timestamp;
  // tessera.dev/admitted: "true": already admitted when the simulation starts (the simulator
  // admits these at 0 before anything else arrives).
  bool admitted_at_start = false;
  // tessera.dev/admitted-flavor: the ResourceFlavor each pod set runs in at the start, as
  // (pod set name, flavor name); an empty pod set name stands for every pod set. Non-empty
  // implies admitted_at_start: the simulator restores the workload there at 0 (docs/manifests.md).
  std::vector<std::pair<std::string, std::string>> admitted_flavors;
  // Time (docs/time.md). All in seconds.
  // What the user says the workload will run for: tessera.dev/runtime-estimate. Absent: learned
  // (capped by the deadline), else the deadline (engine/time/estimator.h).
  std::optional<double> runtime_estimate;
  // A hard limit on each run, counted from admission (a batch Job's or Pod's
  // spec.activeDeadlineSeconds, a Kubeflow job's spec.runPolicy.activeDeadlineSeconds, Kueue's
  // kueue.x-k8s.io/max-exec-time-seconds label; the smallest): the simulator fails the workload
  // there (DeadlineExceeded).
  std::optional<double> active_deadline;
  // Longest wait before the workload goes ahead of its priority (tessera.dev/max-wait, Volcano's
  // sla-waiting-time annotation). Absent: the ClusterQueue's, else none.
  std::optional<double> max_wait;
  // No preemption before it has run this long (tessera.dev/min-runtime). Absent: the
  // ClusterQueue's, else 0.
  std::optional<double> min_runtime;
  // How often it checkpoints (tessera.dev/checkpoint-interval): a preemption loses the work since
  // the last one. Absent: it does not, and loses all.
  std::optional<double> checkpoint_interval;
  // KAI's preemptibility (label or annotation kai.scheduler/preemptibility or
  // tessera.dev/preemptibility): true: non-preemptible, admitted only within its queue's nominal
  // quota and never preempted; false: preemptible; absent: as its priority class says.
  std::optional<bool> non_preemptible;
  // Workloads whose pods' hostname anti-affinity applies across them (a Deployment's replicas,
  // which are separate workloads); empty: the workload alone.
  std::string spread_group;
  Labels labels;  // metadata.labels (cost is summed by some of them: docs/cost.md)
  std::string source;

  std::string Key() const { return ns + "/" + name; }
  int32_t TotalPods() const {
    int32_t n = 0;
    for (const auto& ps : pod_sets) n += ps.count;
    return n;
  }
  // Whether some pod set has a minCount of its own: then every pod set's minimum is its own
  // (its count where it has none), as in Kueue, and the workload's min_count is not used.
  bool PerSetMinimums() const {
    for (const auto& ps : pod_sets)
      if (ps.min_count >= 0) return true;
    return false;
  }
  // Pods of pod set `ps` that must start together: its own minimum (above), else the workload's
  // minCount filled pod set by pod set in order.
  int32_t MinOfSet(size_t ps) const {
    if (PerSetMinimums())
      return pod_sets[ps].min_count < 0 ? pod_sets[ps].count
                                        : std::min(pod_sets[ps].min_count, pod_sets[ps].count);
    int32_t left = min_count < 0 ? TotalPods() : min_count;
    for (size_t i = 0; i < ps; ++i) left -= pod_sets[i].count;
    return std::max(0, std::min(pod_sets[ps].count, left));
  }
  int32_t MinPods() const {
    if (!PerSetMinimums()) return min_count < 0 ? TotalPods() : min_count;
    int32_t n = 0;
    for (size_t ps = 0; ps < pod_sets.size(); ++ps) n += MinOfSet(ps);
    return n;
  }
  // How long a preempted workload keeps its pods: the longest grace period of its pod sets.
  double GraceSeconds() const {
    double g = 0;
    for (const auto& ps : pod_sets) g = ps.termination_grace > g ? ps.termination_grace : g;
    return g;
  }
};

}  // namespace tessera
