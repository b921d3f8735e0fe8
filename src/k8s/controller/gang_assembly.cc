#include "k8s/controller/gang_assembly.h"

#include <algorithm>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tessera::k8s {
namespace {

// "waiting for PodGroup ns/name, which is not used: spec.minMember: ..." when the cache refused
// the gang's object; "" otherwise.
std::string Refused(const GangSources& sources, const char* kind, const Gang& g) {
  auto it = sources.refused.find(fmt::format("{}:{}/{}", kind, g.ns, g.name));
  if (it == sources.refused.end()) return "";
  const std::string_view k(kind);
  const char* what = k == "Volcano"               ? "Volcano PodGroup"
                     : k == kWorkloadPodGroupKind ? "scheduling.k8s.io PodGroup"
                                                  : kind;
  return fmt::format("waiting for {} {}/{}, which is not used: {}", what, g.ns, g.name, it->second);
}

// A Workload API PodGroup's minimum: its gang's minCount; a basic policy has none (1: each pod
// starts when it fits, none waits for another).
int32_t WorkloadPodGroupMin(const Gang& g, const GangSources& sources, std::string* wait_reason) {
  auto it = sources.workload_podgroups.find(g.ns + "/" + g.name);
  if (it != sources.workload_podgroups.end()) return it->second.gang ? it->second.min_count : 1;
  const int32_t waits = static_cast<int32_t>(g.members.size()) + 1;
  *wait_reason = Refused(sources, kWorkloadPodGroupKind, g);
  if (!wait_reason->empty()) return waits;
  if (sources.workload_api_served) {
    *wait_reason = fmt::format(
        "waiting for scheduling.k8s.io PodGroup {}/{} (its pods name it in "
        "spec.schedulingGroup.podGroupName)",
        g.ns, g.name);
  } else {
    *wait_reason = fmt::format(
        "waiting for scheduling.k8s.io PodGroup {}/{}: this API server does not serve the "
        "Workload API's PodGroups (v1beta1, v1alpha3 or v1alpha2; Kubernetes 1.37 serves them with "
        "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true)",
        g.ns, g.name);
  }
  return waits;
}

// "held by scheduling gates: team-a/w-3 (example.com/a), team-a/w-4 (example.com/a)", at most
// 5 pods named.
std::string GatedPods(const std::vector<const PodInfo*>& gated) {
  constexpr size_t kNamed = 5;
  std::string s = "held by scheduling gates: ";
  for (size_t i = 0; i < gated.size() && i < kNamed; ++i)
    s += fmt::format("{}{} ({})", i ? ", " : "", gated[i]->Key(),
                     fmt::join(gated[i]->scheduling_gates, ", "));
  if (gated.size() > kNamed) s += fmt::format(" and {} more", gated.size() - kNamed);
  return s;
}

}  // namespace

std::string GatedMessage(const PodInfo& pod) {
  return fmt::format("held by scheduling gates: {}", fmt::join(pod.scheduling_gates, ", "));
}

namespace {

// A gang of an owner kind (owner_kinds.h) is as big as its object says; without the object
// (not created yet, or refused) its pods wait for it, unless the kind is not served at all.
int32_t OwnerMin(const OwnerKind& kind, const Gang& g, const GangSources& sources,
                 std::string* wait_reason) {
  const int32_t have = static_cast<int32_t>(g.members.size());
  if (auto it = sources.owner_gangs.find(g.key); it != sources.owner_gangs.end())
    return it->second.min_member;
  // A LeaderWorkerSet's gang "lws-0" is refused as its object "lws".
  std::string object = g.name;
  if (!kind.index_label.empty()) object = object.substr(0, object.rfind('-'));
  if (auto it = sources.refused.find(fmt::format("{}:{}/{}", g.kind, g.ns, object));
      it != sources.refused.end()) {
    *wait_reason = fmt::format("waiting for {} {}/{}, which is not used: {}", g.kind, g.ns, object,
                               it->second);
    return have + 1;
  }
  if (!sources.owner_kinds_served.count(g.kind)) return std::max(have, 1);
  *wait_reason = fmt::format("waiting for {} {}/{} ({}; pods carry its label {})", g.kind, g.ns,
                             object, kind.api_version, kind.name_label);
  return have + 1;
}

}  // namespace

