// Today's PodSpec fields that decide where and whether a pod may be bound, read the same from
// the API server's protobuf as from its JSON: spec.schedulingGates (1.30+) and pod-level
// spec.resources (1.34+), with the request Kubernetes' rule gives (model/pod_requests.h).
#include <gtest/gtest.h>

#include "k8s/client/proto.h"
#include "k8s/client/proto_testing.h"
#include "k8s/controller/objects.h"
#include "model/resources.h"

namespace tessera::k8s::proto {
namespace {

using testing::Envelope;
using testing::Pb;

// A gated pod with pod-level cpu and memory and a GPU container, field numbers from
// k8s.io/api v0.37.2 core/v1 generated.proto: PodSpec.schedulingGates = 38
// (PodSchedulingGate.name = 1), PodSpec.resources = 40 (ResourceRequirements: limits 1,
// requests 2).
Pb GatedPod() {
  Pb meta;
  meta.Bytes(1, "w-0").Bytes(3, "team-a").Entry(11, "scheduling.x-k8s.io/pod-group", "train");
  Pb container;
  container.Bytes(1, "main").Msg(8, Pb().Quantity(1, "nvidia.com/gpu", "2")
                                        .Quantity(2, "cpu", "1")
                                        .Quantity(2, "nvidia.com/gpu", "2"));
  Pb spec;
  spec.Msg(2, container)
      .Bytes(19, "tessera")
      .Msg(38, Pb().Bytes(1, "example.com/quota-check"))
      .Msg(38, Pb().Bytes(1, "example.com/data-ready"))
      .Msg(40, Pb().Quantity(1, "memory", "64Gi")
                   .Quantity(2, "cpu", "60")
                   .Quantity(2, "memory", "32Gi")
                   .Quantity(2, "nvidia.com/gpu", "8"))  // not a pod-level resource: ignored
      .Quantity(32, "cpu", "500m");
  Pb pod;
  pod.Msg(1, meta).Msg(2, spec).Msg(3, Pb().Bytes(1, "Pending"));
  return pod;
}

json GatedPodJson() {
  return json::parse(R"({
    "metadata": {"name": "w-0", "namespace": "team-a",
                 "labels": {"scheduling.x-k8s.io/pod-group": "train"}},
    "spec": {
      "containers": [{"name": "main", "resources": {
        "limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}],
      "schedulerName": "tessera",
      "schedulingGates": [{"name": "example.com/quota-check"}, {"name": "example.com/data-ready"}],
      "resources": {"limits": {"memory": "64Gi"},
                    "requests": {"cpu": "60", "memory": "32Gi", "nvidia.com/gpu": "8"}},
      "overhead": {"cpu": "500m"}},
    "status": {"phase": "Pending"}})");
}

TEST(ProtoPodSpec, GatesAndPodLevelResourcesReadAsFromJson) {
  auto decoded = DecodeObject(Envelope("Pod", GatedPod()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  auto from_proto = ParsePod(*decoded);
  auto from_json = ParsePod(GatedPodJson());
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(Describe(*from_proto), Describe(*from_json));
  EXPECT_EQ(from_proto->scheduling_gates,
            (std::vector<std::string>{"example.com/quota-check", "example.com/data-ready"}));
  EXPECT_TRUE(from_proto->Gated());
  // cpu and memory from the pod level (60 + 0.5 overhead; 32Gi), GPUs from the container.
  EXPECT_EQ(from_proto->set.requests.Get(kCpu), 60500);
  EXPECT_EQ(from_proto->set.requests.Get(kMemory), int64_t{32} << 30);
  EXPECT_EQ(from_proto->set.requests.Get(kGpu), 2);
}

TEST(ProtoPodSpec, PodLevelLimitAloneIsTheRequest) {
  json pod = GatedPodJson();
  pod["spec"].erase("schedulingGates");
  pod["spec"]["resources"] = json::parse(R"({"limits": {"cpu": "48", "memory": "8Gi"}})");
  auto p = ParsePod(pod);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->Gated());
  // cpu: the containers' aggregate (1) when they name it; memory: the pod-level limit.
  EXPECT_EQ(p->set.requests.Get(kCpu), 1500);
  EXPECT_EQ(p->set.requests.Get(kMemory), int64_t{8} << 30);
}

TEST(ProtoPodSpec, APodLevelQuantityThatDoesNotParseNamesTheField) {
  json pod = GatedPodJson();
  pod["spec"]["resources"]["requests"]["cpu"] = "sixty";
  auto p = ParsePod(pod);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("spec.resources.requests.cpu"), std::string::npos)
      << p.status();
}

}  // namespace
}  // namespace tessera::k8s::proto
