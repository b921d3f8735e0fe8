// Dynamic Resource Allocation in tessera serve (docs/dra.md, "Kubernetes mode"): the
// DeviceClasses, ResourceSlices and ResourceClaims (resource.k8s.io/v1, or v1beta2 on 1.33) as
// the informers hand them over, read into the engine's DraModel by the manifest loader's own
// readers, so that serve and `tessera sim` read them alike; and what serve writes to a claim
// before it binds a pod that uses it.
//
// Thread-safety: DraObjects is owned by the scheduling loop; ClaimWriter's functions run on the
// Binder's workers and touch only their arguments.
#pragma once

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dra/model.h"
#include "k8s/client/informer.h"
#include "k8s/client/kube_client.h"
#include "model/model.h"

namespace tessera::k8s {

// The informers' names and paths: the first path the server serves is watched.
inline constexpr const char* kDraResources[] = {"deviceclasses", "resourceslices",
                                                "resourceclaims"};
inline constexpr const char* kDraApiPaths[] = {"/apis/resource.k8s.io/v1",
                                               "/apis/resource.k8s.io/v1beta2"};

class DraObjects {
 public:
  static bool IsDraResource(const std::string& resource);
  // True when the engine's Model changes with it (any change but one of resourceVersion).
  bool Apply(const WatchEvent& ev);
  // The DraModel of the objects as they stand; the loader's problems with them are logged, each
  // once while it lasts.
  dra::DraModel Load();
  // The spec.config of DeviceClass `name` (null when none or unknown).
  const nlohmann::json& ClassConfig(const std::string& name) const;

 private:
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;  // resource -> key
  std::set<std::string> logged_;
};

// A pod's spec.resourceClaims into its pod set: each names its ResourceClaim, or a template
// whose claim the ResourceClaim controller creates and names in status.resourceClaimStatuses;
// until it has, the claim says so (PodClaim::unsupported) and the pod waits.
void ReadPodClaims(const nlohmann::json& spec, const nlohmann::json& status, PodSet& ps);

// A pod's claim as serve writes it before the bind (what kube-scheduler's DRA plugin writes in
// its PreBind): status.allocation with the devices and the node, unless the claim has that
// allocation already, and the pod in status.reservedFor.
struct ClaimReservation {
  std::string ns, name;  // the ResourceClaim
  std::string node;
  std::vector<dra::AllocatedDevice> devices;
  // The configs of the devices' classes, each {"requests": [...], "opaque": ...} (FromClass).
  nlohmann::json class_configs = nlohmann::json::array();
};

// A new shareID: a random UUID, one per share of a device, as upstream's allocator makes them.
std::string NewShareId();
// A quantity in thousandths as the API server reads it ("42949672960", "500m").
std::string QuantityText(int64_t milli);

struct ClaimPod {
  std::string name, uid;
};

// status.allocation for `r` (the claim's own spec.devices.config copied as FromClaim); a share
// of a device (AllocatedDevice::share_id set) with its shareID and consumedCapacity.
nlohmann::json AllocationJson(const ClaimReservation& r, const nlohmann::json& claim);

// Reserves claim `r` for `pod`: reads the claim, sets its allocation when it has none (one equal
// to `r`'s is fine: another pod of a shared claim wrote it), adds the pod to reservedFor, and
// writes the status (resourceVersion-checked, retried on conflicts). Returns the HTTP status of
// the outcome (200: reserved) and, when not, why in `why`. `version`: "v1" or "v1beta2".
long ReserveClaim(KubeClient& client, const std::string& version, const ClaimReservation& r,
                  const ClaimPod& pod, const std::atomic<bool>& stop, std::string* why);
// Undoes ReserveClaim after a bind that failed: the pod leaves reservedFor, and the allocation
// is cleared when no pod is left and it is `r`'s. Best effort (the ResourceClaim controller
// clears reservations of pods that are gone).
void UnreserveClaim(KubeClient& client, const std::string& version, const ClaimReservation& r,
                    const ClaimPod& pod, const std::atomic<bool>& stop);

}  // namespace tessera::k8s
