// Reads the API server's protobuf encoding (`application/vnd.kubernetes.protobuf`) of the few
// built-in kinds whose streams are large (Pods and Nodes, their lists, watch events, Status) into
// the JSON shape that objects.h parses, holding only the fields those parsers read.
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
// Thread-safety: free functions without shared state.
#pragma once

#include <string>
#include <string_view>

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

// A readable message for an error response in either encoding (a Status object's message, or
// the start of a JSON or text body).
std::string ErrorText(std::string_view body, std::string_view content_type);

}  // namespace tessera::k8s::proto
