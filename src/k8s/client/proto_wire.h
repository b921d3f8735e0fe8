// The protobuf wire format as Kubernetes uses it, for the decoders of proto.cc and proto_pod.cc
// (internal to them: proto.h is the interface). A field is a varint key (number << 3 | wire
// type) followed by a varint (type 0), 8 bytes (1), a varint length and that many bytes (2), or
// 4 bytes (5). Each decoder reads one message into a JSON object and returns false, with the
// innermost malformed message named in Err, on malformed bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "k8s/client/utf8.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s::proto::wire {

using json = nlohmann::json;

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

class Reader {
 public:
  explicit Reader(std::string_view b) : p_(b.data()), end_(b.data() + b.size()) {}

  // The next field; false at the end of the message or on malformed input (then failed()).
  bool Next(Field& f) {
    if (p_ == end_) return false;
    uint64_t key;
    if (!Varint(key)) return Fail();
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint32_t>(key & 7);
    if (f.number == 0) return Fail();
    switch (f.wire) {
      case 0:
        return Varint(f.varint) || Fail();
      case 1:
        return Skip(8, f);
      case 5:
        return Skip(4, f);
      case 2: {
        uint64_t len;
        if (!Varint(len) || len > static_cast<uint64_t>(end_ - p_)) return Fail();
        f.bytes = std::string_view(p_, len);
        p_ += len;
        return true;
      }
      default:  // groups (3, 4) are not used by Kubernetes
        return Fail();
    }
  }
  bool failed() const { return failed_; }

 private:
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const auto b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool Skip(size_t n, Field& f) {
    if (static_cast<size_t>(end_ - p_) < n) return Fail();
    f.bytes = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  bool Fail() {
    failed_ = true;
    return false;
  }

  const char* p_;
  const char* const end_;
  bool failed_ = false;
};

// The innermost message that was malformed, for the error.
struct Err {
  const char* where = nullptr;
  bool Set(const char* message) {
    if (!where) where = message;
    return false;
  }
};

// Calls fn on each field of message `b` (named `message` in errors); fn returns false when a
// nested message was malformed. Each decoder below reads one message into `out` and returns
// false, with err set, on malformed bytes.
template <typename Fn>
inline bool Fields(std::string_view b, const char* message, Err& err, Fn&& fn) {
  Reader r(b);
  Field f;
  while (r.Next(f))
    if (!fn(f)) return false;
  return r.failed() ? err.Set(message) : true;
}

inline bool IsBytes(const Field& f) { return f.wire == 2; }
inline bool IsVarint(const Field& f) { return f.wire == 0; }

// A string field as JSON can hold it: bytes that are not UTF-8 (no API server sends them; a
// broken stream can) become U+FFFD, so that the object can still be dumped and compared.
inline std::string Str(const Field& f) { return ToValidUtf8(f.bytes); }

// Go's int32 and int64 fields are varints of the two's complement value.
inline int64_t Int(const Field& f) { return static_cast<int64_t>(f.varint); }

// map<string, string>: repeated entries {key = 1, value = 2}.
inline bool StringMapEntry(std::string_view b, json& out, Err& err) {
  std::string key, value;
  if (!Fields(b, "map entry", err, [&](const Field& f) {
        if (f.number == 1 && IsBytes(f)) key = Str(f);
        if (f.number == 2 && IsBytes(f)) value = Str(f);
        return true;
      }))
    return false;
  out[key] = std::move(value);
  return true;
}

// map<string, resource.Quantity>; a Quantity is {string = 1}.
inline bool QuantityMapEntry(std::string_view b, json& out, Err& err) {
  std::string key, value;
  if (!Fields(b, "ResourceList entry", err, [&](const Field& f) {
        if (f.number == 1 && IsBytes(f)) key = Str(f);
        if (f.number == 2 && IsBytes(f))
          return Fields(f.bytes, "Quantity", err, [&](const Field& q) {
            if (q.number == 1 && IsBytes(q)) value = Str(q);
            return true;
          });
        return true;
      }))
    return false;
  out[key] = std::move(value);
  return true;
}

// A repeated message field: appends one decoded element to the array at out[name].
template <typename Fn>
inline bool Append(json& out, const char* name, std::string_view b, Err& err, Fn decode) {
  json& arr = out[name];
  if (!arr.is_array()) arr = json::array();
  json item = json::object();
  if (!decode(b, item, err)) return false;
  arr.push_back(std::move(item));
  return true;
}

// The PodSpec fields Tessera reads (proto_pod.cc).
bool PodSpec(std::string_view b, json& out, Err& err);

}  // namespace tessera::k8s::proto::wire
