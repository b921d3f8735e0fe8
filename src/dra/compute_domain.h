// NVIDIA's ComputeDomains (kubernetes-sigs/dra-driver-nvidia-gpu): multi-node NVLink (IMEX) for
// the pods that claim a ComputeDomain channel. Such pods belong in one NVLink clique, the nodes
// that share one value of the label GPU Feature Discovery sets on GB200 trays. docs/dra.md,
// "ComputeDomains".
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "dra/model.h"

namespace tessera {
struct PodSet;
}

namespace tessera::dra {

inline constexpr const char* kCliqueLabel = "nvidia.com/gpu.clique";
inline constexpr const char* kChannelClass = "compute-domain-default-channel.nvidia.com";
inline constexpr const char* kComputeDomainDriver = "compute-domain.nvidia.com";

// Whether the claim asks for a ComputeDomain channel: a device of NVIDIA's channel class, or of
// a class whose selectors pick the ComputeDomain driver's channel devices.
bool ClaimsComputeDomainChannel(const DraModel& dra, const ClaimSpec& claim);

// Requires the pod set in one clique, in topology group `group` (so that the workload's pod
// sets of one ComputeDomain share the clique), unless it asks for a topology of its own.
// True when it did.
bool KeepInOneClique(PodSet& set, const std::string& group);

}  // namespace tessera::dra
