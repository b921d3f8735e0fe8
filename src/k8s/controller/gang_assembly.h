// Gang assembly: turns the pods of one group (a Workload API PodGroup's, a PodGroup's, a Volcano
// PodGroup's, a Kueue plain-pod group's, a batch Job's, or a lone pod) into the engine Workload
// the controller submits: how big the gang must be (minMember, from the object that sizes it),
// which LocalQueue and priority it has (from the pods, else the Job or Volcano PodGroup), its
// fields of time (time_fields.h: the group object's, else its first pod's that has one; the
// smallest deadline), and its pod sets (one when the pods are alike, else one per pod). A gang
// that is not complete yet gets the reason it waits instead. A pod with scheduling gates
// (spec.schedulingGates) is not yet a member, as a pod not yet created: it counts toward neither
// the gang's pods nor its workload, and the gang's minimum must be met by pods without gates, so
// that no part of a gang is bound while a member it needs is held; when its last gate goes, it
// joins.
//
// Kept apart from the controller's loop so that the rules that decide what a gang is can be read
// and tested alone (gang_assembly_test.cc) from parsed pods, without an API server or an engine.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "k8s/controller/objects.h"
#include "k8s/controller/owner_kinds.h"
#include "k8s/controller/workload_api.h"
#include "model/workload.h"

namespace tessera::k8s {

// What sizes gangs and queues them, beside the pods: the objects the informers keep
// (ObjectCache), by "namespace/name".
struct GangSources {
  std::map<std::string, PodGroupInfo> podgroups;  // scheduling.x-k8s.io PodGroups
  std::map<std::string, VolcanoPodGroupInfo> volcano_groups;
  bool volcano_served = false;  // scheduling.volcano.sh PodGroups are served (CRD installed)
  std::map<std::string, JobInfo> jobs;
  // The Workload API's PodGroups (scheduling.k8s.io; workload_api.h), and whether this server
  // serves them (Kubernetes 1.36+ with the API turned on).
  std::map<std::string, WorkloadPodGroupInfo> workload_podgroups;
  bool workload_api_served = false;
  // The gangs of the job kinds whose controllers create the pods (owner_kinds.h: JobSet,
  // LeaderWorkerSet, RayCluster ...), by group key ("JobSet:ns/name"), and the kinds served.
  std::map<std::string, OwnerGang> owner_gangs;
  std::set<std::string> owner_kinds_served;
  std::set<std::string> local_queues;  // LocalQueues that exist
  // Objects the cache refused (a minMember out of range ...), by "PodGroup:ns/name",
  // "Volcano:ns/name", "Job:ns/name", "WorkloadPodGroup:ns/name", "JobSet:ns/name" (an owner
  // kind's object, by its own name): why they are not used. Their pods wait and show it.
  std::map<std::string, std::string> refused;
};

// One group of pods as the controller tracks it (PodInfo::GroupKey()).
struct Gang {
  std::string key, kind, ns, name;  // kind: PodInfo::group_kind
  bool foreign = false;             // a pod of another scheduler, bound: it only takes capacity
  struct Member {
    const PodInfo* pod = nullptr;
    bool bound = false;  // bound, or being bound by the controller
  };
  std::vector<Member> members;  // ordered by pod key
};

struct GangAssembly {
  // False: the gang has fewer pods than its minimum and none of them bound; `wait_reason` says
  // what it waits for, and `workload` is empty.
  bool complete = false;
  std::string wait_reason;
  Workload workload;  // min_count: the gang's minimum, at most the pods it has
  // The engine's pod sets: pod set index -> pod index -> pod key.
  std::vector<std::vector<std::string>> sets;
  size_t bound = 0;  // members bound (or being bound): the workload is restored, not submitted
  // Members left out for their scheduling gates (pod keys): each says GatedMessage.
  std::vector<std::string> gated;
};

// The condition reason Kubernetes gives a pod held by its scheduling gates.
inline constexpr const char* kSchedulingGatedReason = "SchedulingGated";
// "held by scheduling gates: example.com/a, example.com/b". REQUIRES: pod.Gated().
std::string GatedMessage(const PodInfo& pod);

// The gang's minimum number of pods (minMember). When the object that sizes it is missing, or
// its pods disagree on their size, the gang needs one pod more than it has and `wait_reason`
// says why.
int32_t MinMember(const Gang& gang, const GangSources& sources, std::string* wait_reason);

// Volcano's queue names the LocalQueue when the pods name none, as for a Volcano Job in
// `tessera sim`; but its webhook sets "default" on every PodGroup, which says nothing unless that
// namespace has a LocalQueue "default". Empty: none.
std::string VolcanoQueue(const Gang& gang, const GangSources& sources);

// REQUIRES: gang.members is not empty.
GangAssembly AssembleGang(const Gang& gang, const GangSources& sources);

}  // namespace tessera::k8s
