#include "k8s/controller/gpu_health.h"

#include <algorithm>

#include "fmt/format.h"
#include "model/limits.h"
#include "model/quantity.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxUnhealthy = 64;

std::string Str(const json& o, const char* key) {
  if (!o.is_object()) return "";
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

void ReadStatuses(const json& list, std::vector<UnhealthyResource>& out) {
  if (!list.is_array()) return;
  for (const json& cs : list) {
    const json* ars = cs.is_object() && cs.contains("allocatedResourcesStatus")
                          ? &cs["allocatedResourcesStatus"]
                          : nullptr;
    if (!ars || !ars->is_array()) continue;
    for (const json& rs : *ars) {
      const std::string name = Str(rs, "name");
      if (!rs.is_object() || !rs.contains("resources") || !rs["resources"].is_array()) continue;
      for (const json& r : rs["resources"]) {
        if (Str(r, "health") != "Unhealthy") continue;
        if (out.size() >= kMaxUnhealthy) return;
        UnhealthyResource u{name, Str(r, "resourceID"), Str(r, "message")};
        if (std::find(out.begin(), out.end(), u) == out.end()) out.push_back(std::move(u));
      }
    }
  }
}

bool IsGpuResource(const std::string& name) {
  return name == "nvidia.com/gpu" || name.rfind("claim:", 0) == 0;
}

}  // namespace

std::vector<UnhealthyResource> ParseUnhealthyResources(const json& status) {
  std::vector<UnhealthyResource> out;
  if (!status.is_object()) return out;
  for (const char* field : {"containerStatuses", "initContainerStatuses"})
    if (auto it = status.find(field); it != status.end()) ReadStatuses(*it, out);
  return out;
}

void CountUnhealthyGpus(const json& status, Node& n) {
  if (!status.is_object()) return;
  auto cap = status.find("capacity");
  if (cap == status.end() || !cap->is_object()) return;
  auto g = cap->find(std::string(kGpuResourceName));
  if (g == cap->end() || !g->is_string()) return;
  auto q = ParseQuantity(g->get<std::string>(), false);
  const int64_t alloc = n.allocatable[kGpu];
  if (!q.ok() || *q <= alloc || *q > kMaxGpuSlotsPerNode) return;
  n.unhealthy_gpus = static_cast<int32_t>(*q - alloc);
  n.allocatable.Set(kGpu, *q);
}

void UncountTimeSliced(Node& n) {
  if (n.gpu_replicas == 1 || n.unhealthy_gpus == 0) return;
  n.allocatable.Set(kGpu, n.allocatable[kGpu] - n.unhealthy_gpus);
  n.unhealthy_gpus = 0;
}

std::optional<std::string> HardwareXid(int64_t xid) {
  // NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors): the ones whose cause is the
  // hardware (or its firmware) and whose cure is a reset or a repair, not a fixed program.
  switch (xid) {
    case 48:
      return "double-bit ECC error";
    case 61:
      return "internal micro-controller breakpoint";
    case 62:
      return "internal micro-controller halt";
    case 64:
      return "ECC page retirement or row remapping failure";
    case 74:
      return "NVLink error";
    case 79:
      return "GPU has fallen off the bus";
    case 92:
      return "high single-bit ECC error rate";
    case 94:
      return "contained ECC error";
    case 95:
      return "uncontained ECC error";
    case 119:
      return "GSP RPC timeout";
    case 120:
      return "GSP error";
    case 140:
      return "unrecovered ECC error";
    default:
      return std::nullopt;
  }
}

