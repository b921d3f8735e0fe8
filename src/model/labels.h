// Labels, selectors, taints and tolerations, with Kubernetes' matching rules.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

using Labels = std::map<std::string, std::string>;

enum class SelectorOp { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct SelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::kIn;
  std::vector<std::string> values;
};

// metav1.LabelSelector. `match_everything` distinguishes `{}` (all) from an absent selector
// (nothing), which Kueue's namespaceSelector relies on.
struct LabelSelector {
  bool present = false;
  Labels match_labels;
  std::vector<SelectorRequirement> match_expressions;
};

// One term of requiredDuringSchedulingIgnoredDuringExecution: requirements ANDed.
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
};

// One term of preferredDuringSchedulingIgnoredDuringExecution: a node that matches `term`
// scores `weight` (1..100); a pod prefers the nodes with the highest sum.
struct PreferredSchedulingTerm {
  int32_t weight = 1;
  NodeSelectorTerm term;
};

// Node affinity. Required: terms ORed, empty means no constraint. Preferred: a score among the
// nodes the required terms allow (PreferredAffinityScore).
struct NodeAffinity {
  std::vector<NodeSelectorTerm> required_terms;
  std::vector<PreferredSchedulingTerm> preferred_terms;
};

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

enum class TolerationOp { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists tolerates every taint
  TolerationOp op = TolerationOp::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // empty tolerates every effect
};

bool Matches(const SelectorRequirement& req, const Labels& labels);
// An absent selector matches nothing; a present empty one matches everything.
bool Matches(const LabelSelector& sel, const Labels& labels);
bool MatchesNodeSelector(const Labels& node_selector, const Labels& labels);
bool Matches(const NodeAffinity& affinity, const Labels& labels);
// The sum of the weights of the preferred terms that `labels` match.
int64_t PreferredAffinityScore(const NodeAffinity& affinity, const Labels& labels);
bool Tolerates(const Toleration& t, const Taint& taint);
// True when every NoSchedule/NoExecute taint is tolerated by one of `tolerations`.
bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations);
// First taint not tolerated (for explanations), or nullptr.
const Taint* FirstUntolerated(const std::vector<Taint>& taints,
                              const std::vector<Toleration>& tolerations);

const char* TaintEffectName(TaintEffect e);

}  // namespace tessera
