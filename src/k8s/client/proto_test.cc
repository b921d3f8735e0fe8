#include "k8s/client/proto.h"

#include <gtest/gtest.h>

#include "k8s/client/proto_testing.h"
#include "k8s/controller/objects.h"
#include "model/resources.h"

namespace tessera::k8s::proto {
namespace {

using testing::Envelope;
using testing::Pb;

Pb Requirement(std::string_view key, std::string_view op, std::vector<std::string> values) {
  Pb r;
  r.Bytes(1, key).Bytes(2, op);
  for (const auto& v : values) r.Bytes(3, v);
  return r;
}

// A pod with every field ParsePod reads, as the API server would encode it (including fields
// Tessera does not read: managedFields, image, a fixed64 and a fixed32 of a future version).
Pb RichPod() {
  Pb meta;
  meta.Bytes(1, "w-0")
      .Bytes(3, "team-a")
      .Bytes(5, "uid-1")
      .Bytes(6, "4711")
      .Msg(8, Pb().Varint(1, 1767225600))  // 2026-01-01T00:00:00Z
      .Entry(11, "kueue.x-k8s.io/queue-name", "team-a")
      .Entry(11, "app", "train")
      .Entry(12, "tessera.dev/gpu-indices", "1,3")
      .Entry(12, "kai.scheduler/gpu-fraction", "0.5")
      .Entry(12, "tessera.dev/runtime-estimate", "90m")
      .Msg(13, Pb().Bytes(5, "batch/v1").Bytes(1, "Job").Bytes(3, "train").Bytes(4, "uid-j"))
      .Msg(17, Pb().Bytes(1, "kubectl").Bytes(2, "Update"));
  Pb container;
  container.Bytes(1, "main")
      .Bytes(2, "registry.invalid/train")
      .Msg(8, Pb().Quantity(1, "nvidia.com/gpu", "1")
                  .Quantity(2, "cpu", "500m")
                  .Quantity(2, "memory", "2Gi")
                  .Quantity(2, "nvidia.com/gpu", "1"));
  Pb sidecar;
  sidecar.Bytes(1, "proxy").Msg(8, Pb().Quantity(2, "cpu", "250m")).Bytes(24, "Always");
  Pb init;
  init.Bytes(1, "setup").Msg(8, Pb().Quantity(2, "cpu", "2"));
  Pb node_affinity;
  node_affinity.Msg(1, Pb().Msg(1, Pb().Msg(1, Requirement("gpu", "In", {"a100", "h100"}))
                                       .Msg(1, Requirement("zone", "Exists", {}))));
  Pb anti;
  anti.Msg(1, Pb().Msg(1, Pb().Entry(1, "app", "train")).Bytes(3, "kubernetes.io/hostname"));
  Pb spec;
  spec.Msg(2, container)
      .Msg(20, init)
      .Msg(20, sidecar)
      .Varint(4, 0)
      .Varint(5, 7200)
      .Entry(7, "pool", "gpu")
      .Bytes(10, "")
      .Msg(18, Pb().Msg(1, node_affinity).Msg(3, anti))
      .Bytes(19, "tessera")
      .Msg(22, Pb().Bytes(1, "nvidia.com/gpu").Bytes(2, "Exists").Bytes(4, "NoSchedule"))
      .Msg(22, Pb().Bytes(1, "dedicated").Bytes(2, "Equal").Bytes(3, "ml").Varint(5, 300))
      .Bytes(24, "low")
      .Varint(25, static_cast<uint64_t>(int64_t{-5}))  // a negative int32: ten-byte varint
      .Quantity(32, "cpu", "100m")
      .Fixed32(1000, 0x01010101)
      .Fixed64(1001, 0x0202020202020202);
  Pb status;
  status.Bytes(1, "Pending")
      .Msg(2, Pb().Bytes(1, "PodScheduled")
                  .Bytes(2, "False")
                  .Bytes(5, "Unschedulable")
                  .Bytes(6, "no fit"));
  Pb pod;
  pod.Msg(1, meta).Msg(2, spec).Msg(3, status);
  return pod;
}

// The same pod as JSON.
json RichPodJson() {
  return json::parse(R"({
    "metadata": {"name": "w-0", "namespace": "team-a", "uid": "uid-1", "resourceVersion": "4711",
      "creationTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"kueue.x-k8s.io/queue-name": "team-a", "app": "train"},
      "annotations": {"tessera.dev/gpu-indices": "1,3", "kai.scheduler/gpu-fraction": "0.5",
                      "tessera.dev/runtime-estimate": "90m"},
      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                           "uid": "uid-j"}]},
    "spec": {
      "containers": [{"name": "main", "resources": {
        "limits": {"nvidia.com/gpu": "1"},
        "requests": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": "1"}}}],
      "initContainers": [{"name": "setup", "resources": {"requests": {"cpu": "2"}}},
                         {"name": "proxy", "restartPolicy": "Always",
                          "resources": {"requests": {"cpu": "250m"}}}],
      "terminationGracePeriodSeconds": 0,
      "activeDeadlineSeconds": 7200,
      "nodeSelector": {"pool": "gpu"},
      "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]},
                                {"key": "zone", "operator": "Exists"}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "train"}},
           "topologyKey": "kubernetes.io/hostname"}]}},
      "schedulerName": "tessera",
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                      {"key": "dedicated", "operator": "Equal", "value": "ml",
                       "tolerationSeconds": 300}],
      "priorityClassName": "low", "priority": -5,
      "overhead": {"cpu": "100m"}},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
      "reason": "Unschedulable", "message": "no fit"}]}})");
}

