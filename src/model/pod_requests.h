// A pod's effective request, by Kubernetes' rule (k8s.io/component-helpers resource.PodRequests,
// with the API server's defaulting of container and pod-level requests applied first), shared by
// `tessera sim` (config/pod_template.cc) and `tessera serve` (k8s/controller/objects.cc):
//
//   1. a container's request defaults to its limit for each resource with a limit only;
//   2. the containers' aggregate: app containers and sidecars (init containers with
//      restartPolicy: Always) summed, raised to what each init container needs while it runs
//      (itself plus the sidecars started before it);
//   3. pod-level `spec.resources` (KEP-2837; beta, on by default since 1.34): where any request or
//      limit is set at pod level, its requests default to the aggregate (cpu, memory) and to its
//      limits (hugepages limits defaulting to the containers' aggregate limits); then, where a
//      pod-level request names cpu, memory or hugepages-*, it replaces the aggregate for the
//      resources it names. Others (nvidia.com/gpu, extended resources) always come from the
//      containers;
//   4. spec.overhead added; and one `pods`, as the scheduler counts pods.
//
// A resource named with quantity 0 is named: "requests: {cpu: 0}" keeps a limit from defaulting
// it, as in Kubernetes.
//
// Thread-safety: value types and a pure function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/resources.h"

namespace tessera {

// A ResourceList as written: the quantities, and which resources it names.
struct ResourceList {
  Resources values;
  uint32_t named = 0;  // bit r: resource r is in the list (kMaxResources <= 32)

  bool Has(ResourceId r) const { return (named >> r) & 1u; }
  void Set(ResourceId r, int64_t q) {
    values.Set(r, q);
    named |= 1u << r;
  }
  bool empty() const { return named == 0; }
};
static_assert(kMaxResources <= 32, "ResourceList::named is 32 bits");

struct ContainerResources {
  ResourceList requests, limits;
  bool sidecar = false;  // an init container with restartPolicy: Always
};

struct PodResources {
  std::vector<ContainerResources> containers, init_containers;
  ResourceList requests, limits;  // spec.resources (pod level)
  ResourceList overhead;          // spec.overhead
};

// cpu, memory and hugepages-*: the resources a pod-level request may set (Kubernetes'
// IsSupportedPodLevelResource).
bool IsPodLevelResource(std::string_view name);

Resources EffectivePodRequests(const PodResources& pod);

}  // namespace tessera
