// AppWrapper (workload.codeflare.dev/v1beta2): one workload (one gang) whose pod sets are every
// component's podSets, in order, as Kueue's appwrapper integration builds them: pod set i is
// named "<appwrapper name>-<i>", holds podSets[].replicas pods (default 1) of the pod template
// at podSets[].path inside the component ("template.spec.template": the path starts at the
// component, so its first element is "template"; ".key" and "[index]" steps follow).
//
// A component without podSets gets the ones AppWrapper's webhook infers for the kinds it knows
// (batch Job: min(parallelism, completions); PyTorchJob: Master and Worker; Pod; Deployment and
// StatefulSet: replicas; RayCluster and RayJob: the head and each worker group's replicas;
// JobSet v1alpha2: each replicated job's replicas x min(parallelism, completions)). Other kinds
// (a Service, a ConfigMap) have no pods: a notice says so.
//
// Not honoured, each named in a notice: podSets[].annotations (AppWrapper's hints for Kueue's
// topology-aware scheduling; the templates' own Kueue topology annotations are read). The
// wrapped objects' own queue and scheduling fields are not read: the AppWrapper is what Kueue
// admits. spec.suspend is the admission gate Kueue opens.
#include "config/kinds/registry.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

// The AppWrapper controller's label on the wrapped objects and on every pod set's template it
// deploys (api/v1beta2 AppWrapperLabel): the AppWrapper's name.
constexpr std::string_view kAppWrapperLabel = "workload.codeflare.dev/appwrapper";

// One pod set of a component: where its template is, and how many pods.
struct PodSetRef {
  std::string path;  // relative to the component, starting with "template"
  int64_t replicas = 1;
  YAML::Node at;  // where to report problems with it
  std::string at_path;
};

// Walks `path` (AppWrapper's syntax: "template" then ".key" and "[index]" steps) from the
// component. The node, or nullopt with `why` set.
std::optional<YAML::Node> Walk(const YAML::Node& component, const std::string& path,
                               std::string& why) {
  constexpr std::string_view kFirst = "template";
  if (path.compare(0, kFirst.size(), kFirst) != 0) {
    why = "the path must start with \"template\"";
    return std::nullopt;
  }
  YAML::Node cur = Child(component, kFirst);
  size_t i = kFirst.size();
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      if (end == std::string::npos) end = path.size();
      std::string key = path.substr(i + 1, end - i - 1);
      if (key.empty()) {
        why = "empty field name at \"" + path.substr(0, i + 1) + "\"";
        return std::nullopt;
      }
      if (!cur.IsMap()) {
        why = "\"" + path.substr(0, i) + "\" is not a map";
        return std::nullopt;
      }
      // reset, not =: assigning a YAML::Node would rewrite the node it refers to.
      cur.reset(Child(cur, key));
      if (IsNullish(cur)) {  // Child gives null for a missing key
        why = "no field \"" + key + "\" at \"" + path.substr(0, i) + "\"";
        return std::nullopt;
      }
      i = end;
    } else if (path[i] == '[') {
      size_t end = path.find(']', i);
      std::string digits = end == std::string::npos ? "" : path.substr(i + 1, end - i - 1);
      bool ok = !digits.empty() && digits.size() < 10;
      for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
      if (!ok) {
        why = "invalid index at \"" + path.substr(0, i) + "\"";
        return std::nullopt;
      }
      size_t index = std::stoul(digits);
      if (!cur.IsSequence() || index >= cur.size()) {
        why = "\"" + path.substr(0, i) + "\" has no element " + digits;
        return std::nullopt;
      }
      cur.reset(cur[index]);
      i = end + 1;
    } else {
      why = "invalid path element at \"" + path.substr(0, i) + "\"";
      return std::nullopt;
    }
  }
  return cur;
}

