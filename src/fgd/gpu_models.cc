#include "fgd/gpu_models.h"

#include "absl/status/status.h"
#include "fmt/format.h"

namespace tessera::fgd {

absl::StatusOr<int32_t> GpuModelTable::Intern(std::string_view name) {
  const int32_t found = Find(name);
  if (found != kNoGpuModel) return found;
  if (names_.size() >= kMaxGpuModels) {
    return absl::ResourceExhaustedError(
        fmt::format("more than {} GPU models (at '{}')", kMaxGpuModels, name));
  }
  names_.emplace_back(name);
  return static_cast<int32_t>(names_.size() - 1);
}

int32_t GpuModelTable::Find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int32_t>(i);
  }
  return kNoGpuModel;
}

absl::StatusOr<ModelMask> GpuModelTable::MaskOfSpec(std::string_view spec) {
  ModelMask mask = 0;
  while (!spec.empty()) {
    const size_t bar = spec.find('|');
    const std::string_view part = spec.substr(0, bar);
    spec = bar == std::string_view::npos ? std::string_view() : spec.substr(bar + 1);
    if (part.empty()) continue;
    absl::StatusOr<int32_t> id = Intern(part);
    if (!id.ok()) return id.status();
    mask |= ModelMask{1} << *id;
  }
  return mask;
}

}  // namespace tessera::fgd
