// NVIDIA's ComputeDomain (resource.nvidia.com/v1beta1, from kubernetes-sigs/dra-driver-nvidia-gpu):
// multi-node NVLink (IMEX) for a gang. Its pods claim a "channel" through the
// ResourceClaimTemplate the ComputeDomain names; NVIDIA's controller makes that template, and its
// kubelet plugin publishes a channel device on each node of an NVLink clique (the node label
// nvidia.com/gpu.clique). docs/dra.md, "ComputeDomains".
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <vector>

#include "config/kinds.h"

namespace tessera::config_internal {

void ReadComputeDomain(DocContext& ctx, const ObjectMeta& meta, Staged& out);

// Before the pods' claims are resolved: what NVIDIA's driver would make for the input's
// ComputeDomains where the input does not hold it: each one's channel ResourceClaimTemplate,
// the channel DeviceClass, and a channel device ("channel-0") on every node with the clique
// label that publishes none. A notice says what was made.
void MakeComputeDomainObjects(Model& model, std::vector<Diagnostic>& out);

// Once the pods' claims are resolved: a pod set that claims a ComputeDomain channel, and asks
// for no topology of its own, is required in one NVLink clique (one value of the clique label),
// so that its pods share NVLink; the workload's pod sets that claim one ComputeDomain's channel
// share one clique (dra/compute_domain.h).
void KeepChannelPodsInOneClique(Model& model, std::vector<Diagnostic>& out);

}  // namespace tessera::config_internal
