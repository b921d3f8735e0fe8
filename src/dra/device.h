// One device of Dynamic Resource Allocation as a ResourceSlice publishes it
// (resource.k8s.io/v1 Device), in the form the allocator and the CEL selectors read.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/btree_map.h"

namespace tessera::dra {

// A semantic version ("1.2.3-rc.1"), the `version` member of a DeviceAttribute, kept as text.
struct Version {
  std::string text;
  friend bool operator==(const Version&, const Version&) = default;
};

// A DeviceAttribute holds exactly one of bool, int, string, version; since 1.36 also a list of
// one of those (list-typed attributes). A list holds values of one type.
using Scalar = std::variant<bool, int64_t, std::string, Version>;
using AttributeValue = std::variant<bool, int64_t, std::string, Version, std::vector<Scalar>>;

// A capacity quantity ("80Gi", "1", "500m") in thousandths of its unit; `text` is as written.
struct Capacity {
  int64_t milli = 0;
  std::string text;
};

struct Device {
  std::string driver;  // the slice's spec.driver, for example "gpu.nvidia.com"
  std::string pool;    // spec.pool.name
  std::string name;    // unique within the pool
  // Fully qualified names "domain/id". A slice may write an attribute or capacity without a
  // domain; it is then in the driver's domain (the driver name), as upstream does.
  absl::btree_map<std::string, AttributeValue> attributes;
  absl::btree_map<std::string, Capacity> capacity;
  bool allow_multiple_allocations = false;
};

}  // namespace tessera::dra
