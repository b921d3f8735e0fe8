#include "config/pod_placement.h"

#include <string>

namespace tessera::config_internal {

void ReadPreferredNodeAffinity(DocContext& ctx, const YAML::Node& na, const std::string& napath,
                               NodeAffinity& out) {
  const std::string ppath = napath + ".preferredDuringSchedulingIgnoredDuringExecution";
  ForEachSeq(ctx, Child(na, "preferredDuringSchedulingIgnoredDuringExecution"), ppath,
             [&](size_t, const YAML::Node& item, const std::string& ipath) {
               if (!ExpectMap(ctx, item, ipath)) {
                 if (!ctx.failed()) ctx.Error(item, ipath, "expected a term, got null");
                 return false;
               }
               PreferredSchedulingTerm t;
               YAML::Node weight = Child(item, "weight");
               if (IsNullish(weight)) {
                 ctx.Error(item, ipath + ".weight", "required field is missing");
                 return false;
               }
               auto w = ScalarInt(ctx, weight, ipath + ".weight", 1, 100);
               if (!w) return false;
               t.weight = static_cast<int32_t>(*w);
               YAML::Node pref = Child(item, "preference");
               const std::string prefpath = ipath + ".preference";
               if (IsNullish(pref)) {
                 ctx.Error(item, prefpath, "required field is missing");
                 return false;
               }
               if (!ExpectMap(ctx, pref, prefpath)) return false;
               ReadRequirements(ctx, Child(pref, "matchExpressions"),
                                prefpath + ".matchExpressions",
                                /*allow_gt_lt=*/true, t.term.match_expressions);
               if (!IsNullish(Child(pref, "matchFields"))) {
                 ctx.Warning(Child(pref, "matchFields"), prefpath + ".matchFields",
                             "matchFields is not supported; Tessera ignores it");
               }
               out.preferred_terms.push_back(std::move(t));
               return !ctx.failed();
             });
}

void ReadTopologySpread(DocContext& ctx, const YAML::Node& spec, const std::string& path,
                        std::vector<SpreadTerm>& out) {
  const std::string cpath = path + ".topologySpreadConstraints";
  ForEachSeq(
      ctx, Child(spec, "topologySpreadConstraints"), cpath,
      [&](size_t, const YAML::Node& item, const std::string& ipath) {
        if (!ExpectMap(ctx, item, ipath)) {
          if (!ctx.failed()) ctx.Error(item, ipath, "expected a constraint, got null");
          return false;
        }
        SpreadTerm t;
        t.at = item;
        t.path = ipath;
        YAML::Node skew = Child(item, "maxSkew");
        if (IsNullish(skew)) {
          ctx.Error(item, ipath + ".maxSkew", "required field is missing");
          return false;
        }
        auto s = ScalarInt(ctx, skew, ipath + ".maxSkew", 1, 1 << 30);
        auto key = RequireString(ctx, item, "topologyKey", ipath + ".topologyKey");
        YAML::Node when = Child(item, "whenUnsatisfiable");
        if (IsNullish(when)) {
          ctx.Error(item, ipath + ".whenUnsatisfiable", "required field is missing");
          return false;
        }
        auto required = ParseEnum<bool>(ctx, when, ipath + ".whenUnsatisfiable",
                                        {{"DoNotSchedule", true}, {"ScheduleAnyway", false}});
        if (!s || !key || !required) return false;
        if (key->empty()) {
          ctx.Error(Child(item, "topologyKey"), ipath + ".topologyKey", "must not be empty");
          return false;
        }
        t.spread.max_skew = static_cast<int32_t>(*s);
        t.spread.topology_key = *key;
        t.spread.required = *required;
        ReadLabelSelector(ctx, Child(item, "labelSelector"), ipath + ".labelSelector", t.selector);
        if (YAML::Node md = Child(item, "minDomains"); !IsNullish(md)) {
          auto v = ScalarInt(ctx, md, ipath + ".minDomains", 1, 1 << 30);
          if (!v) return false;
          if (!*required) {
            // Kubernetes' validation: minDomains only with DoNotSchedule.
            ctx.Error(md, ipath + ".minDomains",
                      "can only be set with whenUnsatisfiable: DoNotSchedule");
            return false;
          }
          t.spread.min_domains = static_cast<int32_t>(*v);
        }
        if (!IsNullish(Child(item, "matchLabelKeys")))
          ctx.Notice(Child(item, "matchLabelKeys"), ipath + ".matchLabelKeys",
                     "not read: Tessera counts the pods of the workload (a Deployment: all "
                     "its replicas)");
        if (auto p = GetString(ctx, item, "nodeAffinityPolicy", ipath + ".nodeAffinityPolicy");
            p && *p != "Honor")
          ctx.Notice(Child(item, "nodeAffinityPolicy"), ipath + ".nodeAffinityPolicy",
                     "only Honor (the default) is honoured: domains come from the nodes "
                     "the pod's node selector and affinity allow");
        if (auto p = GetString(ctx, item, "nodeTaintsPolicy", ipath + ".nodeTaintsPolicy");
            p && *p != "Ignore")
          ctx.Notice(Child(item, "nodeTaintsPolicy"), ipath + ".nodeTaintsPolicy",
                     "only Ignore (the default) is honoured: tainted nodes' domains count");
        out.push_back(std::move(t));
        return !ctx.failed();
      });
}

void ResolveTopologySpread(DocContext& ctx, const std::vector<SpreadTerm>& terms,
                           const Labels& pod_labels, PodSet& ps) {
  for (const SpreadTerm& t : terms) {
    if (!Matches(t.selector, pod_labels)) {
      ctx.Warning(t.at, t.path + ".labelSelector",
                  "a topology spread constraint whose labelSelector does not select the pod's "
                  "own labels is ignored (Tessera spreads a workload's own pods only)");
      continue;
    }
    ps.spread.push_back(t.spread);
  }
}

}  // namespace tessera::config_internal
