// Tessera's and KAI's preemption fields in manifests; see preemption_fields.h.
#include "config/preemption_fields.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

#include "config/time_fields.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kVictimOrder = "tessera.dev/victim-order";
constexpr std::string_view kQueuePriority = "tessera.dev/queue-priority";
constexpr std::string_view kGpuFailurePolicy = "tessera.dev/gpu-failure-policy";
constexpr std::string_view kKaiPreemptibility = "kai.scheduler/preemptibility";
constexpr std::string_view kPreemptibility = "tessera.dev/preemptibility";
constexpr std::string_view kConsolidation = "tessera.dev/consolidation";

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
  if (meta.annotations.contains(std::string(kConsolidation))) {
    if (auto v = ParseEnum<bool>(ctx, MetaNode(meta, "annotations", kConsolidation),
                                 JoinPath("metadata.annotations", kConsolidation),
                                 {{"true", true}, {"false", false}}))
      cq.consolidation = *v;
  }
}

void ReadConsolidation(DocContext& ctx, const YAML::Node& spec, ConsolidationConfig& out) {
  YAML::Node c = Child(spec, "consolidation");
  if (!ExpectMap(ctx, c, "spec.consolidation")) return;
  if (auto v =
          GetDuration(ctx, c, "maxLostWork", "spec.consolidation.maxLostWork", Bound::kNonNegative))
    out.max_lost_work_seconds = *v;
  constexpr int64_t kMax = 1 << 20;
  if (auto v = GetInt(ctx, c, "maxMovesPerCycle", "spec.consolidation.maxMovesPerCycle", 1, kMax))
    out.max_moves_per_cycle = static_cast<int32_t>(*v);
  if (auto v = GetInt(ctx, c, "maxNodesPerHead", "spec.consolidation.maxNodesPerHead", 1, kMax))
    out.max_nodes_per_head = static_cast<int32_t>(*v);
  if (auto v = GetInt(ctx, c, "maxHeadsPerCycle", "spec.consolidation.maxHeadsPerCycle", 1, kMax))
    out.max_heads_per_cycle = static_cast<int32_t>(*v);
  constexpr std::string_view kKnown[] = {"maxLostWork", "maxMovesPerCycle", "maxNodesPerHead",
                                         "maxHeadsPerCycle"};
  ForEachMap(ctx, c, "spec.consolidation",
             [&](const std::string& key, const YAML::Node& value, const std::string& path) {
               if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown))
                 ctx.Error(value, path,
                           "unknown field; allowed: maxLostWork, maxMovesPerCycle, "
                           "maxNodesPerHead, maxHeadsPerCycle");
               return true;
             });
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
