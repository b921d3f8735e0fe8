// ReplayGreedy (fgd/experiment_internal.h): a run of the paper's policies, TesseraFGD and the
// lookahead policies (TesseraLookahead, FgdLookahead): every pod by the policy's own choice, or
// by the candidate whose rollout over the next pods drops the fewest GPU milli.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>

#include "fgd/experiment_internal.h"

namespace tessera::fgd::experiment_internal {
namespace {

// TesseraLookahead's choice for the pod at order[t] (docs/fgd.md): each candidate is placed, the
// next `window` pods of the queue follow by the base policy's greedy choice, and the GPU milli of
// the pods that fit nowhere are counted; then everything is taken back. The fewest dropped milli
// wins; equal drops keep the policy's order (or, with frag_tiebreak, the lower fragmentation at
// the end of the window first). A rollout that drops nothing ends the search.
Fill::Choice LookaheadChoice(Fill& fill, const Workload& workload,
                             const std::vector<int32_t>& order, size_t t, const PodRequest& pod,
                             const PolicySpec& policy, Rng& rng, std::vector<Fill::Undo>& log,
                             int64_t& best_dropped) {
  const std::vector<Fill::Choice> candidates = fill.Candidates(order[t], pod, policy.candidates);
  best_dropped = INT64_MAX;
  if (candidates.size() <= 1) return candidates.empty() ? Fill::Choice{} : candidates[0];
  const size_t end = std::min(order.size(), t + 1 + static_cast<size_t>(policy.window));
  Fill::Choice best;
  double best_frag = 0;
  for (const Fill::Choice& c : candidates) {
    fill.Apply(c, pod, rng, &log);
    int64_t dropped = 0;
    for (size_t u = t + 1; u < end && dropped <= best_dropped; ++u) {
      const int32_t next_index = order[u];
      const PodRequest next = PodRequest::Of(workload.pods[static_cast<size_t>(next_index)]);
      const Fill::Choice g = fill.Greedy(next_index, next, rng);
      if (g.node < 0) {
        dropped += next.TotalGpuMilli();
      } else {
        fill.Apply(g, next, rng, &log);
      }
    }
    double frag = 0;
    if (policy.frag_tiebreak && dropped <= best_dropped) {
      // Only the nodes the rollout changed differ between candidates; a node's first log entry
      // holds its fragmentation before the candidate.
      for (size_t e = 0; e < log.size(); ++e) {
        const auto first = std::find_if(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(e),
                                        [&](const Fill::Undo& u) { return u.node == log[e].node; });
        if (first != log.begin() + static_cast<std::ptrdiff_t>(e)) continue;
        frag += fill.Frag(static_cast<size_t>(log[e].node)) - log[e].frag;
      }
    }
    fill.Rollback(log);
    if (dropped < best_dropped ||
        (policy.frag_tiebreak && dropped == best_dropped && frag < best_frag)) {
      best = c;
      best_dropped = dropped;
      best_frag = frag;
    }
    if (best_dropped == 0 && !policy.frag_tiebreak) break;
  }
  return best;
}

}  // namespace

// The paper's policies, TesseraFGD and the lookahead.
Replay ReplayGreedy(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                    const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  Replay out;
  out.node.assign(order.size(), -1);
  out.frag.reserve(order.size());
  uint32_t last_version = 0;
  Fill fill(cluster, workload, policy, rank, &last_version);
  // Lookahead only for the FGD family, whose choices draw nothing from the generator.
  const bool lookahead =
      policy.lookahead() && (policy.base == Policy::kFgd || policy.base == Policy::kTesseraFgd);
  // The shadow: the cluster as the base policy alone leaves it after the pods order[t..
  // shadow_end), run ahead of the real one. While it placed every GPU pod of the window, the
  // lookahead's first candidate (the base policy's choice) drops nothing in its rollout and
  // wins; the shadow's choice is taken without rollouts. The result is the same as with the
  // rollouts; the cost far from a full cluster is two greedy steps per pod instead of W.
  std::unique_ptr<Fill> shadow;
  std::deque<Fill::Choice> shadow_choices;  // for order[t..shadow_end)
  size_t shadow_end = 0;
  bool shadow_valid = false;
  if (lookahead && !policy.frag_tiebreak) {
    shadow = std::make_unique<Fill>(cluster, workload, policy, rank, &last_version);
    shadow_valid = true;
  }

  std::vector<Fill::Undo> log;
  for (size_t t = 0; t < order.size(); ++t) {
    const int32_t pod_index = order[t];
    const PodRequest pod = PodRequest::Of(workload.pods[static_cast<size_t>(pod_index)]);
    Fill::Choice c;
    if (!lookahead) {
      c = fill.Greedy(pod_index, pod, rng);
    } else {
      const size_t need = std::min(order.size(), t + 1 + static_cast<size_t>(policy.window));
      while (shadow_valid && shadow_end < need) {
        const int32_t u = order[shadow_end];
        const PodRequest next = PodRequest::Of(workload.pods[static_cast<size_t>(u)]);
        const Fill::Choice g = shadow->Greedy(u, next, rng);
        if (g.node >= 0) shadow->Apply(g, next, rng, nullptr);
        if (g.node < 0 && next.TotalGpuMilli() > 0) shadow_valid = false;
        shadow_choices.push_back(g);
        ++shadow_end;
      }
      if (shadow_valid) {
        c = shadow_choices.front();
        shadow_choices.pop_front();
      } else {
        int64_t dropped = 0;
        c = LookaheadChoice(fill, workload, order, t, pod, policy, rng, log, dropped);
        if (shadow && dropped == 0) {
          // The chosen placement's rollout was clean: the shadow restarts from it.
          if (c.node >= 0) fill.Apply(c, pod, rng, &log);
          shadow->CopyStateFrom(fill);
          fill.Rollback(log);
          shadow_choices.clear();
          shadow_end = t + 1;
          shadow_valid = true;
        }
      }
    }
    if (c.node >= 0) {
      fill.Apply(c, pod, rng, nullptr);
      out.node[t] = c.node;
    }
    out.frag.push_back(fill.FragSum());
  }
  return out;
}

}  // namespace tessera::fgd::experiment_internal
