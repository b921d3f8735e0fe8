#include "k8s/controller/dra_objects.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <thread>
#include <utility>

#include "config/loader.h"
#include "fmt/format.h"
#include "k8s/controller/json_fields.h"
#include "k8s/controller/objects.h"
#include "model/bounded_json.h"
#include "model/json_text.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;
using T = WatchEvent::Type;
using json_fields::At;
using json_fields::Str;

const char* KindOf(const std::string& resource) {
  if (resource == "deviceclasses") return "DeviceClass";
  if (resource == "resourceslices") return "ResourceSlice";
  return "ResourceClaim";
}

// What the loader reads of an object: its name, namespace and uid, spec, and a claim's status.
// The items of a list of built-in kinds come without apiVersion and kind: v1's are given (the
// shape v1beta2 shares).
json Stripped(const std::string& resource, const json& o) {
  json out;
  out["apiVersion"] = o.contains("apiVersion") ? o["apiVersion"] : json("resource.k8s.io/v1");
  out["kind"] = KindOf(resource);
  const json& md = At(o, "metadata");
  for (const char* k : {"name", "namespace", "uid"})
    if (md.contains(k)) out["metadata"][k] = md[k];
  if (o.contains("spec")) out["spec"] = o["spec"];
  if (resource == "resourceclaims" && o.contains("status")) {
    const json& st = o["status"];
    for (const char* k : {"allocation", "reservedFor"})
      if (st.contains(k)) out["status"][k] = st[k];
  }
  return out;
}

std::string ClaimPath(const std::string& version, const std::string& ns, const std::string& name) {
  return fmt::format("/apis/resource.k8s.io/{}/namespaces/{}/resourceclaims/{}", version, ns, name);
}

// The devices of an allocation, as a comparable list.
std::vector<std::string> DevicesOf(const json& allocation) {
  std::vector<std::string> out;
  const json& results = At(At(allocation, "devices"), "results");
  if (results.is_array())
    for (const json& r : results)
      out.push_back(fmt::format("{}|{}|{}|{}", Str(r, "request"), Str(r, "driver"), Str(r, "pool"),
                                Str(r, "device")));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> DevicesOf(const ClaimReservation& r) {
  std::vector<std::string> out;
  for (const auto& d : r.devices)
    out.push_back(fmt::format("{}|{}|{}|{}", d.request, d.driver, d.pool, d.device));
  std::sort(out.begin(), out.end());
  return out;
}

// Reads the claim, lets `edit` change it (false: nothing to write; `code`/`why` say the
// outcome), and writes its status; a conflict (someone wrote in between) reads it again.
template <typename Edit>
long ReadModifyWrite(KubeClient& client, const std::string& version, const ClaimReservation& r,
                     const std::atomic<bool>& stop, std::string* why, Edit&& edit) {
  const std::string path = ClaimPath(version, r.ns, r.name);
  long status = 0;
  for (int attempt = 0; attempt < 6 && !stop; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
    auto got = client.Get(path);
    if (!got.ok() || got->status >= 500 || got->status == 429) {
      status = got.ok() ? got->status : 0;
      continue;
    }
    if (got->status != 200) {
      if (why) *why = fmt::format("ResourceClaim {}/{}: HTTP {}", r.ns, r.name, got->status);
      return got->status;
    }
    json claim = ParseJsonOrDiscarded(got->body);
    if (!claim.is_object()) {
      if (why)
        *why = fmt::format("ResourceClaim {}/{}: the server's answer is not JSON", r.ns, r.name);
      return 0;
    }
    long code = 200;
    if (!edit(claim, code)) return code;
    auto put = client.Put(path + "/status", DumpJson(claim));
    if (put.ok() && (put->status == 200 || put->status == 201)) return 200;
    status = put.ok() ? put->status : 0;
    if (put.ok() && put->status != 409 && put->status < 500 && put->status != 429) break;
  }
  if (why && why->empty())
    *why = fmt::format("ResourceClaim {}/{}: its status could not be written (HTTP {})", r.ns,
                       r.name, status);
  return status == 200 ? 0 : status;
}

}  // namespace

void ReadPodClaims(const json& spec, const json& status, PodSet& ps) {
  const json& claims = At(spec, "resourceClaims");
  if (!claims.is_array()) return;
  std::map<std::string, std::string> made;  // entry name -> its claim's name
  if (const json& st = At(status, "resourceClaimStatuses"); st.is_array())
    for (const json& c : st) made[Str(c, "name")] = Str(c, "resourceClaimName");
  for (const json& c : claims) {
    dra::PodClaim pc;
    pc.name = Str(c, "name");
    pc.claim_name = Str(c, "resourceClaimName");
    pc.template_name = Str(c, "resourceClaimTemplateName");
    if (pc.claim_name.empty() && !pc.template_name.empty()) {
      auto it = made.find(pc.name);
      if (it != made.end() && !it->second.empty()) {
        pc.claim_name = it->second;
      } else {
        pc.unsupported = fmt::format(
            "waiting for the ResourceClaim of claim {} (from ResourceClaimTemplate {}) to be "
            "created by the ResourceClaim controller (kube-controller-manager)",
            pc.name, pc.template_name);
      }
    }
    ps.claims.push_back(std::move(pc));
  }
}

bool DraObjects::IsDraResource(const std::string& resource) {
  for (const char* r : kDraResources)
    if (resource == r) return true;
  return false;
}

