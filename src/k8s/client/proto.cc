#include "k8s/client/proto.h"

#include <cstdint>
#include <ctime>

#include "fmt/format.h"
#include "k8s/client/proto_wire.h"
#include "k8s/client/utf8.h"

namespace tessera::k8s::proto {
namespace {

using json = nlohmann::json;
using namespace wire;  // NOLINT: the wire format is this file's vocabulary

std::string Rfc3339(int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// metav1.Time {seconds = 1, nanos = 2}; JSON has second precision. Go encodes the zero time as
// an empty message, which JSON writes as null.
bool Time(std::string_view b, json& out, Err& err) {
  int64_t seconds = 0;
  bool any = false;
  if (!Fields(b, "Time", err, [&](const Field& f) {
        if (f.number == 1 && IsVarint(f)) {
          seconds = Int(f);
          any = true;
        }
        return true;
      }))
    return false;
  out = any ? json(Rfc3339(seconds)) : json(nullptr);
  return true;
}

bool OwnerReference(std::string_view b, json& out, Err& err) {
  return Fields(b, "OwnerReference", err, [&](const Field& f) {
    if (IsBytes(f)) {
      if (f.number == 1) out["kind"] = Str(f);
      if (f.number == 3) out["name"] = Str(f);
      if (f.number == 4) out["uid"] = Str(f);
      if (f.number == 5) out["apiVersion"] = Str(f);
    } else if (IsVarint(f) && f.number == 6) {
      out["controller"] = f.varint != 0;
    }
    return true;
  });
}

bool ObjectMeta(std::string_view b, json& out, Err& err) {
  return Fields(b, "ObjectMeta", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    switch (f.number) {
      case 1:
        out["name"] = Str(f);
        break;
      case 3:
        out["namespace"] = Str(f);
        break;
      case 5:
        out["uid"] = Str(f);
        break;
      case 6:
        out["resourceVersion"] = Str(f);
        break;
      case 8:
        if (!Time(f.bytes, out["creationTimestamp"], err)) return false;
        break;
      case 9:
        if (!Time(f.bytes, out["deletionTimestamp"], err)) return false;
        break;
      case 11:
        if (!StringMapEntry(f.bytes, out["labels"], err)) return false;
        break;
      case 12:
        if (!StringMapEntry(f.bytes, out["annotations"], err)) return false;
        break;
      case 13:
        if (!Append(out, "ownerReferences", f.bytes, err, OwnerReference)) return false;
        break;
      default:  // managedFields (17) and the rest: not read
        break;
    }
    return true;
  });
}

bool ListMeta(std::string_view b, json& out, Err& err) {
  return Fields(b, "ListMeta", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 2) out["resourceVersion"] = Str(f);
    if (IsBytes(f) && f.number == 3) out["continue"] = Str(f);
    if (IsVarint(f) && f.number == 4) out["remainingItemCount"] = Int(f);
    return true;
  });
}

// PodCondition and NodeCondition share their field numbers for what is read here.
bool Condition(std::string_view b, json& out, Err& err) {
  return Fields(b, "condition", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["type"] = Str(f);
    if (f.number == 2) out["status"] = Str(f);
    if (f.number == 5) out["reason"] = Str(f);
    if (f.number == 6) out["message"] = Str(f);
    return true;
  });
}

// A PodResourceClaimStatus (DRA): the claim entry and the ResourceClaim made for it.
bool ResourceClaimStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodResourceClaimStatus", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["name"] = Str(f);
    if (f.number == 2) out["resourceClaimName"] = Str(f);
    return true;
  });
}

// ResourceHealth {resourceID = 1, health = 2, message = 6} and ResourceStatus {name = 1,
// resources = 2}: the kubelet's word on a container's devices (KEP-4680, gpu_health.h).
bool ResourceHealth(std::string_view b, json& out, Err& err) {
  return Fields(b, "ResourceHealth", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["resourceID"] = Str(f);
    if (f.number == 2) out["health"] = Str(f);
    if (f.number == 6) out["message"] = Str(f);
    return true;
  });
}

bool ResourceStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "ResourceStatus", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["name"] = Str(f);
    if (f.number == 2 && !Append(out, "resources", f.bytes, err, ResourceHealth)) return false;
    return true;
  });
}

// A ContainerStatus: only its allocatedResourcesStatus (14).
bool ContainerStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "ContainerStatus", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 14 &&
        !Append(out, "allocatedResourcesStatus", f.bytes, err, ResourceStatus))
      return false;
    return true;
  });
}

