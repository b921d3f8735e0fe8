// What is free on every node, which GPU device belongs to which workload, and indexes that
// find a node for a pod without scanning the cluster.
//
// GPU devices are owned whole (nvidia.com/gpu) or shared (tessera.dev/gpu-milli): a shared device
// holds shares of several pods, never more than 1000 milli in all, and no whole owner. free(n)
// keeps kGpu = devices with nothing on them and kGpuMilli = milli free over all devices. A share
// by memory (tessera.dev/gpu-memory, MiB) is a share of ceil(MiB * 1000 / device memory) milli on
// the node it lands on, so the two kinds mix on one device and neither exceeds it; free(n) keeps
// kGpuMemory = the memory those free milli stand for.
//
// Nodes are grouped into pools (one per ResourceFlavor, plus pool 0 for "any node"); inside a
// pool they sit in buckets by their number of free whole GPUs, so "the fullest node with at
// least k free GPUs" (binpack) or "the emptiest" (spread) is a walk over a few buckets.
//
// Thread-safety: not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "model/mig.h"
#include "model/node.h"
#include "model/resources.h"
#include "model/workload.h"

namespace tessera {

// Room on one node held for a workload that is not placed there (yet): resources and GPU
// devices. A reservation's pods, and what a preemptor that waits for its victims holds.
struct Room {
  NodeId node = -1;
  Resources req;
  // Whole devices (req[kGpu] of them), or the one device of a share (req[kGpuMilli] on it), or
  // devices of MIG instances (with `mig_slices`).
  std::vector<int32_t> gpus;
  // On a node whose MIG layout Tessera chooses: the memory slices taken on each of `gpus` (bit s:
  // slice s; one entry per instance for a pod, one per device for what BookFreePart booked).
  std::vector<uint8_t> mig_slices;

  bool empty() const { return gpus.empty() && req == Resources(); }
};

class ClusterState {
 public:
  // `pool_members[p]` lists the nodes of pool p (p = 0 must list every schedulable node).
  ClusterState(const std::vector<Node>& nodes,
               const std::vector<std::vector<NodeId>>& pool_members);

  int num_nodes() const { return static_cast<int>(free_.size()); }
  int num_pools() const { return static_cast<int>(pools_.size()); }
  int max_gpus_per_node() const { return max_gpus_; }
  const Resources& free(NodeId n) const { return free_[n]; }
  int free_gpus(NodeId n) const { return static_cast<int>(free_[n][kGpu]); }
  int gpu_count(NodeId n) const { return gpu_offset_[n + 1] - gpu_offset_[n]; }
  // Time-slicing replicas per physical GPU of node n (1: none); slot s is GPU s % (count / r).
  int gpu_replicas(NodeId n) const { return replicas_[n]; }
  // Owner workload of each GPU device of node n (-1 free, kSharedDevice: shares on it,
  // kMigDevice: MIG instances on it, on a node whose MIG layout Tessera chooses).
  // kFailedDevice: a failed device with nothing on it (SetGpuFailed).
  static constexpr int32_t kSharedDevice = -2;
  static constexpr int32_t kMigDevice = -3;
  static constexpr int32_t kFailedDevice = -4;
  const int32_t* gpu_owners(NodeId n) const { return gpu_owner_.data() + gpu_offset_[n]; }
  // Milli in use on each GPU device of node n (1000 for a whole-owned device).
  const int32_t* gpu_used_milli(NodeId n) const { return gpu_used_.data() + gpu_offset_[n]; }
  // Largest room on a device that already holds shares (0 when none does).
  int32_t share_room(NodeId n) const { return share_room_[n]; }
  // How well node n can serve k whole GPUs now: 3 inside one NVLink domain, 2 under one PCIe
  // switch, 1 inside one NUMA node, 0 only across. REQUIRES: free_gpus(n) >= k.
  int ServeTier(NodeId n, int k) const;
  // True for a request of part of one GPU device (by milli or by memory).
  static bool IsShare(const Resources& req) { return req[kGpuMilli] > 0 || req[kGpuMemory] > 0; }
  // The milli of one device that `req` takes on node n: its tessera.dev/gpu-milli, or for a share
  // by memory ceil(MiB * 1000 / device memory); 0 for no share; kMilliPerGpu + 1 when node n can
  // never hold it (its device memory is unknown or smaller than asked).
  int64_t ShareMilli(NodeId n, const Resources& req) const {
    if (req[kGpuMemory] <= 0) return req[kGpuMilli];
    const int64_t d = gpu_mem_[n];
    if (d <= 0 || req[kGpuMemory] > d) return kMilliPerGpu + 1;
    return (req[kGpuMemory] * kMilliPerGpu + d - 1) / d;
  }
  // `req` as it lands on node n: a share by memory becomes its milli there.
  Resources OnNode(NodeId n, const Resources& req) const {
    Resources r = req;
    if (r[kGpuMemory] > 0) {
      r[kGpuMilli] = ShareMilli(n, req);
      r[kGpuMemory] = 0;
    }
    return r;
  }
  // Memory of one GPU device of node n in MiB (0: unknown).
  int64_t gpu_memory_mib(NodeId n) const { return gpu_mem_[n]; }
  // True when `req` fits on node n now, shares included.
  bool Fits(NodeId n, const Resources& req) const {
    if (req[kGpuMemory] > 0) {
      if (ShareMilli(n, req) > kMilliPerGpu) return false;
      return Fits(n, OnNode(n, req));
    }
    if (!req.FitsIn(free_[n])) return false;
    if (!node_mig_[n].empty() && WantsMig(n, req)) {
      std::vector<int32_t> gpus;
      std::vector<int8_t> starts;
      return req[kGpu] == 0 && req[kGpuMilli] == 0 && PlanMig(n, req, gpus, starts);
    }
    int64_t m = req[kGpuMilli];
    return m == 0 || share_room_[n] >= m || free_[n][kGpu] >= 1;
  }

