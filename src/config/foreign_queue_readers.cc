// Readers of KAI Scheduler's Queue (scheduling.run.ai/v2) and Volcano's Queue
// (scheduling.volcano.sh/v1beta1): each stages a ForeignQueue (config/foreign_queues.h), and the
// loader converts them all, with their hierarchy, once every document is read.
#include <cmath>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "config/foreign_queues.h"
#include "config/kinds.h"
#include "model/quantity.h"

namespace tessera::config_internal {
namespace {

// Every spec field that is not `known` is reported as not mapped.
void ReportUnknown(const YAML::Node& spec, const std::set<std::string>& known,
                   ForeignQueue& q) {
  if (!spec.IsMap()) return;
  for (const auto& kv : spec) {
    if (!kv.first.IsScalar()) continue;
    std::string key = kv.first.Scalar();
    if (known.count(key)) continue;
    q.unmapped.emplace_back("spec." + key, "no Kueue equivalent; not mapped");
  }
}

// The parent must be a Kubernetes object name: it becomes a Cohort's name in YAML.
void CheckParent(DocContext& ctx, const YAML::Node& at, const std::string& path,
                 ForeignQueue& q) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  const std::string& s = q.parent;
  bool ok = s.empty() || (s.size() <= 253 && alnum(s.front()) && alnum(s.back()));
  for (char c : s) ok = ok && (alnum(c) || c == '-' || c == '.');
  if (!ok) {
    // absl::StrCat, not "\"" + s.substr(...) + ...: GCC 12 at -O3 warns (-Wrestrict, a false
    // positive of its std::string inlining) on that concatenation.
    ctx.Error(at, path,
              absl::StrCat("\"", s.substr(0, 100),
                           "\" is not a queue name (lowercase letters, digits, '-' and '.', "
                           "starting and ending with a letter or digit)"));
  }
}

ForeignQueue NewQueue(DocContext& ctx, const ObjectMeta& meta, ForeignQueue::Origin origin) {
  ForeignQueue q;
  q.origin = origin;
  q.name = meta.name;
  q.file = ctx.file();
  q.line = ctx.Line(meta.root);
  return q;
}

// A KAI amount: a number, -1 for unlimited. std::nullopt after an error.
std::optional<double> KaiNumber(DocContext& ctx, const YAML::Node& n, const std::string& path) {
  double v = 0;
  if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &v) || !std::isfinite(v) ||
      (v < 0 && v != -1)) {
    ctx.Error(n, path, "expected a non-negative number, or -1 for unlimited");
    return std::nullopt;
  }
  return v;
}

// spec.resources.<key> of a KAI Queue: gpu in devices (fractions allowed), cpu in millicpus,
// memory in megabytes (10^6 bytes).
void ReadKaiResource(DocContext& ctx, const YAML::Node& resources, const std::string& key,
                     ForeignQueue& q) {
  YAML::Node r = Child(resources, key);
  const std::string path = "spec.resources." + key;
  if (IsNullish(r) || !ExpectMap(ctx, r, path)) return;
  ForeignQueueResource out;
  out.name = key == "gpu" ? "nvidia.com/gpu" : key;
  auto units = [&](double v, const std::string& field) -> int64_t {
    if (key == "cpu") return static_cast<int64_t>(std::llround(v));  // millicpus: thousandths
    if (key == "memory") return static_cast<int64_t>(std::llround(v * 1e6));
    if (v != std::floor(v)) {
      q.unmapped.emplace_back(path + "." + field,
                              "a fraction of a GPU; Kueue counts nvidia.com/gpu in whole "
                              "devices, so Tessera rounds it up");
    }
    return static_cast<int64_t>(std::ceil(v));
  };
  auto field = [&](const char* name) -> std::optional<double> {
    YAML::Node n = Child(r, name);
    if (IsNullish(n)) return std::nullopt;
    return KaiNumber(ctx, n, path + "." + name);
  };
  if (auto v = field("quota")) {
    if (*v == -1) {
      out.deserved_unlimited = true;
    } else {
      out.deserved = units(*v, "quota");
    }
  }
  if (auto v = field("limit"); v && *v != -1) out.limit = units(*v, "limit");
  if (auto v = field("lendingLimit"); v && *v != -1) out.lending_limit = units(*v, "lendingLimit");
  if (auto v = field("overQuotaWeight")) {
    if (*v < 0) {
      ctx.Error(Child(r, "overQuotaWeight"), path + ".overQuotaWeight",
                "expected a non-negative number");
    } else if (!q.weight) {
      q.weight = *v;
    } else if (*q.weight != *v) {
      q.unmapped.emplace_back(path + ".overQuotaWeight",
                              "Kueue has one fairSharing weight per queue; Tessera uses the first "
                              "resource's (gpu, then cpu, then memory)");
    }
  }
  q.resources.push_back(std::move(out));
}

