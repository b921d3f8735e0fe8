// DRA objects in manifests (config/dra_objects.h): what is read of slices, classes, claims and
// templates, how pods' claims are resolved and counted for quota, and what is said out loud.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

constexpr std::string_view kSlice = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 80Gi}}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA H100}
      index: {int: 0}
      driverVersion: {version: 550.54.15}
      resource.kubernetes.io/pcieRoot: {string: pci0000:00}
      mig: {bool: false}
    capacity: {memory: {value: 80Gi}}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 80Gi}}
    taints: [{key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
)";

TEST(DraObjects, SliceDevicesWithQualifiedAttributesCapacityCountersAndTaints) {
  LoadResult r = Load(kSlice);
  ASSERT_EQ(r.model.dra.nodes.count("n1"), 1u) << AllDiagnostics(r);
  const dra::NodeDevices& nd = r.model.dra.nodes.at("n1");
  ASSERT_EQ(nd.devices.size(), 1u);
  const dra::NodeDevice& d = nd.devices[0];
  EXPECT_EQ(d.device.driver, "gpu.nvidia.com");
  EXPECT_EQ(std::get<std::string>(d.device.attributes.at("gpu.nvidia.com/productName")),
            "NVIDIA H100");
  EXPECT_EQ(std::get<int64_t>(d.device.attributes.at("gpu.nvidia.com/index")), 0);
  EXPECT_EQ(std::get<dra::Version>(d.device.attributes.at("gpu.nvidia.com/driverVersion")).text,
            "550.54.15");
  EXPECT_EQ(std::get<bool>(d.device.attributes.at("gpu.nvidia.com/mig")), false);
  EXPECT_EQ(d.device.attributes.count("resource.kubernetes.io/pcieRoot"), 1u);
  EXPECT_EQ(d.device.capacity.at("gpu.nvidia.com/memory").milli,
            int64_t{80} * 1024 * 1024 * 1024 * 1000);
  ASSERT_EQ(d.consumes.size(), 1u);
  EXPECT_EQ(d.consumes[0].counter_set, "n1/gpu-0-counters");
  EXPECT_EQ(nd.counter_sets.count("n1/gpu-0-counters"), 1u);
  ASSERT_EQ(d.taints.size(), 1u);
  EXPECT_EQ(d.taints[0].taint.key, "gpu.nvidia.com/xid");
  EXPECT_EQ(r.model.dra.classes.count("gpu.nvidia.com"), 1u);
}

TEST(DraObjects, PodClaimsResolveAndMappedClassesCountForQuotaAndNodes) {
  std::string text(kSlice);
  text += R"(---
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
resources:
  deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.nvidia.com]}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]
  resourceClaims:
  - {name: g, resourceClaimTemplateName: two}
  - {name: h, resourceClaimName: nowhere}
)";
  LoadResult r = Load(text);
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  const PodSet& ps = r.model.workloads[0].pod_sets[0];
  ASSERT_EQ(ps.claims.size(), 2u);
  EXPECT_EQ(ps.claims[0].template_, 0);
  EXPECT_EQ(ps.claims[1].claim, -1);
  const ResourceId gpu = ResourceRegistry::Global().Find("example.com/gpu");
  ASSERT_GE(gpu, 0);
  EXPECT_EQ(ps.requests[gpu], 2);
  EXPECT_EQ(r.model.nodes[0].allocatable[gpu], 1);  // one device in the slice
  EXPECT_NE(Find(r, Sev::kWarning, "ResourceClaim ml/nowhere is not in the input"), nullptr)
      << AllDiagnostics(r);
}

