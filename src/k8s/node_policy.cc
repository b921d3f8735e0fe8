#include "k8s/node_policy.h"

namespace tessera::k8s {

bool BeingRemoved(const Node& node) {
  for (const Taint& t : node.taints) {
    // The Cluster Autoscaler's taint (NoSchedule; its value is the time it was set).
    if (t.key == "ToBeDeletedByClusterAutoscaler") return true;
    if (t.effect != TaintEffect::kNoSchedule) continue;
    if (t.key == "karpenter.sh/disrupted") return true;
    if (t.key == "karpenter.sh/disruption" && t.value == "disrupting") return true;
  }
  return false;
}

bool IsSpot(const Node& node, const NodePolicyOptions& options) {
  for (const auto& [key, value] : options.spot_labels) {
    auto it = node.labels.find(key);
    if (it != node.labels.end() && it->second == value) return true;
  }
  return false;
}

bool Interruptible(const PodSet& ps) {
  auto it = ps.annotations.find(kInterruptibleAnnotation);
  return it != ps.annotations.end() && it->second == "true";
}

void ApplySpotPolicy(Workload& w, const NodePolicyOptions& options) {
  if (!options.spot_policy || options.spot_labels.empty()) return;
  for (PodSet& ps : w.pod_sets) {
    if (Interruptible(ps)) {
      for (const auto& [key, value] : options.spot_labels)
        ps.affinity.preferred_terms.push_back({100, {{{key, SelectorOp::kIn, {value}}}}});
      continue;
    }
    // Required terms are ORed: each must keep the pod off spot nodes. A label the node lacks
    // satisfies NotIn, as in Kubernetes.
    if (ps.affinity.required_terms.empty()) ps.affinity.required_terms.emplace_back();
    for (NodeSelectorTerm& term : ps.affinity.required_terms)
      for (const auto& [key, value] : options.spot_labels)
        term.match_expressions.push_back({key, SelectorOp::kNotIn, {value}});
  }
}

void ApplySpotPolicyToPodSpec(nlohmann::json& spec, bool interruptible,
                              const NodePolicyOptions& options) {
  using json = nlohmann::json;
  if (!options.spot_policy || options.spot_labels.empty() || !spec.is_object()) return;
  if (spec.contains("affinity") && !spec["affinity"].is_object()) return;
  json& affinity = spec["affinity"];
  if (affinity.contains("nodeAffinity") && !affinity["nodeAffinity"].is_object()) return;
  json& node = affinity["nodeAffinity"];
  auto expr = [](const std::string& key, const char* op, const std::string& value) {
    return json{{"key", key}, {"operator", op}, {"values", {value}}};
  };
  if (interruptible) {
    json& preferred = node["preferredDuringSchedulingIgnoredDuringExecution"];
    if (!preferred.is_array()) preferred = json::array();
    for (const auto& [key, value] : options.spot_labels)
      preferred.push_back(
          {{"weight", 100}, {"preference", {{"matchExpressions", {expr(key, "In", value)}}}}});
    return;
  }
  json& required = node["requiredDuringSchedulingIgnoredDuringExecution"];
  if (!required.is_object()) required = json::object();
  json& terms = required["nodeSelectorTerms"];
  if (!terms.is_array() || terms.empty()) terms = json::array({json::object()});
  for (json& term : terms) {
    if (!term.is_object()) continue;
    json& exprs = term["matchExpressions"];
    if (!exprs.is_array()) exprs = json::array();
    for (const auto& [key, value] : options.spot_labels) exprs.push_back(expr(key, "NotIn", value));
  }
}

}  // namespace tessera::k8s
