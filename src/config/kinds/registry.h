// Job kinds as plugins: one file per kind under config/kinds/ (a Kueue GenericJob's counterpart),
// each returning a JobKind that says which API object it reads, how it turns one into workloads
// (its pod sets: name, count, minimum count, the pod template's requests, selectors,
// tolerations, affinity and topology annotations; its queue, priority, runtime and deadline),
// and how Kubernetes mode finds the pods its controller creates.
//
// The manifest loader (config/loader.cc: the simulator and `validate`) dispatches to `read`, and
// Kubernetes mode (k8s/controller) reads the same objects from the API server through the same
// loader, so the two modes know the same kinds by construction. docs/architecture.md, "How to add
// a job kind", says what a new one needs.
//
// Internal to src/config, but for JobKinds()' descriptors, which Kubernetes mode reads.
// Thread-safety: JobKinds() is built once, at first use, and read-only after.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/kinds.h"

namespace tessera::config_internal {

// How Kubernetes mode links a pod its controller created to the object: the pod carries the
// object's name in `name_label`; when `index_label` is set, the object makes one workload per
// value of that label, named "<object name>-<value>" (e.g. a LeaderWorkerSet's replicas). Where
// several kinds' controllers use one name label (Kubeflow's training-operator and MPI operator),
// `require_label` must also carry `require_value` (the operator's name). A kind whose pods carry
// no such label (a StatefulSet's) links them by `owner_reference`: the pod's controller
// ownerReference is an object of this kind.
struct PodLink {
  std::string_view name_label;
  std::string_view index_label;
  std::string_view require_label;
  std::string_view require_value;
  bool owner_reference = false;
};

struct JobKind {
  std::string_view group;                  // "" for the core group
  std::vector<std::string_view> versions;  // the first is the one `read` is written for
  std::string_view kind;
  std::string_view plural;  // the API resource; "" when Kubernetes mode does not watch it so
  bool namespaced = true;
  // Reads one object into workloads (appended to out.model.workloads) and diagnostics (ctx).
  void (*read)(DocContext& ctx, const ObjectMeta& meta, Staged& out) = nullptr;
  // Neither a name_label nor owner_reference: Kubernetes mode links its pods otherwise (a batch
  // Job's by their owner, PodGroups' by their label), or they are another kind's (a RayJob's are
  // its RayCluster's).
  PodLink pods;
};

// Every job kind, in the order the loader lists them.
const std::vector<JobKind>& JobKinds();
// The kind of `group`/`kind`, or nullptr.
const JobKind* FindJobKind(std::string_view group, std::string_view kind);

// One per file of config/kinds/.
JobKind AppWrapperKind();
JobKind BatchJobKind();
JobKind JobSetKind();
JobKind LeaderWorkerSetKind();
JobKind StatefulSetKind();
JobKind ClusterTrainingRuntimeKind();
JobKind DeploymentKind();
JobKind KueueWorkloadKind();
JobKind MPIJobKind();
JobKind PodKind();
JobKind PodGroupKind();
JobKind SigsPodGroupKind();
JobKind PyTorchJobKind();
JobKind RayClusterKind();
JobKind RayJobKind();
JobKind RayServiceKind();
JobKind TFJobKind();
JobKind TrainingRuntimeKind();
JobKind TrainJobKind();
JobKind VolcanoJobKind();

}  // namespace tessera::config_internal
