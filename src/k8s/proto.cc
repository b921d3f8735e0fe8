#include "k8s/proto.h"

#include <cstdint>
#include <ctime>

#include "fmt/format.h"
#include "k8s/utf8.h"

namespace tessera::k8s::proto {
namespace {

using json = nlohmann::json;

// The protobuf wire format: a field is a varint key (number << 3 | wire type) followed by a
// varint (type 0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5).
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
bool Fields(std::string_view b, const char* message, Err& err, Fn&& fn) {
  Reader r(b);
  Field f;
  while (r.Next(f))
    if (!fn(f)) return false;
  return r.failed() ? err.Set(message) : true;
}

bool IsBytes(const Field& f) { return f.wire == 2; }
bool IsVarint(const Field& f) { return f.wire == 0; }

// A string field as JSON can hold it: bytes that are not UTF-8 (no API server sends them; a
// broken stream can) become U+FFFD, so that the object can still be dumped and compared.
std::string Str(const Field& f) { return ToValidUtf8(f.bytes); }

// Go's int32 and int64 fields are varints of the two's complement value.
int64_t Int(const Field& f) { return static_cast<int64_t>(f.varint); }

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

// map<string, string>: repeated entries {key = 1, value = 2}.
bool StringMapEntry(std::string_view b, json& out, Err& err) {
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
bool QuantityMapEntry(std::string_view b, json& out, Err& err) {
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
bool Append(json& out, const char* name, std::string_view b, Err& err, Fn decode) {
  json& arr = out[name];
  if (!arr.is_array()) arr = json::array();
  json item = json::object();
  if (!decode(b, item, err)) return false;
  arr.push_back(std::move(item));
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

bool Requirement(std::string_view b, json& out, Err& err) {
  return Fields(b, "selector requirement", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["key"] = Str(f);
    if (f.number == 2) out["operator"] = Str(f);
    if (f.number == 3) {
      json& values = out["values"];
      if (!values.is_array()) values = json::array();
      values.push_back(Str(f));
    }
    return true;
  });
}

bool LabelSelector(std::string_view b, json& out, Err& err) {
  return Fields(b, "LabelSelector", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !StringMapEntry(f.bytes, out["matchLabels"], err)) return false;
    if (f.number == 2 && !Append(out, "matchExpressions", f.bytes, err, Requirement)) return false;
    return true;
  });
}

bool PodAffinityTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodAffinityTerm", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& sel = out["labelSelector"] = json::object();
      if (!LabelSelector(f.bytes, sel, err)) return false;
    }
    if (f.number == 2) {
      json& ns = out["namespaces"];
      if (!ns.is_array()) ns = json::array();
      ns.push_back(Str(f));
    }
    if (f.number == 3) out["topologyKey"] = Str(f);
    return true;
  });
}

bool WeightedPodAffinityTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "WeightedPodAffinityTerm", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 1) out["weight"] = static_cast<int32_t>(Int(f));
    if (IsBytes(f) && f.number == 2) {
      json& term = out["podAffinityTerm"] = json::object();
      if (!PodAffinityTerm(f.bytes, term, err)) return false;
    }
    return true;
  });
}

bool PodAntiAffinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodAntiAffinity", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !Append(out, "requiredDuringSchedulingIgnoredDuringExecution", f.bytes,
                                 err, PodAffinityTerm))
      return false;
    if (f.number == 2 && !Append(out, "preferredDuringSchedulingIgnoredDuringExecution", f.bytes,
                                 err, WeightedPodAffinityTerm))
      return false;
    return true;
  });
}

bool NodeSelectorTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeSelectorTerm", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !Append(out, "matchExpressions", f.bytes, err, Requirement)) return false;
    if (f.number == 2 && !Append(out, "matchFields", f.bytes, err, Requirement)) return false;
    return true;
  });
}

bool NodeSelector(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeSelector", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1 &&
        !Append(out, "nodeSelectorTerms", f.bytes, err, NodeSelectorTerm))
      return false;
    return true;
  });
}

bool PreferredSchedulingTerm(std::string_view b, json& out, Err& err) {
  return Fields(b, "PreferredSchedulingTerm", err, [&](const Field& f) {
    if (IsVarint(f) && f.number == 1) out["weight"] = static_cast<int32_t>(Int(f));
    if (IsBytes(f) && f.number == 2) {
      json& term = out["preference"] = json::object();
      if (!NodeSelectorTerm(f.bytes, term, err)) return false;
    }
    return true;
  });
}

bool NodeAffinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "NodeAffinity", err, [&](const Field& f) {
    if (IsBytes(f) && f.number == 1) {
      json& req = out["requiredDuringSchedulingIgnoredDuringExecution"] = json::object();
      if (!NodeSelector(f.bytes, req, err)) return false;
    }
    if (IsBytes(f) && f.number == 2 &&
        !Append(out, "preferredDuringSchedulingIgnoredDuringExecution", f.bytes, err,
                PreferredSchedulingTerm))
      return false;
    return true;
  });
}

