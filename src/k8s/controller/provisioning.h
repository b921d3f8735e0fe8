// ProvisioningRequests (autoscaling.x-k8s.io/v1, the Cluster Autoscaler's API for asking for
// capacity for a group of pods at once) for the gangs that the nodes up cannot hold but whose
// queue would admit them (docs/autoscaling.md, "Kubernetes mode").
//
// What it does follows Kueue's ProvisioningRequest admission check: one request per gang at a
// time, named `tessera-<kind>-<name>-<attempt>`, with one v1 PodTemplate per pod set (owned by the
// request); a request that Failed, whose booking expired or whose capacity was revoked before the
// gang was bound is retried as attempt+1 after a backoff of base*2^(attempt-1), capped, up to
// `backoff_limit` retries; after the last, the failed request is kept (so a restart does not start
// over) and the gang waits without one. A request whose gang is bound, or no longer needs
// capacity, or is gone, is deleted with its PodTemplates. The gang itself is bound by the engine
// once the new nodes appear and it fits: nothing is bound before.
//
// The pure pieces (names, bodies, conditions, backoff) are free functions; Provisioner holds the
// requests as the informer shows them and does its writes on a worker of its own.
//
// Thread-safety: Provisioner's methods from one thread (the controller's loop); its writes run on
// its worker and hand their results back under a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "k8s/client/informer.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/task_pool.h"
#include "k8s/controller/node_policy.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

using json = nlohmann::json;

inline constexpr const char* kProvisioningPath =
    "/apis/autoscaling.x-k8s.io/v1/provisioningrequests";
// On the requests and PodTemplates serve makes (the informer selects on it).
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "tessera";
// On a request: the controller's key of the gang it is for ("PodGroup:ns/name").
inline constexpr const char* kGangAnnotation = "tessera.dev/gang";
// The Cluster Autoscaler's annotations on a pod that consumes a request (Kueue's names, which the
// autoscaler reads; the older cluster-autoscaler.kubernetes.io/ ones it reads only when these are
// absent): it leaves such a pod out of its scale-up loops, since the request stands for it.
inline constexpr const char* kConsumeRequestAnnotation =
    "autoscaling.x-k8s.io/consume-provisioning-request";
inline constexpr const char* kRequestClassAnnotation =
    "autoscaling.x-k8s.io/provisioning-class-name";
// The PodScheduled=False reason of a gang's pods while a request is out for it (autoscalers act on
// pods whose reason is Unschedulable only), and of the other waiting pods while requests are made.
inline constexpr const char* kWaitingForProvisioningReason = "WaitingForProvisioning";
inline constexpr const char* kNotAdmittedReason = "NotAdmitted";

// Kueue's ProvisioningRequestConfig podSetMergePolicy: which of a gang's pod sets share one
// PodTemplate of the request (MergePodSets).
enum class PodSetMergePolicy {
  kNone,  // one PodTemplate per pod set
  // the same template: labels, annotations and spec (less the service account token volume the
  // API server adds to each pod, kube-api-access-*, and its mounts)
  kIdenticalPodTemplates,
  // the same scheduling requirements: each container's and init container's resource requests
  // (in order), the pod's resources, nodeSelector, tolerations, affinity, resourceClaims
  kIdenticalWorkloadSchedulingRequirements,
};
// "IdenticalPodTemplates" / "IdenticalWorkloadSchedulingRequirements" (Kueue's names), "" or
// "None"; nullopt for anything else.
std::optional<PodSetMergePolicy> ParsePodSetMergePolicy(const std::string& text);
const char* PodSetMergePolicyName(PodSetMergePolicy p);

struct ProvisioningOptions {
  bool enabled = false;
  std::string class_name = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
  std::map<std::string, std::string> parameters;  // spec.parameters
  int backoff_limit = 3;                          // retries after the first attempt
  double backoff_base_s = 60, backoff_max_s = 1800;
  int max_requests = 64;  // gangs, in queue order, that may have a request out at once
  PodSetMergePolicy merge_policy = PodSetMergePolicy::kNone;
};

// The request's conditions, read as Kueue reads them: the first that is True of Failed,
// CapacityRevoked, BookingExpired, Provisioned, Accepted; kWaiting when none is.
enum class ProvisioningPhase {
  kWaiting,
  kAccepted,
  kProvisioned,
  kFailed,
  kBookingExpired,
  kCapacityRevoked
};
struct ProvisioningState {
  ProvisioningPhase phase = ProvisioningPhase::kWaiting;
  std::string message;  // that condition's message
};
ProvisioningState ReadProvisioningState(const json& request);
const char* PhaseName(ProvisioningPhase p);
// Failed, BookingExpired or CapacityRevoked before the gang was bound: a new attempt is due.
bool NeedsRetry(ProvisioningPhase p);

// `tessera-<kind>-<name>-<attempt>` (kind in lower case), cut to 253 characters with a hash of the
// whole where longer, so that it is the same for the same gang and attempt in every replica.
std::string ProvisioningRequestName(const std::string& kind, const std::string& name, int attempt);
// The attempt a request of `name`'s gang carries; 0 when it does not follow the pattern.
int AttemptOf(const std::string& request_name);
std::string PodTemplateName(const std::string& request, size_t pod_set);
// Seconds before attempt `attempt`+1: base * 2^(attempt-1), at most backoff_max_s.
double RetryDelay(const ProvisioningOptions& o, int attempt);

