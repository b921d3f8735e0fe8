// Readers for Kueue's queueing kinds (ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
// WorkloadPriorityClass, Topology), scheduling.k8s.io PriorityClass and Tessera's
// SchedulerConfig.
//
// Where Kueue's admission webhook would reject a ClusterQueue or Cohort, Tessera loads it anyway,
// says what it does instead in a warning, and docs/manifests.md lists each rule.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "config/autoscaling_fields.h"
#include "config/controller_fields.h"
#include "config/fair_usage.h"
#include "config/kinds.h"
#include "config/preemption_fields.h"
#include "config/pricing.h"
#include "config/time_fields.h"

namespace tessera::config_internal {
namespace {

// Kueue's API limits (kueue.x-k8s.io/v1beta1 validation markers).
constexpr size_t kMaxResourceGroups = 16;
constexpr size_t kMaxFlavorsPerGroup = 16;
constexpr size_t kMaxCoveredResources = 16;

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

YAML::Node Spec(DocContext& ctx, const ObjectMeta& meta, bool required) {
  YAML::Node spec = Child(meta.root, "spec");
  if (IsNullish(spec)) {
    if (required) ctx.Error(meta.root, "spec", "required field is missing");
    return YAML::Node();
  }
  if (!ExpectMap(ctx, spec, "spec")) return YAML::Node();
  return spec;
}

std::optional<int64_t> OptionalQuantity(DocContext& ctx, const YAML::Node& parent,
                                        std::string_view key, const std::string& path,
                                        ResourceId r) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return std::nullopt;
  return ScalarQuantity(ctx, n, path, r);
}

// What a flavor's quotas are checked against: the coveredResources of their group.
struct CoveredResources {
  std::string path;               // <group>.coveredResources, for the warnings
  std::vector<ResourceId> named;  // every resource listed, including ones ignored as overlapping
  std::vector<ResourceId> kept;   // those this group covers (no earlier group did)
};

// Whether quotas may set borrowingLimit and lendingLimit, and the warning's reason when not.
struct BorrowRule {
  bool can_borrow;
  const std::string& no_borrow_why;
};

// Where each resource and flavor was first named across a ClusterQueue's or Cohort's groups:
// Kueue rejects overlaps, so Tessera keeps the first and warns about the others.
struct GroupsSeen {
  std::vector<std::pair<ResourceId, std::string>> covered_at;  // resource -> group path
  std::vector<std::pair<std::string, std::string>> flavor_at;  // flavor -> path
};

// Reads <gpath>.coveredResources into `covered`; a resource an earlier group covers is warned
// about and left out of `covered.kept`. False after an error.
bool ReadCoveredResources(DocContext& ctx, const YAML::Node& g, const std::string& gpath,
                          GroupsSeen& seen, CoveredResources& covered) {
  YAML::Node covered_node = Child(g, "coveredResources");
  covered.path = gpath + ".coveredResources";
  const std::string& cpath = covered.path;
  if (IsNullish(covered_node)) {
    ctx.Error(g, cpath, "required field is missing");
    return false;
  }
  auto names = GetStringList(ctx, g, "coveredResources", cpath);
  if (!names) return false;
  if (names->size() > kMaxCoveredResources) {
    ctx.Warning(covered_node, cpath,
                "Kueue accepts at most 16 covered resources; Tessera uses all " +
                    std::to_string(names->size()));
  }
  for (size_t i = 0; i < names->size(); ++i) {
    const std::string item_path = IndexPath(cpath, i);
    auto id = InternResource(ctx, covered_node, item_path, (*names)[i]);
    if (!id) return false;
    covered.named.push_back(*id);
    auto prior = std::find_if(seen.covered_at.begin(), seen.covered_at.end(),
                              [&](const auto& p) { return p.first == *id; });
    if (prior != seen.covered_at.end()) {
      ctx.Warning(covered_node, item_path,
                  "resource " + (*names)[i] + " is already covered by " + prior->second +
                      "; Kueue rejects overlapping resource groups; Tessera ignores it here");
      continue;
    }
    seen.covered_at.emplace_back(*id, gpath);
    covered.kept.push_back(*id);
  }
  return true;
}

// Drops the borrowing and lending limits a queue that cannot borrow may not have, and caps the
// lending limit at the nominal quota, warning about each (Kueue rejects them all).
void ApplyLimitRules(DocContext& ctx, const YAML::Node& r, const std::string& qp,
                     const BorrowRule& borrow, ResourceQuota& q) {
  if (q.borrowing_limit && !borrow.can_borrow) {
    ctx.Warning(Child(r, "borrowingLimit"), qp + ".borrowingLimit",
                "borrowingLimit ignored: " + borrow.no_borrow_why);
    q.borrowing_limit.reset();
  }
  if (q.lending_limit && !borrow.can_borrow) {
    ctx.Warning(Child(r, "lendingLimit"), qp + ".lendingLimit",
                "lendingLimit ignored: " + borrow.no_borrow_why);
    q.lending_limit.reset();
  }
  if (q.lending_limit && *q.lending_limit > q.nominal) {
    ctx.Warning(Child(r, "lendingLimit"), qp + ".lendingLimit",
                "lendingLimit is larger than nominalQuota; Kueue rejects this; Tessera "
                "uses nominalQuota as the lending limit");
    q.lending_limit = q.nominal;
  }
}

// Reads one entry of a flavor's resources into `fq`; an entry Kueue would reject is warned
// about and skipped (true). False after an error.
bool ReadResourceQuota(DocContext& ctx, const YAML::Node& r, const std::string& qp,
                       const CoveredResources& covered, const BorrowRule& borrow,
                       FlavorQuotas& fq) {
  if (!ExpectMap(ctx, r, qp)) {
    if (!ctx.failed()) ctx.Error(r, qp, "expected a resource quota, got null");
    return false;
  }
  auto rname = RequireString(ctx, r, "name", qp + ".name");
  if (!rname) return false;
  auto id = InternResource(ctx, Child(r, "name"), qp + ".name", *rname);
  if (!id) return false;
  YAML::Node nominal_node = Child(r, "nominalQuota");
  if (IsNullish(nominal_node)) {
    ctx.Error(r, qp + ".nominalQuota", "required field is missing");
    return false;
  }
  ResourceQuota q;
  q.resource = *id;
  auto nominal = ScalarQuantity(ctx, nominal_node, qp + ".nominalQuota", *id);
  q.borrowing_limit = OptionalQuantity(ctx, r, "borrowingLimit", qp + ".borrowingLimit", *id);
  q.lending_limit = OptionalQuantity(ctx, r, "lendingLimit", qp + ".lendingLimit", *id);
  if (!nominal || ctx.failed()) return false;
  q.nominal = *nominal;
  if (std::find(covered.named.begin(), covered.named.end(), *id) == covered.named.end()) {
    ctx.Warning(Child(r, "name"), qp + ".name",
                "resource " + *rname + " is not in " + covered.path +
                    "; Kueue rejects this; Tessera ignores this quota");
    return true;
  }
  if (std::find(covered.kept.begin(), covered.kept.end(), *id) == covered.kept.end())
    return true;  // overlapping resource, warned about above
  if (std::any_of(fq.resources.begin(), fq.resources.end(),
                  [&](const ResourceQuota& x) { return x.resource == *id; })) {
    ctx.Warning(
        Child(r, "name"), qp + ".name",
        "resource " + *rname + " is listed twice in this flavor; Tessera uses the first entry");
    return true;
  }
  ApplyLimitRules(ctx, r, qp, borrow, q);
  fq.resources.push_back(q);
  return true;
}

// Gives each covered resource without a quota in the flavor a nominal quota of 0, as Tessera's
// answer to what Kueue rejects.
void FillMissingQuotas(DocContext& ctx, const YAML::Node& f, const std::string& rpath,
                       const CoveredResources& covered, FlavorQuotas& fq) {
  for (ResourceId id : covered.kept) {
    if (std::none_of(fq.resources.begin(), fq.resources.end(),
                     [&](const ResourceQuota& x) { return x.resource == id; })) {
      ctx.Warning(f, rpath,
                  "covered resource " + ResourceName(id) + " has no quota in flavor " + fq.flavor +
                      "; Kueue rejects this; Tessera uses nominalQuota 0");
      ResourceQuota zero;
      zero.resource = id;
      fq.resources.push_back(zero);
    }
  }
}

// Reads one entry of a group's flavors and appends it to `group`; a flavor listed before is
// warned about and skipped (true). False after an error.
bool ReadFlavorQuotas(DocContext& ctx, const YAML::Node& f, const std::string& path,
                      const CoveredResources& covered, const BorrowRule& borrow, GroupsSeen& seen,
                      ResourceGroup& group) {
  if (!ExpectMap(ctx, f, path)) {
    if (!ctx.failed()) ctx.Error(f, path, "expected a flavor, got null");
    return false;
  }
  auto name = RequireString(ctx, f, "name", path + ".name");
  if (!name) return false;
  FlavorQuotas fq;
  fq.flavor = *name;
  if (auto prior = std::find_if(seen.flavor_at.begin(), seen.flavor_at.end(),
                                [&](const auto& p) { return p.first == *name; });
      prior != seen.flavor_at.end()) {
    ctx.Warning(Child(f, "name"), path + ".name",
                "flavor " + *name + " is already listed at " + prior->second +
                    "; Kueue rejects this; Tessera ignores this entry");
    return true;
  } else {
    seen.flavor_at.emplace_back(*name, path);
  }
  YAML::Node resources = Child(f, "resources");
  const std::string rpath = path + ".resources";
  if (IsNullish(resources)) {
    ctx.Error(f, rpath, "required field is missing");
    return false;
  }
  ForEachSeq(ctx, resources, rpath, [&](size_t, const YAML::Node& r, const std::string& qp) {
    return ReadResourceQuota(ctx, r, qp, covered, borrow, fq);
  });
  if (ctx.failed()) return false;
  FillMissingQuotas(ctx, f, rpath, covered, fq);
  group.flavors.push_back(std::move(fq));
  return true;
}

// Reads one entry of spec.resourceGroups and appends it to `out`. False after an error.
bool ReadResourceGroup(DocContext& ctx, const YAML::Node& g, const std::string& gpath,
                       const BorrowRule& borrow, GroupsSeen& seen,
                       std::vector<ResourceGroup>& out) {
  if (!ExpectMap(ctx, g, gpath)) {
    if (!ctx.failed()) ctx.Error(g, gpath, "expected a resource group, got null");
    return false;
  }
  ResourceGroup group;
  CoveredResources covered;
  if (!ReadCoveredResources(ctx, g, gpath, seen, covered)) return false;
  group.covered = covered.kept;
  YAML::Node flavors = Child(g, "flavors");
  const std::string fpath = gpath + ".flavors";
  if (IsNullish(flavors)) {
    ctx.Error(g, fpath, "required field is missing");
    return false;
  }
  if (flavors.IsSequence() && flavors.size() > kMaxFlavorsPerGroup) {
    ctx.Warning(flavors, fpath,
                "Kueue accepts at most 16 flavors per resource group; Tessera uses all " +
                    std::to_string(flavors.size()));
  }
  ForEachSeq(ctx, flavors, fpath, [&](size_t, const YAML::Node& f, const std::string& path) {
    return ReadFlavorQuotas(ctx, f, path, covered, borrow, seen, group);
  });
  if (ctx.failed()) return false;
  out.push_back(std::move(group));
  return true;
}

// Reads spec.resourceGroups of a ClusterQueue or Cohort. `can_borrow` is false for a ClusterQueue
// without cohort (or a Cohort without parent).
void ReadResourceGroups(DocContext& ctx, const YAML::Node& spec, bool can_borrow,
                        const std::string& no_borrow_why, std::vector<ResourceGroup>& out) {
  const std::string groups_path = "spec.resourceGroups";
  YAML::Node groups = Child(spec, "resourceGroups");
  if (groups.IsDefined() && groups.IsSequence() && groups.size() > kMaxResourceGroups) {
    ctx.Warning(groups, groups_path,
                "Kueue accepts at most 16 resource groups; Tessera uses all " +
                    std::to_string(groups.size()));
  }
  const BorrowRule borrow{can_borrow, no_borrow_why};
  GroupsSeen seen;
  ForEachSeq(ctx, groups, groups_path, [&](size_t, const YAML::Node& g, const std::string& gpath) {
    return ReadResourceGroup(ctx, g, gpath, borrow, seen, out);
  });
}

std::optional<double> ReadFairWeight(DocContext& ctx, const YAML::Node& spec) {
  YAML::Node fs = Child(spec, "fairSharing");
  if (!ExpectMap(ctx, fs, "spec.fairSharing")) return std::nullopt;
  YAML::Node w = Child(fs, "weight");
  if (IsNullish(w)) return std::nullopt;
  auto milli = ScalarQuantity(ctx, w, "spec.fairSharing.weight", kCpu);  // kCpu: thousandths
  if (!milli) return std::nullopt;
  return static_cast<double>(*milli) / 1000.0;
}

// The first of `keys` present in `parent` (for fields renamed between API versions).
std::optional<std::string> GetRenamed(DocContext& ctx, const YAML::Node& parent,
                                      std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (!IsNullish(Child(parent, key)))
      return GetString(ctx, parent, key, "spec." + std::string(key));
  }
  return std::nullopt;
}

}  // namespace

