// ClusterState's failed GPU devices (SetGpuFailed, docs/gpu-failures.md): out, or padded full
// while pods still hold them. The Assign and Release paths that put pods back on a failed device
// or take them off it are in cluster_state.cc, beside the others.
#include "engine/cluster_state.h"

namespace tessera {

void ClusterState::SetGpuFailed(NodeId n, int32_t g, bool failed) {
  const int32_t d = gpu_offset_[n] + g;
  if ((failed_[d] != 0) == failed) return;
  failed_[d] = failed ? 1 : 0;
  const int sign = failed ? 1 : -1;
  failed_on_[n] += sign;
  failed_total_ += sign;
  if (Counted(n)) total_gpus_ -= sign;
  int32_t& owner = gpu_owner_[d];
  int32_t& used = gpu_used_[d];
  if (!online_[n]) {
    // Nothing is placed on an offline node: only the counts it comes back with change.
    Resources& f = offline_free_[n];
    f[kGpu] -= sign;
    f[kGpuMilli] -= sign * kMilliPerGpu;
    owner = failed ? kFailedDevice : -1;
    used = failed ? kMilliPerGpu : 0;
    return;
  }
  const int before = free_gpus(n);
  if (failed) {
    if (owner == -1) {  // nothing on it: out
      owner = kFailedDevice;
      used = kMilliPerGpu;
      --free_[n][kGpu];
      --free_gpus_;
      free_[n][kGpuMilli] -= kMilliPerGpu;
    } else if (owner == kSharedDevice) {  // its free milli padded
      pad_milli_[d] = kMilliPerGpu - used;
      free_[n][kGpuMilli] -= pad_milli_[d];
      used = kMilliPerGpu;
    } else if (owner == kMigDevice) {  // its free slices padded
      pad_slices_[d] = static_cast<uint8_t>(~mig_mask_[d]);
      mig_mask_[d] = 0xff;
    }  // a whole owner: full already
  } else {
    if (owner == kFailedDevice) {
      owner = -1;
      used = 0;
      ++free_[n][kGpu];
      ++free_gpus_;
      free_[n][kGpuMilli] += kMilliPerGpu;
    } else if (owner == kSharedDevice) {
      used -= pad_milli_[d];
      free_[n][kGpuMilli] += pad_milli_[d];
      pad_milli_[d] = 0;
    } else if (owner == kMigDevice) {
      mig_mask_[d] &= static_cast<uint8_t>(~pad_slices_[d]);
      pad_slices_[d] = 0;
    }
  }
  Move(n, before, free_gpus(n));
  UpdateShareRoom(n);
  UpdateMigFree(n);
  UpdateFreeMemory(n);
}

void ClusterState::FailOut(NodeId n, int32_t g) {
  const int32_t d = gpu_offset_[n] + g;
  gpu_owner_[d] = kFailedDevice;
  gpu_used_[d] = kMilliPerGpu;
  mig_mask_[d] = 0;
  pad_milli_[d] = 0;
  pad_slices_[d] = 0;
}

}  // namespace tessera
