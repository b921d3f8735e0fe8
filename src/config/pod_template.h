// The pod template every job kind embeds, read once for all of them: a template's metadata and
// spec (requests by Kubernetes' rule, config/pod_resources.h; selectors, tolerations, affinity,
// topology spread, KAI's GPU-share annotations, Kueue's topology annotations), and what the kind
// readers under config/kinds/ share.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/kinds.h"
#include "config/pod_placement.h"
#include "model/limits.h"

namespace tessera::config_internal {

inline constexpr int64_t kMaxPods = kMaxPodsPerWorkload;  // model/limits.h

// What a pod template or pod spec contributes.
struct PodInfo {
  PodSet set;
  std::string priority_class;
  Labels labels;  // the pod's (or template's) labels
  // podAntiAffinity terms on kubernetes.io/hostname, resolved against `labels` once known.
  std::vector<LabelSelector> anti_required, anti_preferred;
  YAML::Node anti_at;
  std::string anti_path;
  std::vector<SpreadTerm> spread_terms;  // resolved against `labels` once known
};

// A pod spec at `path` (the template's spec, or a Pod's spec) into `out`.
bool ReadPodSpec(DocContext& ctx, const YAML::Node& spec, const std::string& path, PodInfo& out);

// Pod-level placement wishes that need the pod's labels and annotations: anti-affinity among
// the workload's own pods, and Kueue's topology annotations.
void ResolvePlacement(DocContext& ctx, const YAML::Node& annotations_at,
                      const std::string& annotations_path, PodInfo& pod);

// KAI Scheduler's pod annotations for a share of one GPU (gpu-fraction, gpu-memory; see
// config/gpu_fields.h). Applied after the spec is read, so that they replace a whole-GPU request
// the pod may carry for the device plugin.
void ApplyGpuFraction(DocContext& ctx, const YAML::Node& at, const std::string& path, PodSet& set);

// `parent`.template (at `path`): metadata (labels, annotations) and spec.
bool ReadPodTemplate(DocContext& ctx, const YAML::Node& parent, const std::string& path,
                     PodInfo& out);

// The object's spec, which must be a map; an error and a null node when it is missing.
YAML::Node RequireSpec(DocContext& ctx, const ObjectMeta& meta);

std::string Lower(std::string s);

}  // namespace tessera::config_internal
