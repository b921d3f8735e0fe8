// Quota accounting for ClusterQueues and (hierarchical) cohorts, with Kueue's semantics:
// a node's subtree quota is its nominal quota plus what its children lend; a child keeps
// `subtree - lendingLimit` for itself (guaranteed) and lends the rest; a ClusterQueue may use
// its guaranteed quota plus what its ancestors have available, capped by its borrowingLimit.
//
// Quantities are indexed by FlavorResource: fr = flavor * kMaxResources + resource.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/resources.h"

namespace tessera {

using FlavorResource = int32_t;
inline FlavorResource MakeFR(int32_t flavor, ResourceId r) { return flavor * kMaxResources + r; }
inline int32_t FlavorOf(FlavorResource fr) { return fr / kMaxResources; }
inline ResourceId ResourceOf(FlavorResource fr) { return fr % kMaxResources; }

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

// Quota of nvidia.com/gpu is kept in milli-GPUs, every other resource in its own units, so that
// a GPU share can count against the GPU quota exactly (a 0.5 share is 500 of it; ClusterQueue
// annotation tessera.dev/shares-in-gpu-quota, docs/gpu-sharing.md). Quota amounts read out of
// the tree are divided by it (FormatQuota, Scheduler::ClusterQueueUsage).
inline int64_t QuotaScale(ResourceId r) { return r == kGpu ? kMilliPerGpu : 1; }
// Whole units into the tree's units; kUnlimited stays.
inline int64_t ToQuotaUnits(ResourceId r, int64_t q) {
  return q >= kUnlimited / kMilliPerGpu ? kUnlimited : q * QuotaScale(r);
}
// An amount in the tree's units as a manifest writes it ("1.5" GPUs, "4Gi").
std::string FormatQuota(ResourceId r, int64_t q);

class QuotaTree {
 public:
  // Node ids: ClusterQueues first (0..num_cqs-1), then cohorts.
  QuotaTree(int num_cluster_queues, int num_cohorts, int num_flavors);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  int num_frs() const { return num_frs_; }
  int cohort_node(int cohort) const { return num_cqs_ + cohort; }
  bool is_cluster_queue(int node) const { return node < num_cqs_; }

  // Construction. REQUIRES: before Finalize().
  void SetParent(int node, int parent);
  void SetQuota(int node, FlavorResource fr, int64_t nominal, int64_t borrowing_limit,
                int64_t lending_limit);  // kUnlimited for an absent limit
  // Computes subtree quotas. Fails on a cycle in the parent links.
  [[nodiscard]] absl::Status Finalize();

  int parent(int node) const { return nodes_[node].parent; }
  int root(int node) const;
  int64_t nominal(int node, FlavorResource fr) const { return nodes_[node].nominal[fr]; }
  int64_t borrowing_limit(int node, FlavorResource fr) const {
    return nodes_[node].borrowing_limit[fr];
  }
  int64_t subtree_quota(int node, FlavorResource fr) const { return nodes_[node].subtree[fr]; }
  int64_t usage(int node, FlavorResource fr) const { return nodes_[node].usage[fr]; }
  // The part of the subtree quota this node keeps for itself (not lent).
  int64_t guaranteed(int node, FlavorResource fr) const;

  // How much more `node` could use of `fr` right now (Kueue's available()).
  int64_t Available(int node, FlavorResource fr) const;
  // Adds `delta` (may be negative) to a ClusterQueue's usage, propagating the borrowed part up.
  void AddUsage(int cq, FlavorResource fr, int64_t delta);
  // Usage above nominal quota.
  bool IsBorrowing(int node, FlavorResource fr) const {
    return nodes_[node].usage[fr] > nodes_[node].subtree[fr];
  }
  // The most `cq` could ever use of `fr` with the rest of its cohort empty.
  int64_t MaxPossible(int cq, FlavorResource fr) const;

  // Kueue's weighted dominant resource share of `node` if its usage changed by `delta` (indexed
  // by fr, may be empty): max over fr of borrowed / lendable-in-root * 1000, divided by weight.
  double DominantShare(int node, const std::vector<std::pair<FlavorResource, int64_t>>& delta,
                       double weight) const;

 private:
  struct QNode {
    int parent = -1;
    std::vector<int> children;
    std::vector<int64_t> nominal, borrowing_limit, lending_limit, subtree, usage;
  };
  int64_t UsageInParent(int node, FlavorResource fr, int64_t usage) const;

  int num_cqs_;
  int num_frs_;
  std::vector<QNode> nodes_;
};

}  // namespace tessera
