// What is resolved of DRA once every document is read (config/dra_objects.h).
#include <map>
#include <set>
#include <utility>

#include "config/compute_domain.h"
#include "config/dra_objects.h"
#include "config/dra_quota.h"
#include "config/loader.h"
#include "dra/filters.h"
#include "fmt/format.h"

namespace tessera::config_internal {
namespace {

Diagnostic At(Diagnostic::Severity s, const std::string& source, std::string path,
              std::string message) {
  Diagnostic d;
  d.severity = s;
  ParseSource(source, d.file, d.line);
  d.path = std::move(path);
  d.message = std::move(message);
  return d;
}

int32_t Find(const std::vector<dra::Claim>& claims, const std::string& ns,
             const std::string& name) {
  for (size_t i = 0; i < claims.size(); ++i)
    if (claims[i].ns == ns && claims[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

// Every selector compiles (a class's and every claim's); the API server would refuse the object.
void CheckSelectors(const dra::DraModel& dra, std::vector<Diagnostic>& out) {
  dra::SelectorCompiler compile = dra::DefaultSelectorCompiler();
  std::set<std::string> seen;
  auto check = [&](const std::vector<dra::CelSelector>& sels) {
    for (const dra::CelSelector& s : sels) {
      if (!seen.insert(s.source + s.path).second) continue;
      auto c = compile(s.expression);
      if (c.ok()) continue;
      // Upstream compiles what Tessera's evaluator does not support (docs/dra-cel.md): the
      // object is valid, and the selector matches no device here. Anything else is an error
      // the API server would refuse the object for.
      const std::string why(c.status().message());
      if (why.find("not supported by Tessera") != std::string::npos) {
        out.push_back(At(Diagnostic::Severity::kWarning, s.source, s.path,
                         why + "; the selector matches no device"));
      } else {
        out.push_back(At(Diagnostic::Severity::kError, s.source, s.path, why));
      }
    }
  };
  for (const auto& [name, c] : dra.classes) check(c.selectors);
  for (const auto* list : {&dra.claims, &dra.templates})
    for (const dra::Claim& c : *list)
      for (const auto& r : c.spec.requests)
        for (const auto& alt : r.alternatives) check(alt.selectors);
}

// The quota resource of each mapped class (Kueue's deviceClassMappings).
std::map<std::string, ResourceId> MappedClasses(const dra::DraModel& dra,
                                                std::vector<Diagnostic>& out) {
  std::map<std::string, ResourceId> by_class;
  for (const dra::DeviceClassMapping& m : dra.mappings) {
    absl::StatusOr<ResourceId> r = ResourceRegistry::Global().Intern(m.resource);
    if (!r.ok()) {
      out.push_back({Diagnostic::Severity::kError, "", 0, "resources.deviceClassMappings",
                     std::string(r.status().message())});
      continue;
    }
    for (const std::string& c : m.device_classes) by_class[c] = *r;
  }
  return by_class;
}

// Per pod of the claim: the devices it asks for of each mapped resource.
Resources ClaimCounts(const dra::Claim& claim, const std::map<std::string, ResourceId>& mapped,
                      std::vector<Diagnostic>& out) {
  Resources r;
  for (const dra::DeviceRequest& req : claim.spec.requests) {
    const dra::ExactRequest& first = req.alternatives.front();
    auto it = mapped.find(first.device_class);
    bool same = true;
    for (const auto& alt : req.alternatives) {
      auto m = mapped.find(alt.device_class);
      same = same && m != mapped.end() && it != mapped.end() && m->second == it->second &&
             alt.count == first.count && !alt.all;
    }
    if (it == mapped.end()) continue;
    if (first.all) {
      out.push_back(At(Diagnostic::Severity::kWarning, claim.source, "spec.devices.requests",
                       "request " + req.name +
                           " asks for all devices of the node: it is not "
                           "counted in quota (how many is known only once it is allocated)"));
      continue;
    }
    if (!same)
      out.push_back(At(Diagnostic::Severity::kWarning, claim.source, "spec.devices.requests",
                       "request " + req.name +
                           ": its alternatives differ in class or count; "
                           "quota counts the first one's"));
    r[it->second] += first.count;
  }
  return r;
}

void ResolvePodClaims(Model& model, const std::map<std::string, ResourceId>& mapped,
                      std::vector<Diagnostic>& out) {
  dra::DraModel& dra = model.dra;
  std::vector<Resources> template_counts, claim_counts;
  for (const dra::Claim& c : dra.templates) template_counts.push_back(ClaimCounts(c, mapped, out));
  for (const dra::Claim& c : dra.claims) claim_counts.push_back(ClaimCounts(c, mapped, out));
  for (Workload& w : model.workloads)
    for (PodSet& ps : w.pod_sets)
      for (dra::PodClaim& pc : ps.claims) {
        if (!pc.template_name.empty()) {
          pc.template_ = Find(dra.templates, w.ns, pc.template_name);
          if (pc.template_ >= 0) ps.requests += template_counts[pc.template_];
        } else {
          pc.claim = Find(dra.claims, w.ns, pc.claim_name);
          if (pc.claim >= 0 && !claim_counts[pc.claim].IsZero())
            out.push_back(At(Diagnostic::Severity::kWarning, pc.source, "resourceClaims",
                             "ResourceClaim " + w.ns + "/" + pc.claim_name +
                                 " is shared by "
                                 "pods: its devices are not counted in quota (Kueue counts the "
                                 "claims of templates)"));
        }
        if (pc.claim < 0 && pc.template_ < 0)
          out.push_back(
              At(Diagnostic::Severity::kWarning, pc.source, "resourceClaims",
                 fmt::format("{} {}/{} is not in the input: {} {} cannot start",
                             pc.claim_name.empty() ? "ResourceClaimTemplate" : "ResourceClaim",
                             w.ns, pc.claim_name.empty() ? pc.template_name : pc.claim_name, w.kind,
                             w.name)));
      }
}

// Each node's allocatable of a mapped resource: its devices that some mapped class selects.
void CountNodeDevices(Model& model, const std::map<std::string, ResourceId>& mapped,
                      std::vector<Diagnostic>& out) {
  std::map<std::string, Node*> nodes;
  for (Node& n : model.nodes) nodes[n.name] = &n;
  std::vector<const dra::Device*> devices;
  std::vector<Node*> owner;
  std::vector<std::string> sources;
  for (const auto& [name, nd] : model.dra.nodes) {
    auto it = nodes.find(name);
    if (it == nodes.end()) {
      const std::string source = nd.devices.empty() ? "" : nd.devices.front().source;
      out.push_back(At(Diagnostic::Severity::kWarning, source, "spec.nodeName",
                       "ResourceSlice of node " + name +
                           ", which is not in the input: its "
                           "devices are not used"));
      continue;
    }
    for (const dra::NodeDevice& d : nd.devices) {
      devices.push_back(&d.device);
      sources.push_back(d.source);
      owner.push_back(it->second);
    }
  }
  if (mapped.empty()) return;
  dra::FilterBank bank(model.dra, devices);
  std::map<ResourceId, std::vector<int32_t>> filters;
  for (const auto& [cls, r] : mapped) filters[r].push_back(bank.Register(cls, {}));
  bool said = false;
  for (size_t d = 0; d < devices.size(); ++d)
    for (const auto& [r, fs] : filters) {
      bool any = false;
      for (int32_t f : fs)
        any = any || bank.Matches(f, static_cast<int32_t>(d)) == dra::Match::kYes;
      if (!any) continue;
      owner[d]->allocatable[r] += 1;
      if (devices[d]->allow_multiple_allocations && !std::exchange(said, true))
        out.push_back(At(Diagnostic::Severity::kWarning, sources[d], "allowMultipleAllocations",
                         "device " + devices[d]->name +
                             " of a class in deviceClassMappings allows multiple allocations: "
                             "quota counts each claim that shares it as a whole device, and the "
                             "node's allocatable one per device, so one pod per device fits"));
    }
}

}  // namespace

void MergeDra(dra::DraModel& into, dra::DraModel& from) {
  for (auto& [name, c] : from.classes) into.classes.emplace(name, std::move(c));
  for (auto& [node, nd] : from.nodes) {
    dra::NodeDevices& to = into.nodes[node];
    for (auto& d : nd.devices) to.devices.push_back(std::move(d));
    for (auto& [k, set] : nd.counter_sets) to.counter_sets[k] = std::move(set);
  }
  for (auto* list : {&from.claims, &from.templates}) {
    auto& to = list == &from.claims ? into.claims : into.templates;
    for (auto& c : *list) to.push_back(std::move(c));
  }
  for (auto& m : from.mappings) into.mappings.push_back(std::move(m));
  for (auto& cd : from.compute_domains) into.compute_domains.push_back(std::move(cd));
}

void ResolveDra(Model& model, std::vector<Diagnostic>& out) {
  bool claims = false;
  for (const Workload& w : model.workloads)
    for (const PodSet& ps : w.pod_sets) claims = claims || !ps.claims.empty();
  if (model.dra.empty() && !claims) return;
  MakeComputeDomainObjects(model, out);
  CheckSelectors(model.dra, out);
  const auto mapped = MappedClasses(model.dra, out);
  ResolvePodClaims(model, mapped, out);
  KeepChannelPodsInOneClique(model, out);
  CountNodeDevices(model, mapped, out);
}

}  // namespace tessera::config_internal

namespace tessera {

absl::StatusOr<std::vector<dra::DeviceClassMapping>> ReadDeviceClassMappings(
    const std::string& path) {
  LoadResult lr = LoadManifestFiles({path});
  for (const Diagnostic& d : lr.diagnostics)
    if (d.severity == Diagnostic::Severity::kError) return absl::InvalidArgumentError(d.ToString());
  if (lr.model.dra.mappings.empty())
    return absl::InvalidArgumentError(
        path + ": no Kueue Configuration with resources.deviceClassMappings in it");
  return lr.model.dra.mappings;
}

Resources DraClaimQuota(const dra::DraModel& dra, const dra::Claim& claim) {
  std::vector<Diagnostic> ignored;  // said where the claim is read
  return config_internal::ClaimCounts(claim, config_internal::MappedClasses(dra, ignored), ignored);
}

void CountDraNodeQuota(Model& model) {
  std::vector<Diagnostic> ignored;
  const auto mapped = config_internal::MappedClasses(model.dra, ignored);
  config_internal::CountNodeDevices(model, mapped, ignored);
}

}  // namespace tessera
