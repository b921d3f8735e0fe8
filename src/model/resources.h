// Resource names and fixed-size resource vectors.
//
// Every quantity Tessera schedules is an int64 in a fixed unit per resource: cpu in millicores,
// every other resource (memory in bytes, nvidia.com/gpu, MIG slices, extended resources) in whole
// units. Names are interned once into dense ids so that the hot paths add and compare arrays.
//
// Thread-safety: ResourceRegistry is safe to use from several threads. Resources is a value type.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera {

using ResourceId = int32_t;

// Enough for cpu, memory, pods, GPUs, GPU shares and a dozen MIG profiles / extended resources.
inline constexpr int kMaxResources = 24;

// Ids fixed for the resources every scheduler knows.
inline constexpr ResourceId kCpu = 0;
inline constexpr ResourceId kMemory = 1;
inline constexpr ResourceId kPods = 2;
inline constexpr ResourceId kGpu = 3;  // nvidia.com/gpu, whole devices
inline constexpr std::string_view kGpuResourceName = "nvidia.com/gpu";
// A share of one GPU device in thousandths (Alibaba's gpu_milli): a pod asking 1..999 gets that
// share of a single device, which other shares may use too. A node holds 1000 per GPU device;
// the engine derives it. Quota on this resource counts shares exactly.
inline constexpr ResourceId kGpuMilli = 4;
inline constexpr std::string_view kGpuMilliResourceName = "tessera.dev/gpu-milli";
inline constexpr int64_t kMilliPerGpu = 1000;
// A share of one GPU device by memory, in MiB (KAI Scheduler's gpu-memory): on a device of D MiB
// it takes ceil(M * 1000 / D) milli, so shares by memory and by milli mix on one device and
// neither ever exceeds it. Quota on this resource counts the MiB asked.
inline constexpr ResourceId kGpuMemory = 5;
inline constexpr std::string_view kGpuMemoryResourceName = "tessera.dev/gpu-memory";

// Interns resource names process-wide. Ids stay valid for the life of the process.
class ResourceRegistry {
 public:
  static ResourceRegistry& Global();

  // Returns the id of `name`, interning it if new. Fails once kMaxResources names exist.
  [[nodiscard]] absl::StatusOr<ResourceId> Intern(std::string_view name);
  // Returns -1 when `name` was never interned.
  ResourceId Find(std::string_view name) const;
  std::string Name(ResourceId id) const;
  int size() const;

 private:
  ResourceRegistry();
  struct Impl;
  Impl* impl_;  // never freed: the registry lives as long as the process
};

inline std::string ResourceName(ResourceId id) { return ResourceRegistry::Global().Name(id); }

// A dense vector of quantities indexed by ResourceId.
class Resources {
 public:
  Resources() { v_.fill(0); }

  int64_t Get(ResourceId r) const { return v_[r]; }
  void Set(ResourceId r, int64_t q) { v_[r] = q; }
  int64_t& operator[](ResourceId r) { return v_[r]; }
  int64_t operator[](ResourceId r) const { return v_[r]; }

  Resources& operator+=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v_[i] += o.v_[i];
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    for (int i = 0; i < kMaxResources; ++i) v_[i] -= o.v_[i];
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  Resources Times(int64_t k) const {
    Resources r = *this;
    for (auto& x : r.v_) x *= k;
    return r;
  }
  bool operator==(const Resources& o) const { return v_ == o.v_; }

  // True when every component of *this is <= the same component of `cap`.
  bool FitsIn(const Resources& cap) const {
    for (int i = 0; i < kMaxResources; ++i)
      if (v_[i] > cap.v_[i]) return false;
    return true;
  }
  bool IsZero() const {
    for (auto x : v_)
      if (x != 0) return false;
    return true;
  }
  bool AnyNegative() const {
    for (auto x : v_)
      if (x < 0) return true;
    return false;
  }
  // "cpu=4, memory=16Gi, nvidia.com/gpu=2" listing only non-zero entries.
  std::string ToString() const;

 private:
  std::array<int64_t, kMaxResources> v_;
};

// Formats a quantity of resource `r` the way a person would write it (cpu "500m" or "4",
// memory "16Gi", others plain integers).
std::string FormatQuantity(ResourceId r, int64_t q);

}  // namespace tessera
