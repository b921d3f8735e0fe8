#include "model/labels.h"

#include <algorithm>
#include <charconv>

namespace tessera {
namespace {

bool ParseInt(const std::string& s, long long& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool Matches(const SelectorRequirement& req, const Labels& labels) {
  auto it = labels.find(req.key);
  bool has = it != labels.end();
  auto in_values = [&] {
    return has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
  };
  switch (req.op) {
    case SelectorOp::kIn:
      return in_values();
    case SelectorOp::kNotIn:
      return !in_values();
    case SelectorOp::kExists:
      return has;
    case SelectorOp::kDoesNotExist:
      return !has;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      long long have = 0, want = 0;
      if (!has || req.values.size() != 1 || !ParseInt(it->second, have) ||
          !ParseInt(req.values[0], want)) {
        return false;
      }
      return req.op == SelectorOp::kGt ? have > want : have < want;
    }
  }
  return false;
}

bool Matches(const LabelSelector& sel, const Labels& labels) {
  if (!sel.present) return false;
  if (!MatchesNodeSelector(sel.match_labels, labels)) return false;
  for (const auto& req : sel.match_expressions)
    if (!Matches(req, labels)) return false;
  return true;
}

bool MatchesNodeSelector(const Labels& node_selector, const Labels& labels) {
  for (const auto& [k, v] : node_selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  return true;
}

bool Matches(const NodeAffinity& affinity, const Labels& labels) {
  if (affinity.required_terms.empty()) return true;
  for (const auto& term : affinity.required_terms) {
    // An empty term matches no node, as in Kubernetes.
    if (term.match_expressions.empty()) continue;
    bool all = true;
    for (const auto& req : term.match_expressions) {
      if (!Matches(req, labels)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

int64_t PreferredAffinityScore(const NodeAffinity& affinity, const Labels& labels) {
  int64_t score = 0;
  for (const auto& p : affinity.preferred_terms) {
    // An empty preference matches no node (Kubernetes skips it).
    if (p.term.match_expressions.empty()) continue;
    bool all = true;
    for (const auto& req : p.term.match_expressions) all = all && Matches(req, labels);
    if (all) score += p.weight;
  }
  return score;
}

bool Tolerates(const Toleration& t, const Taint& taint) {
  if (t.effect && *t.effect != taint.effect) return false;
  if (t.op == TolerationOp::kExists) return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;
}

const Taint* FirstUntolerated(const std::vector<Taint>& taints,
                              const std::vector<Toleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    bool ok = std::any_of(tolerations.begin(), tolerations.end(),
                          [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!ok) return &taint;
  }
  return nullptr;
}

bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations) {
  return FirstUntolerated(taints, tolerations) == nullptr;
}

const char* TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule:
      return "NoSchedule";
    case TaintEffect::kPreferNoSchedule:
      return "PreferNoSchedule";
    case TaintEffect::kNoExecute:
      return "NoExecute";
  }
  return "?";
}

}  // namespace tessera