// A Volcano resource list (capability, deserved, guarantee.resource) into `q`'s resources.
void ReadVolcanoList(DocContext& ctx, const YAML::Node& node, const std::string& path,
                     std::optional<int64_t> ForeignQueueResource::*field, ForeignQueue& q) {
  if (IsNullish(node) || !ExpectMap(ctx, node, path)) return;
  for (const auto& kv : node) {
    std::string name = kv.first.Scalar();
    const std::string item = JoinPath(path, name);
    auto id = InternResource(ctx, kv.first, item, name);
    if (!id) return;
    auto v = ScalarQuantity(ctx, kv.second, item, *id);
    if (!v) return;
    auto it = std::find_if(q.resources.begin(), q.resources.end(),
                           [&](const ForeignQueueResource& r) { return r.name == name; });
    if (it == q.resources.end()) {
      q.resources.push_back({});
      it = q.resources.end() - 1;
      it->name = name;
    }
    (*it).*field = *v;
  }
}

YAML::Node AnnotationAt(const ObjectMeta& meta) {
  return Child(Child(meta.metadata, "annotations"), "volcano.sh/hierarchy");
}

}  // namespace

void ReadKaiQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ForeignQueue q = NewQueue(ctx, meta, ForeignQueue::Origin::kKai);
  YAML::Node spec = Child(meta.root, "spec");
  if (!IsNullish(spec) && !ExpectMap(ctx, spec, "spec")) return;
  q.parent = GetString(ctx, spec, "parentQueue", "spec.parentQueue").value_or("");
  CheckParent(ctx, Child(spec, "parentQueue"), "spec.parentQueue", q);
  YAML::Node resources = Child(spec, "resources");
  if (!IsNullish(resources) && ExpectMap(ctx, resources, "spec.resources")) {
    for (const char* key : {"gpu", "cpu", "memory"}) ReadKaiResource(ctx, resources, key, q);
  }
  if (!IsNullish(Child(spec, "priority"))) {
    q.unmapped.emplace_back("spec.priority",
                            "over-quota priority: Kueue has no order among borrowing queues; "
                            "not mapped");
  }
  ReportUnknown(spec, {"parentQueue", "resources", "priority", "displayName"}, q);
  if (ctx.failed()) return;
  out.foreign_queues.push_back(std::move(q));
}

void ReadVolcanoQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ForeignQueue q = NewQueue(ctx, meta, ForeignQueue::Origin::kVolcano);
  YAML::Node spec = Child(meta.root, "spec");
  if (!IsNullish(spec) && !ExpectMap(ctx, spec, "spec")) return;
  q.parent = GetString(ctx, spec, "parent", "spec.parent").value_or("");
  CheckParent(ctx, Child(spec, "parent"), "spec.parent", q);
  if (auto w = GetInt(ctx, spec, "weight", "spec.weight", 0, 65535)) q.weight = *w;
  ReadVolcanoList(ctx, Child(spec, "deserved"), "spec.deserved", &ForeignQueueResource::deserved,
                  q);
  ReadVolcanoList(ctx, Child(spec, "capability"), "spec.capability",
                  &ForeignQueueResource::limit, q);
  YAML::Node guarantee = Child(spec, "guarantee");
  if (!IsNullish(guarantee) && ExpectMap(ctx, guarantee, "spec.guarantee")) {
    ReadVolcanoList(ctx, Child(guarantee, "resource"), "spec.guarantee.resource",
                    &ForeignQueueResource::guarantee, q);
  }
  if (!IsNullish(Child(spec, "reclaimable"))) {
    q.unmapped.emplace_back("spec.reclaimable",
                            "Kueue lets the lending queue's preemption.reclaimWithinCohort decide, "
                            "not the borrower; every converted ClusterQueue reclaims (Any)");
  }
  // The older hierarchy by annotation ("root/eng/prod"): the next to last level is the parent.
  if (auto it = meta.annotations.find("volcano.sh/hierarchy"); it != meta.annotations.end()) {
    const std::string path = JoinPath("metadata.annotations", "volcano.sh/hierarchy");
    std::vector<std::string> levels = absl::StrSplit(it->second, '/', absl::SkipEmpty());
    if (!q.parent.empty()) {
      q.unmapped.emplace_back(path, "spec.parent is set; the annotation is not used");
    } else if (levels.size() >= 2) {
      q.parent = levels[levels.size() - 2];
      CheckParent(ctx, AnnotationAt(meta), path, q);
      q.unmapped.emplace_back(path, "read as spec.parent " + q.parent +
                                        "; the levels above it are not converted");
    }
  }
  if (meta.annotations.count("volcano.sh/hierarchy-weights")) {
    q.unmapped.emplace_back(JoinPath("metadata.annotations", "volcano.sh/hierarchy-weights"),
                            "not converted; spec.weight is the queue's fairSharing weight");
  }
  ReportUnknown(spec, {"parent", "weight", "deserved", "capability", "guarantee", "reclaimable"},
                q);
  if (ctx.failed()) return;
  if (q.name == kVolcanoRootCohort) {
    ctx.Notice(meta.root, "",
               "Volcano Queue root is the cluster; Tessera's root Cohort stands for it, so its "
               "fields are not converted");
    return;
  }
  out.foreign_queues.push_back(std::move(q));
}

}  // namespace tessera::config_internal