int32_t MinMember(const Gang& g, const GangSources& sources, std::string* wait_reason) {
  const int32_t have = static_cast<int32_t>(g.members.size());
  if (g.kind == kWorkloadPodGroupKind) return WorkloadPodGroupMin(g, sources, wait_reason);
  if (g.kind == "PodGroup") {
    auto it = sources.podgroups.find(g.ns + "/" + g.name);
    if (it == sources.podgroups.end()) {
      *wait_reason = Refused(sources, "PodGroup", g);
      if (wait_reason->empty())
        *wait_reason = fmt::format("waiting for PodGroup {}/{} (pods carry its label {})", g.ns,
                                   g.name, kPodGroupLabel);
      return have + 1;
    }
    return it->second.min_member;
  }
  if (g.kind == "Volcano") {
    auto it = sources.volcano_groups.find(g.ns + "/" + g.name);
    if (it != sources.volcano_groups.end()) return it->second.min_member;
    if (std::string why = Refused(sources, "Volcano", g); !why.empty()) {
      *wait_reason = std::move(why);
      return have + 1;
    }
    if (sources.volcano_served) {
      *wait_reason = fmt::format(
          "waiting for Volcano PodGroup {}/{} (scheduling.volcano.sh/v1beta1; pods carry its "
          "annotation {})",
          g.ns, g.name, kVolcanoGroupAnnotation);
      return have + 1;
    }
    return std::max(have, 1);  // Volcano is not installed: the pods present are the gang
  }
  if (g.kind == "KueuePodGroup") {
    // Every member must say the same size (Kueue refuses the group otherwise).
    int32_t total = -1;
    std::string first_pod;
    for (const Gang::Member& m : g.members) {
      const PodInfo& p = *m.pod;
      if (!p.group_error.empty()) {
        *wait_reason = p.group_error;
        return have + 1;
      }
      if (total >= 0 && p.group_total != total) {
        *wait_reason = fmt::format(
            "the pods of Kueue pod group {}/{} disagree on {}: {} says {}, {} says {}", g.ns,
            g.name, kKueuePodGroupTotalAnnotation, first_pod, total, p.Key(), p.group_total);
        return have + 1;
      }
      total = p.group_total;
      first_pod = p.Key();
    }
    return std::max(total, 1);
  }
  if (const OwnerKind* ok = OwnerKindNamed(g.kind)) return OwnerMin(*ok, g, sources, wait_reason);
  if (g.kind == "Job") {
    auto it = sources.jobs.find(g.ns + "/" + g.name);
    if (it != sources.jobs.end()) return it->second.GangSize();
    if (std::string why = Refused(sources, "Job", g); !why.empty()) {
      *wait_reason = std::move(why);
      return have + 1;
    }
    // Pods and Jobs come through two watches, so a Job's first pods can reach serve before the
    // Job, which says how many pods the gang has. A gang none of whose pods is bound waits for
    // its Job rather than start as the pods that are here (bench/peers saw a gang bound 20 s
    // apart that way).
    bool any_bound = false;
    for (const Gang::Member& m : g.members) any_bound = any_bound || m.bound;
    if (!any_bound) {
      *wait_reason = fmt::format("waiting for Job {}/{}, which has not reached the scheduler yet",
                                 g.ns, g.name);
      return have + 1;
    }
  }
  return std::max(have, 1);
}

std::string VolcanoQueue(const Gang& g, const GangSources& sources) {
  auto it = sources.volcano_groups.find(g.ns + "/" + g.name);
  if (it == sources.volcano_groups.end() || it->second.queue.empty()) return "";
  const std::string& q = it->second.queue;
  if (q == "default" && !sources.local_queues.count(g.ns + "/" + q)) return "";
  return q;
}

