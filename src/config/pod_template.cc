// The pod template every job kind embeds (config/pod_template.h).
#include "config/pod_template.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/dra_objects.h"
#include "config/duration.h"
#include "config/gpu_fields.h"
#include "config/pod_resources.h"

namespace tessera::config_internal {
namespace {

constexpr int64_t kDefaultTerminationGraceSeconds = 30;  // Kubernetes' default

}  // namespace

bool ReadPodSpec(DocContext& ctx, const YAML::Node& spec, const std::string& path, PodInfo& out) {
  if (IsNullish(spec)) {
    ctx.Error(spec, path, "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, spec, path)) return false;
  PodSet& ps = out.set;
  YAML::Node containers = Child(spec, "containers");
  if (IsNullish(containers)) {
    ctx.Error(spec, path + ".containers", "required field is missing");
    return false;
  }
  ps.requests = ReadPodRequests(ctx, spec, path);
  // In a cluster a gate's owner removes it; in a simulation nobody would (docs/manifests.md).
  if (YAML::Node gates = Child(spec, "schedulingGates"); !IsNullish(gates))
    ctx.Warning(gates, path + ".schedulingGates",
                "scheduling gates are not simulated (nothing would remove them): the pod is "
                "scheduled as if its gates were gone");

  ReadPodClaims(ctx, spec, path, ps);
  ReadLabels(ctx, Child(spec, "nodeSelector"), path + ".nodeSelector", ps.node_selector);
  ReadTolerations(ctx, Child(spec, "tolerations"), path + ".tolerations", ps.tolerations);
  out.priority_class =
      GetString(ctx, spec, "priorityClassName", path + ".priorityClassName").value_or("");
  // Kubernetes defaults it to 30 s; a preempted pod keeps its place that long (docs/time.md).
  ps.termination_grace = static_cast<double>(GetInt(ctx, spec, "terminationGracePeriodSeconds",
                                                    path + ".terminationGracePeriodSeconds", 0,
                                                    static_cast<int64_t>(kMaxDurationSeconds))
                                                 .value_or(kDefaultTerminationGraceSeconds));
  YAML::Node affinity = Child(spec, "affinity");
  if (ExpectMap(ctx, affinity, path + ".affinity")) {
    const std::string napath = path + ".affinity.nodeAffinity";
    YAML::Node na = Child(affinity, "nodeAffinity");
    if (ExpectMap(ctx, na, napath)) {
      const std::string rpath = napath + ".requiredDuringSchedulingIgnoredDuringExecution";
      YAML::Node required = Child(na, "requiredDuringSchedulingIgnoredDuringExecution");
      if (ExpectMap(ctx, required, rpath)) {
        ForEachSeq(ctx, Child(required, "nodeSelectorTerms"), rpath + ".nodeSelectorTerms",
                   [&](size_t, const YAML::Node& term, const std::string& tpath) {
                     if (!ExpectMap(ctx, term, tpath)) {
                       if (!ctx.failed()) ctx.Error(term, tpath, "expected a term, got null");
                       return false;
                     }
                     NodeSelectorTerm t;
                     ReadRequirements(ctx, Child(term, "matchExpressions"),
                                      tpath + ".matchExpressions", /*allow_gt_lt=*/true,
                                      t.match_expressions);
                     if (!IsNullish(Child(term, "matchFields"))) {
                       ctx.Warning(Child(term, "matchFields"), tpath + ".matchFields",
                                   "matchFields is not supported; Tessera ignores it");
                     }
                     ps.affinity.required_terms.push_back(std::move(t));
                     return !ctx.failed();
                   });
      }
      ReadPreferredNodeAffinity(ctx, na, napath, ps.affinity);
    }
    const std::string papath = path + ".affinity.podAntiAffinity";
    YAML::Node paa = Child(affinity, "podAntiAffinity");
    if (ExpectMap(ctx, paa, papath)) {
      out.anti_at = paa;
      out.anti_path = papath;
      auto read_term = [&](const YAML::Node& term, const std::string& tpath, bool required) {
        if (!ExpectMap(ctx, term, tpath)) return false;
        std::string key = GetString(ctx, term, "topologyKey", tpath + ".topologyKey").value_or("");
        LabelSelector sel;
        ReadLabelSelector(ctx, Child(term, "labelSelector"), tpath + ".labelSelector", sel);
        if (key != "kubernetes.io/hostname") {
          ctx.Warning(term, tpath + ".topologyKey",
                      "Tessera honours pod anti-affinity on kubernetes.io/hostname only; this "
                      "term is ignored");
          return !ctx.failed();
        }
        (required ? out.anti_required : out.anti_preferred).push_back(std::move(sel));
        return !ctx.failed();
      };
      ForEachSeq(ctx, Child(paa, "requiredDuringSchedulingIgnoredDuringExecution"),
                 papath + ".requiredDuringSchedulingIgnoredDuringExecution",
                 [&](size_t, const YAML::Node& term, const std::string& tpath) {
                   return read_term(term, tpath, true);
                 });
      ForEachSeq(ctx, Child(paa, "preferredDuringSchedulingIgnoredDuringExecution"),
                 papath + ".preferredDuringSchedulingIgnoredDuringExecution",
                 [&](size_t, const YAML::Node& term, const std::string& tpath) {
                   if (!ExpectMap(ctx, term, tpath)) return false;
                   return read_term(Child(term, "podAffinityTerm"), tpath + ".podAffinityTerm",
                                    false);
                 });
    }
  }
  ReadTopologySpread(ctx, spec, path, out.spread_terms);
  return !ctx.failed();
}

void ResolvePlacement(DocContext& ctx, const YAML::Node& annotations_at,
                      const std::string& annotations_path, PodInfo& pod) {
  PodSet& ps = pod.set;
  auto own = [&](const std::vector<LabelSelector>& terms) {
    bool any = false;
    for (const LabelSelector& sel : terms) {
      if (Matches(sel, pod.labels)) {
        any = true;
      } else {
        ctx.Warning(pod.anti_at, pod.anti_path,
                    "a podAntiAffinity term that does not select the pod's own labels is "
                    "ignored (Tessera spreads a workload's own pods only)");
      }
    }
    return any;
  };
  if (own(pod.anti_required)) {
    ps.anti_affinity = HostnameAntiAffinity::kRequired;
  } else if (own(pod.anti_preferred)) {
    ps.anti_affinity = HostnameAntiAffinity::kPreferred;
  }
  ResolveTopologySpread(ctx, pod.spread_terms, pod.labels, ps);
  for (const FieldProblem& p : ApplyTopologyAnnotations(ps.annotations, ps.topology))
    ctx.Error(annotations_at, JoinPath(annotations_path, p.key), p.message);
}

void ApplyGpuFraction(DocContext& ctx, const YAML::Node& at, const std::string& path, PodSet& set) {
  for (const FieldProblem& p : ApplyGpuShareAnnotations(set.annotations, set.requests))
    ctx.Error(at, JoinPath(path, p.key), p.message);
}

bool ReadPodTemplate(DocContext& ctx, const YAML::Node& parent, const std::string& path,
                     PodInfo& out) {
  YAML::Node tmpl = Child(parent, "template");
  if (IsNullish(tmpl)) {
    ctx.Error(parent, path, "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, tmpl, path)) return false;
  YAML::Node md = Child(tmpl, "metadata");
  if (ExpectMap(ctx, md, path + ".metadata")) {
    ReadLabels(ctx, Child(md, "labels"), path + ".metadata.labels", out.labels);
    Labels annotations;
    ReadLabels(ctx, Child(md, "annotations"), path + ".metadata.annotations", annotations);
    out.set.annotations.insert(annotations.begin(), annotations.end());
  }
  if (ctx.failed()) return false;
  if (!ReadPodSpec(ctx, Child(tmpl, "spec"), path + ".spec", out)) return false;
  ApplyGpuFraction(ctx, md, path + ".metadata.annotations", out.set);
  ResolvePlacement(ctx, md, path + ".metadata.annotations", out);
  return !ctx.failed();
}

YAML::Node RequireSpec(DocContext& ctx, const ObjectMeta& meta) {
  YAML::Node spec = Child(meta.root, "spec");
  if (IsNullish(spec)) {
    ctx.Error(meta.root, "spec", "required field is missing");
    return YAML::Node();
  }
  if (!ExpectMap(ctx, spec, "spec")) return YAML::Node();
  return spec;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace tessera::config_internal
