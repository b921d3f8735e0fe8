// ObjectCache: the controller's copy of the cluster objects other than pods, as the informers
// hand them over (Nodes, PodGroups of either API, Volcano PodGroups, Jobs, the objects of the
// job kinds whose controllers create the pods, PriorityClasses, Namespaces and Tessera's queue
// kinds), and the engine's Model snapshot built from them.
//
// Apart from the loop because applying a watch event to these stores is bookkeeping that has
// nothing to do with scheduling: Apply only says what the change means for the controller (the
// engine must be rebuilt; these gangs must be sized again). Pods are not here: each pod change
// moves a gang, which is the loop's own business (controller.cc).
//
// Thread-safety: none; owned by the controller's scheduling loop thread.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "k8s/client/event_recorder.h"
#include "k8s/client/informer.h"
#include "k8s/controller/dra_objects.h"
#include "k8s/controller/gang_assembly.h"
#include "k8s/controller/node_policy.h"
#include "model/model.h"

namespace tessera::k8s {

// Tessera's queue kinds, served as CRDs of group tessera.dev (deploy/crds).
inline constexpr const char* kQueueGroup = "/apis/tessera.dev/v1alpha1";
inline constexpr const char* kQueueResources[] = {
    "resourceflavors",  "clusterqueues",          "localqueues", "cohorts", "topologies",
    "schedulerconfigs", "workloadpriorityclasses"};

class ObjectCache {
 public:
  // What a watch event changed, for the controller.
  struct Changes {
    bool rebuild = false;  // nodes, priorities or queues changed: the engine's Model is stale
    // The keys of the groups whose sizing object changed ("PodGroup:ns/name", "Job:ns/name", ...),
    // in the order of the event's objects.
    std::vector<std::string> sized_groups;
    bool volcano_relisted = false;  // every Volcano gang may have another size now
    // Likewise the Workload API's gangs (its PodGroups may be served now, or no longer).
    bool workload_podgroups_relisted = false;
  };

  // REQUIRES: ev.resource is not "pods".
  Changes Apply(const WatchEvent& ev);

  // A Model of the nodes (NotReady nodes unschedulable), the queue objects, priority classes
  // and namespace labels. node_names[i] is the name of m.nodes[i]. The loader's problems with
  // the queue objects are logged, each once while it lasts.
  Model Snapshot(std::vector<std::string>* node_names);

  const GangSources& gang_sources() const { return gangs_; }
  // The interruptible marks (node_policy.h): of the PriorityClasses and queue objects as of the
  // last Snapshot, of the Jobs and PodGroups as of the last event. A mark that is neither "true"
  // nor "false" is left out and logged, naming the object, once while it lasts.
  const InterruptibleMarks& interruptible_marks() const { return marks_; }
  // Those bad marks, each once while it lasts, since the last call: the object and what is wrong
  // ("metadata.annotations.tessera.dev/interruptible: expected ...; the value is ignored"), for
  // a Warning Event on it.
  std::vector<std::pair<ObjectRef, std::string>> TakeMarkProblems();
  // The status of LocalQueue `key` ("ns/name") as last seen; null when none (admission fair
  // sharing usage is read back from it: k8s/controller/fair_sharing_status.h).
  const json& LocalQueueStatus(const std::string& key) const;
  size_t num_nodes() const { return nodes_.size(); }
  const DraObjects& dra() const { return dra_; }

 private:
  void UpsertNode(const json& obj, Changes& changes);
  void ApplyNamespaces(const WatchEvent& ev, Changes& changes);
  // "owners/...": the objects of a job kind whose controller creates the pods (owner_kinds.h).
  void ApplyOwners(const OwnerKind& kind, const WatchEvent& ev, Changes& changes);
  // "workloadpodgroups": the Workload API's PodGroups (workload_api.h).
  void ApplyWorkloadPodGroups(const WatchEvent& ev, Changes& changes);
  void ReadInterruptibleMarks();
  // The mark of a Job's or PodGroup's object `o` (deleted: none), as owner of group `group_key`.
  void ReadOwnerMark(const ObjectRef& ref, const std::string& group_key, const json& o, bool del);
  // After a relist of the owners whose group keys start with `prefix`: forgets the marks said
  // for those not in `seen`.
  void ForgetOwnersNotSeen(const std::string& prefix, const std::set<std::string>& seen);

  std::map<std::string, std::pair<Node, bool>> nodes_;  // name -> node, ready
  DraObjects dra_;  // DeviceClasses, ResourceSlices, ResourceClaims
  GangSources gangs_;
  std::map<std::string, PriorityClass> priority_classes_;
  // PriorityClass name -> its metadata.annotations (the interruptible mark is read at Snapshot).
  std::map<std::string, std::map<std::string, std::string>> priority_class_annotations_;
  InterruptibleMarks marks_;
  std::set<std::string> logged_marks_;             // the invalid marks logged so far
  std::map<std::string, std::string> owner_said_;  // group key -> the bad owner mark said
  std::vector<std::pair<ObjectRef, std::string>> mark_problems_;  // not taken yet
  // "resource key" -> metadata.uid of the PriorityClasses and queue objects (for Events).
  std::map<std::string, std::string> uids_;
  // "Kind:ns/name" of an owner kind's object -> the group keys of the gangs it makes.
  std::map<std::string, std::vector<std::string>> owner_objects_;
  std::map<std::string, Labels> namespaces_;
  std::map<std::string, std::map<std::string, json>> queue_objects_;  // resource -> key -> obj
  std::map<std::string, json> local_queue_status_;                    // key -> status
  std::set<std::string> logged_diagnostics_;  // the loader's problems logged so far
  std::set<std::string> over_limit_;          // nodes left out of the last Snapshot (said once)
};

}  // namespace tessera::k8s
