// Consumable capacity in manifests (config/dra_capacity.h). The rules checked are those the API
// server's validation of resource.k8s.io/v1 states for CapacityRequestPolicy.
#include "config/dra_capacity.h"

#include <optional>
#include <utility>
#include <vector>

#include "model/quantity.h"

namespace tessera::config_internal {
namespace {

// Upstream's limit on validValues.
constexpr size_t kMaxValidValues = 10;

// A non-negative quantity at `node` in thousandths; an error naming `path` otherwise.
std::optional<int64_t> Milli(DocContext& ctx, const YAML::Node& node, const std::string& path) {
  if (IsNullish(node) || !node.IsScalar()) {
    ctx.Error(node, path, std::string("expected a quantity, got ") + TypeName(node));
    return std::nullopt;
  }
  auto q = ParseQuantity(node.Scalar(), /*milli=*/true);
  if (!q.ok() || *q < 0) {
    ctx.Error(node, path, "not a valid non-negative quantity: " + node.Scalar());
    return std::nullopt;
  }
  return *q;
}

// validRange at `path`, against the capacity's value and the policy's default.
bool ReadRange(DocContext& ctx, const YAML::Node& r, const std::string& path, int64_t value,
               dra::CapacityRequestPolicy::Range& out) {
  if (!ExpectMap(ctx, r, path)) return false;
  if (IsNullish(Child(r, "min"))) {
    ctx.Error(r, path + ".min", "required field is missing");
    return false;
  }
  auto min = Milli(ctx, Child(r, "min"), path + ".min");
  if (!min) return false;
  out.min = *min;
  if (out.min > value) {
    ctx.Error(Child(r, "min"), path + ".min", "must not be more than the capacity's value");
    return false;
  }
  if (YAML::Node max = Child(r, "max"); !IsNullish(max)) {
    out.max = Milli(ctx, max, path + ".max");
    if (!out.max) return false;
    if (*out.max > value || *out.max < out.min) {
      ctx.Error(max, path + ".max", "must be between min and the capacity's value");
      return false;
    }
  }
  if (YAML::Node step = Child(r, "step"); !IsNullish(step)) {
    out.step = Milli(ctx, step, path + ".step");
    if (!out.step) return false;
    if (*out.step == 0 || *out.step > value - out.min) {
      ctx.Error(step, path + ".step",
                "must be more than zero, and min + step not more than the capacity's value");
      return false;
    }
    if (out.max && (*out.max - out.min) % *out.step != 0) {
      ctx.Error(Child(r, "max"), path + ".max", "must be min plus a multiple of step");
      return false;
    }
  }
  return true;
}

// requestPolicy at `path` of a capacity of `value`.
std::optional<dra::CapacityRequestPolicy> ReadPolicy(DocContext& ctx, const YAML::Node& p,
                                                     const std::string& path, int64_t value) {
  if (!ExpectMap(ctx, p, path)) return std::nullopt;
  dra::CapacityRequestPolicy policy;
  if (YAML::Node def = Child(p, "default"); !IsNullish(def)) {
    policy.default_milli = Milli(ctx, def, path + ".default");
    if (!policy.default_milli) return std::nullopt;
    if (*policy.default_milli > value) {
      ctx.Error(def, path + ".default", "must not be more than the capacity's value");
      return std::nullopt;
    }
  }
  YAML::Node values = Child(p, "validValues");
  YAML::Node range = Child(p, "validRange");
  if (!IsNullish(values) && !IsNullish(range)) {
    ctx.Error(p, path, "at most one of validValues and validRange may be set");
    return std::nullopt;
  }
  if ((!IsNullish(values) || !IsNullish(range)) && !policy.default_milli) {
    ctx.Error(p, path + ".default", "required with validValues or validRange");
    return std::nullopt;
  }
  ForEachSeq(ctx, values, path + ".validValues",
             [&](size_t, const YAML::Node& v, const std::string& vpath) {
               auto q = Milli(ctx, v, vpath);
               if (!q) return false;
               if (*q > value) {
                 ctx.Error(v, vpath, "must not be more than the capacity's value");
                 return false;
               }
               if (!policy.valid_values.empty() && *q <= policy.valid_values.back()) {
                 ctx.Error(v, vpath, "validValues must be sorted in ascending order, no repeats");
                 return false;
               }
               policy.valid_values.push_back(*q);
               return true;
             });
  if (ctx.failed()) return std::nullopt;
  if (!IsNullish(values)) {
    if (policy.valid_values.empty() || policy.valid_values.size() > kMaxValidValues) {
      ctx.Error(values, path + ".validValues", "must list 1 to 10 values");
      return std::nullopt;
    }
    bool listed = false;
    for (int64_t v : policy.valid_values) listed = listed || v == *policy.default_milli;
    if (!listed) {
      ctx.Error(Child(p, "default"), path + ".default", "must be one of validValues");
      return std::nullopt;
    }
  }
  if (!IsNullish(range)) {
    dra::CapacityRequestPolicy::Range r;
    if (!ReadRange(ctx, range, path + ".validRange", value, r)) return std::nullopt;
    const int64_t def = *policy.default_milli;
    if (def < r.min || (r.max && def > *r.max) || (r.step && (def - r.min) % *r.step != 0)) {
      ctx.Error(Child(p, "default"), path + ".default",
                "must be inside validRange (min plus a multiple of step, not above max)");
      return std::nullopt;
    }
    policy.valid_range = r;
  }
  return policy;
}

// A map of quantities at `path` (capacity.requests, consumedCapacity).
void ReadQuantities(DocContext& ctx, const YAML::Node& node, const std::string& path,
                    std::map<std::string, int64_t>& out) {
  ForEachMap(ctx, node, path,
             [&](const std::string& name, const YAML::Node& q, const std::string& qpath) {
               auto milli = Milli(ctx, q, qpath);
               if (!milli) return false;
               out[name] = *milli;
               return true;
             });
}

}  // namespace

void ReadDeviceCapacity(DocContext& ctx, const YAML::Node& d, const std::string& path,
                        const std::string& driver, dra::NodeDevice& out) {
  out.device.allow_multiple_allocations =
      GetBool(ctx, d, "allowMultipleAllocations", path + ".allowMultipleAllocations")
          .value_or(false);
  ForEachMap(ctx, Child(d, "capacity"), path + ".capacity",
             [&](const std::string& name, const YAML::Node& c, const std::string& cpath) {
               auto text = RequireString(ctx, c, "value", cpath + ".value");
               if (!text) return false;
               auto value = Milli(ctx, Child(c, "value"), cpath + ".value");
               if (!value) return false;
               dra::ConsumableCapacity cap;
               cap.value = *value;
               if (YAML::Node p = Child(c, "requestPolicy"); !IsNullish(p)) {
                 if (!out.device.allow_multiple_allocations) {
                   ctx.Error(p, cpath + ".requestPolicy",
                             "only a device with allowMultipleAllocations: true may set a "
                             "requestPolicy");
                   return false;
                 }
                 cap.policy = ReadPolicy(ctx, p, cpath + ".requestPolicy", *value);
                 if (!cap.policy) return false;
               }
               const std::string qualified =
                   name.find('/') == std::string::npos ? driver + "/" + name : name;
               out.device.capacity[qualified] = {*value, *text};
               out.capacities[name] = std::move(cap);
               return true;
             });
}

void ReadCapacityRequests(DocContext& ctx, const YAML::Node& request, const std::string& path,
                          std::map<std::string, int64_t>& out) {
  YAML::Node capacity = Child(request, "capacity");
  if (IsNullish(capacity) || !ExpectMap(ctx, capacity, path + ".capacity")) return;
  ReadQuantities(ctx, Child(capacity, "requests"), path + ".capacity.requests", out);
}

void ReadConsumedCapacity(DocContext& ctx, const YAML::Node& result, const std::string& path,
                          std::map<std::string, int64_t>& out) {
  ReadQuantities(ctx, Child(result, "consumedCapacity"), path + ".consumedCapacity", out);
}

}  // namespace tessera::config_internal
