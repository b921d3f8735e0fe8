// Where a device sits inside its node, read from the attributes drivers publish, and the order in
// which the allocator tries a node's devices so that a claim's devices sit close together: the
// same rule as the device-plugin path (docs/manifests.md, "GPUs inside the node"), with the
// levels DRA drivers publish:
//   1. one PCIe root: `resource.kubernetes.io/pcieRoot` (NVIDIA's GPU driver publishes it);
//   2. one NUMA node: `resource.kubernetes.io/numaNode`, else the driver's own `numaNode` or
//      `numa` attribute (NVIDIA's vfio-GPU devices publish `numa`).
// At each level, the domain with the fewest free devices that still holds the request (best
// fit), so that whole domains stay free for bigger requests; a domain that already holds devices
// of the same claim first. A node whose devices publish neither attribute keeps the slice order,
// as kube-scheduler's allocator does. docs/dra.md, "Topology from device attributes".
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "dra/model.h"

namespace tessera::dra {

inline constexpr const char* kPcieRootAttribute = "resource.kubernetes.io/pcieRoot";
inline constexpr const char* kNumaNodeAttribute = "resource.kubernetes.io/numaNode";

// The device's value at level 0 (PCIe root) or 1 (NUMA node); null when it publishes none.
const AttributeValue* TopologyValue(const Device& device, int level);

// Reorders `candidates` (device indices, in slice order) so that the first `count` of them lie in
// one domain where one holds that many: that domain's devices first, then the others, each part
// in slice order. `claim_devices`: devices the same claim already holds on the node.
void PreferCompact(const std::vector<NodeDevice>& devices, std::vector<int32_t>& candidates,
                   int64_t count, const std::vector<int32_t>& claim_devices);

}  // namespace tessera::dra