bool PodStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodStatus", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["phase"] = Str(f);
    if (f.number == 2 && !Append(out, "conditions", f.bytes, err, Condition)) return false;
    if (f.number == 11) out["nominatedNodeName"] = Str(f);
    if (f.number == 8 && !Append(out, "containerStatuses", f.bytes, err, ContainerStatus))
      return false;
    if (f.number == 10 && !Append(out, "initContainerStatuses", f.bytes, err, ContainerStatus))
      return false;
    if (f.number == 15 && !Append(out, "resourceClaimStatuses", f.bytes, err, ResourceClaimStatus))
      return false;
    return true;
  });
}

bool Taint(std::string_view b, json& out, Err& err) {
  return Fields(b, "Taint", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["key"] = Str(f);
    if (f.number == 2) out["value"] = Str(f);
    if (f.number == 3) out["effect"] = Str(f);
    return true;
  });
}

bool NodeSpec(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeSpec", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 4) out["unschedulable"] = f.varint != 0;
    if (IsBytes(f) && f.number == 5 && !Append(out, "taints", f.bytes, err, Taint)) return false;
    return true;
  });
}

bool NodeStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeStatus", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !QuantityMapEntry(f.bytes, out["capacity"], err)) return false;
    if (f.number == 2 && !QuantityMapEntry(f.bytes, out["allocatable"], err)) return false;
    if (f.number == 4 && !Append(out, "conditions", f.bytes, err, Condition)) return false;
    return true;
  });
}

// Pod and Node: {metadata = 1, spec = 2, status = 3}.
template <bool (*SpecFn)(std::string_view, json&, Err&),
          bool (*StatusFn)(std::string_view, json&, Err&)>
bool Object(std::string_view b, json& out, Err& err) {
  return Fields(b, "object", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& md = out["metadata"] = json::object();
      if (!ObjectMeta(f.bytes, md, err)) return false;
    }
    if (f.number == 2) {
      json& spec = out["spec"] = json::object();
      if (!SpecFn(f.bytes, spec, err)) return false;
    }
    if (f.number == 3) {
      json& status = out["status"] = json::object();
      if (!StatusFn(f.bytes, status, err)) return false;
    }
    return true;
  });
}
constexpr auto Pod = Object<PodSpec, PodStatus>;
constexpr auto Node = Object<NodeSpec, NodeStatus>;

template <bool (*ItemFn)(std::string_view, json&, Err&)>
bool List(std::string_view b, json& out, Err& err) {
  out["items"] = json::array();
  return Fields(b, "list", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& md = out["metadata"] = json::object();
      if (!ListMeta(f.bytes, md, err)) return false;
    }
    if (f.number == 2 && !Append(out, "items", f.bytes, err, ItemFn)) return false;
    return true;
  });
}

bool Status(std::string_view b, json& out, Err& err) {
  return Fields(b, "Status", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 6) out["code"] = static_cast<int32_t>(Int(f));
    if (!IsBytes(f)) return true;
    if (f.number == 2) out["status"] = Str(f);
    if (f.number == 3) out["message"] = Str(f);
    if (f.number == 4) out["reason"] = Str(f);
    return true;
  });
}

constexpr std::string_view kMagic("k8s\0", 4);

}  // namespace

bool IsProtobuf(std::string_view content_type) {
  return content_type.substr(0, kMediaType.size()) == kMediaType;
}

absl::StatusOr<json> DecodeObject(std::string_view enveloped) {
  if (enveloped.substr(0, kMagic.size()) != kMagic)
    return absl::InvalidArgumentError("protobuf: the object does not start with \"k8s\\0\"");
  // runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3}.
  std::string api_version, kind, encoding;
  std::string_view raw;
  Reader r(enveloped.substr(kMagic.size()));
  Field f;
  while (r.Next(f)) {
    if (f.wire != 2) continue;
    if (f.number == 1) {
      Reader t(f.bytes);
      Field tf;
      while (t.Next(tf)) {
        if (tf.wire == 2 && tf.number == 1) api_version = Str(tf);
        if (tf.wire == 2 && tf.number == 2) kind = Str(tf);
      }
      if (t.failed()) return absl::InvalidArgumentError("protobuf: malformed TypeMeta");
    }
    if (f.number == 2) raw = f.bytes;
    if (f.number == 3) encoding = Str(f);
  }
  if (r.failed()) return absl::InvalidArgumentError("protobuf: malformed envelope");
  if (!encoding.empty())
    return absl::InvalidArgumentError(
        fmt::format("protobuf {}: content encoding '{}' is not supported", kind, encoding));
  json out = json::object();
  Err err;
  bool ok;
  if (kind == "Pod") {
    ok = Pod(raw, out, err);
  } else if (kind == "Node") {
    ok = Node(raw, out, err);
  } else if (kind == "PodList") {
    ok = List<Pod>(raw, out, err);
  } else if (kind == "NodeList") {
    ok = List<Node>(raw, out, err);
  } else if (kind == "Status") {
    ok = Status(raw, out, err);
  } else {
    return absl::UnimplementedError(
        fmt::format("protobuf: kind '{}' ({}) is not decoded here", kind, api_version));
  }
  if (!ok)
    return absl::InvalidArgumentError(
        fmt::format("protobuf {}: malformed {}", kind, err.where ? err.where : "message"));
  out["apiVersion"] = std::move(api_version);
  out["kind"] = std::move(kind);
  return out;
}

