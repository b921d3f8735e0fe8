#include "engine/cluster_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <utility>

#include "fmt/format.h"

namespace tessera {
namespace {

// True when assigning or releasing `req` on a node touches no device: no GPU, no share of one,
// and no MIG profile a static node's free counts would be derived from. Then only the node's
// free counts move; its bucket, shared-device room and MIG room stay as they are. A
// reservation's phantom on a node whose reserved GPUs are all taken (Reservations::Hold books
// only its CPU, memory and pod slot) is such a case, booked and unbooked ~100,000 times in the
// admitting cycle of a full cluster.
bool NoDeviceChange(const Resources& req, const std::vector<int32_t>& gpus, bool static_node) {
  return static_node && gpus.empty() && req[kGpu] == 0 && req[kGpuMilli] == 0;
}

}  // namespace

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
  gpu_used_.assign(off, 0);
  failed_.assign(off, 0);
  pad_milli_.assign(off, 0);
  pad_slices_.assign(off, 0);
  failed_on_.assign(n, 0);
  nvlink_.assign(off, 0);
  numa_.assign(off, 0);
  pcie_.assign(off, 0);
  uniform_.assign(n, true);
  replicas_.assign(n, 1);
  for (int i = 0; i < n; ++i) {
    const int r = std::max(1, nodes[i].gpu_replicas);
    if (nodes[i].gpu_count() % r == 0) replicas_[i] = r;
  }
  for (int i = 0; i < n; ++i) {
    const auto& devices = nodes[i].gpus;
    if (static_cast<int>(devices.size()) != nodes[i].gpu_count()) continue;  // default layout
    for (int d = 0; d < nodes[i].gpu_count(); ++d) {
      nvlink_[gpu_offset_[i] + d] = devices[d].nvlink;
      numa_[gpu_offset_[i] + d] = devices[d].numa;
      pcie_[gpu_offset_[i] + d] = devices[d].pcie;
      if (devices[d].nvlink != devices[0].nvlink) uniform_[i] = false;
    }
    // Without PCIe switch numbers the PCIe level is the NUMA level.
    bool pcie_known = false;
    for (const GpuDevice& d : devices) pcie_known = pcie_known || d.pcie >= 0;
    if (!pcie_known)
      for (int d = 0; d < nodes[i].gpu_count(); ++d)
        pcie_[gpu_offset_[i] + d] = numa_[gpu_offset_[i] + d];
  }
  share_room_.assign(n, 0);
  mig_mask_.assign(off, 0);
  node_mig_.resize(n);
  for (int i = 0; i < n; ++i) {
    if (!nodes[i].mig_dynamic) continue;
    for (const MigProfile& p : MigProfilesFor(nodes[i].gpu_memory_mib, nodes[i].gpu_model)) {
      ResourceId id =
          ResourceRegistry::Global().Find(fmt::format("{}{}", kMigResourcePrefix, p.name));
      if (id >= 0) node_mig_[i].push_back({id, &p});
    }
    std::stable_sort(
        node_mig_[i].begin(), node_mig_[i].end(),
        [](const MigRes& a, const MigRes& b) { return a.profile->slices > b.profile->slices; });
  }
  gpu_mem_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    free_[i][kGpuMilli] = kMilliPerGpu * nodes[i].gpu_count();
    gpu_mem_[i] = nodes[i].gpu_memory_mib;
    UpdateFreeMemory(i);
    UpdateMigFree(i);
  }
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
  online_.assign(n, true);
}

