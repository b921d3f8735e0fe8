// Kubernetes mode's view of the job kinds whose controllers create the pods
// (k8s/controller/owner_kinds.h).
#include "k8s/controller/owner_kinds.h"

#include <utility>

#include "config/kinds/registry.h"
#include "config/loader.h"
#include "fmt/format.h"
#include "k8s/controller/json_fields.h"
#include "model/json_text.h"

namespace tessera::k8s {

using json_fields::At;
using json_fields::Str;
using json_fields::StrMap;

const std::vector<OwnerKind>& OwnerKinds() {
  static const auto* kinds = [] {
    auto* out = new std::vector<OwnerKind>;
    for (const config_internal::JobKind& jk : config_internal::JobKinds()) {
      if ((jk.pods.name_label.empty() && !jk.pods.owner_reference) || jk.plural.empty())
        continue;
      OwnerKind k;
      k.kind = std::string(jk.kind);
      k.api_version = jk.group.empty() ? std::string(jk.versions.front())
                                       : fmt::format("{}/{}", jk.group, jk.versions.front());
      k.resource = fmt::format("owners/{}.{}", jk.plural, jk.group);
      for (std::string_view v : jk.versions)
        k.paths.push_back(jk.group.empty() ? fmt::format("/api/{}/{}", v, jk.plural)
                                           : fmt::format("/apis/{}/{}/{}", jk.group, v, jk.plural));
      k.group = std::string(jk.group);
      k.name_label = std::string(jk.pods.name_label);
      k.index_label = std::string(jk.pods.index_label);
      k.require_label = std::string(jk.pods.require_label);
      k.require_value = std::string(jk.pods.require_value);
      k.owner_reference = jk.pods.owner_reference;
      out->push_back(std::move(k));
    }
    return out;
  }();
  return *kinds;
}

const OwnerKind* OwnerKindOfResource(const std::string& resource) {
  for (const OwnerKind& k : OwnerKinds())
    if (k.resource == resource) return &k;
  return nullptr;
}

const OwnerKind* OwnerKindNamed(const std::string& kind) {
  for (const OwnerKind& k : OwnerKinds())
    if (k.kind == kind) return &k;
  return nullptr;
}

absl::StatusOr<std::vector<OwnerGang>> ReadOwnerObject(const OwnerKind& kind,
                                                       const nlohmann::json& obj) {
  const nlohmann::json& md = At(obj, "metadata");
  const std::string ns = Str(md, "namespace"), name = Str(md, "name");
  // The object as the plugin reads a manifest (the server's apiVersion may be another version
  // the plugin knows).
  LoadResult r;
  LoadManifestText(DumpJson(json_fields::StripForLoader(obj)),
                   fmt::format("{} {}/{}", kind.kind, ns, name), r);
  std::vector<std::string> unread, errors;
  for (const Diagnostic& d : r.diagnostics) {
    std::string text = d.path.empty() ? d.message : d.path + ": " + d.message;
    (d.severity == Diagnostic::Severity::kError ? errors : unread).push_back(std::move(text));
  }
  if (!errors.empty())
    return absl::InvalidArgumentError(fmt::format("{}", fmt::join(errors, "; ")));
  std::map<std::string, std::string> labels = StrMap(At(md, "labels"));
  std::map<std::string, std::string> annotations = StrMap(At(md, "annotations"));
  std::vector<std::string> time_problems;
  TimeFields time = ReadTimeFields(labels, annotations, nullptr, &time_problems);
  std::vector<OwnerGang> out;
  for (const Workload& w : r.model.workloads) {
    OwnerGang g;
    g.ns = w.ns;
    g.name = w.name;
    g.kind = kind.kind;
    g.api_version = Str(obj, "apiVersion");
    g.object_name = name;
    g.uid = Str(md, "uid");
    g.pods = w.TotalPods();
    g.min_member = w.MinPods();
    g.queue_name = w.queue_name;
    g.priority_class = w.priority_class;
    g.workload_priority_class = w.workload_priority_class;
    g.time = time;
    g.time_problems = time_problems;
    g.unread = unread;
    out.push_back(std::move(g));
  }
  return out;
}

bool LinkPodToOwner(const std::map<std::string, std::string>& labels,
                    const nlohmann::json& owner_refs, std::string* kind, std::string* gang_name) {
  for (const OwnerKind& k : OwnerKinds()) {
    if (k.name_label.empty()) continue;
    auto it = labels.find(k.name_label);
    if (it == labels.end() || it->second.empty()) continue;
    if (!k.require_label.empty()) {
      auto r = labels.find(k.require_label);
      if (r == labels.end() || r->second != k.require_value) continue;
    }
    *kind = k.kind;
    *gang_name = it->second;
    if (!k.index_label.empty()) {
      auto idx = labels.find(k.index_label);
      // A pod of such a kind without its index is not one the controller made: its own gang.
      if (idx == labels.end() || idx->second.empty()) return false;
      *gang_name += "-" + idx->second;
    }
    return true;
  }
  if (!owner_refs.is_array()) return false;
  for (const nlohmann::json& o : owner_refs) {
    if (!o.is_object() || !o.value("controller", false)) continue;
    const std::string api_version = Str(o, "apiVersion");
    const std::string group = api_version.substr(0, api_version.rfind('/'));
    for (const OwnerKind& k : OwnerKinds()) {
      if (!k.owner_reference || k.kind != Str(o, "kind")) continue;
      if (group != k.group && !(k.group.empty() && api_version.find('/') == std::string::npos))
        continue;
      *kind = k.kind;
      *gang_name = Str(o, "name");
      return !gang_name->empty();
    }
  }
  return false;
}

}  // namespace tessera::k8s
