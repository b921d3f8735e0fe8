// Test helpers: an encoder of protobuf wire format, to build the API server's messages (field
// numbers of core/v1 and meta/v1 generated.proto) in tests of proto.h and the informer.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::k8s::proto::testing {

// Writes protobuf wire format.
class Pb {
 public:
  Pb& Varint(int field, uint64_t v) {
    Key(field, 0);
    Raw(v);
    return *this;
  }
  Pb& Bytes(int field, std::string_view b) {
    Key(field, 2);
    Raw(b.size());
    out.append(b);
    return *this;
  }
  Pb& Msg(int field, const Pb& m) { return Bytes(field, m.out); }
  // map<string, string> entry.
  Pb& Entry(int field, std::string_view k, std::string_view v) {
    return Msg(field, Pb().Bytes(1, k).Bytes(2, v));
  }
  // map<string, Quantity> entry.
  Pb& Quantity(int field, std::string_view k, std::string_view v) {
    return Msg(field, Pb().Bytes(1, k).Msg(2, Pb().Bytes(1, v)));
  }
  Pb& Fixed32(int field) {
    Key(field, 5);
    out.append(4, '\x01');
    return *this;
  }
  Pb& Fixed64(int field) {
    Key(field, 1);
    out.append(8, '\x02');
    return *this;
  }

  std::string out;

 private:
  void Key(int field, int wire) { Raw(static_cast<uint64_t>(field) << 3 | wire); }
  void Raw(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
};

// An object as the server sends it: "k8s\0", then runtime.Unknown {typeMeta, raw}.
inline std::string Envelope(std::string_view kind, const Pb& raw, std::string_view encoding = "") {
  Pb unknown;
  unknown.Msg(1, Pb().Bytes(1, "v1").Bytes(2, kind)).Msg(2, raw);
  if (!encoding.empty()) unknown.Bytes(3, encoding);
  return std::string("k8s\0", 4) + unknown.out;
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