namespace {

// The queue and priority of a gang: from its pods, else from the Job, the owner kind's object,
// the Volcano PodGroup or (the priority) the Workload API's PodGroup.
void SetQueueAndPriority(const Gang& g, const GangSources& sources, const PodInfo& first,
                         Workload& w) {
  w.queue_name = first.queue_name;
  w.priority_class = first.priority_class;
  w.workload_priority_class = first.workload_priority_class;
  if (g.kind == "Job") {
    if (auto j = sources.jobs.find(g.ns + "/" + g.name); j != sources.jobs.end()) {
      if (w.queue_name.empty()) w.queue_name = j->second.queue_name;
      if (w.workload_priority_class.empty())
        w.workload_priority_class = j->second.workload_priority_class;
    }
  }
  if (auto o = sources.owner_gangs.find(g.key); o != sources.owner_gangs.end()) {
    if (w.queue_name.empty()) w.queue_name = o->second.queue_name;
    if (w.priority_class.empty()) w.priority_class = o->second.priority_class;
    if (w.workload_priority_class.empty())
      w.workload_priority_class = o->second.workload_priority_class;
  }
  if (g.kind == kWorkloadPodGroupKind && w.priority_class.empty())
    if (auto p = sources.workload_podgroups.find(g.ns + "/" + g.name);
        p != sources.workload_podgroups.end())
      w.priority_class = p->second.priority_class;
  if (g.kind == "Volcano") {
    if (w.queue_name.empty()) w.queue_name = VolcanoQueue(g, sources);
    auto v = sources.volcano_groups.find(g.ns + "/" + g.name);
    if (w.priority_class.empty() && v != sources.volcano_groups.end())
      w.priority_class = v->second.priority_class;
  }
}

// The time fields of the object that groups the pods (a PodGroup of either API, a Volcano
// PodGroup, a Job); null
// when there is none, or it is not known (yet).
const TimeFields* GroupTime(const Gang& g, const GangSources& sources) {
  const std::string key = g.ns + "/" + g.name;
  if (g.kind == "PodGroup")
    if (auto it = sources.podgroups.find(key); it != sources.podgroups.end())
      return &it->second.time;
  if (g.kind == "Volcano")
    if (auto it = sources.volcano_groups.find(key); it != sources.volcano_groups.end())
      return &it->second.time;
  if (g.kind == "Job")
    if (auto it = sources.jobs.find(key); it != sources.jobs.end()) return &it->second.time;
  if (g.kind == kWorkloadPodGroupKind)
    if (auto it = sources.workload_podgroups.find(key); it != sources.workload_podgroups.end())
      return &it->second.time;
  if (auto it = sources.owner_gangs.find(g.key); it != sources.owner_gangs.end())
    return &it->second.time;
  return nullptr;
}

// Pods with DRA claims are alike only when they use the same claims (a shared ResourceClaim):
// the claims made from a template are each pod's own, and so is each pod's pod set.
bool SameClaims(const PodSet& s, const PodSet& first) {
  if (s.claims.size() != first.claims.size()) return false;
  for (size_t i = 0; i < s.claims.size(); ++i)
    if (s.claims[i].name != first.claims[i].name ||
        s.claims[i].claim_name != first.claims[i].claim_name ||
        s.claims[i].template_name != first.claims[i].template_name ||
        !s.claims[i].template_name.empty() ||
        s.claims[i].unsupported != first.claims[i].unsupported)
      return false;
  return true;
}

bool AlikePodSets(const PodSet& s, const PodSet& first) {
  return s.requests == first.requests && s.node_selector == first.node_selector &&
         s.tolerations.size() == first.tolerations.size() &&
         s.affinity.required_terms.size() == first.affinity.required_terms.size() &&
         s.topology.level == first.topology.level &&
         s.topology.required == first.topology.required && s.anti_affinity == first.anti_affinity &&
         s.affinity.preferred_terms.size() == first.affinity.preferred_terms.size() &&
         s.spread.size() == first.spread.size() && SameClaims(s, first);
}

}  // namespace