// An integer at `path` in the component when it is one; `fallback` otherwise (the webhook's
// inference treats a missing or non-integer count as absent).
int64_t IntAt(const YAML::Node& component, const std::string& path, int64_t fallback) {
  std::string why;
  auto node = Walk(component, path, why);
  if (!node || !node->IsScalar()) return fallback;
  const std::string& s = node->Scalar();
  if (s.empty() || s.size() > 7) return fallback;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return fallback;
  return std::stoll(s);
}

bool Exists(const YAML::Node& component, const std::string& path) {
  std::string why;
  return Walk(component, path, why).has_value();
}

int64_t JobPods(const YAML::Node& component, const std::string& spec_path) {
  int64_t n = IntAt(component, spec_path + ".parallelism", 1);
  int64_t completions = IntAt(component, spec_path + ".completions", n);
  return std::min(n, completions);
}

// The pod sets AppWrapper's webhook infers for a component of a kind it knows.
std::vector<PodSetRef> Infer(const YAML::Node& component, const std::string& api_version,
                             const std::string& kind) {
  std::vector<PodSetRef> out;
  auto add = [&](std::string path, int64_t replicas) {
    if (Exists(component, path)) out.push_back({std::move(path), replicas, {}, {}});
  };
  if (api_version == "batch/v1" && kind == "Job") {
    add("template.spec.template", JobPods(component, "template.spec"));
  } else if (api_version == "kubeflow.org/v1" && kind == "PyTorchJob") {
    for (const char* type : {"Master", "Worker"}) {
      std::string prefix = std::string("template.spec.pytorchReplicaSpecs.") + type;
      add(prefix + ".template", IntAt(component, prefix + ".replicas", 1));
    }
  } else if (api_version == "v1" && kind == "Pod") {
    add("template", 1);
  } else if (api_version == "apps/v1" && (kind == "Deployment" || kind == "StatefulSet")) {
    add("template.spec.template", IntAt(component, "template.spec.replicas", 1));
  } else if (api_version == "ray.io/v1" && (kind == "RayCluster" || kind == "RayJob")) {
    std::string prefix = kind == "RayJob" ? "template.spec.rayClusterSpec." : "template.spec.";
    out.push_back({prefix + "headGroupSpec.template", 1, {}, {}});
    std::string why;
    auto groups = Walk(component, prefix + "workerGroupSpecs", why);
    if (groups && groups->IsSequence()) {
      for (size_t i = 0; i < groups->size(); ++i) {
        std::string g = prefix + "workerGroupSpecs[" + std::to_string(i) + "]";
        add(g + ".template", IntAt(component, g + ".replicas", 1));
      }
    }
  } else if (api_version == "jobset.x-k8s.io/v1alpha2" && kind == "JobSet") {
    std::string why;
    auto jobs = Walk(component, "template.spec.replicatedJobs", why);
    if (jobs && jobs->IsSequence()) {
      for (size_t i = 0; i < jobs->size(); ++i) {
        std::string j = "template.spec.replicatedJobs[" + std::to_string(i) + "]";
        add(j + ".template.spec.template",
            IntAt(component, j + ".replicas", 1) * JobPods(component, j + ".template.spec"));
      }
    }
  }
  return out;
}

