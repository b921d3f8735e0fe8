// The objects of Dynamic Resource Allocation (resource.k8s.io/v1): DeviceClass, ResourceSlice,
// ResourceClaim, ResourceClaimTemplate; Kueue's Configuration for its deviceClassMappings; and
// a pod's spec.resourceClaims. docs/dra.md says what is read and what is not.
#include "config/dra_objects.h"

#include <utility>

#include "config/dra_capacity.h"
#include "config/pod_placement.h"
#include "config/pod_template.h"
#include "model/quantity.h"

namespace tessera::config_internal {
namespace {

std::string Qualify(const std::string& driver, const std::string& name) {
  return name.find('/') == std::string::npos ? driver + "/" + name : name;
}

// `selectors: [{cel: {expression: ...}}]` at `path`.
void ReadSelectors(DocContext& ctx, const YAML::Node& parent, const std::string& path,
                   std::vector<dra::CelSelector>& out) {
  ForEachSeq(ctx, Child(parent, "selectors"), path + ".selectors",
             [&](size_t, const YAML::Node& sel, const std::string& spath) {
               if (!ExpectMap(ctx, sel, spath)) return !ctx.failed();
               YAML::Node cel = Child(sel, "cel");
               if (IsNullish(cel)) {
                 ctx.Error(sel, spath + ".cel",
                           "required field is missing (the only selector "
                           "type of resource.k8s.io/v1)");
                 return false;
               }
               auto expr = RequireString(ctx, cel, "expression", spath + ".cel.expression");
               if (!expr) return false;
               if (expr->size() > 10 * 1024) {
                 ctx.Error(cel, spath + ".cel.expression",
                           "longer than 10 KiB, the API server's limit");
                 return false;
               }
               out.push_back({*expr, ctx.Source(cel), spath + ".cel.expression"});
               return true;
             });
}

// One `exactly` request or one firstAvailable subrequest.
bool ReadExact(DocContext& ctx, const YAML::Node& node, const std::string& path,
               dra::ExactRequest& out) {
  if (!ExpectMap(ctx, node, path)) return false;
  auto cls = RequireString(ctx, node, "deviceClassName", path + ".deviceClassName");
  if (!cls) return false;
  out.device_class = *cls;
  ReadSelectors(ctx, node, path, out.selectors);
  if (YAML::Node mode = Child(node, "allocationMode"); !IsNullish(mode)) {
    auto all = ParseEnum<bool>(ctx, mode, path + ".allocationMode",
                               {{"ExactCount", false}, {"All", true}});
    if (!all) return false;
    out.all = *all;
  }
  out.count = GetInt(ctx, node, "count", path + ".count", 1, 1'000'000).value_or(1);
  if (out.all && !IsNullish(Child(node, "count")))
    ctx.Warning(Child(node, "count"), path + ".count",
                "count is ignored with allocationMode All (the API server refuses it)");
  ReadTolerations(ctx, Child(node, "tolerations"), path + ".tolerations", out.tolerations);
  if (GetBool(ctx, node, "adminAccess", path + ".adminAccess").value_or(false))
    ctx.Warning(Child(node, "adminAccess"), path + ".adminAccess",
                "admin access is not simulated: the request is allocated devices of its own, "
                "as any other");
  ReadCapacityRequests(ctx, node, path, out.capacity_requests);
  return !ctx.failed();
}

bool ReadClaimSpec(DocContext& ctx, const YAML::Node& spec, const std::string& path,
                   dra::ClaimSpec& out) {
  if (!ExpectMap(ctx, spec, path)) return !ctx.failed();
  YAML::Node devices = Child(spec, "devices");
  const std::string dpath = path + ".devices";
  if (!ExpectMap(ctx, devices, dpath)) return !ctx.failed();
  ForEachSeq(ctx, Child(devices, "requests"), dpath + ".requests",
             [&](size_t, const YAML::Node& r, const std::string& rpath) {
               if (!ExpectMap(ctx, r, rpath)) return false;
               dra::DeviceRequest req;
               auto name = RequireString(ctx, r, "name", rpath + ".name");
               if (!name) return false;
               req.name = *name;
               YAML::Node exactly = Child(r, "exactly");
               YAML::Node first = Child(r, "firstAvailable");
               if (IsNullish(exactly) == IsNullish(first)) {
                 ctx.Error(r, rpath, "exactly one of exactly and firstAvailable must be set");
                 return false;
               }
               if (!IsNullish(exactly)) {
                 dra::ExactRequest e;
                 e.name = req.name;
                 if (!ReadExact(ctx, exactly, rpath + ".exactly", e)) return false;
                 req.alternatives.push_back(std::move(e));
               } else {
                 req.first_available = true;
                 ForEachSeq(ctx, first, rpath + ".firstAvailable",
                            [&](size_t, const YAML::Node& sub, const std::string& spath) {
                              dra::ExactRequest e;
                              auto sname = RequireString(ctx, sub, "name", spath + ".name");
                              if (!sname) return false;
                              e.name = *sname;
                              if (!ReadExact(ctx, sub, spath, e)) return false;
                              req.alternatives.push_back(std::move(e));
                              return true;
                            });
                 if (req.alternatives.empty() && !ctx.failed())
                   ctx.Error(first, rpath + ".firstAvailable", "must list a subrequest");
               }
               out.requests.push_back(std::move(req));
               return !ctx.failed();
             });
  ForEachSeq(ctx, Child(devices, "constraints"), dpath + ".constraints",
             [&](size_t, const YAML::Node& c, const std::string& cpath) {
               if (!ExpectMap(ctx, c, cpath)) return false;
               dra::Constraint k;
               k.requests = GetStringList(ctx, c, "requests", cpath + ".requests")
                                .value_or(std::vector<std::string>{});
               auto attr = GetString(ctx, c, "matchAttribute", cpath + ".matchAttribute");
               if (!attr) {
                 if (!ctx.failed())
                   ctx.Warning(c, cpath,
                               "only matchAttribute constraints are honoured; this "
                               "one is ignored");
                 return !ctx.failed();
               }
               k.match_attribute = *attr;
               if (k.match_attribute.find('/') == std::string::npos) {
                 ctx.Error(Child(c, "matchAttribute"), cpath + ".matchAttribute",
                           "must be a fully qualified name (domain/name)");
                 return false;
               }
               for (const std::string& r : k.requests) {
                 bool found = false;
                 for (const auto& req : out.requests) found = found || req.name == r;
                 if (!found) {
                   ctx.Error(Child(c, "requests"), cpath + ".requests",
                             "names no request of this claim: " + r);
                   return false;
                 }
               }
               out.constraints.push_back(std::move(k));
               return true;
             });
  return !ctx.failed();
}

// One attribute value: {int|bool|string|version: ...}.
std::optional<dra::AttributeValue> ReadAttribute(DocContext& ctx, const YAML::Node& v,
                                                 const std::string& path) {
  if (!ExpectMap(ctx, v, path)) return std::nullopt;
  if (YAML::Node b = Child(v, "bool"); !IsNullish(b)) {
    if (auto x = GetBool(ctx, v, "bool", path + ".bool")) return dra::AttributeValue(*x);
  } else if (YAML::Node i = Child(v, "int"); !IsNullish(i)) {
    if (auto x = GetInt(ctx, v, "int", path + ".int", INT64_MIN, INT64_MAX))
      return dra::AttributeValue(*x);
  } else if (YAML::Node s = Child(v, "string"); !IsNullish(s)) {
    if (auto x = GetString(ctx, v, "string", path + ".string")) return dra::AttributeValue(*x);
  } else if (YAML::Node ver = Child(v, "version"); !IsNullish(ver)) {
    if (auto x = GetString(ctx, v, "version", path + ".version"))
      return dra::AttributeValue(dra::Version{*x});
  } else {
    ctx.Warning(v, path,
                "an attribute of a type Tessera does not read (it reads bool, int, "
                "string and version); left out");
  }
  return std::nullopt;
}

// `counters: {name: {value: quantity}}` in thousandths.
void ReadCounters(DocContext& ctx, const YAML::Node& node, const std::string& path,
                  std::map<std::string, int64_t>& out) {
  ForEachMap(
      ctx, node, path, [&](const std::string& name, const YAML::Node& c, const std::string& cpath) {
        auto text = RequireString(ctx, c, "value", cpath + ".value");
        if (!text) return false;
        auto q = ParseQuantity(*text, /*milli=*/true);
        if (!q.ok() || *q < 0) {
          ctx.Error(Child(c, "value"), cpath + ".value", "not a valid non-negative quantity");
          return false;
        }
        out[name] = *q;
        return true;
      });
}

void ReadDevice(DocContext& ctx, const YAML::Node& d, const std::string& path,
                const std::string& driver, const std::string& pool, dra::NodeDevice& out) {
  out.device.driver = driver;
  out.device.pool = pool;
  out.device.name = RequireString(ctx, d, "name", path + ".name").value_or("");
  out.source = ctx.Source(d);
  ForEachMap(ctx, Child(d, "attributes"), path + ".attributes",
             [&](const std::string& name, const YAML::Node& v, const std::string& apath) {
               if (auto value = ReadAttribute(ctx, v, apath))
                 out.device.attributes[Qualify(driver, name)] = std::move(*value);
               return !ctx.failed();
             });
  ReadDeviceCapacity(ctx, d, path, driver, out);
  ForEachSeq(ctx, Child(d, "consumesCounters"), path + ".consumesCounters",
             [&](size_t, const YAML::Node& u, const std::string& upath) {
               dra::CounterUse use;
               auto set = RequireString(ctx, u, "counterSet", upath + ".counterSet");
               if (!set) return false;
               use.counter_set = pool + "/" + *set;
               ReadCounters(ctx, Child(u, "counters"), upath + ".counters", use.counters);
               out.consumes.push_back(std::move(use));
               return !ctx.failed();
             });
  std::vector<Taint> taints;
  ReadTaints(ctx, Child(d, "taints"), path + ".taints", taints);
  for (Taint& t : taints) out.taints.push_back({std::move(t)});
}

}  // namespace

void ReadDeviceClass(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = Child(meta.root, "spec");
  dra::DeviceClass c;
  c.name = meta.name;
  c.source = meta.source;
  if (ExpectMap(ctx, spec, "spec")) {
    ReadSelectors(ctx, spec, "spec", c.selectors);
    if (!IsNullish(Child(spec, "extendedResourceName")))
      ctx.Warning(Child(spec, "extendedResourceName"), "spec.extendedResourceName",
                  "extended resources backed by DRA are not read: a pod asking for this "
                  "resource is placed by the device plugin's count, not from this class");
  }
  if (ctx.failed()) return;
  out.model.dra.classes.emplace(c.name, std::move(c));
}

void ReadResourceSlice(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = RequireSpec(ctx, meta);
  if (IsNullish(spec)) return;
  auto driver = RequireString(ctx, spec, "driver", "spec.driver");
  YAML::Node pool = Child(spec, "pool");
  auto pool_name = RequireString(ctx, pool, "name", "spec.pool.name");
  if (!driver || !pool_name) return;
  auto node = GetString(ctx, spec, "nodeName", "spec.nodeName");
  if (!node) {
    if (!ctx.failed())
      ctx.Warning(spec, "spec",
                  "devices that are not local to one node (allNodes, nodeSelector, "
                  "perDeviceNodeSelection) are not allocated by Tessera; slice left out");
    return;
  }
  dra::NodeDevices devices;
  if (!IsNullish(Child(spec, "sharedCounters")) && !IsNullish(Child(spec, "devices")))
    ctx.Warning(Child(spec, "sharedCounters"), "spec.sharedCounters",
                "a slice with both sharedCounters and devices is refused by API servers 1.35 and "
                "newer: publish the counter sets in a slice of their own, of the same pool");
  ForEachSeq(ctx, Child(spec, "sharedCounters"), "spec.sharedCounters",
             [&](size_t, const YAML::Node& s, const std::string& spath) {
               dra::CounterSet set;
               auto name = RequireString(ctx, s, "name", spath + ".name");
               if (!name) return false;
               set.name = *name;
               ReadCounters(ctx, Child(s, "counters"), spath + ".counters", set.counters);
               devices.counter_sets[*pool_name + "/" + *name] = std::move(set);
               return !ctx.failed();
             });
  ForEachSeq(ctx, Child(spec, "devices"), "spec.devices",
             [&](size_t, const YAML::Node& d, const std::string& dpath) {
               if (!ExpectMap(ctx, d, dpath)) return false;
               dra::NodeDevice dev;
               ReadDevice(ctx, d, dpath, *driver, *pool_name, dev);
               devices.devices.push_back(std::move(dev));
               return !ctx.failed();
             });
  if (ctx.failed()) return;
  out.model.dra.nodes.emplace(*node, std::move(devices));
}

namespace {

// The node a node-local allocation's nodeSelector names: kube-scheduler writes one term that
// matches metadata.name (or the kubernetes.io/hostname label) In [node].
std::string AllocatedNode(DocContext& ctx, const YAML::Node& selector, const std::string& path) {
  std::string node;
  ForEachSeq(ctx, Child(selector, "nodeSelectorTerms"), path + ".nodeSelectorTerms",
             [&](size_t, const YAML::Node& term, const std::string& tpath) {
               for (const char* list : {"matchFields", "matchExpressions"})
                 ForEachSeq(ctx, Child(term, list), tpath + "." + list,
                            [&](size_t, const YAML::Node& req, const std::string& rpath) {
                              auto key = GetString(ctx, req, "key", rpath + ".key");
                              auto op = GetString(ctx, req, "operator", rpath + ".operator");
                              auto values = GetStringList(ctx, req, "values", rpath + ".values");
                              if (key && op && values && *op == "In" && values->size() == 1 &&
                                  (*key == "metadata.name" || *key == "kubernetes.io/hostname"))
                                node = values->front();
                              return !ctx.failed();
                            });
               return !ctx.failed();
             });
  return node;
}

// status.allocation (the devices a scheduler gave the claim) and status.reservedFor.
void ReadClaimStatus(DocContext& ctx, const YAML::Node& status, dra::Claim& c) {
  if (!ExpectMap(ctx, status, "status")) return;
  ForEachSeq(ctx, Child(status, "reservedFor"), "status.reservedFor",
             [&](size_t, const YAML::Node& r, const std::string& rpath) {
               if (auto name = GetString(ctx, r, "name", rpath + ".name"))
                 c.reserved_for.push_back(*name);
               return !ctx.failed();
             });
  const YAML::Node alloc = Child(status, "allocation");
  if (!ExpectMap(ctx, alloc, "status.allocation")) return;
  dra::ClaimAllocation a;
  if (const YAML::Node sel = Child(alloc, "nodeSelector");
      ExpectMap(ctx, sel, "status.allocation.nodeSelector"))
    a.node = AllocatedNode(ctx, sel, "status.allocation.nodeSelector");
  ForEachSeq(ctx, Child(Child(alloc, "devices"), "results"), "status.allocation.devices.results",
             [&](size_t, const YAML::Node& r, const std::string& rpath) {
               dra::AllocatedDevice d;
               auto request = RequireString(ctx, r, "request", rpath + ".request");
               auto driver = RequireString(ctx, r, "driver", rpath + ".driver");
               auto pool = RequireString(ctx, r, "pool", rpath + ".pool");
               auto device = RequireString(ctx, r, "device", rpath + ".device");
               if (!request || !driver || !pool || !device) return false;
               d.request = *request;
               d.driver = *driver;
               d.pool = *pool;
               d.device = *device;
               ReadConsumedCapacity(ctx, r, rpath, d.consumed);
               d.share_id = GetString(ctx, r, "shareID", rpath + ".shareID").value_or("");
               a.devices.push_back(std::move(d));
               return !ctx.failed();
             });
  if (a.node.empty() && !ctx.failed())
    ctx.Warning(alloc, "status.allocation.nodeSelector",
                "the allocation names no node (network-attached devices are not read): its "
                "pods cannot be placed");
  c.allocation = std::move(a);
}

}  // namespace

void ReadResourceClaim(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  dra::Claim c;
  c.ns = meta.ns;
  c.name = meta.name;
  c.source = meta.source;
  if (!ReadClaimSpec(ctx, RequireSpec(ctx, meta), "spec", c.spec)) return;
  c.uid = GetString(ctx, meta.metadata, "uid", "metadata.uid").value_or("");
  ReadClaimStatus(ctx, Child(meta.root, "status"), c);
  if (ctx.failed()) return;
  out.model.dra.claims.push_back(std::move(c));
}

void ReadResourceClaimTemplate(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  dra::Claim c;
  c.ns = meta.ns;
  c.name = meta.name;
  c.source = meta.source;
  YAML::Node spec = RequireSpec(ctx, meta);
  if (IsNullish(spec)) return;
  if (!ReadClaimSpec(ctx, Child(spec, "spec"), "spec.spec", c.spec)) return;
  out.model.dra.templates.push_back(std::move(c));
}

void ReadKueueConfiguration(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node resources = Child(meta.root, "resources");
  ForEachSeq(ctx, Child(resources, "deviceClassMappings"), "resources.deviceClassMappings",
             [&](size_t, const YAML::Node& m, const std::string& mpath) {
               dra::DeviceClassMapping mapping;
               auto name = RequireString(ctx, m, "name", mpath + ".name");
               auto classes =
                   GetStringList(ctx, m, "deviceClassNames", mpath + ".deviceClassNames");
               if (!name || !classes) {
                 if (!ctx.failed())
                   ctx.Error(m, mpath + ".deviceClassNames", "required field is missing");
                 return false;
               }
               mapping.resource = *name;
               mapping.device_classes = std::move(*classes);
               out.model.dra.mappings.push_back(std::move(mapping));
               return true;
             });
  ctx.Notice(meta.root, "", "of Kueue's Configuration only resources.deviceClassMappings is read");
}

void ReadPodClaims(DocContext& ctx, const YAML::Node& spec, const std::string& path, PodSet& out) {
  ForEachSeq(
      ctx, Child(spec, "resourceClaims"), path + ".resourceClaims",
      [&](size_t, const YAML::Node& c, const std::string& cpath) {
        if (!ExpectMap(ctx, c, cpath)) return false;
        dra::PodClaim pc;
        auto name = RequireString(ctx, c, "name", cpath + ".name");
        if (!name) return false;
        pc.name = *name;
        pc.claim_name =
            GetString(ctx, c, "resourceClaimName", cpath + ".resourceClaimName").value_or("");
        pc.template_name =
            GetString(ctx, c, "resourceClaimTemplateName", cpath + ".resourceClaimTemplateName")
                .value_or("");
        if (pc.claim_name.empty() == pc.template_name.empty()) {
          ctx.Error(c, cpath,
                    "exactly one of resourceClaimName and "
                    "resourceClaimTemplateName must be set");
          return false;
        }
        pc.source = ctx.Source(c);
        out.claims.push_back(std::move(pc));
        return true;
      });
}

}  // namespace tessera::config_internal
