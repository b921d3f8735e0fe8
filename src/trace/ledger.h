// The replay's own account of what every node has free, down to the thousandths of each GPU
// device, kept from the engine's decisions. It gives GPU allocation (whole GPUs and shares) and
// the FGD fragmentation of the cluster (fgd/fragmentation.h) after every change, updating only
// the nodes that changed.
//
// A pod with a share of a GPU (tessera.dev/gpu-milli) goes on the device the engine names in its
// placement; when the placement names none, the ledger picks the device itself (best fit: the
// fullest device that still has room, lowest index on ties). A share that fits on no device is
// still booked (on the emptiest) and counted in overbooked_shares(): the engine did not keep
// per-device shares then.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fgd/fragmentation.h"
#include "fgd/gpu_models.h"
#include "model/node.h"
#include "model/resources.h"

namespace tessera::trace {

class ClusterLedger {
 public:
  // `node_models[n]` is node n's GPU model id in the table the typical pods' masks refer to.
  ClusterLedger(const std::vector<Node>& nodes, const std::vector<int32_t>& node_models,
                std::span<const fgd::TypicalPod> typical, ResourceId gpu_milli);

  // Books one pod with requests `req` on node n: whole devices `gpus`, and a share of `share_gpu`
  // (or of a device the ledger picks when share_gpu < 0). Returns the device holding the share
  // (-1 when the pod has none).
  int32_t Take(NodeId n, const Resources& req, const std::vector<int32_t>& gpus, int32_t share_gpu);
  // Gives back what Take booked; `share_gpu` is what Take returned.
  void Give(NodeId n, const Resources& req, const std::vector<int32_t>& gpus, int32_t share_gpu);

  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  // GPU milli in use (a device counts at most 1000).
  int64_t allocated_gpu_milli() const { return allocated_gpu_milli_; }
  // Fragmented idle GPU milli, summed over nodes.
  double fragmented_gpu_milli() const { return fragmented_; }
  int64_t overbooked_shares() const { return overbooked_; }
  int64_t nodes_over_gpu_limit() const { return nodes_over_limit_; }

  // Recomputes the fragmentation sum from scratch (the incremental one drifts by rounding).
  double RecomputeFragmentation() const;

 private:
  void Refresh(NodeId n);
  int32_t UsedMilli(NodeId n, int g) const { return used_[offset_[n] + g]; }

  ResourceId gpu_milli_;
  fgd::FragmentationMeasure measure_;
  std::vector<fgd::NodeGpuState> state_;
  std::vector<int32_t> offset_;  // into used_
  std::vector<int32_t> count_;   // devices per node
  std::vector<int32_t> used_;    // milli booked per device, may exceed 1000 when overbooked
  std::vector<double> frag_;     // per node
  int64_t total_gpu_milli_ = 0;
  int64_t allocated_gpu_milli_ = 0;
  double fragmented_ = 0;
  int64_t overbooked_ = 0;
  int64_t nodes_over_limit_ = 0;
};

}  // namespace tessera::trace
