// What a manifest set says about Dynamic Resource Allocation (resource.k8s.io/v1): the device
// classes, the devices every node's ResourceSlices publish, the ResourceClaims and
// ResourceClaimTemplates, and Kueue's mapping of device classes to a quota resource.
// docs/dra.md says what is read and how it is allocated.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dra/device.h"
#include "model/labels.h"

namespace tessera::dra {

// A CEL selector as written, with where it was written ("file:line" and field path).
struct CelSelector {
  std::string expression;
  std::string source;  // "file:line"
  std::string path;    // the field path of the expression
};

struct DeviceClass {
  std::string name;
  std::vector<CelSelector> selectors;
  std::string source;
};

// A device taint (resource.k8s.io/v1 DeviceTaint, stable in 1.37): a NoSchedule or NoExecute
// taint keeps the device from every request that does not tolerate it.
struct DeviceTaintSpec {
  Taint taint;
};

// One device request, or one subrequest of a firstAvailable list.
struct ExactRequest {
  std::string name;  // the request's (or subrequest's) name
  std::string device_class;
  std::vector<CelSelector> selectors;
  bool all = false;   // allocationMode: All (every matching device of the node)
  int64_t count = 1;  // allocationMode: ExactCount
  std::vector<Toleration> tolerations;
  // capacity.requests (consumable capacity, KEP-5075): per capacity name as the request writes
  // it (upstream matches it to the device's capacity names as the slice writes them), the
  // amount in thousandths. Each device allocated for the request must have all of them.
  std::map<std::string, int64_t> capacity_requests;
};

struct DeviceRequest {
  std::string name;
  // `exactly`, as a list of one; a firstAvailable list in its order of preference.
  std::vector<ExactRequest> alternatives;
  bool first_available = false;
};

// constraints[]: every device allocated for `requests` (all requests when empty) has the same
// value of attribute `match_attribute` (fully qualified "domain/id").
struct Constraint {
  std::vector<std::string> requests;
  std::string match_attribute;
};

struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<Constraint> constraints;
};

// A claim's status.allocation as the API server has it (written by a scheduler before it bound
// a pod): the devices, and the node their selector names (node-local devices).
struct AllocatedDevice {
  std::string request;  // "gpu", or "gpu/sub" for a firstAvailable subrequest
  std::string driver, pool, device;
  // A share of a device that allows multiple allocations: what it consumes of each capacity
  // (consumedCapacity, thousandths) and its shareID.
  std::map<std::string, int64_t> consumed;
  std::string share_id;
};
struct ClaimAllocation {
  std::string node;  // nodeSelector's metadata.name (or kubernetes.io/hostname); "" if neither
  std::vector<AllocatedDevice> devices;
};

// A ResourceClaim or a ResourceClaimTemplate (whose claims are one per pod).
struct Claim {
  std::string ns;
  std::string name;
  ClaimSpec spec;
  std::string source;
  std::string uid;  // metadata.uid (a ResourceClaim in tessera serve)
  // A ResourceClaim already allocated: its devices are taken, and the pods that use it go to
  // that node; it is freed only when the allocation is cleared.
  std::optional<ClaimAllocation> allocation;
  std::vector<std::string> reserved_for;  // status.reservedFor[].name (pods)
};

// A counter set a slice shares among its devices (partitionable devices: the MIG partitions of
// one GPU draw on that GPU's memory and multiprocessor counters).
struct CounterSet {
  std::string name;
  std::map<std::string, int64_t> counters;  // counter -> capacity in thousandths
};

// What one device draws from its slice's counter sets.
struct CounterUse {
  std::string counter_set;
  std::map<std::string, int64_t> counters;  // in thousandths
};

// capacity.requestPolicy of a device capacity (consumable capacity): how much a request
// consumes. At most one of valid_values and valid_range; both need `default_milli`.
struct CapacityRequestPolicy {
  std::optional<int64_t> default_milli;  // consumed when the request does not name the capacity
  std::vector<int64_t> valid_values;     // ascending
  struct Range {
    int64_t min = 0;
    std::optional<int64_t> max, step;
  };
  std::optional<Range> valid_range;
};

// A capacity of a device as requests consume it (dra/consumable_capacity.h). Amounts in
// thousandths.
struct ConsumableCapacity {
  int64_t value = 0;
  std::optional<CapacityRequestPolicy> policy;
};

// A device of a node, with what the allocator needs beyond its attributes.
struct NodeDevice {
  Device device;
  std::vector<DeviceTaintSpec> taints;
  std::vector<CounterUse> consumes;
  // Its capacities by name as the slice writes it (Device::capacity has them qualified, for
  // CEL): capacity.requests name them so, and consumedCapacity reports them so.
  std::map<std::string, ConsumableCapacity> capacities;
  std::string source;
};

// Every device a node's ResourceSlices publish (slices with spec.nodeName), and their counter
// sets (keyed by "pool/counterSet").
struct NodeDevices {
  std::vector<NodeDevice> devices;
  std::map<std::string, CounterSet> counter_sets;
};

// Kueue's Configuration resources.deviceClassMappings: devices of these classes count, one per
// allocated device, as resource `resource` in ClusterQueue quota.
struct DeviceClassMapping {
  std::string resource;
  std::vector<std::string> device_classes;
};

// NVIDIA's ComputeDomain (resource.nvidia.com/v1beta1): multi-node NVLink for the pods that
// claim its channel, through the ResourceClaimTemplate named in spec.channel. docs/dra.md.
struct ComputeDomain {
  std::string ns;
  std::string name;
  std::string channel_template;  // spec.channel.resourceClaimTemplate.name
  std::string source;
};

struct DraModel {
  std::map<std::string, DeviceClass> classes;
  std::map<std::string, NodeDevices> nodes;  // by node name
  std::vector<Claim> claims;                 // ResourceClaims
  std::vector<Claim> templates;              // ResourceClaimTemplates
  std::vector<DeviceClassMapping> mappings;
  std::vector<ComputeDomain> compute_domains;
  bool empty() const {
    return classes.empty() && nodes.empty() && claims.empty() && templates.empty() &&
           compute_domains.empty();
  }
};

// A pod's spec.resourceClaims entry, resolved against the claims and templates of DraModel.
struct PodClaim {
  std::string name;           // the entry's name, which containers' resources.claims refer to
  std::string claim_name;     // resourceClaimName: a ResourceClaim shared with other pods
  std::string template_name;  // resourceClaimTemplateName: a claim of its own for each pod
  int32_t claim = -1;         // index in DraModel::claims, once resolved
  int32_t template_ = -1;     // index in DraModel::templates, once resolved
  std::string source;         // "file:line" of the entry
  // Set where the claim cannot be allocated at all, and why (tessera serve does not allocate
  // DRA claims yet): the pod waits with this reason.
  std::string unsupported;
};

}  // namespace tessera::dra
