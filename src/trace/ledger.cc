#include "trace/ledger.h"

#include <algorithm>

namespace tessera::trace {

namespace {
constexpr int64_t kMiB = 1024 * 1024;
}

ClusterLedger::ClusterLedger(const std::vector<Node>& nodes,
                             const std::vector<int32_t>& node_models,
                             std::span<const fgd::TypicalPod> typical, ResourceId gpu_milli)
    : gpu_milli_(gpu_milli), measure_(typical) {
  state_.resize(nodes.size());
  offset_.resize(nodes.size());
  count_.resize(nodes.size());
  frag_.assign(nodes.size(), 0);
  int32_t off = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    fgd::NodeGpuState& s = state_[n];
    s.cpu_free_milli = nodes[n].allocatable[kCpu];
    s.mem_free_mib = nodes[n].allocatable[kMemory] / kMiB;
    s.gpu_model = node_models[n];
    int g = nodes[n].gpu_count();
    // The fragmentation measure looks at the first kMaxGpusPerNode devices of a node.
    if (g > fgd::kMaxGpusPerNode) ++nodes_over_limit_;
    s.num_gpus = std::min(g, fgd::kMaxGpusPerNode);
    for (int i = 0; i < s.num_gpus; ++i) s.gpu_free_milli[static_cast<size_t>(i)] = 1000;
    offset_[n] = off;
    count_[n] = g;
    off += g;
    total_gpu_milli_ += int64_t{g} * 1000;
  }
  used_.assign(static_cast<size_t>(off), 0);
  for (size_t n = 0; n < nodes.size(); ++n) Refresh(static_cast<NodeId>(n));
}

void ClusterLedger::Refresh(NodeId n) {
  fgd::NodeGpuState& s = state_[n];
  for (int g = 0; g < s.num_gpus; ++g)
    s.gpu_free_milli[static_cast<size_t>(g)] = std::max(0, 1000 - UsedMilli(n, g));
  double f = s.num_gpus > 0 ? measure_.Evaluate(s) : 0;
  fragmented_ += f - frag_[n];
  frag_[n] = f;
}

int32_t ClusterLedger::Take(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                            int32_t share_gpu) {
  fgd::NodeGpuState& s = state_[n];
  s.cpu_free_milli -= req[kCpu];
  s.mem_free_mib -= req[kMemory] / kMiB;
  auto book = [&](int g, int32_t milli) {
    int32_t& u = used_[offset_[n] + g];
    allocated_gpu_milli_ -= std::min(u, 1000);
    u += milli;
    allocated_gpu_milli_ += std::min(u, 1000);
  };
  for (int32_t g : gpus) book(g, 1000);
  const int32_t share = gpu_milli_ >= 0 ? static_cast<int32_t>(req[gpu_milli_]) : 0;
  const int devices = count_[n];
  if (share > 0 && devices > 0) {
    if (share_gpu < 0 || share_gpu >= devices) {
      int best = -1, emptiest = 0;
      for (int g = 0; g < devices; ++g) {
        int32_t u = UsedMilli(n, g);
        if (u + share <= 1000 && (best < 0 || u > UsedMilli(n, best))) best = g;
        if (u < UsedMilli(n, emptiest)) emptiest = g;
      }
      if (best < 0) {
        ++overbooked_;
        best = emptiest;
      }
      share_gpu = best;
    } else if (UsedMilli(n, share_gpu) + share > 1000) {
      ++overbooked_;
    }
    book(share_gpu, share);
  } else {
    share_gpu = -1;
  }
  Refresh(n);
  return share_gpu;
}

void ClusterLedger::Give(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                         int32_t share_gpu) {
  fgd::NodeGpuState& s = state_[n];
  s.cpu_free_milli += req[kCpu];
  s.mem_free_mib += req[kMemory] / kMiB;
  auto unbook = [&](int g, int32_t milli) {
    int32_t& u = used_[offset_[n] + g];
    allocated_gpu_milli_ -= std::min(u, 1000);
    u -= milli;
    allocated_gpu_milli_ += std::min(u, 1000);
  };
  for (int32_t g : gpus) unbook(g, 1000);
  if (share_gpu >= 0) unbook(share_gpu, static_cast<int32_t>(req[gpu_milli_]));
  Refresh(n);
}

double ClusterLedger::RecomputeFragmentation() const {
  double sum = 0;
  for (size_t n = 0; n < state_.size(); ++n)
    if (state_[n].num_gpus > 0) sum += measure_.Evaluate(state_[n]);
  return sum;
}

}  // namespace tessera::trace
