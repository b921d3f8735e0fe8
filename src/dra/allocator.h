// Allocation of devices to the claims of one pod on one node, as kube-scheduler's DRA plugin
// does it (k8s.io/dynamic-resource-allocation/structured): requests in order, devices in the
// order the node's slices publish them, a depth-first search that backtracks over devices and
// over the alternatives of a firstAvailable list, `matchAttribute` constraints checked as each
// device is added, counters of partitionable devices never overdrawn, tainted devices only for
// requests that tolerate their taints, and devices that allow multiple allocations shared by
// requests while what they consume fits each capacity (consumable capacity,
// dra/consumable_capacity.h). docs/dra.md.
//
// The allocator does not evaluate CEL itself: the caller answers "does device d pass filter f"
// (a filter is a device class's selectors and a request's, compiled once, dra/cel), so that a
// selector is evaluated once per device and slice generation, not per attempt.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dra/model.h"

namespace tessera::dra {

// What a filter says of a device.
enum class Match : int8_t { kNo, kYes, kError };

// One alternative of a request (the request itself for `exactly`).
struct AltInput {
  std::string name;
  int32_t filter = -1;  // the caller's id of (device class, selectors)
  bool all = false;
  int64_t count = 1;
  const std::vector<Toleration>* tolerations = nullptr;
  // capacity.requests (ExactRequest::capacity_requests); nullptr when none.
  const std::map<std::string, int64_t>* capacity = nullptr;
};

struct RequestInput {
  std::string name;
  std::vector<AltInput> alternatives;
};

struct ConstraintInput {
  std::vector<int32_t> requests;  // indices into ClaimInput::requests; empty: all of them
  std::string match_attribute;
};

struct ClaimInput {
  std::string name;  // for reasons
  std::vector<RequestInput> requests;
  std::vector<ConstraintInput> constraints;
};

// The shares of a device that allows multiple allocations: how many, and what they consume of
// each capacity together (thousandths). Its counters are drawn once, while it has a share.
struct DeviceShares {
  int32_t count = 0;
  std::map<std::string, int64_t> consumed;
};

// The devices of one node and what is taken: `in_use[i]` for NodeDevices::devices[i] (an
// exclusive device held), `shares[i]` (a device that allows multiple allocations; nullptr: no
// shares), and the counters drawn so far ("pool/counterSet" -> counter -> thousandths).
struct NodeView {
  const NodeDevices* devices = nullptr;
  const std::vector<bool>* in_use = nullptr;
  const std::map<std::string, std::map<std::string, int64_t>>* counters_used = nullptr;
  const std::vector<DeviceShares>* shares = nullptr;
};

struct RequestResult {
  int32_t alternative = 0;       // index of the alternative chosen
  std::vector<int32_t> devices;  // indices into NodeDevices::devices
  // Per device: what this share consumes of each of its capacities (consumedCapacity); empty
  // for an exclusive device.
  std::vector<std::map<std::string, int64_t>> consumed;
};

struct ClaimResult {
  std::vector<RequestResult> requests;
};

struct AllocateOutcome {
  bool ok = false;
  std::vector<ClaimResult> claims;  // when ok, one per claim
  std::string reason;               // when not ok: why, in words
};

using MatchFn = std::function<Match(int32_t filter, int32_t device)>;

// The search gives up after this many device tries (upstream bounds it by time; a bound by work
// keeps the simulator deterministic).
inline constexpr int64_t kMaxAllocationSteps = 200'000;

AllocateOutcome Allocate(const std::vector<ClaimInput>& claims, const NodeView& node,
                         const MatchFn& matches);

// Whether `device` may serve a request with `tolerations` (NoSchedule and NoExecute taints).
bool DeviceTolerated(const NodeDevice& device, const std::vector<Toleration>* tolerations);

}  // namespace tessera::dra
