#include "engine/elastic/gpu_health.h"

#include <algorithm>

#include "engine/engine.h"

namespace tessera {

std::vector<int32_t> PhysicalGpuSlots(const EngineState& s, NodeId n, int32_t gpu) {
  if (n < 0 || n >= s.cluster->num_nodes()) return {};
  const int count = s.cluster->gpu_count(n);
  if (gpu < 0 || gpu >= count) return {};
  const int physical = count / s.cluster->gpu_replicas(n);
  std::vector<int32_t> out;
  for (int32_t slot = gpu % physical; slot < count; slot += physical) out.push_back(slot);
  return out;
}

void SetGpuFailed(Engine& e, NodeId n, int32_t gpu, bool failed) {
  EngineState& s = e.st;
  bool changed = false;
  for (int32_t slot : PhysicalGpuSlots(s, n, gpu)) {
    changed = changed || s.cluster->gpu_failed(n, slot) != failed;
    s.cluster->SetGpuFailed(n, slot, failed);
  }
  // Capacity back: workloads set aside after a placement failure try again (as after a release).
  if (changed && !failed) ++s.release_epoch;
}

std::vector<WorkloadId> WorkloadsOnGpu(const EngineState& s, NodeId n, int32_t gpu) {
  const std::vector<int32_t> slots = PhysicalGpuSlots(s, n, gpu);
  std::vector<WorkloadId> out;
  if (slots.empty()) return out;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(s.recs.size()); ++id) {
    if (s.recs.retired(static_cast<size_t>(id))) continue;
    if (s.status[id].state != WorkloadState::kAdmitted &&
        s.status[id].state != WorkloadState::kTerminating)
      continue;
    bool on = false;
    for (const PlacedPod& p : s.recs[id].placed) {
      if (p.placement.node != n) continue;
      for (int32_t g : p.placement.gpus)
        on = on || std::find(slots.begin(), slots.end(), g) != slots.end();
    }
    if (on) out.push_back(id);
  }
  return out;
}

}  // namespace tessera
