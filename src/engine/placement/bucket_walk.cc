#include "engine/placement/bucket_walk.h"

#include "engine/engine.h"

namespace tessera {
BucketWalkPlacement::BucketWalkPlacement(Engine& e, const NodeScorer& scorer)
    : e_(e), s_(e.st), scorer_(scorer) {}

NodeChoice BucketWalkPlacement::FindNode(WorkloadId id, int ps, const Combo& combo) {
  // Preferred anti-affinity: first a node without the group's pods, then any.
  if (s_.model.workloads[id].pod_sets[ps].anti_affinity == HostnameAntiAffinity::kPreferred &&
      s_.recs[id].spread_group >= 0) {
    NodeId n = FindNodeOnce(id, ps, combo, /*avoid_group_nodes=*/true);
    if (n >= 0) return {n, 0};
  }
  return {FindNodeOnce(id, ps, combo, /*avoid_group_nodes=*/false), 0};
}

NodeId BucketWalkPlacement::FindNodeOnce(WorkloadId id, int ps, const Combo& combo,
                                         bool avoid_group_nodes) const {
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  int pool = e_.flavors.PoolFor(id, combo, ps);
  const bool share = ClusterState::IsShare(req);
  // A share needs a device: one with room among the shared ones, else a free one (k >= 1).
  int g = share ? 1 : static_cast<int>(req[kGpu]);
  int max_k = s_.cluster->max_gpus_per_node();
  if (g > max_k) return -1;
  bool fullest = scorer_.FullestFirst();
  if (share && fullest) {
    // Binpack: fill shared devices first, the one left with the least room (best fit).
    NodeId best = -1;
    int32_t best_room = 0;
    int seen = 0;
    for (NodeId n : s_.cluster->SharedNodes(pool)) {
      if (s_.cluster->share_room(n) < s_.cluster->ShareMilli(n, req) || !s_.cluster->Fits(n, req) ||
          !e_.placer.NodeEligible(id, ps, combo, n, avoid_group_nodes))
        continue;
      if (best < 0 || s_.cluster->share_room(n) < best_room) {
        best = n;
        best_room = s_.cluster->share_room(n);
      }
      if (++seen >= kCandidatesPerBucket) break;
    }
    if (best >= 0) return best;
  }
  for (int step = 0; step <= max_k - g; ++step) {
    int k = fullest ? g + step : max_k - step;
    const auto& bucket = s_.cluster->Bucket(pool, k);
    NodeId best = -1;
    double best_score = 0;
    int seen = 0;
    for (NodeId n : bucket) {
      if (!s_.cluster->Fits(n, req) || !e_.placer.NodeEligible(id, ps, combo, n, avoid_group_nodes))
        continue;
      // Nodes that can give the GPUs inside one NVLink domain (or NUMA node) first.
      double s = scorer_.Score(s_.cluster->free(n), s_.model.nodes[n].allocatable, req) +
                 (req[kGpu] > 1 ? 10.0 * s_.cluster->ServeTier(n, static_cast<int>(req[kGpu])) : 0);
      if (best < 0 || s > best_score || (s == best_score && n < best)) {
        best = n;
        best_score = s;
      }
      if (++seen >= kCandidatesPerBucket) break;
    }
    if (best >= 0) return best;
  }
  if (share && !fullest) {
    for (NodeId n : s_.cluster->SharedNodes(pool))
      if (s_.cluster->Fits(n, req) && e_.placer.NodeEligible(id, ps, combo, n, avoid_group_nodes))
        return n;
  }
  return -1;
}

}  // namespace tessera
