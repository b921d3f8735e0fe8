// GPUs that fail, as Kubernetes mode sees them (docs/kubernetes.md, "GPUs that fail"). Three
// signals name a failed GPU of a node:
// - the device plugin's: a device it marks unhealthy leaves the node's status.allocatable
//   (status.capacity keeps it), and, since Kubernetes 1.36 (ResourceHealthStatus, beta and on by
//   default; KEP-4680), the kubelet says in the status of the pod that holds it which of its
//   devices is unhealthy (containerStatuses[].allocatedResourcesStatus);
// - dcgm-exporter's DCGM_FI_DEV_XID_ERRORS: the last XID error of each GPU; the XIDs that mean
//   broken hardware (kHardwareXids: double-bit ECC, fallen off the bus, contained and
//   uncontained ECC ...) fail it, the ones an application causes (13, 31, 43 ...) do not;
// - DRA (issue "DRA"): a NoExecute device taint on a device a running claim holds.
// This file is the pure part: what those signals say, per node. The loop (controller_health.cc)
// gives the failed devices to nobody (Scheduler::SetGpuFailed), says it in Events and a metric,
// and, by the ClusterQueue's policy, requeues the workloads on them whole.
//
// Which device index: Tessera's index of a device is the one it wrote on the pod that holds it
// (tessera.dev/gpu-indices), the index dcgm-exporter reports it under (its `gpu` label), as
// utilization.h joins them. A kubelet's unhealthy device ID is the device plugin's (a UUID);
// it becomes an index where dcgm-exporter reports that UUID, else it names only the pod.
// A device the count says is unhealthy and nothing names is taken from the node's free devices
// (highest index first), so that nobody is given it; when none is free it is under a running pod
// Tessera cannot tell, and is said so.
//
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dra/model.h"
#include "model/node.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// A resource of a pod's container that the kubelet reports Unhealthy
// (status.containerStatuses[].allocatedResourcesStatus[].resources[] with health Unhealthy).
struct UnhealthyResource {
  std::string name;  // "nvidia.com/gpu", or "claim:NAME/REQUEST" for a DRA claim
  std::string id;    // resourceID: the device plugin's device ID, or DRA's "driver/pool/device"
  std::string message;
  bool operator==(const UnhealthyResource&) const = default;
};

// The unhealthy resources of a pod's status (containers and init containers), at most 64.
std::vector<UnhealthyResource> ParseUnhealthyResources(const nlohmann::json& status);

// A node's status.capacity of nvidia.com/gpu above its status.allocatable (read into
// n.allocatable): the device plugin marked devices unhealthy. Sets n.unhealthy_gpus to the
// difference and n.allocatable[kGpu] to the capacity, so that the devices keep their indices and
// the pods bound on them are accounted for; the loop then marks which are failed. Nothing with a
// capacity that is not a count. Called before the node's GPU fields (its layout is of every
// device); UncountTimeSliced undoes it on a node they make time-sliced (replicas are not
// devices: such a node keeps its allocatable, as before).
void CountUnhealthyGpus(const nlohmann::json& status, Node& n);
void UncountTimeSliced(Node& n);

// What XID `xid` means when it means broken hardware; std::nullopt for the XIDs an application
// causes (or that Tessera does not know).
std::optional<std::string> HardwareXid(int64_t xid);

// What the loop knows of one node.
struct NodeHealthInput {
  std::string node;
  // Devices the device plugin reports: status.capacity and status.allocatable of its GPU
  // resource (time-sliced replicas not counted: whole devices).
  int32_t capacity = 0, allocatable = 0;
  // Per device index (capacity of them): true when a pod holds it (whole, a share or MIG).
  std::vector<bool> held;
  // dcgm-exporter: hardware XIDs by device index, and its device UUIDs by index.
  std::map<int32_t, int64_t> xids;
  std::map<std::string, int32_t> uuid_index;
  struct Pod {
    std::string key;  // ns/name
    std::vector<int32_t> gpus;
    std::vector<UnhealthyResource> unhealthy;
  };
  std::vector<Pod> pods;  // the pods bound to it
  // DRA (NoExecuteTaints): pods whose claim holds a tainted device; not devices of the count.
  std::vector<std::pair<std::string, std::string>> tainted_pods;  // pod key, why
};

struct NodeHealth {
  std::map<int32_t, std::string> failed;  // device index -> why
  // Pods on a failed device (or named by the kubelet or a DRA taint), with why.
  std::map<std::string, std::string> hit_pods;
  // Unhealthy devices (by the count) under running pods that nothing names.
  int32_t unplaced = 0;
};

NodeHealth JudgeNode(const NodeHealthInput& in);

// DRA: the devices of ResourceSlices with a NoExecute taint, and the pods (status.reservedFor of
// an allocated claim holding one, unless the claim's request tolerates the taint) on them.
struct DraTaints {
  std::map<std::string, int32_t> tainted;                 // node -> NoExecute-tainted devices
  std::vector<std::pair<std::string, std::string>> pods;  // pod key (ns/name), why
};
DraTaints NoExecuteTaints(const dra::DraModel& dra);

}  // namespace tessera::k8s
