#include "engine/placement/node_exclusion.h"

#include <map>
#include <utility>

#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace tessera {
namespace {

const char* OpName(SelectorOp op) {
  switch (op) {
    case SelectorOp::kIn:
      return "In";
    case SelectorOp::kNotIn:
      return "NotIn";
    case SelectorOp::kExists:
      return "Exists";
    case SelectorOp::kDoesNotExist:
      return "DoesNotExist";
    case SelectorOp::kGt:
      return "Gt";
    case SelectorOp::kLt:
      return "Lt";
  }
  return "?";
}

// The rule of the required node affinity that `labels` fail: the first failing expression of
// the only term, or "none of its N terms" when there are several (they are ORed).
std::string FailedAffinity(const NodeAffinity& a, const Labels& labels) {
  if (a.required_terms.size() != 1)
    return fmt::format("none of its {} terms", a.required_terms.size());
  for (const SelectorRequirement& r : a.required_terms[0].match_expressions)
    if (!Matches(r, labels)) return DescribeRequirement(r);
  return "its term";
}

// The first nodeSelector entry `labels` do not have.
std::string FailedSelector(const Labels& selector, const Labels& labels) {
  for (const auto& [k, v] : selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return fmt::format("{}={}", k, v);
  }
  return "";
}

}  // namespace

std::string DescribeRequirement(const SelectorRequirement& r) {
  if (r.op == SelectorOp::kExists || r.op == SelectorOp::kDoesNotExist)
    return fmt::format("{} {}", r.key, OpName(r.op));
  if (r.op == SelectorOp::kGt || r.op == SelectorOp::kLt)
    return fmt::format("{} {} {}", r.key, OpName(r.op), r.values.empty() ? "" : r.values[0]);
  return fmt::format("{} {} [{}]", r.key, OpName(r.op), absl::StrJoin(r.values, ", "));
}

std::string ExplainNodeExclusions(const Model& m, const PodSet& set,
                                  const std::vector<NodeId>& nodes,
                                  const std::vector<Toleration>& flavor_tolerations) {
  std::vector<Toleration> tolerations = set.tolerations;
  tolerations.insert(tolerations.end(), flavor_tolerations.begin(), flavor_tolerations.end());
  // Rule kind -> (rule text -> nodes), in the order the kinds are said.
  std::map<std::string, int> selector, affinity, taint;
  int too_small = 0, rule_excluded = 0;
  for (NodeId n : nodes) {
    const Node& node = m.nodes[n];
    if (std::string s = FailedSelector(set.node_selector, node.labels); !s.empty()) {
      ++selector[s];
    } else if (!Matches(set.affinity, node.labels)) {
      ++affinity[FailedAffinity(set.affinity, node.labels)];
    } else if (const Taint* t = FirstUntolerated(node.taints, tolerations)) {
      ++taint[t->value.empty()
                  ? fmt::format("{}:{}", t->key, TaintEffectName(t->effect))
                  : fmt::format("{}={}:{}", t->key, t->value, TaintEffectName(t->effect))];
    } else {
      if (!set.requests.FitsIn(node.allocatable)) ++too_small;
      continue;
    }
    ++rule_excluded;
  }
  if (rule_excluded == 0) return "";
  std::vector<std::string> parts;
  auto say = [&](const std::map<std::string, int>& rules, const char* one, const char* many) {
    for (const auto& [rule, count] : rules)
      parts.push_back(fmt::format("{} {} ({})", count, count == 1 ? one : many, rule));
  };
  say(selector, "fails its nodeSelector", "fail its nodeSelector");
  say(affinity, "fails its node affinity", "fail its node affinity");
  say(taint, "has a taint it does not tolerate", "have a taint it does not tolerate");
  if (too_small > 0) {
    Resources shown = set.requests;
    shown[kPods] = 0;
    parts.push_back(fmt::format("{} {} too small for {} per pod", too_small,
                                too_small == 1 ? "is" : "are", shown.ToString()));
  }
  return fmt::format("of {} node{}, {}", nodes.size(), nodes.size() == 1 ? "" : "s",
                     absl::StrJoin(parts, ", "));
}

}  // namespace tessera