void ClusterState::SetOnline(NodeId n, bool online) {
  if (online_[n] == online) return;
  online_[n] = online;
  const bool counted = !member_[n].empty() && member_[n][0].pool == 0;
  if (!online) {
    const int k = free_gpus(n);
    assert(k + failed_on_[n] == gpu_count(n));
    for (Membership& m : member_[n]) {
      Pool& pool = pools_[m.pool];
      auto& bucket = pool.buckets[k];
      NodeId last = bucket.back();
      bucket[m.pos] = last;
      bucket.pop_back();
      if (last != n) {
        for (Membership& lm : member_[last]) {
          if (lm.pool == m.pool) {
            lm.pos = m.pos;
            break;
          }
        }
      }
      m.pos = -1;
      pool.free_gpus -= k;
    }
    offline_free_[n] = free_[n];
    free_[n] = Resources();
    if (counted) {
      total_gpus_ -= gpu_count(n) - failed_on_[n];
      free_gpus_ -= k;
    }
    return;
  }
  auto it = offline_free_.find(n);
  free_[n] = it->second;
  offline_free_.erase(it);
  // A device that failed or was repaired while the node was offline changed only its counts.
  UpdateMigFree(n);
  UpdateFreeMemory(n);
  const int k = free_gpus(n);
  for (Membership& m : member_[n]) {
    Pool& pool = pools_[m.pool];
    m.pos = static_cast<int32_t>(pool.buckets[k].size());
    pool.buckets[k].push_back(n);
    pool.free_gpus += k;
  }
  if (counted) {
    total_gpus_ += gpu_count(n) - failed_on_[n];
    free_gpus_ += k;
  }
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

void ClusterState::UpdateShareRoom(NodeId n) {
  int32_t room = 0;
  const int32_t* used = gpu_used_.data() + gpu_offset_[n];
  for (int i = 0, count = gpu_count(n); i < count; ++i)
    if (used[i] > 0 && used[i] < kMilliPerGpu)
      room = std::max<int32_t>(room, kMilliPerGpu - used[i]);
  if ((room > 0) == (share_room_[n] > 0)) {
    share_room_[n] = room;
    return;
  }
  share_room_[n] = room;
  for (const Membership& m : member_[n]) {
    if (room > 0) {
      pools_[m.pool].shared.insert(n);
    } else {
      pools_[m.pool].shared.erase(n);
    }
  }
}

std::vector<int32_t> ClusterState::Assign(NodeId n, const Resources& req, WorkloadId owner,
                                          std::vector<int8_t>* mig_starts) {
  assert(Fits(n, req));
  if (req[kGpuMemory] > 0) return Assign(n, OnNode(n, req), owner);
  if (!node_mig_[n].empty() && WantsMig(n, req)) {
    std::vector<int32_t> gpus;
    std::vector<int8_t> starts;
    bool planned = PlanMig(n, req, gpus, starts);
    assert(planned && mig_starts != nullptr);
    (void)planned;
    AssignExact(n, req, gpus, owner, starts);
    *mig_starts = std::move(starts);
    return gpus;
  }
  std::vector<int32_t> gpus;
  int32_t* used = gpu_used_.data() + gpu_offset_[n];
  const int count = gpu_count(n);
  if (req[kGpuMilli] > 0) {
    // A share: the fullest shared device with room (best fit), else the lowest free device.
    const int64_t m = req[kGpuMilli];
    int best = -1;
    for (int i = 0; i < count; ++i) {
      if (used[i] > 0 && used[i] < kMilliPerGpu && used[i] + m <= kMilliPerGpu &&
          (best < 0 || used[i] > used[best]))
        best = i;
    }
    if (best < 0) {
      for (int i = 0; i < count && best < 0; ++i)
        if (used[i] == 0) best = i;
    }
    gpus.push_back(best);
  } else if (replicas_[n] > 1) {
    // Time-sliced: slot s is replica s / physical of GPU s % physical. One replica of each of
    // the least loaded GPUs, GPUs this pod has fewer replicas on first, lowest index on ties.
    const int want = static_cast<int>(req[kGpu]);
    const int physical = count / replicas_[n];
    std::vector<int> load(physical, 0), mine(physical, 0);
    for (int i = 0; i < count; ++i) load[i % physical] += used[i] != 0;
    std::vector<bool> taken(count, false);
    while (static_cast<int>(gpus.size()) < want) {
      int best = -1;
      for (int g = 0; g < physical; ++g) {
        if (load[g] >= replicas_[n]) continue;
        if (best < 0 || std::pair(mine[g], load[g]) < std::pair(mine[best], load[best])) best = g;
      }
      assert(best >= 0);
      int slot = best;
      while (used[slot] != 0 || taken[slot]) slot += physical;
      taken[slot] = true;
      gpus.push_back(slot);
      ++load[best];
      ++mine[best];
    }
    std::sort(gpus.begin(), gpus.end());
  } else {
    const int want = static_cast<int>(req[kGpu]);
    gpus.reserve(want);
    const int16_t* domain_of[3] = {nvlink_.data() + gpu_offset_[n], pcie_.data() + gpu_offset_[n],
                                   numa_.data() + gpu_offset_[n]};
    // The NVLink domain, else the PCIe switch, else the NUMA node, with the fewest free devices
    // that holds them all (best fit keeps whole domains free); else the lowest free devices.
    for (int level = 0; level < 3 && gpus.empty() && want > 1 && !uniform_[n]; ++level) {
      const int16_t* dom = domain_of[level];
      int best = -1, best_free = 0;
      for (int i = 0; i < count; ++i) {
        if (used[i] != 0) continue;
        int free_in = 0;
        for (int j = 0; j < count; ++j) free_in += used[j] == 0 && dom[j] == dom[i];
        if (free_in >= want && (best < 0 || free_in < best_free)) {
          best = dom[i];
          best_free = free_in;
        }
      }
      if (best < 0) continue;
      for (int i = 0; i < count && static_cast<int>(gpus.size()) < want; ++i)
        if (used[i] == 0 && dom[i] == best) gpus.push_back(i);
    }
    if (gpus.empty()) {
      for (int i = 0; i < count && static_cast<int>(gpus.size()) < want; ++i)
        if (used[i] == 0) gpus.push_back(i);
    }
    assert(static_cast<int>(gpus.size()) == want);
  }
  AssignExact(n, req, gpus, owner);
  return gpus;
}

void ClusterState::AssignExact(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                               WorkloadId owner) {
  if (req[kGpuMemory] > 0) return AssignExact(n, OnNode(n, req), gpus, owner);
  if (NoDeviceChange(req, gpus, node_mig_[n].empty())) {
    free_[n] -= req;
    return;
  }
  int before = free_gpus(n);
  free_[n] -= req;
  int32_t* owners = gpu_owner_.data() + gpu_offset_[n];
  int32_t* used = gpu_used_.data() + gpu_offset_[n];
  if (req[kGpuMilli] > 0) {
    for (int32_t g : gpus) {  // one device
      if (Failed(n, g)) {     // put back on a failed device: its place comes from the padding
        const int32_t d = gpu_offset_[n] + g;
        if (owners[g] == kFailedDevice) {
          owners[g] = kSharedDevice;
          pad_milli_[d] = kMilliPerGpu;
        }
        assert(owners[g] == kSharedDevice && pad_milli_[d] >= req[kGpuMilli]);
        pad_milli_[d] -= static_cast<int32_t>(req[kGpuMilli]);
        free_[n][kGpuMilli] += req[kGpuMilli];
        continue;
      }
      assert(owners[g] < 0 && used[g] + req[kGpuMilli] <= kMilliPerGpu);
      if (used[g] == 0) {
        --free_[n][kGpu];
        --free_gpus_;
      }
      used[g] += static_cast<int32_t>(req[kGpuMilli]);
      owners[g] = kSharedDevice;
    }
  } else {
    int64_t back = 0;  // failed devices a pod is put back on: they were not free
    for (int32_t g : gpus) {
      if (owners[g] == kFailedDevice) {
        ++back;
      } else {
        assert(owners[g] == -1 && used[g] == 0);
      }
      owners[g] = owner;
      used[g] = kMilliPerGpu;
    }
    free_[n][kGpu] += back;
    free_[n][kGpuMilli] -= kMilliPerGpu * (static_cast<int64_t>(gpus.size()) - back);
    free_gpus_ -= static_cast<int64_t>(gpus.size()) - back;
  }
  Move(n, before, free_gpus(n));
  UpdateShareRoom(n);
  UpdateMigFree(n);
  UpdateFreeMemory(n);
}

bool ClusterState::BookFreePart(const Room& want, WorkloadId owner, Room& booked, Parts parts,
                                const Room* held) {
  const NodeId n = want.node;
  booked.node = n;
  booked.req = Resources{};
  booked.gpus.clear();
  booked.mig_slices.clear();
  const Resources& f = free(n);
  const int32_t* owners = gpu_owners(n);
  const int32_t* used = gpu_used_milli(n);
  // What `held` took is no longer free: devices and slices are skipped below as taken, and the
  // counted parts (cpu, memory, pods, a share's milli) are asked less what it holds.
  auto rest = [&](ResourceId res, int64_t asked) {
    return std::max<int64_t>(0, asked - (held != nullptr ? held->req[res] : 0));
  };
  const bool device_parts = parts == Parts::kDeviceParts;
  if (device_parts && !want.mig_slices.empty()) {
    // MIG instances: their memory slices that nobody uses, on devices nobody owns whole.
    for (size_t i = 0; i < want.gpus.size() && i < want.mig_slices.size(); ++i) {
      const int32_t g = want.gpus[i];
      if (owners[g] != -1 && owners[g] != kMigDevice) continue;
      const uint8_t bits = want.mig_slices[i] & static_cast<uint8_t>(~mig_masks(n)[g]);
      if (bits == 0) continue;
      auto at = std::find(booked.gpus.begin(), booked.gpus.end(), g);
      if (at == booked.gpus.end()) {
        booked.gpus.push_back(g);
        booked.mig_slices.push_back(bits);
      } else {
        booked.mig_slices[at - booked.gpus.begin()] |= bits;
      }
    }
  } else if (device_parts && IsShare(want.req) && want.gpus.size() == 1) {
    // A share: the free milli of its device, up to what it asks.
    const int32_t g = want.gpus[0];
    const int64_t asked = rest(kGpuMilli, ShareMilli(n, want.req));
    if ((owners[g] == -1 || owners[g] == kSharedDevice) && asked <= kMilliPerGpu) {
      const int64_t take = std::min<int64_t>(asked, kMilliPerGpu - used[g]);
      if (take > 0) {
        booked.req[kGpuMilli] = take;
        booked.gpus.push_back(g);
      }
    }
  } else if (want.req[kGpu] > 0) {
    for (int32_t g : want.gpus)
      if (owners[g] == -1 && used[g] == 0) booked.gpus.push_back(g);
    booked.req[kGpu] = static_cast<int64_t>(booked.gpus.size());
  }
  for (ResourceId res : {kCpu, kMemory, kPods}) {
    const int64_t asked = rest(res, want.req[res]);
    booked.req[res] = std::clamp<int64_t>(f[res], 0, asked);
  }
  if (booked.empty()) return false;
  if (booked.mig_slices.empty()) {
    AssignExact(n, booked.req, booked.gpus, owner);
    return true;
  }
  const int before = free_gpus(n);
  free_[n] -= booked.req;
  for (size_t i = 0; i < booked.gpus.size(); ++i)
    TakeSlices(n, booked.gpus[i], booked.mig_slices[i]);
  Move(n, before, free_gpus(n));
  UpdateMigFree(n);
  UpdateFreeMemory(n);
  return true;
}

void ClusterState::Unbook(const Room& booked) {
  if (booked.empty()) return;
  const NodeId n = booked.node;
  if (booked.mig_slices.empty()) return Release(n, booked.req, booked.gpus);
  const int before = free_gpus(n);
  free_[n] += booked.req;
  for (size_t i = 0; i < booked.gpus.size(); ++i)
    GiveSlices(n, booked.gpus[i], booked.mig_slices[i]);
  Move(n, before, free_gpus(n));
  UpdateMigFree(n);
  UpdateFreeMemory(n);
}

Room ClusterState::PodRoom(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                           const std::vector<int8_t>& mig_starts) const {
  Room room{n, req, gpus, {}};
  if (mig_starts.empty()) return room;
  auto instances = MigInstances(n, req);
  for (size_t i = 0; i < instances.size() && i < mig_starts.size(); ++i)
    room.mig_slices.push_back(MigSlices(*instances[i], mig_starts[i]));
  return room;
}

void ClusterState::TakeSlices(NodeId n, int32_t g, uint8_t bits) {
  const int32_t d = gpu_offset_[n] + g;
  if (failed_[d]) {  // put back on a failed device: its slices come from the padding
    if (gpu_owner_[d] == kFailedDevice) {
      gpu_owner_[d] = kMigDevice;
      mig_mask_[d] = 0xff;
      pad_slices_[d] = 0xff;
    }
    assert(gpu_owner_[d] == kMigDevice && (pad_slices_[d] & bits) == bits);
    pad_slices_[d] &= static_cast<uint8_t>(~bits);
    return;
  }
  assert((gpu_owner_[d] == -1 || gpu_owner_[d] == kMigDevice) && (mig_mask_[d] & bits) == 0);
  if (mig_mask_[d] == 0) {
    gpu_owner_[d] = kMigDevice;
    gpu_used_[d] = kMilliPerGpu;  // not for shares or whole-GPU pods while it holds instances
    --free_[n][kGpu];
    --free_gpus_;
    free_[n][kGpuMilli] -= kMilliPerGpu;
  }
  mig_mask_[d] |= bits;
}

void ClusterState::GiveSlices(NodeId n, int32_t g, uint8_t bits) {
  const int32_t d = gpu_offset_[n] + g;
  if (failed_[d]) {  // a failed device keeps its slices padded; out when the last one leaves
    pad_slices_[d] |= bits;
    if (pad_slices_[d] == 0xff) FailOut(n, g);
    return;
  }
  mig_mask_[d] &= static_cast<uint8_t>(~bits);
  if (mig_mask_[d] == 0) {
    gpu_owner_[d] = -1;
    gpu_used_[d] = 0;
    ++free_[n][kGpu];
    ++free_gpus_;
    free_[n][kGpuMilli] += kMilliPerGpu;
  }
}

void ClusterState::Release(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                           const std::vector<int8_t>& mig_starts) {
  if (req[kGpuMemory] > 0) return Release(n, OnNode(n, req), gpus);
  if (mig_starts.empty() && NoDeviceChange(req, gpus, node_mig_[n].empty())) {
    free_[n] += req;
    return;
  }
  if (!mig_starts.empty()) {
    int before = free_gpus(n);
    free_[n] += req;
    auto instances = MigInstances(n, req);
    for (size_t i = 0; i < gpus.size(); ++i)
      GiveSlices(n, gpus[i], MigSlices(*instances[i], mig_starts[i]));
    Move(n, before, free_gpus(n));
    UpdateMigFree(n);
    UpdateFreeMemory(n);
    return;
  }
  int before = free_gpus(n);
  free_[n] += req;
  int32_t* owners = gpu_owner_.data() + gpu_offset_[n];
  int32_t* used = gpu_used_.data() + gpu_offset_[n];
  if (req[kGpuMilli] > 0) {
    for (int32_t g : gpus) {
      if (Failed(n, g)) {  // its milli become padding; out when the last share leaves
        const int32_t d = gpu_offset_[n] + g;
        pad_milli_[d] += static_cast<int32_t>(req[kGpuMilli]);
        free_[n][kGpuMilli] -= req[kGpuMilli];
        if (pad_milli_[d] == kMilliPerGpu) FailOut(n, g);
        continue;
      }
      used[g] -= static_cast<int32_t>(req[kGpuMilli]);
      if (used[g] == 0) {
        owners[g] = -1;
        ++free_[n][kGpu];
        ++free_gpus_;
      }
    }
  } else {
    int64_t out = 0;  // failed devices: out, not free
    for (int32_t g : gpus) {
      if (Failed(n, g)) {
        FailOut(n, g);
        ++out;
        continue;
      }
      owners[g] = -1;
      used[g] = 0;
    }
    free_[n][kGpu] -= out;
    free_[n][kGpuMilli] += kMilliPerGpu * (static_cast<int64_t>(gpus.size()) - out);
    free_gpus_ += static_cast<int64_t>(gpus.size()) - out;
  }
  Move(n, before, free_gpus(n));
  UpdateShareRoom(n);
  UpdateMigFree(n);
  UpdateFreeMemory(n);
}

void ClusterState::AssignExact(NodeId n, const Resources& req, const std::vector<int32_t>& gpus,
                               WorkloadId owner, const std::vector<int8_t>& mig_starts) {
  if (mig_starts.empty()) return AssignExact(n, req, gpus, owner);
  assert(failed_on_[n] > 0 || MigPlacementFree(n, req, gpus, mig_starts));
  int before = free_gpus(n);
  free_[n] -= req;
  auto instances = MigInstances(n, req);
  for (size_t i = 0; i < gpus.size(); ++i)
    TakeSlices(n, gpus[i], MigSlices(*instances[i], mig_starts[i]));
  Move(n, before, free_gpus(n));
  UpdateMigFree(n);
  UpdateFreeMemory(n);
}

std::vector<const MigProfile*> ClusterState::MigInstances(NodeId n, const Resources& req) const {
  std::vector<const MigProfile*> out;
  for (const MigRes& m : node_mig_[n])
    for (int64_t k = 0; k < req[m.id]; ++k) out.push_back(m.profile);
  return out;
}

bool ClusterState::MigPlacementFree(NodeId n, const Resources& req,
                                    const std::vector<int32_t>& gpus,
                                    const std::vector<int8_t>& mig_starts) const {
  auto instances = MigInstances(n, req);
  if (instances.size() != gpus.size() || gpus.size() != mig_starts.size()) return false;
  std::vector<uint8_t> masks(mig_masks(n), mig_masks(n) + gpu_count(n));
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int g = gpus[i], s = mig_starts[i];
    if (g < 0 || g >= gpu_count(n) || s < 0 || s > 7 || !(instances[i]->starts >> s & 1u))
      return false;
    const int32_t owner = gpu_owner_[gpu_offset_[n] + g];
    if (owner != -1 && owner != kMigDevice) return false;
    const uint8_t take = MigSlices(*instances[i], s);
    if (masks[g] & take) return false;
    masks[g] |= take;
  }
  return true;
}