void ReadResourceFlavor(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ResourceFlavor f;
  f.name = meta.name;
  f.source = meta.source;
  YAML::Node spec = Spec(ctx, meta, false);
  ReadLabels(ctx, Child(spec, "nodeLabels"), "spec.nodeLabels", f.node_labels);
  ReadTaints(ctx, Child(spec, "nodeTaints"), "spec.nodeTaints", f.node_taints);
  ReadTolerations(ctx, Child(spec, "tolerations"), "spec.tolerations", f.tolerations);
  f.topology_name = GetString(ctx, spec, "topologyName", "spec.topologyName").value_or("");
  if (ctx.failed()) return;
  out.model.flavors.push_back(std::move(f));
}

void ReadClusterQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ClusterQueue cq;
  cq.name = meta.name;
  cq.source = meta.source;
  YAML::Node spec = Spec(ctx, meta, true);
  if (ctx.failed()) return;
  cq.cohort = GetRenamed(ctx, spec, {"cohort", "cohortName"}).value_or("");
  ReadLabelSelector(ctx, Child(spec, "namespaceSelector"), "spec.namespaceSelector",
                    cq.namespace_selector);
  if (YAML::Node s = Child(spec, "queueingStrategy"); !IsNullish(s)) {
    if (auto v =
            ParseEnum<QueueingStrategy>(ctx, s, "spec.queueingStrategy",
                                        {{"StrictFIFO", QueueingStrategy::kStrictFIFO},
                                         {"BestEffortFIFO", QueueingStrategy::kBestEffortFIFO}}))
      cq.strategy = *v;
  }
  ReadResourceGroups(ctx, spec, !cq.cohort.empty(), "ClusterQueue has no cohort",
                     cq.resource_groups);
  YAML::Node pre = Child(spec, "preemption");
  if (ExpectMap(ctx, pre, "spec.preemption")) {
    PreemptionConfig& p = cq.preemption;
    if (YAML::Node n = Child(pre, "withinClusterQueue"); !IsNullish(n)) {
      if (auto v = ParseEnum<WithinClusterQueuePolicy>(
              ctx, n, "spec.preemption.withinClusterQueue",
              {{"Never", WithinClusterQueuePolicy::kNever},
               {"LowerPriority", WithinClusterQueuePolicy::kLowerPriority},
               {"LowerOrNewerEqualPriority",
                WithinClusterQueuePolicy::kLowerOrNewerEqualPriority}}))
        p.within_cluster_queue = *v;
    }
    if (YAML::Node n = Child(pre, "reclaimWithinCohort"); !IsNullish(n)) {
      if (auto v = ParseEnum<ReclaimPolicy>(ctx, n, "spec.preemption.reclaimWithinCohort",
                                            {{"Never", ReclaimPolicy::kNever},
                                             {"LowerPriority", ReclaimPolicy::kLowerPriority},
                                             {"Any", ReclaimPolicy::kAny}}))
        p.reclaim_within_cohort = *v;
    }
    YAML::Node borrow = Child(pre, "borrowWithinCohort");
    if (ExpectMap(ctx, borrow, "spec.preemption.borrowWithinCohort")) {
      if (YAML::Node n = Child(borrow, "policy"); !IsNullish(n)) {
        if (auto v = ParseEnum<BorrowWithinCohortPolicy>(
                ctx, n, "spec.preemption.borrowWithinCohort.policy",
                {{"Never", BorrowWithinCohortPolicy::kNever},
                 {"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority}}))
          p.borrow_within_cohort = *v;
      }
      if (auto t = GetInt(ctx, borrow, "maxPriorityThreshold",
                          "spec.preemption.borrowWithinCohort.maxPriorityThreshold", kInt32Min,
                          kInt32Max))
        p.max_priority_threshold = static_cast<int32_t>(*t);
    }
  }
  if (auto w = ReadFairWeight(ctx, spec)) cq.fair_weight = *w;
  ReadClusterQueueTime(ctx, meta, cq);
  ReadClusterQueuePreemption(ctx, meta, cq);
  // GPU shares counted against nvidia.com/gpu quota (docs/gpu-sharing.md).
  if (auto it = meta.annotations.find("tessera.dev/shares-in-gpu-quota");
      it != meta.annotations.end()) {
    if (it->second == "true" || it->second == "false") {
      cq.shares_in_gpu_quota = it->second == "true";
    } else {
      ctx.Error(Child(Child(meta.metadata, "annotations"), it->first),
                "metadata.annotations.tessera.dev/shares-in-gpu-quota",
                "must be \"true\" or \"false\", got \"" + it->second + "\"");
    }
  }
  ReadAdmissionScope(ctx, spec, cq);
  ReadClusterQueueControl(ctx, spec, cq);
  if (ctx.failed()) return;
  out.model.cluster_queues.push_back(std::move(cq));
}

void ReadCohort(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Cohort c;
  c.name = meta.name;
  c.source = meta.source;
  YAML::Node spec = Spec(ctx, meta, false);
  c.parent = GetRenamed(ctx, spec, {"parent", "parentName"}).value_or("");
  if (c.parent == c.name) {
    ctx.Error(Child(spec, "parent"), "spec.parent", "a cohort cannot be its own parent");
    return;
  }
  ReadResourceGroups(ctx, spec, !c.parent.empty(), "Cohort has no parent", c.resource_groups);
  if (auto w = ReadFairWeight(ctx, spec)) c.fair_weight = *w;
  if (ctx.failed()) return;
  out.model.cohorts.push_back(std::move(c));
}

void ReadLocalQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  LocalQueue lq;
  lq.ns = meta.ns;
  lq.name = meta.name;
  lq.source = meta.source;
  YAML::Node spec = Spec(ctx, meta, true);
  if (ctx.failed()) return;
  auto cq = RequireString(ctx, spec, "clusterQueue", "spec.clusterQueue");
  if (!cq || ctx.failed()) return;
  lq.cluster_queue = *cq;
  if (auto w = ReadFairWeight(ctx, spec)) {
    if (*w > 0) {
      lq.fair_weight = *w;
    } else {
      ctx.Error(Child(Child(spec, "fairSharing"), "weight"), "spec.fairSharing.weight",
                "a LocalQueue's weight must be greater than 0");
    }
  }
  if (ctx.failed()) return;
  out.model.local_queues.push_back(std::move(lq));
}

// The top-level `value` both priority class kinds require.
static std::optional<int64_t> PriorityValue(DocContext& ctx, const ObjectMeta& meta) {
  YAML::Node value = Child(meta.root, "value");
  if (IsNullish(value)) {
    ctx.Error(meta.root, "value", "required field is missing");
    return std::nullopt;
  }
  return ScalarInt(ctx, value, "value", kInt32Min, kInt32Max);
}

void ReadWorkloadPriorityClass(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  WorkloadPriorityClass pc;
  pc.name = meta.name;
  pc.source = meta.source;
  auto v = PriorityValue(ctx, meta);
  pc.non_preemptible = ReadPreemptibility(ctx, meta).value_or(false);
  if (!v || ctx.failed()) return;
  pc.value = static_cast<int32_t>(*v);
  out.model.workload_priority_classes.push_back(std::move(pc));
}

void ReadTopology(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Topology t;
  t.name = meta.name;
  t.source = meta.source;
  YAML::Node spec = Spec(ctx, meta, true);
  if (ctx.failed()) return;
  YAML::Node levels = Child(spec, "levels");
  if (IsNullish(levels)) {
    ctx.Error(spec, "spec.levels", "required field is missing");
    return;
  }
  ForEachSeq(ctx, levels, "spec.levels", [&](size_t, const YAML::Node& l, const std::string& p) {
    if (!ExpectMap(ctx, l, p)) {
      if (!ctx.failed()) ctx.Error(l, p, "expected a level, got null");
      return false;
    }
    auto label = RequireString(ctx, l, "nodeLabel", p + ".nodeLabel");
    if (!label) return false;
    t.levels.push_back(*label);
    return true;
  });
  if (ctx.failed()) return;
  out.model.topologies.push_back(std::move(t));
}

void ReadPriorityClass(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  PriorityClass pc;
  pc.name = meta.name;
  pc.source = meta.source;
  auto v = PriorityValue(ctx, meta);
  pc.global_default = GetBool(ctx, meta.root, "globalDefault", "globalDefault").value_or(false);
  if (YAML::Node p = Child(meta.root, "preemptionPolicy"); !IsNullish(p)) {
    if (auto policy = ParseEnum<bool>(ctx, p, "preemptionPolicy",
                                      {{"PreemptLowerPriority", false}, {"Never", true}}))
      pc.preemption_never = *policy;
  }
  pc.non_preemptible = ReadPreemptibility(ctx, meta).value_or(false);
  if (!v || ctx.failed()) return;
  pc.value = static_cast<int32_t>(*v);
  out.model.priority_classes.push_back(std::move(pc));
}

// spec.actions: the steps of a cycle, as a list or as Volcano's comma-separated string
// ("admit, preempt, scale-up"). engine/actions/action.h says what each does.
void ReadActions(DocContext& ctx, const YAML::Node& spec, SchedulerConfig& config) {
  YAML::Node node = Child(spec, "actions");
  if (IsNullish(node)) return;
  std::vector<std::string> names;
  if (node.IsScalar()) {
    for (absl::string_view part : absl::StrSplit(node.Scalar(), ',', absl::SkipWhitespace()))
      names.emplace_back(std::string(absl::StripAsciiWhitespace(part)));
  } else if (auto list = GetStringList(ctx, spec, "actions", "spec.actions")) {
    names = std::move(*list);
  } else {
    return;
  }
  constexpr std::string_view kKnown[] = {"admit", "preempt", "consolidate", "scale-up"};
  std::vector<std::string> seen;
  for (const std::string& name : names) {
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) {
      ctx.Error(node, "spec.actions",
                "unknown action \"" + name + "\"; allowed: admit, preempt, consolidate, scale-up");
      return;
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      ctx.Error(node, "spec.actions", "action \"" + name + "\" listed twice");
      return;
    }
    seen.push_back(name);
  }
  if (std::find(seen.begin(), seen.end(), "admit") == seen.end()) {
    ctx.Error(node, "spec.actions", "must list \"admit\": without it nothing is ever admitted");
    return;
  }
  config.actions = std::move(seen);
}

void ReadSchedulerConfig(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  SchedulerConfig config;
  YAML::Node spec = Spec(ctx, meta, false);
  YAML::Node fs = Child(spec, "fairSharing");
  if (ExpectMap(ctx, fs, "spec.fairSharing")) {
    config.fair_sharing =
        GetBool(ctx, fs, "enable", "spec.fairSharing.enable").value_or(config.fair_sharing);
    YAML::Node strategies = Child(fs, "preemptionStrategies");
    if (!IsNullish(strategies)) {
      config.fair_sharing_strategies.clear();
      ForEachSeq(
          ctx, strategies, "spec.fairSharing.preemptionStrategies",
          [&](size_t, const YAML::Node& s, const std::string& p) {
            auto v = ParseEnum<FairSharingStrategy>(
                ctx, s, p,
                {{"LessThanOrEqualToFinalShare", FairSharingStrategy::kLessThanOrEqualToFinalShare},
                 {"LessThanInitialShare", FairSharingStrategy::kLessThanInitialShare}});
            if (!v) return false;
            config.fair_sharing_strategies.push_back(*v);
            return true;
          });
    }
  }
  if (YAML::Node p = Child(spec, "placement"); !IsNullish(p)) {
    if (auto v = ParseEnum<PlacementPolicy>(ctx, p, "spec.placement",
                                            {{"binpack", PlacementPolicy::kBinpack},
                                             {"spread", PlacementPolicy::kSpread},
                                             {"Random", PlacementPolicy::kRandom},
                                             {"DotProd", PlacementPolicy::kDotProd},
                                             {"GpuClustering", PlacementPolicy::kGpuClustering},
                                             {"GpuPacking", PlacementPolicy::kGpuPacking},
                                             {"BestFit", PlacementPolicy::kBestFit},
                                             {"FGD", PlacementPolicy::kFgd},
                                             {"TesseraFGD", PlacementPolicy::kTesseraFgd},
                                             {"TesseraPlan", PlacementPolicy::kTesseraPlan}}))
      config.placement = *v;
  }
  // Kueue's resources.quotaCheckStrategy: a resource no resource group covers blocks admission
  // (BlockUndeclared, Kueue's default) or is left to node capacity (IgnoreUndeclared).
  if (YAML::Node q = Child(spec, "quotaCheckStrategy"); !IsNullish(q)) {
    if (auto v = ParseEnum<bool>(ctx, q, "spec.quotaCheckStrategy",
                                 {{"BlockUndeclared", true}, {"IgnoreUndeclared", false}}))
      config.block_undeclared = *v;
  }
  // KAI's stale-gang eviction: how long a gang restored below its minimum may wait.
  if (auto v = GetDuration(ctx, spec, "staleGangGracePeriod", "spec.staleGangGracePeriod",
                           Bound::kNonNegative))
    config.stale_gang_grace_seconds = *v;
  ReadActions(ctx, spec, config);
  ReadConsolidation(ctx, spec, config.consolidation);
  ReadBackfill(ctx, spec, config.backfill);
  ReadRuntimeEstimates(ctx, spec, config.estimates);
  ReadAdmissionFairSharing(ctx, spec, config.admission_fair_sharing);
  ReadPricing(ctx, spec, config.pricing);
  ReadAutoscalerConfig(ctx, spec, config.autoscaler);
  if (ctx.failed()) return;
  out.model.config = config;
  out.has_config = true;
}

}  // namespace tessera::config_internal
