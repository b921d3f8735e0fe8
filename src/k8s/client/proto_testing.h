// Test helpers: the API server's messages (field numbers of core/v1 and meta/v1 generated.proto)
// built with proto::Writer, in tests of proto.h and the informer.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/client/proto.h"

namespace tessera::k8s::proto::testing {

using Pb = Writer;

// An object as the server sends it: "k8s\0", then runtime.Unknown {typeMeta, raw}.
inline std::string Envelope(std::string_view kind, const Pb& raw, std::string_view encoding = "") {
  std::string out = proto::Envelope("v1", kind, raw.out);
  if (!encoding.empty()) out += Pb().Bytes(3, encoding).out;  // runtime.Unknown contentEncoding
  return out;
}

// One frame of a protobuf watch stream: a 4-byte big-endian length, then a metav1.WatchEvent.
inline std::string WatchFrame(std::string_view type, const std::string& enveloped_object) {
  std::string event = Pb().Bytes(1, type).Msg(2, Pb().Bytes(1, enveloped_object)).out;
  const auto n = static_cast<uint32_t>(event.size());
  std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                  static_cast<char>(n)};
  return out + event;
}

}  // namespace tessera::k8s::proto::testing