TEST(Proto, PodDecodesToWhatParsePodReadsFromJson) {
  auto decoded = DecodeObject(Envelope("Pod", RichPod()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)["kind"], "Pod");
  EXPECT_FALSE((*decoded)["metadata"].contains("managedFields"));
  auto from_proto = ParsePod(*decoded);
  auto from_json = ParsePod(RichPodJson());
  ASSERT_TRUE(from_proto.ok()) << from_proto.status();
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(Describe(*from_proto), Describe(*from_json));
  // Spot checks that the comparison is about something.
  EXPECT_EQ(from_proto->priority, -5);
  EXPECT_EQ(from_proto->group_kind, "Job");
  EXPECT_EQ(from_proto->created, "2026-01-01T00:00:00Z");
  EXPECT_EQ(from_proto->set.anti_affinity, HostnameAntiAffinity::kRequired);
  EXPECT_EQ(from_proto->set.affinity.required_terms.at(0).match_expressions.size(), 2u);
  EXPECT_EQ(from_proto->scheduled_condition, "no fit");
  EXPECT_EQ(from_proto->time.active_deadline, 7200);
  EXPECT_EQ(from_proto->time.runtime_estimate, 5400);
  // cpu: max(500m + 250m sidecar, 2 init) + 100m overhead.
  EXPECT_EQ(from_proto->set.requests.Get(kCpu), 2100);
}

TEST(Proto, DeletionTimestampMarksThePodDeleting) {
  Pb pod;
  pod.Msg(1, Pb().Bytes(1, "p").Bytes(3, "ns").Msg(9, Pb().Varint(1, 1767225600)))
      .Msg(2, Pb().Msg(2, Pb().Bytes(1, "c")));
  auto decoded = DecodeObject(Envelope("Pod", pod));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(ParsePod(*decoded)->deleting);
  // Go writes a zero time as an empty message, which JSON writes as null: not deleting.
  Pb zero;
  zero.Msg(1, Pb().Bytes(1, "p").Bytes(3, "ns").Bytes(9, ""))
      .Msg(2, Pb().Msg(2, Pb().Bytes(1, "c")));
  decoded = DecodeObject(Envelope("Pod", zero));
  ASSERT_TRUE(decoded.ok());
  EXPECT_FALSE(ParsePod(*decoded)->deleting);
}

