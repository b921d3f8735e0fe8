// Placement wishes of a pod spec beyond selectors and tolerations: preferred node affinity
// (weighted terms, a score among the nodes a pod may use) and topologySpreadConstraints
// (maxSkew over a topology key, required or preferred). Spread terms are kept with their
// labelSelector until the pod's labels are known: Tessera spreads the pods of the workload's
// own spread group, so a term must select the pod itself.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <string>
#include <vector>

#include "config/yaml_util.h"
#include "model/workload.h"

namespace tessera::config_internal {

struct SpreadTerm {
  TopologySpread spread;
  LabelSelector selector;
  YAML::Node at;
  std::string path;
};

// nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution under `na` (path `napath`).
void ReadPreferredNodeAffinity(DocContext& ctx, const YAML::Node& na, const std::string& napath,
                               NodeAffinity& out);
// spec.topologySpreadConstraints of the pod spec `spec` (path `path`).
void ReadTopologySpread(DocContext& ctx, const YAML::Node& spec, const std::string& path,
                        std::vector<SpreadTerm>& out);
// Keeps, into `ps.spread`, the terms whose labelSelector selects `pod_labels`; warns about the
// others (ignored).
void ResolveTopologySpread(DocContext& ctx, const std::vector<SpreadTerm>& terms,
                           const Labels& pod_labels, PodSet& ps);

}  // namespace tessera::config_internal