  // Takes `req` on node n for workload `owner`, choosing req[kGpu] free devices (inside the
  // NVLink domain, else the PCIe switch, else the NUMA node, with the fewest free devices that
  // still holds them;
  // lowest indices first) or, for a share, the fullest shared device with room (else the lowest
  // free one). On a node whose GPUs are time-sliced (Node::gpu_replicas), the devices are
  // replica slots: a pod gets one replica of each of the least loaded GPUs, distinct GPUs first
  // (as the device plugin's preferred allocation spreads them). REQUIRES: Fits(n, req).
  // On a node whose MIG layout Tessera chooses, a request of MIG profiles (nvidia.com/mig-*)
  // gets one device per instance, and `mig_starts` (required then) the first memory slice of
  // each instance, in the order of MigInstances(n, req).
  std::vector<int32_t> Assign(NodeId n, const Resources& req, WorkloadId owner,
                              std::vector<int8_t>* mig_starts = nullptr);
  // Takes exactly the devices `gpus` (a restore of an earlier Assign). REQUIRES: they are free
  // (for a share: the device has room and no whole owner).
  void AssignExact(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                   WorkloadId owner, const std::vector<int8_t>& mig_starts);
  void AssignExact(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                   WorkloadId owner);
  // What BookFreePart books of `want` besides whole devices, cpu, memory and pods: kWholeGpus
  // nothing (a reservation's phantom); kDeviceParts also the free milli of a share's device and
  // the free memory slices of MIG instances (a preemptor's claim: the room it counted on).
  enum class Parts { kWholeGpus, kDeviceParts };
  // Books for `owner` the part of `want` that is free now and not already in `held` (what
  // `owner` booked of `want` before, or nullptr): its whole GPU devices nobody uses, cpu, memory
  // and pods up to what is free, and with Parts::kDeviceParts the parts of devices above.
  // `booked` says what was taken (Unbook gives it back; without device parts Release does too);
  // false, with nothing taken, when none was free.
  bool BookFreePart(const Room& want, WorkloadId owner, Room& booked,
                    Parts parts = Parts::kWholeGpus, const Room* held = nullptr);
  // Gives back what BookFreePart booked (nothing for an empty room).
  void Unbook(const Room& booked);
  // The room of a pod asking `req` placed at `gpus` (and `mig_starts`) of node n: what
  // BookFreePart takes the free part of (its MIG instances' memory slices included).
  Room PodRoom(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
               const std::vector<int8_t>& mig_starts) const;
  // Gives back what Assign took.
  void Release(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
               const std::vector<int8_t>& mig_starts = {});

  // MIG on nodes whose layout Tessera chooses (Node::mig_dynamic).
  bool mig_dynamic(NodeId n) const { return !node_mig_[n].empty(); }
  // True when `req` asks for MIG instances that node n lays out itself.
  bool WantsMig(NodeId n, const Resources& req) const {
    for (const MigRes& m : node_mig_[n])
      if (req[m.id] > 0) return true;
    return false;
  }
  // The profile of each instance `req` asks of node n, in placement order (largest first).
  std::vector<const MigProfile*> MigInstances(NodeId n, const Resources& req) const;
  // Used memory slices of each device of node n (bit s: slice s).
  const uint8_t* mig_masks(NodeId n) const { return mig_mask_.data() + gpu_offset_[n]; }
  // True when the instances at `gpus`/`mig_starts` are valid starts on free slices.
  bool MigPlacementFree(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                        const std::vector<int8_t>& mig_starts) const;

  // Nodes of pool p with exactly k free GPUs (k <= max_gpus_per_node()).
  const std::vector<NodeId>& Bucket(int pool, int k) const { return pools_[pool].buckets[k]; }
  // Largest number of free GPUs on any node of pool p (-1 when the pool is empty).
  int MaxFreeGpus(int pool) const;
  // Nodes of pool p with a shared device that has room, in node order.
  const absl::btree_set<NodeId>& SharedNodes(int pool) const { return pools_[pool].shared; }
  int64_t PoolFreeGpus(int pool) const { return pools_[pool].free_gpus; }

