#include "k8s/controller/node_policy.h"

#include "fmt/format.h"

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

std::optional<bool> ReadInterruptible(const std::map<std::string, std::string>& annotations,
                                      std::string* problem) {
  auto it = annotations.find(kInterruptibleAnnotation);
  if (it == annotations.end()) return std::nullopt;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  if (problem)
    *problem = fmt::format("metadata.annotations.{}: expected \"true\" or \"false\", got \"{}\"",
                           kInterruptibleAnnotation, it->second);
  return std::nullopt;
}

std::optional<bool> ReadNonPreemptible(const std::map<std::string, std::string>& labels,
                                       const std::map<std::string, std::string>& annotations,
                                       std::string* problem) {
  std::optional<bool> out;
  std::string first;  // where `out` came from
  const std::pair<const std::map<std::string, std::string>*, const char*> sources[] = {
      {&labels, "labels"}, {&annotations, "annotations"}};
  for (const auto& [map, where] : sources) {
    for (const char* key : {"kai.scheduler/preemptibility", "tessera.dev/preemptibility"}) {
      auto it = map->find(key);
      if (it == map->end()) continue;
      const std::string path = fmt::format("metadata.{}.{}", where, key);
      std::optional<bool> v;
      if (it->second == "non-preemptible") v = true;
      if (it->second == "preemptible") v = false;
      if (!v || (out && *out != *v)) {
        if (problem)
          *problem =
              !v ? fmt::format(
                       "{}: expected \"preemptible\" or \"non-preemptible\", "
                       "got \"{}\"",
                       path, it->second.substr(0, 100))
                 : fmt::format("{}: says \"{}\" but {} says otherwise", path, it->second, first);
        return std::nullopt;
      }
      out = v;
      first = path;
    }
  }
  return out;
}

InterruptibleDefault DefaultInterruptible(const Workload& w, const InterruptibleMarks& marks,
                                          const Model& m) {
  auto look = [](const std::map<std::string, bool>& in, const std::string& key, const char* kind,
                 InterruptibleDefault& out) {
    if (key.empty()) return false;
    auto it = in.find(key);
    if (it == in.end()) return false;
    out = {it->second, fmt::format("{} {}", kind, key)};
    return true;
  };
  InterruptibleDefault out;
  if (auto it = marks.owners.find(w.source); it != marks.owners.end()) {
    const size_t colon = w.source.find(':');
    const std::string kind = w.source.substr(0, colon);
    out = {it->second, fmt::format("{} {}", kind == "Volcano" ? "Volcano PodGroup" : kind,
                                   w.source.substr(colon + 1))};
    return out;
  }
  if (look(marks.workload_priority_classes, w.workload_priority_class, "WorkloadPriorityClass",
           out))
    return out;
  std::string pc = w.priority_class;
  if (pc.empty())
    for (const PriorityClass& c : m.priority_classes)
      if (c.global_default) pc = c.name;
  if (look(marks.priority_classes, pc, "PriorityClass", out)) return out;
  if (w.queue_name.empty()) return out;
  const std::string lq = w.ns + "/" + w.queue_name;
  if (look(marks.local_queues, lq, "LocalQueue", out)) return out;
  for (const LocalQueue& q : m.local_queues)
    if (q.ns == w.ns && q.name == w.queue_name) {
      look(marks.cluster_queues, q.cluster_queue, "ClusterQueue", out);
      break;
    }
  return out;
}

bool Interruptible(const PodSet& ps, std::optional<bool> fallback) {
  if (std::optional<bool> own = ReadInterruptible(ps.annotations)) return *own;
  return fallback.value_or(false);
}

void ApplySpotPolicy(Workload& w, const NodePolicyOptions& options, std::optional<bool> fallback) {
  if (!options.spot_policy || options.spot_labels.empty()) return;
  for (PodSet& ps : w.pod_sets) {
    if (Interruptible(ps, fallback)) {
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
