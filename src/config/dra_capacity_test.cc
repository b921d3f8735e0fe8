// Consumable capacity in manifests (config/dra_capacity.h): a shared device's capacities and
// their requestPolicy, a request's capacity.requests (exactly and firstAvailable), an
// allocation's consumedCapacity and shareID; what the API server would refuse is an error that
// names the field.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

constexpr int64_t kGiMilli = (int64_t{1} << 30) * 1000;

TEST(DraCapacity, ASharedDeviceItsPolicyAndTheRequestsThatConsumeIt) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    capacity:
      memory:
        value: 80Gi
        requestPolicy: {default: 10Gi, validRange: {min: 10Gi, max: 80Gi, step: 10Gi}}
      cores:
        value: "100"
        requestPolicy: {default: "10", validValues: ["10", "50", "100"]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: share}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: gpu, capacity: {requests: {memory: 40Gi}}}
    - name: h
      firstAvailable:
      - {name: big, deviceClassName: gpu, capacity: {requests: {memory: 60Gi, cores: "50"}}}
      - {name: small, deviceClassName: gpu}
status:
  allocation:
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]
    devices:
      results:
      - {request: g, driver: gpu.example.com, pool: n1, device: gpu-0,
         shareID: 6f1c3c4e-1b2a-4c3d-9e8f-0a1b2c3d4e5f,
         consumedCapacity: {memory: 40Gi, cores: "10"}}
)");
  ASSERT_EQ(r.model.dra.nodes.count("n1"), 1u) << AllDiagnostics(r);
  const dra::NodeDevice& d = r.model.dra.nodes.at("n1").devices.at(0);
  EXPECT_TRUE(d.device.allow_multiple_allocations);
  ASSERT_EQ(d.capacities.count("memory"), 1u);
  const dra::ConsumableCapacity& mem = d.capacities.at("memory");
  EXPECT_EQ(mem.value, 80 * kGiMilli);
  ASSERT_TRUE(mem.policy && mem.policy->valid_range);
  EXPECT_EQ(*mem.policy->default_milli, 10 * kGiMilli);
  EXPECT_EQ(*mem.policy->valid_range->step, 10 * kGiMilli);
  EXPECT_EQ(d.capacities.at("cores").policy->valid_values,
            (std::vector<int64_t>{10000, 50000, 100000}));
  EXPECT_EQ(d.device.capacity.at("gpu.example.com/memory").milli, 80 * kGiMilli);  // for CEL

  ASSERT_EQ(r.model.dra.claims.size(), 1u) << AllDiagnostics(r);
  const dra::Claim& c = r.model.dra.claims[0];
  EXPECT_EQ(c.spec.requests[0].alternatives[0].capacity_requests.at("memory"), 40 * kGiMilli);
  EXPECT_EQ(c.spec.requests[1].alternatives[0].capacity_requests.at("cores"), 50000);
  EXPECT_TRUE(c.spec.requests[1].alternatives[1].capacity_requests.empty());
  ASSERT_TRUE(c.allocation.has_value());
  EXPECT_EQ(c.allocation->devices[0].consumed.at("memory"), 40 * kGiMilli);
  EXPECT_EQ(c.allocation->devices[0].share_id, "6f1c3c4e-1b2a-4c3d-9e8f-0a1b2c3d4e5f");
  EXPECT_EQ(Find(r, Sev::kWarning, "consumable capacity"), nullptr) << AllDiagnostics(r);
  EXPECT_EQ(Find(r, Sev::kWarning, "one claim at a time"), nullptr) << AllDiagnostics(r);
}

// One slice with one device whose capacity `memory` is `capacity` (YAML of its map).
std::string Slice(const std::string& name, const std::string& device) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
         "}\nspec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: " + name +
         ", generation: 1, resourceSliceCount: 1}\n  devices:\n  - " + device + "\n---\n";
}

TEST(DraCapacity, WhatTheApiServerRefusesIsAnErrorNamingTheField) {
  const std::string shared = "{name: g, allowMultipleAllocations: true, capacity: {memory: ";
  LoadResult r = Load(
      Slice("a", "{name: g, capacity: {memory: {value: 8, requestPolicy: {default: 1}}}}") +
      Slice("b", shared + "{value: 8, requestPolicy: {default: 2, validValues: [4, 2]}}}}") +
      Slice("c", shared + "{value: 8, requestPolicy: {default: 3, validValues: [2, 4]}}}}") +
      Slice("d", shared + "{value: 8, requestPolicy: {default: 2, validRange: {max: 4}}}}}") +
      Slice("e",
            shared + "{value: 8, requestPolicy: {default: 2, validRange: {min: 0, step: 0}}}}}") +
      Slice("f", shared + "{value: 8, requestPolicy: {validRange: {min: 1}}}}}") +
      Slice("g",
            shared + "{value: 8, requestPolicy: {default: 2, validRange: {min: 1, step: 2}}}}}") +
      Slice(
          "h",
          shared +
              "{value: 8, requestPolicy: {default: 2, validValues: [2], validRange: {min: 1}}}}}") +
      R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: x, capacity: {requests: {memory: lots}}}}]
)");
  auto at = [&](const char* message) -> std::string {
    const Diagnostic* d = Find(r, Sev::kError, message);
    return d == nullptr ? "(none)" : d->path;
  };
  EXPECT_EQ(at("only a device with allowMultipleAllocations"),
            "spec.devices[0].capacity.memory.requestPolicy")
      << AllDiagnostics(r);
  EXPECT_EQ(at("sorted in ascending order"),
            "spec.devices[0].capacity.memory.requestPolicy.validValues[1]");
  EXPECT_EQ(at("must be one of validValues"),
            "spec.devices[0].capacity.memory.requestPolicy.default");
  EXPECT_EQ(at("required field is missing"),
            "spec.devices[0].capacity.memory.requestPolicy.validRange.min");
  EXPECT_EQ(at("must be more than zero"),
            "spec.devices[0].capacity.memory.requestPolicy.validRange.step");
  EXPECT_EQ(at("required with validValues or validRange"),
            "spec.devices[0].capacity.memory.requestPolicy.default");
  EXPECT_EQ(at("must be inside validRange"),
            "spec.devices[0].capacity.memory.requestPolicy.default");
  EXPECT_EQ(at("at most one of validValues and validRange"),
            "spec.devices[0].capacity.memory.requestPolicy");
  EXPECT_EQ(at("not a valid non-negative quantity: lots"),
            "spec.devices.requests[0].exactly.capacity.requests.memory");
  EXPECT_TRUE(r.model.dra.nodes.empty());
  EXPECT_TRUE(r.model.dra.claims.empty());
}

TEST(DraCapacity, AMappedClassOfSharedDevicesSaysQuotaCountsWholeDevices) {
  LoadResult r = Load(
      R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
---
)" +
      Slice("n1",
            "{name: gpu-0, allowMultipleAllocations: true, capacity: {memory: {value: 80Gi}}}") +
      R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
resources:
  deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.example.com]}]
)");
  const Diagnostic* d = Find(r, Sev::kWarning, "quota counts each claim that shares it");
  ASSERT_NE(d, nullptr) << AllDiagnostics(r);
  EXPECT_NE(d->message.find("device gpu-0"), std::string::npos);
}

}  // namespace
}  // namespace tessera
