#include "dra/consumable_capacity.h"

#include <algorithm>
#include <limits>

namespace tessera::dra {
namespace {

int64_t RoundUpRange(int64_t requested, const CapacityRequestPolicy::Range& range) {
  if (requested < range.min) return range.min;
  if (!range.step || *range.step <= 0) return requested;
  const __int128 added = static_cast<__int128>(requested) - range.min;
  const __int128 n = (added + *range.step - 1) / *range.step;
  const __int128 v = range.min + n * *range.step;
  return v > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max()
                                                 : static_cast<int64_t>(v);
}

int64_t RoundUpValidValues(int64_t requested, const std::vector<int64_t>& values) {
  for (int64_t v : values)
    if (requested <= v) return v;
  return requested;  // above every valid value: the policy refuses it
}

}  // namespace

int64_t ConsumedAmount(const int64_t* requested, const ConsumableCapacity& cap) {
  if (requested == nullptr)
    return cap.policy && cap.policy->default_milli ? *cap.policy->default_milli : cap.value;
  if (!cap.policy) return *requested;
  if (cap.policy->valid_range) return RoundUpRange(*requested, *cap.policy->valid_range);
  if (!cap.policy->valid_values.empty())
    return RoundUpValidValues(*requested, cap.policy->valid_values);
  return *requested;
}

bool ViolatesPolicy(int64_t consumed, const std::optional<CapacityRequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_milli && consumed == *policy->default_milli) return false;
  if (const auto& range = policy->valid_range) {
    if (range->max && consumed > *range->max) return true;
    if (range->step && *range->step > 0 && (consumed - range->min) % *range->step != 0) return true;
    return false;
  }
  if (!policy->valid_values.empty())
    return std::find(policy->valid_values.begin(), policy->valid_values.end(), consumed) ==
           policy->valid_values.end();
  return false;
}

CapacityFit FitCapacity(const std::map<std::string, int64_t>* requests, const NodeDevice& dev,
                        const std::map<std::string, int64_t>* in_use,
                        std::map<std::string, int64_t>* consumed) {
  if (requests != nullptr)
    for (const auto& [name, amount] : *requests)
      if (!dev.capacities.contains(name)) return CapacityFit::kUnknownCapacity;
  if (consumed != nullptr) consumed->clear();
  for (const auto& [name, cap] : dev.capacities) {
    const int64_t* requested = nullptr;
    if (requests != nullptr)
      if (auto it = requests->find(name); it != requests->end()) requested = &it->second;
    const int64_t amount = ConsumedAmount(requested, cap);
    if (ViolatesPolicy(amount, cap.policy)) return CapacityFit::kPolicy;
    int64_t used = 0;
    if (in_use != nullptr)
      if (auto it = in_use->find(name); it != in_use->end()) used = it->second;
    if (amount > cap.value) return CapacityFit::kMoreThanItHas;
    if (amount > cap.value - used) return CapacityFit::kTooLittleLeft;
    if (consumed != nullptr) (*consumed)[name] = amount;
  }
  return CapacityFit::kFits;
}

}  // namespace tessera::dra
