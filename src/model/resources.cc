#include "model/resources.h"

#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"

namespace tessera {

struct ResourceRegistry::Impl {
  mutable std::mutex mu;
  std::vector<std::string> names;                    // GUARDED_BY(mu)
  absl::flat_hash_map<std::string, ResourceId> ids;  // GUARDED_BY(mu)
};

ResourceRegistry::ResourceRegistry() : impl_(new Impl) {
  for (std::string_view n : {"cpu", "memory", "pods", "nvidia.com/gpu", "tessera.dev/gpu-milli",
                             "tessera.dev/gpu-memory"}) {
    impl_->ids.emplace(std::string(n), static_cast<ResourceId>(impl_->names.size()));
    impl_->names.emplace_back(n);
  }
}

ResourceRegistry& ResourceRegistry::Global() {
  static ResourceRegistry* registry = new ResourceRegistry();
  return *registry;
}

absl::StatusOr<ResourceId> ResourceRegistry::Intern(std::string_view name) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (auto it = impl_->ids.find(std::string(name)); it != impl_->ids.end()) return it->second;
  if (impl_->names.size() >= static_cast<size_t>(kMaxResources)) {
    return absl::ResourceExhaustedError(fmt::format(
        "too many distinct resource names (at most {}); cannot add \"{}\"", kMaxResources, name));
  }
  auto id = static_cast<ResourceId>(impl_->names.size());
  impl_->names.emplace_back(name);
  impl_->ids.emplace(std::string(name), id);
  return id;
}

ResourceId ResourceRegistry::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->ids.find(std::string(name));
  return it == impl_->ids.end() ? -1 : it->second;
}

std::string ResourceRegistry::Name(ResourceId id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (id < 0 || id >= static_cast<ResourceId>(impl_->names.size())) return "?";
  return impl_->names[id];
}

int ResourceRegistry::size() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return static_cast<int>(impl_->names.size());
}

std::string FormatQuantity(ResourceId r, int64_t q) {
  if (r == kCpu) {
    if (q % 1000 == 0) return fmt::format("{}", q / 1000);
    return fmt::format("{}m", q);
  }
  if (r == kGpuMemory) return fmt::format("{}Mi", q);
  if (r == kMemory && q != 0) {
    static constexpr const char* kSuffix[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int64_t v = q;
    int s = -1;
    while (s < 5 && v % 1024 == 0 && v != 0) {
      v /= 1024;
      ++s;
    }
    if (s >= 0) return fmt::format("{}{}", v, kSuffix[s]);
  }
  return fmt::format("{}", q);
}

std::string Resources::ToString() const {
  std::string out;
  for (int i = 0; i < kMaxResources; ++i) {
    if (v_[i] == 0) continue;
    if (!out.empty()) out += ", ";
    out += ResourceName(i) + "=" + FormatQuantity(i, v_[i]);
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace tessera