TEST(Proto, NodeDecodesAllocatableTaintsAndReadiness) {
  Pb node;
  node.Msg(1, Pb().Bytes(1, "gpu-1")
                  .Entry(11, "nvidia.com/gpu.product", "NVIDIA-A100")
                  .Entry(12, "tessera.dev/gpu-replicas", "2"))
      .Msg(2, Pb().Varint(4, 1).Msg(5, Pb().Bytes(1, "maint").Bytes(2, "x").Bytes(3, "NoSchedule")))
      .Msg(3, Pb().Quantity(1, "cpu", "64")
                  .Quantity(2, "cpu", "62")
                  .Quantity(2, "nvidia.com/gpu", "4")
                  .Msg(4, Pb().Bytes(1, "Ready").Bytes(2, "False"))
                  .Msg(7, Pb().Bytes(1, "machine-id")));
  auto decoded = DecodeObject(Envelope("Node", node));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  bool ready = true;
  auto n = ParseNode(*decoded, &ready, nullptr);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->name, "gpu-1");
  EXPECT_FALSE(ready);
  EXPECT_TRUE(n->unschedulable);
  ASSERT_EQ(n->taints.size(), 1u);
  EXPECT_EQ(n->taints[0].key, "maint");
  EXPECT_EQ(n->allocatable.Get(kCpu), 62000);
  EXPECT_EQ(n->gpu_model, "NVIDIA-A100");
  EXPECT_EQ(n->gpu_replicas, 2);
}

TEST(Proto, ListsCarryTheirResourceVersionContinueTokenAndItems) {
  Pb list;
  list.Msg(1, Pb().Bytes(2, "900").Bytes(3, "token"))
      .Msg(2, Pb().Msg(1, Pb().Bytes(1, "a").Bytes(3, "ns")))
      .Msg(2, Pb().Msg(1, Pb().Bytes(1, "b").Bytes(3, "ns")));
  auto decoded = DecodeObject(Envelope("PodList", list));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ((*decoded)["metadata"]["resourceVersion"], "900");
  EXPECT_EQ((*decoded)["metadata"]["continue"], "token");
  ASSERT_EQ((*decoded)["items"].size(), 2u);
  EXPECT_EQ(ObjectKey((*decoded)["items"][1]), "ns/b");
  // An empty list still has an items array.
  decoded = DecodeObject(Envelope("NodeList", Pb().Msg(1, Pb().Bytes(2, "901"))));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE((*decoded)["items"].is_array());
}

TEST(Proto, WatchEventsCarryTypeAndObject) {
  Pb added;
  added.Bytes(1, "ADDED").Msg(2, Pb().Bytes(1, Envelope("Pod", RichPod())));
  auto ev = DecodeWatchEvent(added.out);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ((*ev)["type"], "ADDED");
  EXPECT_EQ((*ev)["object"]["metadata"]["resourceVersion"], "4711");

  Pb gone;
  gone.Bytes(1, "ERROR")
      .Msg(2, Pb().Bytes(1, Envelope("Status",
                                     Pb().Bytes(2, "Failure").Bytes(3, "too old").Varint(6, 410))));
  ev = DecodeWatchEvent(gone.out);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ((*ev)["object"]["code"], 410);
  EXPECT_EQ(ErrorText(Envelope("Status", Pb().Bytes(3, "too old").Varint(6, 410)),
                      "application/vnd.kubernetes.protobuf"),
            "too old");
}

