// MIG (Multi-Instance GPU) profiles and NVIDIA's placement rules, for nodes whose MIG layout
// Tessera chooses (annotation tessera.dev/mig: dynamic).
//
// A MIG-capable GPU (A100, H100, H200) has 8 memory slices and 7 compute slices. A profile
// `<c>g.<m>gb` takes c compute slices and a fixed run of memory slices that may start only at
// the offsets NVIDIA's placement table allows (e.g. on an A100-40GB, 3g.20gb at slice 0 or 4,
// 1g.5gb at 0..6). Modelling a device as an 8-bit mask of used memory slices and placing only at
// those starts gives exactly the valid layouts: compute never runs out first, because the
// starts are chosen so that it cannot.
//
// Thread-safety: immutable tables; safe from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessera {

struct MigProfile {
  std::string_view name;  // "1g.5gb": the device plugin's resource is nvidia.com/mig-<name>
  int8_t compute;         // compute slices (of 7)
  int8_t slices;          // memory slices (of 8) it occupies
  uint8_t starts;         // bit s set: may start at memory slice s
};

inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

// The profiles of the GPU family of a device with `memory_mib` MiB (the GFD label
// nvidia.com/gpu.memory) and product name `product` (nvidia.com/gpu.product; used when the memory
// is unknown). Empty when the device is not a MIG-capable family Tessera knows (A100 40/80 GB,
// H100 80/94-96 GB, H200 141 GB). `family` (if not null) gets a short name, e.g. "A100-40GB".
std::span<const MigProfile> MigProfilesFor(int64_t memory_mib, std::string_view product,
                                           std::string_view* family = nullptr);

// Chooses where a `p` instance goes on one device whose used memory slices are `mask`: the
// allowed free start that leaves the most room for large profiles (best fit), or -1.
int MigChooseStart(uint8_t mask, const MigProfile& p);

// How many `p` instances still fit on a device with used slices `mask` (greedy, lowest starts).
int MigCapacity(uint8_t mask, const MigProfile& p);

inline uint8_t MigSlices(const MigProfile& p, int start) {
  return static_cast<uint8_t>(((1u << p.slices) - 1u) << start);
}

}  // namespace tessera