NodeHealth JudgeNode(const NodeHealthInput& in) {
  NodeHealth out;
  const int32_t n = in.capacity;
  for (const auto& [gpu, xid] : in.xids) {
    if (gpu < 0 || gpu >= n) continue;
    if (auto what = HardwareXid(xid))
      out.failed[gpu] = fmt::format("dcgm-exporter reports XID {} ({})", xid, *what);
  }
  // The kubelet's word on a pod: its device where dcgm-exporter says which index it is.
  for (const NodeHealthInput::Pod& p : in.pods) {
    for (const UnhealthyResource& u : p.unhealthy) {
      if (!IsGpuResource(u.name)) continue;
      std::string why = fmt::format("the kubelet reports its {} {} unhealthy", u.name,
                                    u.id.empty() ? "device" : u.id);
      if (!u.message.empty()) why += ": " + u.message;
      if (auto it = in.uuid_index.find(u.id);
          it != in.uuid_index.end() && it->second < n && u.name == "nvidia.com/gpu")
        out.failed.try_emplace(it->second, why);
      out.hit_pods.try_emplace(p.key, why);
    }
  }
  for (const auto& [pod, why] : in.tainted_pods) out.hit_pods.try_emplace(pod, why);
  // The count: devices the device plugin no longer offers and nothing above named.
  int32_t missing =
      std::max(0, in.capacity - in.allocatable) - static_cast<int32_t>(out.failed.size());
  const std::string count_why = fmt::format(
      "the device plugin offers {} of the node's {} GPUs (status.allocatable < status.capacity)",
      in.allocatable, in.capacity);
  for (int32_t g = n - 1; g >= 0 && missing > 0; --g) {
    const bool held = g < static_cast<int32_t>(in.held.size()) && in.held[g];
    if (held || out.failed.count(g)) continue;
    out.failed[g] = count_why;
    --missing;
  }
  out.unplaced = std::max(0, missing);
  // Pods on a named device.
  for (const NodeHealthInput::Pod& p : in.pods)
    for (int32_t g : p.gpus)
      if (auto it = out.failed.find(g); it != out.failed.end() && it->second != count_why)
        out.hit_pods.try_emplace(p.key, fmt::format("GPU {}: {}", g, it->second));
  return out;
}

DraTaints NoExecuteTaints(const dra::DraModel& dra) {
  DraTaints out;
  // "driver/pool/device" -> the NoExecute taints of the device.
  std::map<std::string, std::vector<const Taint*>> taints;
  for (const auto& [node, devices] : dra.nodes) {
    for (const dra::NodeDevice& d : devices.devices) {
      bool counted = false;
      for (const dra::DeviceTaintSpec& t : d.taints) {
        if (t.taint.effect != TaintEffect::kNoExecute) continue;
        taints[d.device.driver + "/" + d.device.pool + "/" + d.device.name].push_back(&t.taint);
        if (!counted) ++out.tainted[node];
        counted = true;
      }
    }
  }
  if (taints.empty()) return out;
  for (const dra::Claim& c : dra.claims) {
    if (!c.allocation || c.reserved_for.empty()) continue;
    for (const dra::AllocatedDevice& a : c.allocation->devices) {
      auto it = taints.find(a.driver + "/" + a.pool + "/" + a.device);
      if (it == taints.end()) continue;
      // The request's tolerations ("gpu" or "gpu/sub": the subrequest's).
      const std::vector<Toleration>* tolerations = nullptr;
      const std::string top = a.request.substr(0, a.request.find('/'));
      for (const dra::DeviceRequest& r : c.spec.requests) {
        if (r.name != top) continue;
        for (const dra::ExactRequest& e : r.alternatives)
          if (e.name == a.request.substr(a.request.find('/') + 1) || r.alternatives.size() == 1)
            tolerations = &e.tolerations;
      }
      const Taint* hit = nullptr;
      for (const Taint* t : it->second) {
        bool tolerated = false;
        if (tolerations)
          for (const Toleration& tol : *tolerations) tolerated = tolerated || Tolerates(tol, *t);
        if (!tolerated) hit = t;
      }
      if (!hit) continue;
      const std::string why =
          fmt::format("its ResourceClaim {} holds device {} ({}), tainted {}={}:NoExecute", c.name,
                      a.device, a.driver, hit->key, hit->value);
      for (const std::string& pod : c.reserved_for) out.pods.emplace_back(c.ns + "/" + pod, why);
      break;
    }
  }
  return out;
}

}  // namespace tessera::k8s
