#include "model/pod_requests.h"

#include <algorithm>

namespace tessera {
namespace {

bool IsHugePages(ResourceId r) { return ResourceName(r).rfind("hugepages-", 0) == 0; }
bool IsPodLevel(ResourceId r) { return r == kCpu || r == kMemory || IsHugePages(r); }

void AddInto(ResourceList& into, const ResourceList& add) {
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (add.Has(r)) into.Set(r, into.values.Get(r) + add.values.Get(r));
}

void MaxInto(ResourceList& into, const ResourceList& other) {
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (other.Has(r) && (!into.Has(r) || other.values.Get(r) > into.values.Get(r)))
      into.Set(r, other.values.Get(r));
}

// The API server's defaulting of a container: a request for each resource with only a limit.
ResourceList DefaultedRequests(const ContainerResources& c) {
  ResourceList req = c.requests;
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (c.limits.Has(r) && !req.Has(r)) req.Set(r, c.limits.values.Get(r));
  return req;
}

// component-helpers' aggregateContainerResourcesByFn over `of` (requests or limits): app
// containers and sidecars summed; each init container needs itself plus the sidecars before it,
// and the pod at least the most any of them needs.
template <typename Of>
ResourceList Aggregate(const PodResources& pod, Of of) {
  ResourceList sum;
  for (const ContainerResources& c : pod.containers) AddInto(sum, of(c));
  ResourceList sidecars, init_max;
  for (const ContainerResources& c : pod.init_containers) {
    ResourceList use = of(c);
    if (c.sidecar) {
      AddInto(sum, use);
      AddInto(sidecars, use);
      use = sidecars;
    } else {
      AddInto(use, sidecars);
    }
    MaxInto(init_max, use);
  }
  MaxInto(sum, init_max);
  return sum;
}

// The API server's defaulting of pod-level requests (api/pod DefaultPodLevelResources, 1.37;
// before 1.37 SetDefaults_Pod, to the same effect on requests). Returns the pod-level requests.
ResourceList DefaultedPodRequests(const PodResources& pod, const ResourceList& container_requests) {
  ResourceList req = pod.requests;
  if (pod.requests.empty() && pod.limits.empty()) return req;
  ResourceList lim = pod.limits;
  // Hugepages limits default to the containers' aggregate limits where no request is set.
  const ResourceList container_limits =
      Aggregate(pod, [](const ContainerResources& c) { return c.limits; });
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (container_limits.Has(r) && IsHugePages(r) && !req.Has(r) && !lim.Has(r))
      lim.Set(r, container_limits.values.Get(r));
  // cpu and memory (overcommittable) default to the containers' aggregate, then any pod-level
  // resource with a limit to its limit.
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (container_requests.Has(r) && !req.Has(r) && (r == kCpu || r == kMemory))
      req.Set(r, container_requests.values.Get(r));
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (lim.Has(r) && !req.Has(r) && IsPodLevel(r)) req.Set(r, lim.values.Get(r));
  return req;
}

}  // namespace

bool IsPodLevelResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name.substr(0, 10) == "hugepages-";
}

Resources EffectivePodRequests(const PodResources& pod) {
  const ResourceList containers = Aggregate(pod, DefaultedRequests);
  Resources out = containers.values;
  const ResourceList pod_level = DefaultedPodRequests(pod, containers);
  // IsPodLevelRequestsSet: pod-level requests apply when they name a pod-level resource, and
  // then only for the resources they name.
  for (ResourceId r = 0; r < kMaxResources; ++r)
    if (pod_level.Has(r) && IsPodLevel(r)) out.Set(r, pod_level.values.Get(r));
  out += pod.overhead.values;
  out.Set(kPods, 1);
  return out;
}

}  // namespace tessera
