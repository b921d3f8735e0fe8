#include "dra/device_topology.h"

#include <algorithm>
#include <string>

namespace tessera::dra {

namespace {

const AttributeValue* Find(const Device& device, const std::string& name) {
  auto it = device.attributes.find(name);
  return it == device.attributes.end() ? nullptr : &it->second;
}

// The domains of one level among the candidates: each candidate's domain index (-1: none), and
// per domain its number of candidates and whether it holds a device of the claim.
struct Domains {
  std::vector<int32_t> of;  // per candidate
  std::vector<int64_t> free;
  std::vector<bool> claim;
};

Domains Group(const std::vector<NodeDevice>& devices, const std::vector<int32_t>& candidates,
              const std::vector<int32_t>& claim_devices, int level) {
  Domains d;
  std::vector<const AttributeValue*> values;
  auto domain_of = [&](const AttributeValue* v) -> int32_t {
    if (v == nullptr) return -1;
    for (size_t i = 0; i < values.size(); ++i)
      if (*values[i] == *v) return static_cast<int32_t>(i);
    values.push_back(v);
    d.free.push_back(0);
    d.claim.push_back(false);
    return static_cast<int32_t>(values.size() - 1);
  };
  for (int32_t c : candidates) {
    int32_t k = domain_of(TopologyValue(devices[c].device, level));
    d.of.push_back(k);
    if (k >= 0) ++d.free[k];
  }
  for (int32_t c : claim_devices) {
    int32_t k = domain_of(TopologyValue(devices[c].device, level));
    if (k >= 0) d.claim[k] = true;
  }
  return d;
}

}  // namespace

const AttributeValue* TopologyValue(const Device& device, int level) {
  if (level == 0) return Find(device, kPcieRootAttribute);
  if (const AttributeValue* v = Find(device, kNumaNodeAttribute)) return v;
  if (const AttributeValue* v = Find(device, device.driver + "/numaNode")) return v;
  return Find(device, device.driver + "/numa");
}

void PreferCompact(const std::vector<NodeDevice>& devices, std::vector<int32_t>& candidates,
                   int64_t count, const std::vector<int32_t>& claim_devices) {
  if (candidates.size() < 2) return;
  for (int level = 0; level < 2; ++level) {
    Domains d = Group(devices, candidates, claim_devices, level);
    int32_t best = -1;
    for (size_t k = 0; k < d.free.size(); ++k) {
      if (d.free[k] < count) continue;
      // A domain with the claim's devices first, then the fewest free (best fit); the first
      // such domain in slice order on a tie.
      if (best < 0 || (d.claim[k] && !d.claim[best]) ||
          (d.claim[k] == d.claim[best] && d.free[k] < d.free[best]))
        best = static_cast<int32_t>(k);
    }
    if (best < 0) continue;
    std::vector<int32_t> order;
    order.reserve(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i)
      if (d.of[i] == best) order.push_back(candidates[i]);
    for (size_t i = 0; i < candidates.size(); ++i)
      if (d.of[i] != best) order.push_back(candidates[i]);
    candidates = std::move(order);
    return;
  }
}

}  // namespace tessera::dra
