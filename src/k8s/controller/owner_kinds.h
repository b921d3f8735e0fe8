// The job kinds whose own controllers create the pods (JobSet, LeaderWorkerSet, RayCluster,
// MPIJob, AppWrapper ...: every plugin of config/kinds/ with a PodLink). Kubernetes mode watches
// each kind whose CRD is installed, reads every object through the same plugin as `tessera sim`
// (through the manifest loader), and puts a pod into its object's gang by the label the kind's
// controller sets on it. The gang's size, queue and priority come from the object, not from the
// pods seen so far, so that a gang whose controller creates its pods one by one (or a
// LeaderWorkerSet's leader before its workers) waits whole instead of starting part.
//
// Thread-safety: value types and pure functions; OwnerKinds() is built once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "k8s/controller/time_fields.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

struct OwnerKind {
  std::string kind;         // "JobSet"; also the group kind of its pods (PodInfo::group_kind)
  std::string group;        // "jobset.x-k8s.io"; "" for the core group
  std::string api_version;  // the version watched first: "jobset.x-k8s.io/v1alpha2"
  std::string resource;     // the informer's name: "owners/jobsets.jobset.x-k8s.io"
  std::vector<std::string> paths;  // list paths, newest version first
  std::string name_label;          // on each pod: the object's name
  std::string index_label;         // if set: one gang per value, "<object>-<value>"
  std::string require_label, require_value;  // if set: a pod of this kind also carries these
  bool owner_reference = false;  // no label: the pod's controller ownerReference names it
};

// Every kind with a PodLink, in the order of config/kinds/registry.cc.
const std::vector<OwnerKind>& OwnerKinds();
// The kind watched by informer `resource`, or nullptr.
const OwnerKind* OwnerKindOfResource(const std::string& resource);
const OwnerKind* OwnerKindNamed(const std::string& kind);

// One gang an object makes (a LeaderWorkerSet one per replica, the others one).
struct OwnerGang {
  std::string ns, name;  // the gang's name: the object's, or "<object>-<index>"
  // The object, for Events and `tessera get`.
  std::string kind, api_version, object_name, uid;
  int32_t min_member = 1;  // pods that must start together
  int32_t pods = 1;        // pods the object asks for
  std::string queue_name, priority_class, workload_priority_class;
  TimeFields time;
  std::vector<std::string> time_problems;
  // What the plugin said it does not honour, or could not use ("spec.x: why"), for Warning
  // Events on the object.
  std::vector<std::string> unread;
};

// Reads `obj` (as the API server sends it) through the kind's plugin. An object the plugin
// refuses (an error in it): the status says why; its pods then wait and show it.
absl::StatusOr<std::vector<OwnerGang>> ReadOwnerObject(const OwnerKind& kind,
                                                       const nlohmann::json& obj);

// The kind and gang name of a pod that carries a watched kind's label, else whose controller
// ownerReference (`owner_refs`: metadata.ownerReferences) is an object of a kind linked so;
// false when none is.
bool LinkPodToOwner(const std::map<std::string, std::string>& labels,
                    const nlohmann::json& owner_refs, std::string* kind, std::string* gang_name);

}  // namespace tessera::k8s
