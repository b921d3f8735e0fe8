#include "config/compute_domain.h"

#include <set>
#include <utility>

#include "config/pod_template.h"
#include "config/yaml_util.h"
#include "dra/compute_domain.h"
#include "fmt/format.h"

namespace tessera::config_internal {
namespace {

Diagnostic Notice(const std::string& source, std::string path, std::string message) {
  Diagnostic d;
  d.severity = Diagnostic::Severity::kNotice;
  ParseSource(source, d.file, d.line);
  d.path = std::move(path);
  d.message = std::move(message);
  return d;
}

}  // namespace

void ReadComputeDomain(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = RequireSpec(ctx, meta);
  if (IsNullish(spec)) return;
  YAML::Node channel = Child(spec, "channel");
  if (IsNullish(channel)) {
    ctx.Error(spec, "spec.channel",
              "required field is missing (the ResourceClaimTemplate the "
              "ComputeDomain's pods claim their channel through)");
    return;
  }
  auto name = RequireString(ctx, Child(channel, "resourceClaimTemplate"), "name",
                            "spec.channel.resourceClaimTemplate.name");
  if (!name) return;
  if (YAML::Node mode = Child(channel, "allocationMode"); !IsNullish(mode))
    ParseEnum<bool>(ctx, mode, "spec.channel.allocationMode", {{"Single", false}, {"All", true}});
  if (ctx.failed()) return;
  out.model.dra.compute_domains.push_back({meta.ns, meta.name, *name, meta.source});
}

void MakeComputeDomainObjects(Model& model, std::vector<Diagnostic>& out) {
  dra::DraModel& dra = model.dra;
  if (dra.compute_domains.empty()) return;
  for (const dra::ComputeDomain& cd : dra.compute_domains) {
    bool have = false;
    for (const dra::Claim& t : dra.templates)
      have = have || (t.ns == cd.ns && t.name == cd.channel_template);
    if (have) continue;
    dra::Claim t;
    t.ns = cd.ns;
    t.name = cd.channel_template;
    t.source = cd.source;
    dra::ExactRequest channel;
    channel.name = "channel";
    channel.device_class = dra::kChannelClass;
    t.spec.requests.push_back({"channel", {channel}, false});
    dra.templates.push_back(std::move(t));
    out.push_back(Notice(cd.source, "spec.channel.resourceClaimTemplate.name",
                         fmt::format("ResourceClaimTemplate {}/{} is made as NVIDIA's "
                                     "ComputeDomain controller makes it: one {} device",
                                     cd.ns, cd.channel_template, dra::kChannelClass)));
  }
  const std::string& source = dra.compute_domains.front().source;
  if (!dra.classes.contains(dra::kChannelClass)) {
    dra::DeviceClass c;
    c.name = dra::kChannelClass;
    c.source = source;
    c.selectors.push_back({fmt::format("device.driver == '{0}' && "
                                       "device.attributes['{0}'].type == 'channel' && "
                                       "device.attributes['{0}'].id == 0",
                                       dra::kComputeDomainDriver),
                           source, "spec.selectors[0].cel.expression"});
    dra.classes.emplace(dra::kChannelClass, std::move(c));
  }
  int made = 0;
  for (const Node& n : model.nodes) {
    if (!n.labels.contains(dra::kCliqueLabel)) continue;
    dra::NodeDevices& nd = dra.nodes[n.name];
    bool publishes = false;
    for (const dra::NodeDevice& d : nd.devices)
      publishes = publishes || d.device.driver == dra::kComputeDomainDriver;
    if (publishes) continue;
    dra::NodeDevice d;
    d.device.driver = dra::kComputeDomainDriver;
    d.device.pool = n.name;
    d.device.name = "channel-0";
    d.device.attributes[std::string(dra::kComputeDomainDriver) + "/type"] = std::string("channel");
    d.device.attributes[std::string(dra::kComputeDomainDriver) + "/id"] = int64_t{0};
    d.source = n.source;
    nd.devices.push_back(std::move(d));
    ++made;
  }
  if (made > 0)
    out.push_back(Notice(source, "",
                         fmt::format("{} node(s) with label {} get the channel device "
                                     "(channel-0) NVIDIA's ComputeDomain plugin publishes",
                                     made, dra::kCliqueLabel)));
}

void KeepChannelPodsInOneClique(Model& model, std::vector<Diagnostic>& out) {
  const dra::DraModel& dra = model.dra;
  for (Workload& w : model.workloads)
    for (PodSet& ps : w.pod_sets) {
      bool channel = false;
      std::string source, group;
      for (const dra::PodClaim& pc : ps.claims) {
        const dra::Claim* c = pc.template_ >= 0 ? &dra.templates[pc.template_]
                              : pc.claim >= 0   ? &dra.claims[pc.claim]
                                                : nullptr;
        if (c == nullptr || !dra::ClaimsComputeDomainChannel(dra, c->spec)) continue;
        channel = true;
        source = pc.source;
        group = "compute-domain:" + c->name;
      }
      if (!channel || !dra::KeepInOneClique(ps, group)) continue;
      out.push_back(Notice(source, "resourceClaims",
                           fmt::format("pod set {} of {} {} claims a ComputeDomain channel: its "
                                       "pods go to one NVLink clique ({})",
                                       ps.name, w.kind, w.name, dra::kCliqueLabel)));
    }
}

}  // namespace tessera::config_internal
