// GPU model names interned into small ids, and a pod's model constraint (`gpu_spec`, models
// separated by '|') as a bit mask over those ids, so that "may this pod use this node's GPUs" is
// one AND in the scoring loops.
//
// Thread-safety: a table is filled once (single thread) and then only read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::fgd {

// Bit i set: GPU model id i is allowed. 0: the pod names no model and may use any GPU.
using ModelMask = uint64_t;
inline constexpr int kMaxGpuModels = 64;
// The model id of a node without GPUs.
inline constexpr int32_t kNoGpuModel = -1;

class GpuModelTable {
 public:
  // The id of `name`, adding it when new. Fails past kMaxGpuModels names.
  [[nodiscard]] absl::StatusOr<int32_t> Intern(std::string_view name);
  // kNoGpuModel when `name` was never interned.
  int32_t Find(std::string_view name) const;
  // The mask of a '|'-separated model list; empty parts are ignored and an empty list is 0 (any
  // model), as the FGD simulator reads `gpu_spec`. Names not yet known are interned (a node of
  // that model may not exist; the pod then fits nowhere).
  [[nodiscard]] absl::StatusOr<ModelMask> MaskOfSpec(std::string_view spec);
  const std::string& Name(int32_t id) const { return names_[static_cast<size_t>(id)]; }
  int32_t size() const { return static_cast<int32_t>(names_.size()); }

 private:
  std::vector<std::string> names_;
};

// The FGD simulator's IsNodeAccessibleToPod: a pod without a model constraint may use any node
// (a GPU-less node too); a constrained pod only nodes of one of its models.
inline bool ModelAllowed(ModelMask pod_models, int32_t node_model) {
  if (pod_models == 0) return true;
  if (node_model < 0) return false;
  return (pod_models >> node_model) & 1u;
}

}  // namespace tessera::fgd