// A PodTemplate from one of the set's pods as the server has it: its labels, annotations and spec
// (without nodeName), labelled kManagedByLabel; with `spot` (may be null), the spot rules of
// node_policy.h written into its node affinity: the pod is interruptible by its own
// kInterruptibleAnnotation when that is "true" or "false", else by `fallback` (the workload's
// mark from its priority class or queue, DefaultInterruptible; absent: not interruptible).
json BuildPodTemplate(const std::string& name, const json& pod,
                      const NodePolicyOptions* spot = nullptr,
                      std::optional<bool> fallback = std::nullopt);
// Whether two PodTemplates (BuildPodTemplate's objects) may be one of the request under `p`.
// Absent, null and empty objects or arrays are alike, as Kubernetes' semantic equality has them.
bool CanMergePodTemplates(const json& a, const json& b, PodSetMergePolicy p);
// Kueue's merge: each pod set in order joins the first merged set whose template (its first
// pod set's) it may merge with (CanMergePodTemplates), adding its count, else starts one. Returns
// per merged set the index of its first pod set (whose template it uses) and the summed count.
// `templates[i]` is pod set i's; kNone merges nothing.
std::vector<std::pair<size_t, int32_t>> MergePodSets(const std::vector<json>& templates,
                                                     const std::vector<int32_t>& counts,
                                                     PodSetMergePolicy p);

// The request: spec.provisioningClassName, spec.parameters and spec.podSets
// [{podTemplateRef: {name}, count}], labelled kManagedByLabel, annotated kGangAnnotation.
json BuildProvisioningRequest(const std::string& name, const std::string& ns,
                              const std::string& gang_key, const ProvisioningOptions& o,
                              const std::vector<std::pair<std::string, int32_t>>& pod_sets);

// The merge patch that sets the two annotations above on a pod (`request` not empty), or removes
// them (`request` empty).
json ConsumeAnnotationsPatch(const std::string& request, const std::string& class_name);
// Whether `request_name` is a name serve gives its requests (ProvisioningRequestName): only
// those are taken off pods, never a consume annotation someone else set.
bool IsOurRequestName(const std::string& request_name);

// A gang the engine says needs capacity (Scheduler::NeedCapacity), as the controller knows it.
struct CapacityNeed {
  std::string gang_key, ns, kind, name;
  std::vector<std::pair<std::string, int32_t>> pod_sets;  // one pod of each set ("ns/name"), pods
  std::optional<bool> interruptible;  // the workload's mark where a pod has none
};

class Provisioner {
 public:
  // `node_policy`: its spot rules go into the PodTemplates.
  Provisioner(KubeClient* client, ProvisioningOptions options, NodePolicyOptions node_policy,
              const std::atomic<bool>& stop);
  ~Provisioner();  // waits for the write in flight
  Provisioner(const Provisioner&) = delete;
  Provisioner& operator=(const Provisioner&) = delete;

  // An event of the "provisioningrequests" informer. A list answered 404 (the CRD is not
  // installed) is said once in the log; no request is made until it is served.
  void Apply(const WatchEvent& ev);
  // Requests are being made: enabled, and the CRD served.
  bool active() const { return served_; }
  // Brings the requests in line with `needs` (queue order), at `now` (seconds, any steady
  // clock). Returns true when what a gang's pods should say changed.
  bool Sync(double now, const std::vector<CapacityNeed>& needs);
  // What a waiting gang's pods are told about its request ("" when it has none).
  std::string Note(const std::string& gang_key, double now) const;
  // The request each gang's pods consume (its newest, whatever its state), as gang key ->
  // {name, provisioningClassName}; gangs without one are absent (all when requests are not made).
  std::map<std::string, std::pair<std::string, std::string>> Consumed() const;
  // Sets the consume annotations of pod `pod_key` ("ns/name") to `request` and `class_name`, or
  // removes them (`request` empty), on the worker; nothing when that same write is in flight.
  void AnnotatePod(const std::string& pod_key, const std::string& request,
                   const std::string& class_name);
  size_t num_requests() const { return requests_.size(); }

 private:
  struct Done {
    std::string gang, request;
    bool create = true;
    long status = 0;  // the HTTP status of the request's POST or DELETE (0: none)
    json object;      // the created request
    std::string error;
    std::string pod;  // an AnnotatePod write: its pod (and no request)
  };
  // The gang's newest request (by attempt); null when none.
  const json* Latest(const std::string& gang_key) const;
  void Drain();
  void Create(const CapacityNeed& need, int attempt);
  void Delete(const std::string& gang, const json& request);
  // On the worker.
  Done DoCreate(const CapacityNeed& need, const std::string& request);
  Done DoDelete(const std::string& gang, const json& request);

  KubeClient* const client_;
  const ProvisioningOptions options_;
  const NodePolicyOptions node_policy_;
  const std::atomic<bool>& stop_;
  bool served_ = true;                             // until a list says 404
  bool said_absent_ = false;                       // the 404 was logged
  std::map<std::string, json> requests_;           // ns/name -> request, ours
  std::map<std::string, int> busy_;                // gang -> creates and deletes in flight
  std::map<std::string, double> retry_at_;         // gang -> when its next attempt is due
  std::map<std::string, std::string> last_note_;   // gang -> the note last reported
  std::map<std::string, std::string> pod_writes_;  // pod -> request annotated, in flight
  std::mutex done_mu_;
  std::vector<Done> done_;          // GUARDED_BY(done_mu_)
  std::unique_ptr<TaskPool> pool_;  // last: its worker uses the members above
};

}  // namespace tessera::k8s
