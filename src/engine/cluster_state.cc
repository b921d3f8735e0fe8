#include "engine/cluster_state.h"

#include <algorithm>
#include <cassert>

namespace tessera {

ClusterState::ClusterState(const std::vector<Node>& nodes,
                           const std::vector<std::vector<NodeId>>& pool_members) {
  const int n = static_cast<int>(nodes.size());
  free_.resize(n);
  gpu_offset_.resize(n + 1);
  member_.resize(n);
  int32_t off = 0;
  for (int i = 0; i < n; ++i) {
    free_[i] = nodes[i].allocatable;
    gpu_offset_[i] = off;
    off += nodes[i].gpu_count();
    max_gpus_ = std::max(max_gpus_, nodes[i].gpu_count());
  }
  gpu_offset_[n] = off;
  gpu_owner_.assign(off, -1);
  pools_.resize(pool_members.size());
  for (size_t p = 0; p < pool_members.size(); ++p) {
    pools_[p].buckets.resize(max_gpus_ + 1);
    for (NodeId node : pool_members[p]) {
      int k = free_gpus(node);
      auto& bucket = pools_[p].buckets[k];
      member_[node].push_back({static_cast<int32_t>(p), static_cast<int32_t>(bucket.size())});
      bucket.push_back(node);
      pools_[p].free_gpus += k;
    }
  }
  for (NodeId node : pool_members.empty() ? std::vector<NodeId>{} : pool_members[0])
    total_gpus_ += nodes[node].gpu_count();
  free_gpus_ = total_gpus_;
}

void ClusterState::Move(NodeId n, int from_k, int to_k) {
  if (from_k == to_k) return;
  for (Membership& m : member_[n]) {
    Pool& pool = pools_[m.pool];
    auto& from = pool.buckets[from_k];
    // Swap-remove, fixing the position of the node that moved into the hole.
    NodeId last = from.back();
    from[m.pos] = last;
    from.pop_back();
    if (last != n) {
      for (Membership& lm : member_[last]) {
        if (lm.pool == m.pool) {
          lm.pos = m.pos;
          break;
        }
      }
    }
    auto& to = pool.buckets[to_k];
    m.pos = static_cast<int32_t>(to.size());
    to.push_back(n);
    pool.free_gpus += to_k - from_k;
  }
}

std::vector<int32_t> ClusterState::Assign(NodeId n, const Resources& req, WorkloadId owner) {
  assert(req.FitsIn(free_[n]));
  int before = free_gpus(n);
  free_[n] -= req;
  std::vector<int32_t> gpus;
  int want = static_cast<int>(req[kGpu]);
  if (want > 0) {
    gpus.reserve(want);
    int32_t* owners = &gpu_owner_[gpu_offset_[n]];
    int count = gpu_offset_[n + 1] - gpu_offset_[n];
    for (int i = 0; i < count && static_cast<int>(gpus.size()) < want; ++i) {
      if (owners[i] < 0) {
        owners[i] = owner;
        gpus.push_back(i);
      }
    }
    assert(static_cast<int>(gpus.size()) == want);
  }
  free_gpus_ -= want;
  Move(n, before, free_gpus(n));
  return gpus;
}

void ClusterState::AssignExact(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                               WorkloadId owner) {
  assert(req.FitsIn(free_[n]));
  int before = free_gpus(n);
  free_[n] -= req;
  int32_t* owners = &gpu_owner_[gpu_offset_[n]];
  for (int32_t g : gpus) {
    assert(owners[g] < 0);
    owners[g] = owner;
  }
  free_gpus_ -= static_cast<int64_t>(req[kGpu]);
  Move(n, before, free_gpus(n));
}

void ClusterState::Release(NodeId n, const Resources& req, const std::vector<int32_t>& gpus) {
  int before = free_gpus(n);
  free_[n] += req;
  int32_t* owners = &gpu_owner_[gpu_offset_[n]];
  for (int32_t g : gpus) owners[g] = -1;
  free_gpus_ += static_cast<int64_t>(req[kGpu]);
  Move(n, before, free_gpus(n));
}

int ClusterState::MaxFreeGpus(int pool) const {
  const auto& b = pools_[pool].buckets;
  for (int k = static_cast<int>(b.size()) - 1; k >= 0; --k)
    if (!b[k].empty()) return k;
  return -1;
}

}  // namespace tessera