// A component's declared podSets, or the inferred ones. False after an error.
bool ComponentPodSets(DocContext& ctx, const YAML::Node& c, const std::string& cp,
                      std::vector<PodSetRef>& out) {
  YAML::Node tmpl = Child(c, "template");
  if (!ExpectMap(ctx, tmpl, cp + ".template")) {
    if (!ctx.failed()) ctx.Error(c, cp + ".template", "required field is missing");
    return false;
  }
  YAML::Node sets = Child(c, "podSets");
  if (!IsNullish(sets) && !ExpectSeq(ctx, sets, cp + ".podSets")) return false;
  ForEachSeq(ctx, sets, cp + ".podSets", [&](size_t, const YAML::Node& s, const std::string& sp) {
    if (!ExpectMap(ctx, s, sp)) {
      if (!ctx.failed()) ctx.Error(s, sp, "expected a pod set, got null");
      return false;
    }
    auto path = RequireString(ctx, s, "path", sp + ".path");
    auto replicas = GetInt(ctx, s, "replicas", sp + ".replicas", 0, kMaxPods);
    if (ctx.failed()) return false;
    if (!IsNullish(Child(s, "annotations"))) {
      ctx.Notice(Child(s, "annotations"), sp + ".annotations",
                 "AppWrapper's topology hints for Kueue are not read; the template's own Kueue "
                 "topology annotations are");
    }
    out.push_back({*path, replicas.value_or(1), Child(s, "path"), sp + ".path"});
    return true;
  });
  if (ctx.failed() || !out.empty()) return !ctx.failed();
  auto api_version = GetString(ctx, tmpl, "apiVersion", cp + ".template.apiVersion");
  auto kind = GetString(ctx, tmpl, "kind", cp + ".template.kind");
  if (ctx.failed()) return false;
  out = Infer(c, api_version.value_or(""), kind.value_or(""));
  for (PodSetRef& r : out) {
    r.at = tmpl;
    r.at_path = cp + ".template";
  }
  if (out.empty()) {
    ctx.Notice(tmpl, cp + ".podSets",
               "no podSets, and AppWrapper infers none for " +
                   (kind ? *kind : std::string("an object without a kind")) +
                   ": the component has no pods Tessera schedules");
  }
  return true;
}

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "AppWrapper");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node components = Child(spec, "components");
  if (!ExpectSeq(ctx, components, "spec.components")) {
    if (!ctx.failed()) ctx.Error(spec, "spec.components", "required field is missing");
    return;
  }
  std::string priority;
  int64_t total = 0;
  ForEachSeq(ctx, components, "spec.components",
             [&](size_t, const YAML::Node& c, const std::string& cp) {
               if (!ExpectMap(ctx, c, cp)) {
                 if (!ctx.failed()) ctx.Error(c, cp, "expected a component, got null");
                 return false;
               }
               std::vector<PodSetRef> refs;
               if (!ComponentPodSets(ctx, c, cp, refs)) return false;
               for (const PodSetRef& r : refs) {
                 std::string why;
                 auto node = Walk(c, r.path, why);
                 if (!node || !node->IsMap()) {
                   ctx.Error(r.at, r.at_path,
                             "\"" + r.path + "\" does not lead to a pod template: " +
                                 (node ? std::string("not a map") : why));
                   return false;
                 }
                 total += r.replicas;
                 if (total > kMaxPods) {
                   ctx.Error(r.at, r.at_path,
                             "the AppWrapper's pods exceed " + std::to_string(kMaxPods));
                   return false;
                 }
                 // ReadPodTemplate reads parent.template; the path may end in another key.
                 YAML::Node parent(YAML::NodeType::Map);
                 parent["template"] = *node;
                 PodInfo pod;
                 if (!ReadPodTemplate(ctx, parent, cp + "." + r.path, pod)) return false;
                 pod.set.name = meta.name + "-" + std::to_string(w.pod_sets.size());
                 pod.set.count = static_cast<int32_t>(r.replicas);
                 if (priority.empty()) priority = pod.priority_class;
                 w.pod_sets.push_back(std::move(pod.set));
               }
               return true;
             });
  if (ctx.failed()) return;
  if (w.pod_sets.empty()) {
    ctx.Warning(components, "spec.components", "no component has pods: no workload");
    return;
  }
  if (w.priority_class.empty()) w.priority_class = priority;
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind AppWrapperKind() {
  JobKind k;
  k.group = "workload.codeflare.dev";
  k.versions = {"v1beta2"};
  k.kind = "AppWrapper";
  k.plural = "appwrappers";
  k.read = Read;
  k.pods = {kAppWrapperLabel, "", "", ""};
  return k;
}

}  // namespace tessera::config_internal