  // Elastic clusters (docs/autoscaling.md): a node that is not provisioned is offline: it is in
  // no bucket, offers nothing (free(n) is all zero, so no placement path can use it) and its
  // GPUs are not counted in total_gpus(). Bringing it online gives it back its whole capacity.
  // REQUIRES for going offline: nothing placed on node n.
  void SetOnline(NodeId n, bool online);
  bool online(NodeId n) const { return online_[n]; }

  // Failed GPU devices (docs/gpu-failures.md): a failed device is given to nobody. One with
  // nothing on it is out: owner kFailedDevice, 1000 milli used, not free, not in total_gpus().
  // One that still holds pods keeps them (the caller evicts them, or their controller ends
  // them), but is padded full (its free milli and free MIG slices count as used) so that nothing
  // new lands on it; when its last pod leaves it is out. Repair gives it back. A pod put back on
  // a failed device (a look ahead's victim reinstated) takes its place from the padding.
  // Not counted in total_gpus() from the moment it fails, nor in allocated_gpus().
  void SetGpuFailed(NodeId n, int32_t g, bool failed);
  bool gpu_failed(NodeId n, int32_t g) const { return failed_[gpu_offset_[n] + g] != 0; }
  int64_t failed_gpus() const { return failed_total_; }

  int64_t total_gpus() const { return total_gpus_; }
  int64_t allocated_gpus() const { return total_gpus_ - free_gpus_; }

 private:
  struct Pool {
    std::vector<std::vector<NodeId>> buckets;  // by free GPUs
    absl::btree_set<NodeId> shared;            // share_room > 0
    int64_t free_gpus = 0;
  };
  struct Membership {
    int32_t pool;
    int32_t pos;  // index in the bucket
  };
  void Move(NodeId n, int from_k, int to_k);
  void UpdateShareRoom(NodeId n);
  // The instances of `req` on node n: device and start each, best fit; false if they do not fit.
  bool PlanMig(NodeId n, const Resources& req, std::vector<int32_t>& gpus,
               std::vector<int8_t>& starts) const;
  void UpdateMigFree(NodeId n);
  // Marks memory slices `bits` of device `g` of node n used (a device without slices becomes a
  // MIG device), or free again (a device left without slices becomes free). Free counts other
  // than kGpu and kGpuMilli are the caller's (UpdateMigFree, UpdateFreeMemory).
  void TakeSlices(NodeId n, int32_t g, uint8_t bits);
  void GiveSlices(NodeId n, int32_t g, uint8_t bits);
  void UpdateFreeMemory(NodeId n) {
    free_[n][kGpuMemory] = free_[n][kGpuMilli] * gpu_mem_[n] / kMilliPerGpu;
  }

  // A failed device that still holds pods: what it is padded with (SetGpuFailed).
  bool Failed(NodeId n, int32_t g) const { return failed_[gpu_offset_[n] + g] != 0; }
  // The last pod left failed device g of node n: it is out (owner kFailedDevice, mask 0).
  void FailOut(NodeId n, int32_t g);
  // Counted in total_gpus(): online and in pool 0.
  bool Counted(NodeId n) const {
    return online_[n] && !member_[n].empty() && member_[n][0].pool == 0;
  }

  std::vector<Resources> free_;
  std::vector<bool> online_;
  std::vector<uint8_t> failed_;      // per device
  std::vector<int32_t> pad_milli_;   // per failed shared device: milli padded
  std::vector<uint8_t> pad_slices_;  // per failed MIG device: slices padded
  std::vector<int32_t> failed_on_;   // per node: failed devices
  int64_t failed_total_ = 0;
  absl::flat_hash_map<NodeId, Resources> offline_free_;  // an offline node's free when empty
  std::vector<int32_t> gpu_offset_;
  std::vector<int32_t> gpu_owner_;
  std::vector<int32_t> gpu_used_;
  std::vector<int16_t> nvlink_, numa_, pcie_;  // per device
  std::vector<bool> uniform_;                  // per node: one NVLink domain (the common case)
  std::vector<int32_t> replicas_;              // per node: time-slicing replicas per GPU (1: none)
  std::vector<int32_t> share_room_;
  std::vector<int64_t> gpu_mem_;  // per node: MiB per device, 0 unknown
  struct MigRes {
    ResourceId id;
    const MigProfile* profile;
  };
  std::vector<std::vector<MigRes>> node_mig_;    // per node, largest profile first; empty: static
  std::vector<uint8_t> mig_mask_;                // per device
  std::vector<std::vector<Membership>> member_;  // per node
  std::vector<Pool> pools_;
  int max_gpus_ = 0;
  int64_t total_gpus_ = 0;
  int64_t free_gpus_ = 0;
};

}  // namespace tessera