bool ClusterState::PlanMig(NodeId n, const Resources& req, std::vector<int32_t>& gpus,
                           std::vector<int8_t>& starts) const {
  const int count = gpu_count(n);
  std::vector<uint8_t> masks(mig_masks(n), mig_masks(n) + count);
  const int32_t* owners = gpu_owners(n);
  gpus.clear();
  starts.clear();
  for (const MigProfile* p : MigInstances(n, req)) {
    // A device that already holds instances first (keeps whole GPUs whole), the one left with
    // the fewest free slices (best fit); else the lowest empty device.
    int best = -1, best_free = 9;
    for (int g = 0; g < count; ++g) {
      const bool partitioned = masks[g] != 0;
      if (!partitioned || (owners[g] != kMigDevice && owners[g] != -1)) continue;
      if (MigChooseStart(masks[g], *p) < 0) continue;
      const int free_after = 8 - std::popcount(masks[g]) - p->slices;
      if (free_after < best_free) {
        best = g;
        best_free = free_after;
      }
    }
    for (int g = 0; g < count && best < 0; ++g)
      if (masks[g] == 0 && owners[g] == -1) best = g;
    if (best < 0) return false;
    const int s = MigChooseStart(masks[best], *p);
    if (s < 0) return false;
    masks[best] |= MigSlices(*p, s);
    gpus.push_back(best);
    starts.push_back(static_cast<int8_t>(s));
  }
  return true;
}