TEST(Proto, MalformedInputIsAnErrorThatNamesTheMessage) {
  EXPECT_FALSE(DecodeObject("{\"kind\":\"Pod\"}").ok());  // JSON, not protobuf
  EXPECT_EQ(DecodeObject(Envelope("Secret", Pb())).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(DecodeObject(Envelope("Pod", RichPod(), "gzip")).ok());
  // A container whose length runs past its PodSpec.
  Pb bad_spec;
  bad_spec.out = "\x12\x7f";  // field 2 (containers), length 127, no bytes
  auto st = DecodeObject(Envelope("Pod", Pb().Msg(2, bad_spec)));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("PodSpec"), std::string_view::npos) << st.status();
  EXPECT_FALSE(DecodeWatchEvent("\x0a\x05"
                                "ADD")
                   .ok());
  EXPECT_FALSE(DecodeWatchEvent(Pb().Bytes(1, "ADDED").out).ok());  // no object
}

TEST(Proto, EveryTruncationOfAPodIsAnErrorOrAShorterPodNeverACrash) {
  const std::string full = Envelope("Pod", RichPod());
  for (size_t n = 0; n < full.size(); ++n) {
    auto st = DecodeObject(std::string_view(full).substr(0, n));
    if (st.ok()) (void)ParsePod(*st);  // must not crash either
  }
  // Bytes flipped one at a time: the same.
  for (size_t i = 4; i < full.size(); ++i) {
    std::string bad = full;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    auto st = DecodeObject(bad);
    if (st.ok()) (void)ParsePod(*st);
  }
}

// Found by proto_fuzz: a string field that is not UTF-8 made a JSON object that threw when
// dumped. Such bytes become U+FFFD; well-formed UTF-8 is kept as it is.
TEST(Proto, StringsThatAreNotUtf8BecomeReplacementCharacters) {
  using proto::testing::Envelope;
  using proto::testing::Pb;
  const std::string raw =
      Envelope("Pod", Pb().Msg(1, Pb().Bytes(1, "p\xff\xc3").Bytes(3, "\xe6\x97\xa5\xed\xa0\x80")));
  auto pod = proto::DecodeObject(raw);
  ASSERT_TRUE(pod.ok()) << pod.status();
  std::string dumped;
  EXPECT_NO_THROW(dumped = pod->dump());
  EXPECT_EQ((*pod)["metadata"]["name"], "p\xef\xbf\xbd\xef\xbf\xbd");
  // A CJK character kept, a UTF-16 surrogate (ED A0 80) replaced byte by byte.
  EXPECT_EQ((*pod)["metadata"]["namespace"], "\xe6\x97\xa5\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(ProtoEncode, BindingMatchesTheWireFormatWrittenOutByHand) {
  // Written out from core/v1 and meta/v1 generated.proto, not with Writer: Binding {metadata = 1
  // {name = 1, namespace = 3, uid = 5, annotations = 12 {key = 1, value = 2}}, target = 2
  // {kind = 1, name = 3, apiVersion = 5}} inside runtime.Unknown {typeMeta = 1 {apiVersion = 1,
  // kind = 2}, raw = 2} after the "k8s\0" magic.
  const std::string meta =
      "\x0a\x01p\x1a\x01"
      "d\x2a\x01u\x62\x06\x0a\x01"
      "a\x12\x01"
      "b";
  const std::string target = std::string("\x0a\x04Node\x1a\x01n\x2a\x02v1");
  const std::string binding = "\x0a\x11" + meta + "\x12\x0d" + target;
  const std::string expected =
      std::string("k8s\0", 4) + "\x0a\x0d\x0a\x02v1\x12\x07" + "Binding\x12\x22" + binding;
  EXPECT_EQ(EncodeBinding("d", "p", "u", {{"a", "b"}}, "n"), expected);
  EXPECT_EQ(meta.size(), 0x11u);
  EXPECT_EQ(target.size(), 0x0du);
  EXPECT_EQ(binding.size(), 0x22u);
}

TEST(ProtoEncode, LongFieldsGetMultiByteLengths) {
  // A 300-byte name: its length is the varint ac 02.
  const std::string name(300, 'x');
  const std::string out = EncodeBinding("d", name, "u", {}, "n");
  EXPECT_NE(out.find(std::string("\x0a\xac\x02") + name), std::string::npos);
}

}  // namespace
}  // namespace tessera::k8s::proto
