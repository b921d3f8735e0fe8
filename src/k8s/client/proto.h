// Reads the API server's protobuf encoding (`application/vnd.kubernetes.protobuf`) of the few
// built-in kinds whose streams are large (Pods and Nodes, their lists, watch events, Status) into
// the JSON shape that objects.h parses, holding only the fields those parsers read; and writes
// the one body Tessera sends thousands of times a second, the pods/binding Binding.
//
// Why: on a busy cluster the pod watch is most of what Tessera reads and much of what the API
// server writes. Encoding a Pod as protobuf costs the server a fraction of encoding it as JSON
// (reflection-based), and reading it here skips managedFields and every field Tessera does not
// use. kube-scheduler's client-go asks for protobuf for the same reason. CRDs (PodGroups, queue
// objects) have no protobuf encoding and stay JSON.
//
// The field numbers are those of k8s.io/api core/v1 and apimachinery meta/v1 `generated.proto`,
// which Kubernetes keeps stable across versions (fields are added, never renumbered). Unknown
// fields are skipped, so newer servers' objects decode. Malformed input is an error that names
// the message, never a crash.
//
// Thread-safety: free functions without shared state; Writer is a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s::proto {

// The media type to ask for; a server that cannot encode a kind as protobuf answers JSON, so
// callers look at the response's Content-Type.
inline constexpr std::string_view kMediaType = "application/vnd.kubernetes.protobuf";
inline constexpr std::string_view kAccept = "application/vnd.kubernetes.protobuf, application/json";

// True when a response's Content-Type says protobuf (with or without ";stream=watch").
bool IsProtobuf(std::string_view content_type);

// An enveloped object ("k8s\0" then runtime.Unknown) of kind Pod, Node, PodList, NodeList or
// Status, as JSON: {"apiVersion", "kind", "metadata", ...} with the fields objects.h reads.
// A list comes back as {"metadata": {"resourceVersion", "continue"}, "items": [...]}.
[[nodiscard]] absl::StatusOr<nlohmann::json> DecodeObject(std::string_view enveloped);

// One frame of a protobuf watch stream (a metav1.WatchEvent): the event type ("ADDED",
// "MODIFIED", "DELETED", "BOOKMARK", "ERROR") and its object, decoded as by DecodeObject.
// The result has the shape of a JSON watch line: {"type": ..., "object": {...}}.
[[nodiscard]] absl::StatusOr<nlohmann::json> DecodeWatchEvent(std::string_view frame);

// Writes protobuf wire format (the encoder below; tests build the server's messages with it).
class Writer {
 public:
  Writer& Varint(int field, uint64_t v);
  Writer& Bytes(int field, std::string_view b);
  Writer& Msg(int field, const Writer& m) { return Bytes(field, m.out); }
  Writer& Fixed32(int field, uint32_t v);
  Writer& Fixed64(int field, uint64_t v);
  // A map<string, string> entry (labels, annotations).
  Writer& Entry(int field, std::string_view k, std::string_view v);
  // A map<string, resource.Quantity> entry (requests, capacity).
  Writer& Quantity(int field, std::string_view k, std::string_view v);

  std::string out;

 private:
  void Key(int field, int wire);
  void Raw(uint64_t v);
};

// An object as the server reads and writes it: "k8s\0", then runtime.Unknown {typeMeta
// {apiVersion, kind}, raw}.
std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw);

// The body of a POST to pods/NAME/binding (Content-Type kMediaType): a v1 Binding of pod
// `ns`/`name` (`uid`: the server refuses it for another pod of that name) to node `node`, with
// annotations the server copies onto the pod in the same write.
std::string EncodeBinding(std::string_view ns, std::string_view name, std::string_view uid,
                          const std::vector<std::pair<std::string, std::string>>& annotations,
                          std::string_view node);

// A readable message for an error response in either encoding (a Status object's message, or
// the start of a JSON or text body).
std::string ErrorText(std::string_view body, std::string_view content_type);

}  // namespace tessera::k8s::proto