absl::StatusOr<json> DecodeWatchEvent(std::string_view frame) {
  // metav1.WatchEvent {type = 1, object = 2 (runtime.RawExtension {raw = 1})}.
  std::string type;
  std::string_view object;
  Reader r(frame);
  Field f;
  while (r.Next(f)) {
    if (f.wire != 2) continue;
    if (f.number == 1) type = Str(f);
    if (f.number == 2) {
      Reader x(f.bytes);
      Field xf;
      while (x.Next(xf))
        if (xf.wire == 2 && xf.number == 1) object = xf.bytes;
      if (x.failed()) return absl::InvalidArgumentError("protobuf: malformed watch event object");
    }
  }
  if (r.failed()) return absl::InvalidArgumentError("protobuf: malformed watch event");
  if (type.empty()) return absl::InvalidArgumentError("protobuf: watch event without a type");
  auto obj = DecodeObject(object);
  if (!obj.ok())
    return absl::Status(obj.status().code(), fmt::format("watch event {}: {}", type,
                                                         std::string(obj.status().message())));
  json out = json::object();
  out["type"] = std::move(type);
  out["object"] = std::move(*obj);
  return out;
}

std::string ErrorText(std::string_view body, std::string_view content_type) {
  if (IsProtobuf(content_type)) {
    auto st = DecodeObject(body);
    if (st.ok() && st->value("kind", "") == "Status") return st->value("message", "");
    return fmt::format("({} bytes of protobuf)", body.size());
  }
  return std::string(body.substr(0, 300));
}

// ---------------------------------------------------------------- writing

void Writer::Key(int field, int wire) { Raw(static_cast<uint64_t>(field) << 3 | wire); }

void Writer::Raw(uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

Writer& Writer::Varint(int field, uint64_t v) {
  Key(field, 0);
  Raw(v);
  return *this;
}

Writer& Writer::Bytes(int field, std::string_view b) {
  Key(field, 2);
  Raw(b.size());
  out.append(b);
  return *this;
}

Writer& Writer::Fixed32(int field, uint32_t v) {
  Key(field, 5);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}

Writer& Writer::Fixed64(int field, uint64_t v) {
  Key(field, 1);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return *this;
}

Writer& Writer::Entry(int field, std::string_view k, std::string_view v) {
  return Msg(field, Writer().Bytes(1, k).Bytes(2, v));
}

Writer& Writer::Quantity(int field, std::string_view k, std::string_view v) {
  return Msg(field, Writer().Bytes(1, k).Msg(2, Writer().Bytes(1, v)));
}

std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  Writer unknown;
  unknown.Msg(1, Writer().Bytes(1, api_version).Bytes(2, kind)).Bytes(2, raw);
  return std::string("k8s\0", 4) + unknown.out;
}

std::string EncodeBinding(std::string_view ns, std::string_view name, std::string_view uid,
                          const std::vector<std::pair<std::string, std::string>>& annotations,
                          std::string_view node) {
  // Binding {metadata = 1 (ObjectMeta {name = 1, namespace = 3, uid = 5, annotations = 12}),
  // target = 2 (ObjectReference {kind = 1, name = 3, apiVersion = 5})}.
  Writer meta;
  meta.Bytes(1, name).Bytes(3, ns).Bytes(5, uid);
  for (const auto& [k, v] : annotations) meta.Entry(12, k, v);
  Writer binding;
  binding.Msg(1, meta).Msg(2, Writer().Bytes(1, "Node").Bytes(3, node).Bytes(5, "v1"));
  return Envelope("v1", "Binding", binding.out);
}

}  // namespace tessera::k8s::proto