bool TopologySpreadConstraint(std::string_view b, json& out, Err& err) {
  return Fields(b, "TopologySpreadConstraint", err, [&](const Field& f) {
    if (IsVarint(f)) {
      if (f.number == 1) out["maxSkew"] = static_cast<int32_t>(Int(f));
      if (f.number == 5) out["minDomains"] = static_cast<int32_t>(Int(f));
      return true;
    }
    if (!IsBytes(f)) return true;
    if (f.number == 2) out["topologyKey"] = Str(f);
    if (f.number == 3) out["whenUnsatisfiable"] = Str(f);
    if (f.number == 4) {
      json& sel = out["labelSelector"] = json::object();
      if (!LabelSelector(f.bytes, sel, err)) return false;
    }
    if (f.number == 6) out["nodeAffinityPolicy"] = Str(f);
    if (f.number == 7) out["nodeTaintsPolicy"] = Str(f);
    if (f.number == 8) {
      json& keys = out["matchLabelKeys"];
      if (!keys.is_array()) keys = json::array();
      keys.push_back(Str(f));
    }
    return true;
  });
}

bool Affinity(std::string_view b, json& out, Err& err) {
  return Fields(b, "Affinity", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) {
      json& na = out["nodeAffinity"] = json::object();
      if (!NodeAffinity(f.bytes, na, err)) return false;
    }
    if (f.number == 3) {
      json& anti = out["podAntiAffinity"] = json::object();
      if (!PodAntiAffinity(f.bytes, anti, err)) return false;
    }
    return true;
  });
}

bool Resources(std::string_view b, json& out, Err& err) {
  return Fields(b, "ResourceRequirements", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1 && !QuantityMapEntry(f.bytes, out["limits"], err)) return false;
    if (f.number == 2 && !QuantityMapEntry(f.bytes, out["requests"], err)) return false;
    return true;
  });
}

bool Container(std::string_view b, json& out, Err& err) {
  return Fields(b, "Container", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["name"] = Str(f);
    if (f.number == 8) {
      json& res = out["resources"] = json::object();
      if (!Resources(f.bytes, res, err)) return false;
    }
    if (f.number == 24) out["restartPolicy"] = Str(f);  // sidecars (Kubernetes 1.28+)
    return true;
  });
}

bool Toleration(std::string_view b, json& out, Err& err) {
  return Fields(b, "Toleration", err, [&](const Field& f) {
    if (IsBytes(f)) {
      if (f.number == 1) out["key"] = Str(f);
      if (f.number == 2) out["operator"] = Str(f);
      if (f.number == 3) out["value"] = Str(f);
      if (f.number == 4) out["effect"] = Str(f);
    } else if (IsVarint(f) && f.number == 5) {
      out["tolerationSeconds"] = Int(f);
    }
    return true;
  });
}

bool PodSpec(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodSpec", err, [&](const Field& f) {
    if (IsVarint(f)) {
      if (f.number == 4) out["terminationGracePeriodSeconds"] = Int(f);
      if (f.number == 5) out["activeDeadlineSeconds"] = Int(f);
      if (f.number == 25) out["priority"] = static_cast<int32_t>(Int(f));
      return true;
    }
    if (!IsBytes(f)) return true;
    switch (f.number) {
      case 2:
        if (!Append(out, "containers", f.bytes, err, Container)) return false;
        break;
      case 20:
        if (!Append(out, "initContainers", f.bytes, err, Container)) return false;
        break;
      case 7:
        if (!StringMapEntry(f.bytes, out["nodeSelector"], err)) return false;
        break;
      case 10:
        out["nodeName"] = Str(f);
        break;
      case 18: {
        json& aff = out["affinity"] = json::object();
        if (!Affinity(f.bytes, aff, err)) return false;
        break;
      }
      case 19:
        out["schedulerName"] = Str(f);
        break;
      case 22:
        if (!Append(out, "tolerations", f.bytes, err, Toleration)) return false;
        break;
      case 24:
        out["priorityClassName"] = Str(f);
        break;
      case 33:
        if (!Append(out, "topologySpreadConstraints", f.bytes, err, TopologySpreadConstraint))
          return false;
        break;
      case 32:
        if (!QuantityMapEntry(f.bytes, out["overhead"], err)) return false;
        break;
      default:
        break;
    }
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

bool PodStatus(std::string_view b, json& out, Err& err) {
  return Fields(b, "PodStatus", err, [&](const Field& f) {
    if (!IsBytes(f)) return true;
    if (f.number == 1) out["phase"] = Str(f);
    if (f.number == 2 && !Append(out, "conditions", f.bytes, err, Condition)) return false;
    if (f.number == 11) out["nominatedNodeName"] = Str(f);
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
