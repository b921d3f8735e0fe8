// The placement rules of the FGD-paper policies that every caller placing pods one at a time
// applies after scoring: which of the scored nodes goes first, which GPUs the pod takes on the
// chosen node, and how Random draws its node. The experiment's fast path (fgd/experiment.h) uses
// these; the engine's FGD placement plugin (engine/placement/fgd_placement.cc) calls PlacesBefore;
// ChooseGpus and RandomNode would change its decisions (docs/fgd.md, "One placement path").
//
// Scoring itself is Scorer::Score and Scorer::Normalize (fgd/scorer.h), the filter fgd::Fits.
//
// Thread-safety: plain functions of their arguments (Rng is one per run).
#pragma once

#include <cstddef>
#include <cstdint>

#include "fgd/fragmentation.h"
#include "fgd/rng.h"
#include "fgd/scorer.h"

namespace tessera::fgd {

// What orders two feasible nodes for one pod, most significant first.
struct NodeOrderKey {
  int64_t score = 0;  // Scorer::Score, after Scorer::Normalize over the same candidates
  int64_t gain = 0;   // TesseraPlan's balance gain (fgd/plan.h BalanceGain); 0 for the others
  bool used = false;  // the node holds a pod already (TesseraFGD's tie rule)
  int64_t tie = 0;    // the last tie-break, lower first: the experiment's random node-name rank
                      // (the simulator's selectHost); a caller without ranks passes the position
                      // in its candidate list, so that the first candidate wins ties
};

// TesseraFGD's tie rule: among equal scores (and gains), a node in use before an untouched one.
inline bool UsedFirst(Policy policy) { return policy == Policy::kTesseraFgd; }

// True when node `a` goes before node `b` in the policy's order: the higher score; the larger
// gain; with `used_first` (UsedFirst(policy)) a used node before an untouched one; the lower tie.
inline bool PlacesBefore(const NodeOrderKey& a, const NodeOrderKey& b, bool used_first) {
  if (a.score != b.score) return a.score > b.score;
  if (a.gain != b.gain) return a.gain > b.gain;
  if (used_first && a.used != b.used) return a.used;
  return a.tie < b.tie;
}

// The GPUs `pod` takes on `node`, the node the policy chose: the GPUs its score chose
// (`scored`, Scored::gpus: FGD and TesseraFGD), else Scorer::PickGpus (Open-Gpu-Share's
// gpuSelMethod: the tightest GPU that fits a share, a random one for Random; whole-GPU pods the
// lowest-numbered fully free GPUs). `rng` is drawn from only for a share under Random.
inline GpuSet ChooseGpus(const Scorer& scorer, const NodeGpuState& node, const PodRequest& pod,
                         GpuSet scored, Rng& rng) {
  return scored != 0 ? scored : scorer.PickGpus(node, pod, rng);
}

// Random's node: one of the `feasible` nodes (REQUIRES: feasible > 0), uniformly, as an index
// into the caller's list of feasible nodes. One draw per pod, whatever the scores.
inline size_t RandomNode(size_t feasible, Rng& rng) {
  return static_cast<size_t>(rng.Below(feasible));
}

}  // namespace tessera::fgd