bool DraObjects::Apply(const WatchEvent& ev) {
  auto& store = objects_[ev.resource];
  bool changed = false;
  if (ev.type == T::kReplace) {
    std::map<std::string, json> next;
    for (const json& o : ev.objects) next[ObjectKey(o)] = Stripped(ev.resource, o);
    changed = next != store;
    store = std::move(next);
    return changed;
  }
  const std::string key = ObjectKey(ev.object);
  if (ev.type == T::kDeleted) return store.erase(key) > 0;
  json s = Stripped(ev.resource, ev.object);
  auto it = store.find(key);
  if (it != store.end() && it->second == s) return false;
  store[key] = std::move(s);
  return true;
}

dra::DraModel DraObjects::Load() {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const char* r : kDraResources) {
    auto it = objects_.find(r);
    if (it == objects_.end()) continue;
    for (const auto& [key, obj] : it->second)
      texts.emplace_back(DumpJson(obj),
                         fmt::format("{} {}", r, key[0] == '/' ? key.substr(1) : key));
  }
  LoadResult lr;
  LoadManifestTexts(texts, lr);
  std::set<std::string> said;
  for (const Diagnostic& d : lr.diagnostics) {
    if (d.severity == Diagnostic::Severity::kNotice) continue;
    // The loader has no nodes here: that a slice's node is "not in the input" means nothing.
    if (d.path == "spec.nodeName") continue;
    std::string text = d.ToString();
    if (!logged_.count(text)) spdlog::warn("DRA objects: {}", text);
    said.insert(std::move(text));
  }
  logged_ = std::move(said);
  return std::move(lr.model.dra);
}

const json& DraObjects::ClassConfig(const std::string& name) const {
  static const json kNone;
  auto it = objects_.find("deviceclasses");
  if (it == objects_.end()) return kNone;
  auto c = it->second.find("/" + name);
  if (c == it->second.end()) return kNone;
  return At(At(c->second, "spec"), "config");
}

std::string NewShareId() {
  // A random (version 4) UUID, as upstream's allocator gives each share.
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  const uint64_t hi = gen(), lo = gen();
  std::string hex = fmt::format("{:016x}{:016x}", hi, lo);
  hex[12] = '4';
  hex[16] = "89ab"[lo >> 62 & 3];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

std::string QuantityText(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

json AllocationJson(const ClaimReservation& r, const json& claim) {
  json results = json::array();
  for (const auto& d : r.devices) {
    json e = {{"request", d.request}, {"driver", d.driver}, {"pool", d.pool}, {"device", d.device}};
    // A share of a device that allows multiple allocations (consumable capacity).
    if (!d.share_id.empty()) {
      e["shareID"] = d.share_id;
      json consumed = json::object();
      for (const auto& [name, milli] : d.consumed) consumed[name] = QuantityText(milli);
      if (!consumed.empty()) e["consumedCapacity"] = std::move(consumed);
    }
    results.push_back(std::move(e));
  }
  json config = json::array();
  for (const json& c : r.class_configs) {
    json e = c;
    e["source"] = "FromClass";
    config.push_back(std::move(e));
  }
  if (const json& own = At(At(At(claim, "spec"), "devices"), "config"); own.is_array())
    for (const json& c : own) {
      json e = c;
      e["source"] = "FromClaim";
      config.push_back(std::move(e));
    }
  json devices = {{"results", std::move(results)}};
  if (!config.empty()) devices["config"] = std::move(config);
  return {{"devices", std::move(devices)},
          {"nodeSelector",
           {{"nodeSelectorTerms",
             {{{"matchFields",
                {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {r.node}}}}}}}}}}};
}

long ReserveClaim(KubeClient& client, const std::string& version, const ClaimReservation& r,
                  const ClaimPod& pod, const std::atomic<bool>& stop, std::string* why) {
  return ReadModifyWrite(client, version, r, stop, why, [&](json& claim, long& code) {
    json& status = claim["status"];
    if (!status.is_object()) status = json::object();
    if (status.contains("allocation") && !status["allocation"].is_null()) {
      // A shared claim another of its pods allocated: the same devices, or a conflict.
      if (DevicesOf(status["allocation"]) != DevicesOf(r)) {
        code = 409;
        if (why)
          *why = fmt::format("ResourceClaim {}/{} is allocated to other devices already", r.ns,
                             r.name);
        return false;
      }
    } else {
      status["allocation"] = AllocationJson(r, claim);
    }
    json& reserved = status["reservedFor"];
    if (!reserved.is_array()) reserved = json::array();
    for (const json& e : reserved)
      if (Str(e, "uid") == pod.uid && Str(e, "name") == pod.name) return false;  // code 200
    reserved.push_back({{"resource", "pods"}, {"name", pod.name}, {"uid", pod.uid}});
    return true;
  });
}

void UnreserveClaim(KubeClient& client, const std::string& version, const ClaimReservation& r,
                    const ClaimPod& pod, const std::atomic<bool>& stop) {
  std::string why;
  const long code = ReadModifyWrite(client, version, r, stop, &why, [&](json& claim, long&) {
    json& status = claim["status"];
    if (!status.is_object()) return false;
    json& reserved = status["reservedFor"];
    json kept = json::array();
    if (reserved.is_array())
      for (const json& e : reserved)
        if (!(Str(e, "uid") == pod.uid && Str(e, "name") == pod.name)) kept.push_back(e);
    const bool mine = status.contains("allocation") && !status["allocation"].is_null() &&
                      DevicesOf(status["allocation"]) == DevicesOf(r);
    if (kept.size() == (reserved.is_array() ? reserved.size() : 0) && !(kept.empty() && mine))
      return false;
    if (kept.empty()) {
      status.erase("reservedFor");
      if (mine) status.erase("allocation");
    } else {
      reserved = std::move(kept);
    }
    return true;
  });
  if (code != 200)
    spdlog::warn("tessera: could not undo the reservation of ResourceClaim {}/{} for pod {}: {}",
                 r.ns, r.name, pod.name, why);
}

}  // namespace tessera::k8s
