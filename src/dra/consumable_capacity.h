// Consumable capacity (KEP-5075, DRAConsumableCapacity: beta and on by default since
// Kubernetes 1.36): how much of each capacity of a device one request consumes, by the device's
// requestPolicy, and whether it fits in what the device's other shares leave. Upstream's
// k8s.io/dynamic-resource-allocation/structured (consumable_capacity.go) is the reference;
// docs/dra.md says what is matched.
//
// Every amount is in thousandths of its unit. Upstream rounds to a step in whole units unless
// the range is fractional (DRAFractionalCapacityRange); in thousandths the two agree wherever
// min and step are whole, and follow the fractional rule where they are not.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "dra/model.h"

namespace tessera::dra {

// What a request consumes of capacity `cap` when it asks for `requested` (nullptr: it does not
// name the capacity): the policy's default, else the whole capacity; a requested amount rounds
// up to validRange's min and step, or to the next of validValues.
int64_t ConsumedAmount(const int64_t* requested, const ConsumableCapacity& cap);

// Whether `consumed` is outside what the policy allows (above max, off the step, not one of the
// valid values; the default always passes).
bool ViolatesPolicy(int64_t consumed, const std::optional<CapacityRequestPolicy>& policy);

enum class CapacityFit : int8_t {
  kFits,
  kUnknownCapacity,  // the request names a capacity the device does not have
  kPolicy,           // an amount outside the device's requestPolicy
  kMoreThanItHas,    // more than the device has at all
  kTooLittleLeft,    // more than it has left beside its other shares
};

// Whether a request asking `requests` (nullptr: none) may take device `dev`, whose shares
// already consume `in_use` (nullptr: nothing); when it fits, `consumed` (if not null) gets what
// it consumes of every capacity of the device. An exclusive device is checked the same way
// with nothing in use, as upstream does: a request still has to fit in it.
CapacityFit FitCapacity(const std::map<std::string, int64_t>* requests, const NodeDevice& dev,
                        const std::map<std::string, int64_t>* in_use,
                        std::map<std::string, int64_t>* consumed);

}  // namespace tessera::dra