TEST(DraObjects, BadClaimsAreErrorsThatNameTheField) {
  LoadResult r = Load(R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: g
      exactly: {deviceClassName: x}
      firstAvailable: [{name: a, deviceClassName: x}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: d}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: x, count: 2}}]
    constraints: [{matchAttribute: pcieRoot}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: e}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: x}}]
    constraints: [{requests: [other], matchAttribute: a.b/c}]
)");
  EXPECT_NE(Find(r, Sev::kError, "exactly one of exactly and firstAvailable"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "must be a fully qualified name"), nullptr);
  EXPECT_NE(Find(r, Sev::kError, "names no request of this claim: other"), nullptr);
  EXPECT_TRUE(r.model.dra.claims.empty());
}

TEST(DraObjects, WhatIsNotHonouredIsSaid) {
  LoadResult r = Load(R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: net}
spec:
  driver: nic.example.com
  allNodes: true
  pool: {name: p, generation: 1, resourceSliceCount: 1}
  devices: [{name: nic-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: ghost}
spec:
  driver: gpu.example.com
  nodeName: ghost
  pool: {name: ghost, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: admin}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: x, adminAccess: true, allocationMode: All}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: ext}
spec: {extendedResourceName: example.com/gpu}
)");
  EXPECT_NE(Find(r, Sev::kWarning, "not local to one node"), nullptr) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning, "ResourceSlice of node ghost, which is not in the input"),
            nullptr);
  EXPECT_NE(Find(r, Sev::kWarning, "admin access is not simulated"), nullptr);
  EXPECT_NE(Find(r, Sev::kWarning, "extended resources backed by DRA are not read"), nullptr);
  ASSERT_EQ(r.model.dra.claims.size(), 1u);
  EXPECT_TRUE(r.model.dra.claims[0].spec.requests[0].alternatives[0].all);
}

TEST(DraObjects, ComputeDomainsAreCheckedAndTheirChannelPodsKeptInOneClique) {
  LoadResult bad = Load(R"(apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: a}
spec: {numNodes: 2}
---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: b}
spec: {channel: {resourceClaimTemplate: {name: t}, allocationMode: Some}}
)");
  EXPECT_NE(Find(bad, Sev::kError, "spec.channel"), nullptr) << AllDiagnostics(bad);
  EXPECT_NE(Find(bad, Sev::kError, "Some"), nullptr) << AllDiagnostics(bad);
  EXPECT_TRUE(bad.model.dra.compute_domains.empty());

  // A template the input holds is kept as written; a pod set with its own topology keeps it.
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata: {name: n1, labels: {nvidia.com/gpu.clique: "c.1"}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: cd}
spec: {channel: {resourceClaimTemplate: {name: cd-channel}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: cd-channel}
spec:
  spec:
    devices:
      requests: [{name: ch, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: ch, resourceClaimTemplateName: cd-channel}]
---
apiVersion: v1
kind: Pod
metadata:
  name: q
  annotations: {kueue.x-k8s.io/podset-preferred-topology: example.com/rack}
spec:
  containers: [{name: c, image: x}]
  resourceClaims: [{name: ch, resourceClaimTemplateName: cd-channel}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.dra.templates.size(), 1u);
  EXPECT_EQ(r.model.dra.templates[0].spec.requests[0].name, "ch");
  EXPECT_EQ(Find(r, Sev::kNotice, "is made as NVIDIA"), nullptr) << AllDiagnostics(r);
  EXPECT_TRUE(r.model.dra.classes.contains("compute-domain-default-channel.nvidia.com"));
  ASSERT_EQ(r.model.dra.nodes["n1"].devices.size(), 1u);
  EXPECT_EQ(r.model.dra.nodes["n1"].devices[0].device.name, "channel-0");
  ASSERT_EQ(r.model.workloads.size(), 2u);
  for (const Workload& w : r.model.workloads) {
    const TopologyRequest& t = w.pod_sets[0].topology;
    if (w.name == "p") {
      EXPECT_EQ(t.level, "nvidia.com/gpu.clique");
      EXPECT_TRUE(t.required);
    } else {
      EXPECT_EQ(t.level, "example.com/rack");
      EXPECT_FALSE(t.required);
    }
  }
}

}  // namespace
}  // namespace tessera
