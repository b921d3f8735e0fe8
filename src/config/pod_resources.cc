#include "config/pod_resources.h"

#include "model/pod_requests.h"

namespace tessera::config_internal {
namespace {

void ReadList(DocContext& ctx, const YAML::Node& node, const std::string& path,
              ResourceList& out) {
  std::vector<ResourceId> named;
  ReadResourceMap(ctx, node, path, out.values, &named);
  for (ResourceId r : named) out.named |= 1u << r;
}

void ReadRequirements(DocContext& ctx, const YAML::Node& res, const std::string& path,
                      ResourceList& requests, ResourceList& limits) {
  if (!ExpectMap(ctx, res, path)) return;
  ReadList(ctx, Child(res, "requests"), path + ".requests", requests);
  ReadList(ctx, Child(res, "limits"), path + ".limits", limits);
}

}  // namespace

Resources ReadPodRequests(DocContext& ctx, const YAML::Node& spec, const std::string& path) {
  PodResources pod;
  for (const char* kind : {"containers", "initContainers"}) {
    const bool init = std::string_view(kind) == "initContainers";
    ForEachSeq(ctx, Child(spec, kind), path + "." + kind,
               [&](size_t, const YAML::Node& c, const std::string& cpath) {
                 if (!ExpectMap(ctx, c, cpath)) {
                   if (!ctx.failed()) ctx.Error(c, cpath, "expected a container, got null");
                   return false;
                 }
                 ContainerResources& cr =
                     (init ? pod.init_containers : pod.containers).emplace_back();
                 ReadRequirements(ctx, Child(c, "resources"), cpath + ".resources", cr.requests,
                                  cr.limits);
                 // A sidecar (restartPolicy: Always) keeps running beside the app containers.
                 cr.sidecar = init && GetString(ctx, c, "restartPolicy", cpath + ".restartPolicy")
                                          .value_or("") == "Always";
                 return !ctx.failed();
               });
  }
  ReadRequirements(ctx, Child(spec, "resources"), path + ".resources", pod.requests, pod.limits);
  // The API server refuses other resources at pod level; Kubernetes' rule would ignore them.
  for (const char* list : {"requests", "limits"}) {
    const ResourceList& l = std::string_view(list) == "requests" ? pod.requests : pod.limits;
    for (ResourceId r = 0; r < kMaxResources; ++r)
      if (l.Has(r) && !IsPodLevelResource(ResourceName(r)))
        ctx.Warning(Child(Child(spec, "resources"), list),
                    path + ".resources." + list + "." + ResourceName(r),
                    "only cpu, memory and hugepages-* may be set at pod level (the API server "
                    "refuses the pod); ignored: containers' requests count for this resource");
  }
  ReadList(ctx, Child(spec, "overhead"), path + ".overhead", pod.overhead);
  return EffectivePodRequests(pod);
}

}  // namespace tessera::config_internal