GangAssembly AssembleGang(const Gang& all, const GangSources& sources) {
  GangAssembly out;
  std::string wait_reason;
  // The minimum counts the gated pods where the pods present size the gang (a lone pod, a Job
  // not known): a gang waits for its gated members rather than start without them.
  const int32_t min = all.foreign ? 1 : MinMember(all, sources, &wait_reason);
  Gang g{all.key, all.kind, all.ns, all.name, all.foreign, {}};
  std::vector<const PodInfo*> gated;
  for (const Gang::Member& m : all.members) {
    if (!m.bound && m.pod->Gated()) {
      gated.push_back(m.pod);
      out.gated.push_back(m.pod->Key());
    } else {
      g.members.push_back(m);
    }
  }
  const auto have = static_cast<int32_t>(g.members.size());
  for (const Gang::Member& m : g.members) out.bound += m.bound;
  if (out.bound == 0 && have < min) {
    if (!wait_reason.empty()) {
      out.wait_reason = std::move(wait_reason);
    } else if (gated.empty()) {
      out.wait_reason = fmt::format("waiting for the gang's pods: {} of {} exist", have, min);
    } else if (all.kind != "Pod") {
      out.wait_reason =
          fmt::format("waiting for the gang's pods: {} of {} exist without gates", have, min);
    }
    if (!gated.empty()) out.wait_reason += (out.wait_reason.empty() ? "" : "; ") + GatedPods(gated);
    return out;
  }
  out.complete = true;
  Workload& w = out.workload;
  w.ns = g.ns;
  w.name = g.name;
  w.kind = g.foreign ? "Pod" : g.kind;
  const PodInfo& first = *g.members.front().pod;
  // The first pod's labels: what cost is summed by (spec.pricing.rollupLabels; metrics).
  w.labels = first.labels;
  if (!g.foreign) SetQueueAndPriority(g, sources, first, w);
  // KAI's preemptibility: the first member's that says (else its priority classes').
  for (const Gang::Member& m : g.members)
    if (!w.non_preemptible) w.non_preemptible = m.pod->non_preemptible;
  // Time: the group object's values, else the first pod's; the smallest deadline. Another
  // scheduler's pod has them too: when it will end counts for reservations.
  TimeFields time;
  if (const TimeFields* gt = g.foreign ? nullptr : GroupTime(g, sources)) time = *gt;
  for (const Gang::Member& m : g.members) MergeTime(m.pod->time, time);
  ApplyTime(time, w);
  // One pod set when the pods are alike (the usual gang), else one per pod.
  bool alike = true;
  for (const Gang::Member& m : g.members) alike = alike && AlikePodSets(m.pod->set, first.set);
  if (alike) {
    PodSet ps = first.set;
    ps.name = "main";
    ps.count = have;
    w.pod_sets.push_back(std::move(ps));
    out.sets.emplace_back();
    for (const Gang::Member& m : g.members) out.sets.back().push_back(m.pod->Key());
  } else {
    for (const Gang::Member& m : g.members) {
      w.pod_sets.push_back(m.pod->set);
      out.sets.push_back({m.pod->Key()});
    }
  }
  // A Deployment's replicas are workloads of one pod each: their anti-affinity and topology
  // spread span them.
  if (g.kind == "Pod" && !first.owner_replicaset.empty() &&
      (first.set.anti_affinity != HostnameAntiAffinity::kNone || !first.set.spread.empty()))
    w.spread_group = g.ns + "/ReplicaSet:" + first.owner_replicaset;
  w.min_count = std::min<int32_t>(min, have);
  w.source = g.key;
  return out;
}

}  // namespace tessera::k8s