void ClusterState::UpdateMigFree(NodeId n) {
  if (node_mig_[n].empty()) return;
  const int count = gpu_count(n);
  const int32_t* owners = gpu_owners(n);
  const uint8_t* masks = mig_masks(n);
  for (const MigRes& m : node_mig_[n]) {
    int64_t room = 0;
    for (int g = 0; g < count; ++g)
      if (owners[g] == -1 || owners[g] == kMigDevice) room += MigCapacity(masks[g], *m.profile);
    free_[n][m.id] = room;
  }
}

int ClusterState::ServeTier(NodeId n, int k) const {
  if (uniform_[n] || k <= 1) return 3;
  const int count = gpu_count(n);
  const int32_t* used = gpu_used_.data() + gpu_offset_[n];
  const int16_t* domain_of[3] = {nvlink_.data() + gpu_offset_[n], pcie_.data() + gpu_offset_[n],
                                 numa_.data() + gpu_offset_[n]};
  for (int level = 0; level < 3; ++level) {
    const int16_t* dom = domain_of[level];
    for (int i = 0; i < count; ++i) {
      if (used[i] != 0) continue;
      int free_in = 0;
      for (int j = 0; j < count; ++j) free_in += used[j] == 0 && dom[j] == dom[i];
      if (free_in >= k) return 3 - level;
    }
  }
  return 0;
}

int ClusterState::MaxFreeGpus(int pool) const {
  const auto& b = pools_[pool].buckets;
  for (int k = static_cast<int>(b.size()) - 1; k >= 0; --k)
    if (!b[k].empty()) return k;
  return -1;
}

}  // namespace tessera
