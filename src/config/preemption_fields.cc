// Tessera's and KAI's preemption fields in manifests; see preemption_fields.h.
#include "config/preemption_fields.h"

#include <limits>
#include <string>
#include <string_view>

namespace tessera::config_internal {
namespace {

constexpr std::string_view kVictimOrder = "tessera.dev/victim-order";
constexpr std::string_view kQueuePriority = "tessera.dev/queue-priority";
constexpr std::string_view kGpuFailurePolicy = "tessera.dev/gpu-failure-policy";
constexpr std::string_view kKaiPreemptibility = "kai.scheduler/preemptibility";
constexpr std::string_view kPreemptibility = "tessera.dev/preemptibility";

// The node of metadata.`map_key`.`key`, for diagnostics.
YAML::Node MetaNode(const ObjectMeta& meta, std::string_view map_key, std::string_view key) {
  return Child(Child(meta.metadata, map_key), key);
}

}  // namespace

void ReadClusterQueuePreemption(DocContext& ctx, const ObjectMeta& meta, ClusterQueue& cq) {
  if (meta.annotations.contains(std::string(kVictimOrder))) {
    if (auto v = ParseEnum<VictimOrder>(ctx, MetaNode(meta, "annotations", kVictimOrder),
                                        JoinPath("metadata.annotations", kVictimOrder),
                                        {{"LeastLostWork", VictimOrder::kLeastLostWork},
                                         {"FewestVictims", VictimOrder::kFewestVictims},
                                         {"Kueue", VictimOrder::kKueue}}))
      cq.preemption.victim_order = *v;
  }
  if (meta.annotations.contains(std::string(kQueuePriority))) {
    if (auto v =
            ScalarInt(ctx, MetaNode(meta, "annotations", kQueuePriority),
                      JoinPath("metadata.annotations", kQueuePriority),
                      std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()))
      cq.queue_priority = static_cast<int32_t>(*v);
  }
  if (meta.annotations.contains(std::string(kGpuFailurePolicy))) {
    if (auto v = ParseEnum<GpuFailurePolicy>(
            ctx, MetaNode(meta, "annotations", kGpuFailurePolicy),
            JoinPath("metadata.annotations", kGpuFailurePolicy),
            {{"Requeue", GpuFailurePolicy::kRequeue},
             {"LeaveToController", GpuFailurePolicy::kLeaveToController}}))
      cq.gpu_failure_policy = *v;
  }
}

std::optional<bool> ReadPreemptibility(DocContext& ctx, const ObjectMeta& meta) {
  std::optional<bool> out;
  std::string first;  // the path of the value `out` came from
  for (std::string_view map_key : {"labels", "annotations"}) {
    const Labels& values = map_key == "labels" ? meta.labels : meta.annotations;
    for (std::string_view key : {kKaiPreemptibility, kPreemptibility}) {
      auto it = values.find(std::string(key));
      if (it == values.end()) continue;
      const std::string path = JoinPath("metadata." + std::string(map_key), key);
      const YAML::Node at = MetaNode(meta, map_key, key);
      bool non_preemptible;
      if (it->second == "non-preemptible") {
        non_preemptible = true;
      } else if (it->second == "preemptible") {
        non_preemptible = false;
      } else {
        ctx.Error(at, path,
                  "unknown value \"" + it->second.substr(0, 100) +
                      "\"; allowed: preemptible, non-preemptible");
        continue;
      }
      if (out && *out != non_preemptible) {
        ctx.Error(at, path, "says \"" + it->second + "\" but " + first + " says otherwise");
        continue;
      }
      out = non_preemptible;
      first = path;
    }
  }
  return out;
}

}  // namespace tessera::config_internal
