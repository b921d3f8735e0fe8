// The controller's decisions (controller_impl.h says how the pieces fit): engine rebuilds,
// groups into the engine, cycles, and carrying the engine's decisions out through the Binder and
// the StatusWriter.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/dra_quota.h"
#include "fmt/format.h"
#include "k8s/controller/controller_impl.h"
#include "k8s/controller/fair_sharing_status.h"
#include "k8s/controller/gang_assembly.h"
#include "k8s/controller/workload_api.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

void Controller::Impl::Rebuild() {
  auto t0 = Clock::now();
  last_rebuild = t0;
  need_rebuild = false;
  ++metrics->rebuilds;
  Model m = cache.Snapshot(&node_names);
  if (!options.dra_mappings.empty()) {
    m.dra.mappings = options.dra_mappings;
    CountDraNodeQuota(m);
  }
  SayMarkProblems();
  node_index.clear();
  for (size_t i = 0; i < node_names.size(); ++i) node_index[node_names[i]] = static_cast<NodeId>(i);
  auto created = Scheduler::Create(std::move(m));
  if (!created.ok()) {
    spdlog::error("tessera: cannot build the engine: {} (retrying on the next change)",
                  std::string(created.status().message()));
    engine.reset();
    return;
  }
  SeedFairUsage(**created);
  engine = std::move(*created);
  IndexDra();
  need_capacity_stale = true;
  id_to_group.clear();
  ended_ids.clear();  // the old engine's
  // Restore admitted workloads first (they hold what they hold), oldest first.
  std::vector<Group*> order;
  for (auto& [k, g] : groups) {
    g.id = -1;
    g.resubmit_admitted = false;
    if (g.state == Group::State::kInEngine) g.state = Group::State::kWaiting;
    order.push_back(&g);
  }
  std::sort(order.begin(), order.end(), [](const Group* a, const Group* b) {
    if (a->submitted != b->submitted) return a->submitted < b->submitted;
    return a->key < b->key;
  });
  for (Group* g : order) Place(*g);
  health_dirty = true;  // a new engine knows no failed GPU
  dirty.clear();
  need_cycle = true;
  spdlog::debug("tessera: engine rebuilt: {} nodes, {} workloads in {:.1f} ms", cache.num_nodes(),
                engine->num_workloads(),
                std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
}

void Controller::Impl::SeedFairUsage(Scheduler& next) {
  // Admission fair sharing usage goes on across a rebuild (from the engine it replaces) and a
  // restart (from the LocalQueue's status, written at each sample), decayed for the time between
  // (docs/time.md, "Fair share over time").
  std::map<std::string, LocalQueueUsage> carried;
  if (engine) {
    const Model& old = engine->model();
    for (size_t i = 0; i < old.local_queues.size(); ++i) {
      LocalQueueUsage u = engine->local_queue_usage(static_cast<int32_t>(i));
      if (u.at >= 0) carried[old.local_queues[i].ns + "/" + old.local_queues[i].name] = u;
    }
  }
  const Model& m = next.model();
  for (size_t i = 0; i < m.local_queues.size(); ++i) {
    const std::string key = m.local_queues[i].ns + "/" + m.local_queues[i].name;
    std::optional<LocalQueueUsage> u;
    if (auto it = carried.find(key); it != carried.end()) {
      u = std::move(it->second);
    } else {
      u = ParseFairSharingStatus(cache.LocalQueueStatus(key), wall_start);
    }
    if (u) next.SeedLocalQueueUsage(static_cast<int32_t>(i), std::move(*u));
  }
}

const std::string* Controller::Impl::BoundNode(const std::string& pod_key) const {
  auto a = assumed.find(pod_key);
  if (a != assumed.end()) return &a->second.node;
  auto p = pods.find(pod_key);
  if (p != pods.end() && p->second.Bound()) return &p->second.node_name;
  return nullptr;
}

void Controller::Impl::Place(Group& g) {
  if (g.state != Group::State::kWaiting || !engine) return;
  if (g.pods.empty()) return;
  Gang gang{g.key, g.kind, g.ns, g.name, g.foreign, {}};
  for (const auto& k : g.pods) gang.members.push_back({&pods.at(k), BoundNode(k) != nullptr});
  GangAssembly a = AssembleGang(gang, cache.gang_sources());
  SayTimeProblems(g);
  if (!a.complete) {
    Publish(g, a.wait_reason);
    return;
  }
  g.sets = std::move(a.sets);
  // Spot nodes for the interruptible only (node_policy.h); pods already bound stay where they are.
  g.interruptible =
      DefaultInterruptible(a.workload, cache.interruptible_marks(), engine->model()).value;
  if (a.bound == 0) ApplySpotPolicy(a.workload, options.node_policy, g.interruptible);
  ResolveClaims(a.workload);
  WorkloadId id = engine->AddWorkload(std::move(a.workload));
  need_capacity_stale = true;
  id_to_group[id] = g.key;
  g.id = id;
  g.state = Group::State::kInEngine;
  if (g.submitted < 0) g.submitted = Now();
  need_cycle = true;
  if (a.bound > 0) {
    RestoreBound(g);
    return;
  }
  g.resubmit_admitted = false;
  g.admitted = false;
  engine->Submit(id, g.submitted);
}

void Controller::Impl::RestoreBound(Group& g) {
  std::vector<PodPlacement> placements;
  for (size_t s = 0; s < g.sets.size(); ++s) {
    for (size_t i = 0; i < g.sets[s].size(); ++i) {
      const std::string& k = g.sets[s][i];
      const std::string* node = BoundNode(k);
      if (!node) continue;
      auto ni = node_index.find(*node);
      if (ni == node_index.end()) continue;  // on a node we do not know (yet)
      PodPlacement pl;
      pl.pod_set = static_cast<int32_t>(s);
      pl.index = static_cast<int32_t>(i);
      pl.node = ni->second;
      auto a = assumed.find(k);
      pl.gpus = a != assumed.end() ? a->second.gpus : pods.at(k).gpu_indices;
      pl.mig_starts = a != assumed.end() ? a->second.mig_starts : pods.at(k).mig_starts;
      placements.push_back(std::move(pl));
    }
  }
  // Admitted before (this engine was rebuilt, or its pods changed): it has run since then.
  const double admitted_at = g.admitted_at >= 0 ? g.admitted_at : Now();
  absl::Status st = placements.empty() ? absl::FailedPreconditionError("its nodes are not known")
                                       : engine->Restore(g.id, placements, admitted_at);
  if (!st.ok()) {
    // GPU indices that clash (an annotation edited by hand) are dropped before giving up:
    // the engine then picks free devices for the record.
    for (auto& pl : placements) {
      pl.gpus.clear();
      pl.mig_starts.clear();
    }
    if (!placements.empty()) st = engine->Restore(g.id, placements, admitted_at);
  }
  const bool was_admitted = g.resubmit_admitted;
  g.resubmit_admitted = false;
  if (!st.ok()) {
    spdlog::warn("tessera: cannot account for the bound pods of {}: {}", g.key,
                 std::string(st.message()));
    // Stays in the engine inactive. Where it held these places a moment ago, something else
    // is off in the engine's view: rebuild it from the server once.
    if (was_admitted) need_rebuild = true;
    return;
  }
  g.admitted = true;
  g.admitted_at = admitted_at;
  RememberRun(g);
}

void Controller::Impl::Cycle() {
  need_cycle = false;
  for (int round = 0; round < 8; ++round) {
    auto t0 = Clock::now();
    last_cycle_now = Now();
    const int64_t attempts = engine->stats().attempts;
    std::vector<Decision> decisions = engine->RunCycle(last_cycle_now);
    need_capacity_stale = true;  // its clock moved, and what it decided changes the answer
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    metrics->cycle_duration.Observe(seconds);
    ++metrics->cycles;
    collector.OnCycle(*engine, attempts, decisions, seconds);
    if (decisions.empty()) break;
    // Victims first, so that the preemptor's binds wait for them.
    std::stable_sort(decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) {
      auto evicts = [](const Decision& d) {
        return d.type == Decision::Type::kPreempt || d.type == Decision::Type::kMove;
      };
      return evicts(a) > evicts(b);
    });
    for (const Decision& d : decisions) Carry(d);
  }
  PublishPendingReasons();
}

Controller::Impl::Group* Controller::Impl::GroupOf(WorkloadId id) {
  auto name = id_to_group.find(id);
  if (name == id_to_group.end()) return nullptr;
  auto it = groups.find(name->second);
  if (it == groups.end() || it->second.id != id) return nullptr;
  return &it->second;
}

void Controller::Impl::Carry(const Decision& d) {
  Group* g = GroupOf(d.workload);
  if (!g) return;
  switch (d.type) {
    case Decision::Type::kAdmit:
    case Decision::Type::kScaleUp:
      if (d.type == Decision::Type::kAdmit) {
        collector.OnAdmit(*engine, d.workload, Now() - g->submitted);
        view_builder.OnAdmit(Now() - g->submitted);
        g->admitted = true;
        g->admitted_at = Now();
        g->reason = {};
        const int32_t cq = engine->status(d.workload).cluster_queue;
        const auto& cqs = engine->model().cluster_queues;
        OwnerEvent(*g, "Normal", "Admitted",
                   fmt::format("gang {} of {} pods admitted{}", g->name, d.pods.size(),
                               cq >= 0 && static_cast<size_t>(cq) < cqs.size()
                                   ? " by ClusterQueue " + cqs[cq].name
                                   : ""));
      }
      RememberRun(*g);
      for (const PodPlacement& pl : d.pods) {
        if (pl.pod_set < 0 || static_cast<size_t>(pl.pod_set) >= g->sets.size()) continue;
        const auto& set = g->sets[pl.pod_set];
        if (pl.index < 0 || static_cast<size_t>(pl.index) >= set.size()) continue;
        const std::string& key = set[pl.index];
        const std::string& node = node_names[pl.node];
        assumed[key] = Assumed{node, pl.gpus, pl.mig_starts};
        std::vector<ClaimReservation> claims = Reservations(key, node, pl);
        if (victims_on_node.count(node)) {
          nominated.push_back(PendingBind{key, node, pl.gpus, pl.mig_starts, std::move(claims)});
        } else {
          Bind(key, node, pl.gpus, pl.mig_starts, std::move(claims));
        }
      }
      break;
    // Consolidation's move is carried out as a preemption: the pods are evicted (Eviction API,
    // their grace period) and the workload waits to be admitted again by a later cycle; the
    // new places the engine chose for it are not bound by this decision (docs/kubernetes.md).
    case Decision::Type::kMove:
    case Decision::Type::kPreempt: {
      ++metrics->preemptions;
      collector.OnPreempt(*engine, d);
      std::string preemptor;
      if (Group* p = GroupOf(d.preemptor)) preemptor = p->key;
      const std::string why =
          d.reason.empty() ? fmt::format("preempted by {}", preemptor) : d.reason;
      EndRun(*g, accounting::RunEnd::kPreempted, why);
      OwnerEvent(*g, "Normal", "Preempted", fmt::format("gang {}: {}", g->name, why));
      EvictGroup(*g, why);
      break;
    }
    case Decision::Type::kReject:
      Publish(*g, d.reason);
      break;
    case Decision::Type::kTerminated:
      // Not here: a victim is finished in the engine at its preemption (above), so the engine
      // keeps no grace period of its own; the pods' own grace period runs on the nodes, and the
      // preemptor's binds wait for them (victims_on_node).
      break;
    case Decision::Type::kWaitLimitExceeded:
      // A Warning on its first pod: the limit could not be met; it now goes ahead. Once per
      // workload: a rebuilt engine, or a requeue, says it again.
      if (g->wait_limit_exceeded) break;
      g->wait_limit_exceeded = true;
      collector.OnWaitLimitExceeded(*engine, d.workload);
      if (!g->pods.empty())
        if (auto it = pods.find(*g->pods.begin()); it != pods.end())
          status_writer->Event(it->second, "Warning", "WaitLimitExceeded", d.reason);
      break;
  }
}

void Controller::Impl::ReleaseNominated() {
  if (nominated.empty()) return;
  std::vector<PendingBind> keep;
  for (auto& b : nominated) {
    auto a = assumed.find(b.pod);
    if (a == assumed.end() || a->second.node != b.node) continue;  // withdrawn meanwhile
    if (victims_on_node.count(b.node)) {
      keep.push_back(std::move(b));
    } else {
      Bind(b.pod, b.node, b.gpus, b.mig_starts, std::move(b.claims));
    }
  }
  nominated.swap(keep);
}

void Controller::Impl::Bind(const std::string& key, const std::string& node,
                            const std::vector<int32_t>& gpus, const std::vector<int8_t>& mig_starts,
                            std::vector<ClaimReservation> claims) {
  auto it = pods.find(key);
  if (it == pods.end()) return;
  binds_in_flight.insert(key);
  auto g = groups.find(it->second.GroupKey());
  binder->Bind(it->second, node, gpus, mig_starts,
               g != groups.end() && ProtectFromDisruption(g->second), std::move(claims));
}

void Controller::Impl::Evict(const std::string& key, const std::string& why) {
  auto it = pods.find(key);
  if (it == pods.end()) return;
  // The Event first, then (on the binder's worker) the DisruptionTarget condition, then the
  // eviction with the pod's own terminationGracePeriodSeconds.
  status_writer->Event(it->second, "Normal", "Preempted", why);
  binder->Evict(it->second, options.scheduler_name + ": " + why);
}

void Controller::Impl::Publish(Group& g, const std::string& reason, double expected_start) {
  if (reason.empty() || g.foreign) return;
  const double now = Now();
  const std::string note = ProvisioningNote(g);
  PendingMessage next = ComposePendingMessage(note.empty() ? reason : reason + "; " + note,
                                              expected_start, now, wall_start);
  // "in 12m" becoming "in 11m", or an expected start that drifts a little, is not new: the
  // condition is rewritten when the explanation changes, not at every cycle.
  const char* condition = PendingConditionReason(g);
  const bool changed =
      g.reason.text.empty() || !g.reason.Same(next, now) || g.condition_reason != condition;
  if (!changed &&
      (options.failed_event_interval_s < 0 || now - g.reason_at < options.failed_event_interval_s))
    return;
  if (changed) {
    g.reason = std::move(next);
    g.condition_reason = condition;
  }
  g.reason_at = now;
  OwnerEvent(g, "Warning", "Pending", fmt::format("gang {}: {}", g.name, g.reason.text));
  for (const auto& k : g.pods) {
    auto it = pods.find(k);
    if (it == pods.end() || it->second.Bound() || assumed.count(k)) continue;
    // A gated pod is held by its gates, whatever its gang waits for (gang_assembly.h); its
    // condition is written when it does not say so already.
    if (it->second.Gated())
      status_writer->Unschedulable(it->second, GatedMessage(it->second), /*changed=*/true,
                                   kSchedulingGatedReason);
    else
      status_writer->Unschedulable(it->second, g.reason.text, changed, condition);
  }
}

void Controller::Impl::PublishPendingReasons() {
  for (auto& [k, g] : groups) {
    if (g.state != Group::State::kInEngine || g.admitted || g.id < 0) continue;
    const WorkloadStatus& st = engine->status(g.id);
    if (st.state == WorkloadState::kPending || st.state == WorkloadState::kRejected)
      Publish(g, st.reason, st.state == WorkloadState::kPending ? st.expected_start : -1);
  }
}

void Controller::Impl::SayTimeProblems(const Group& g) {
  if (g.foreign) return;
  auto say = [this](const std::string& key, const std::string& what,
                    const std::vector<std::string>& problems, auto&& event) {
    auto said = problems_said.find(key);
    if (problems.empty()) {
      if (said != problems_said.end()) problems_said.erase(said);
      return;
    }
    if (said != problems_said.end() && said->second == problems) return;
    for (const std::string& p : problems) {
      spdlog::warn("{}: {}; the value is ignored", what, p);
      event(TimeProblemReason(p), p + "; the value is ignored");
    }
    problems_said[key] = problems;
  };
  for (const auto& k : g.pods) {
    auto it = pods.find(k);
    if (it == pods.end()) continue;
    const PodInfo& pod = it->second;
    say(k, "pod " + k, pod.time_problems, [&](const char* reason, const std::string& message) {
      status_writer->Event(pod, "Warning", reason, message);
    });
  }
  // The group object's own: on that object.
  const GangSources& src = cache.gang_sources();
  const std::string key = g.ns + "/" + g.name;
  ObjectRef ref;
  ref.ns = g.ns;
  ref.name = g.name;
  const std::vector<std::string>* problems = nullptr;
  if (auto j = src.jobs.find(key); g.kind == "Job" && j != src.jobs.end()) {
    ref.api_version = "batch/v1";
    ref.kind = "Job";
    ref.uid = j->second.uid;
    problems = &j->second.time_problems;
  } else if (auto pg = src.podgroups.find(key); g.kind == "PodGroup" && pg != src.podgroups.end()) {
    ref.api_version = "scheduling.x-k8s.io/v1alpha1";
    ref.kind = "PodGroup";
    ref.uid = pg->second.uid;
    problems = &pg->second.time_problems;
  } else if (auto v = src.volcano_groups.find(key);
             g.kind == "Volcano" && v != src.volcano_groups.end()) {
    ref.api_version = "scheduling.volcano.sh/v1beta1";
    ref.kind = "PodGroup";
    ref.uid = v->second.uid;
    problems = &v->second.time_problems;
  } else if (auto w = src.workload_podgroups.find(key);
             g.kind == kWorkloadPodGroupKind && w != src.workload_podgroups.end()) {
    ref.api_version = "scheduling.k8s.io/v1beta1";
    ref.kind = "PodGroup";
    ref.uid = w->second.uid;
    problems = &w->second.time_problems;
    SayUnread(g.key + kUnreadSuffix, ref, w->second.unread);
  } else if (auto o = src.owner_gangs.find(g.key); o != src.owner_gangs.end()) {
    ref.api_version = o->second.api_version;
    ref.kind = o->second.kind;
    ref.name = o->second.object_name;
    ref.uid = o->second.uid;
    problems = &o->second.time_problems;
    SayUnread(g.key + kUnreadSuffix, ref, o->second.unread);
  }
  if (problems)
    say(g.key, fmt::format("{} {}", ref.kind, key), *problems,
        [&](const char* reason, const std::string& message) {
          status_writer->Event(ref, "Warning", reason, message);
        });
}

void Controller::Impl::EvictGroup(Group& g, const std::string& why) {
  for (const auto& k : g.pods) {
    const std::string* node = BoundNode(k);
    if (!node) continue;
    g.evicting[k] = *node;
    ++victims_on_node[*node];
    Evict(k, why);
  }
  engine->Finish(g.id, Now());
  ended_ids.push_back(g.id);
  g.id = -1;
  g.admitted = false;
  g.admitted_at = -1;
  g.state = g.evicting.empty() ? Group::State::kWaiting : Group::State::kEvicting;
  if (g.state == Group::State::kWaiting) dirty.insert(g.key);
}

void Controller::Impl::RetireEnded() {
  if (engine)
    for (WorkloadId id : ended_ids) {
      engine->Retire(id);
      id_to_group.erase(id);
    }
  ended_ids.clear();
}

void Controller::Impl::OwnerEvent(const Group& g, const char* type, const char* reason,
                                  const std::string& message) {
  const auto& owners = cache.gang_sources().owner_gangs;
  auto o = owners.find(g.key);
  if (o == owners.end()) return;
  ObjectRef ref;
  ref.api_version = o->second.api_version;
  ref.kind = o->second.kind;
  ref.ns = o->second.ns;
  ref.name = o->second.object_name;
  ref.uid = o->second.uid;
  status_writer->Event(ref, type, reason, message);
}

void Controller::Impl::SayUnread(const std::string& key, const ObjectRef& ref,
                                 const std::vector<std::string>& unread) {
  auto said = problems_said.find(key);
  if (unread.empty()) {
    if (said != problems_said.end()) problems_said.erase(said);
    return;
  }
  if (said != problems_said.end() && said->second == unread) return;
  for (const std::string& u : unread) {
    spdlog::warn("{} {}/{}: {}", ref.kind, ref.ns, ref.name, u);
    status_writer->Event(ref, "Warning", "UnsupportedField", u);
  }
  problems_said[key] = unread;
}

void Controller::Impl::WritePodGroupStatuses() {
  for (const auto& [key, pg] : cache.gang_sources().podgroups) {
    auto git = groups.find("PodGroup:" + key);
    int32_t scheduled = 0, members = 0;
    bool binding = false;
    if (git != groups.end()) {
      for (const auto& k : git->second.pods) {
        ++members;
        auto p = pods.find(k);
        auto a = assumed.find(k);
        // A bind the server accepted counts before the pod's watch event brings it: else a
        // gang whose last binds just returned is written as Scheduling 5/8, then again.
        if ((p != pods.end() && p->second.Bound()) || (a != assumed.end() && a->second.bind_ok))
          ++scheduled;
        binding = binding || binds_in_flight.count(k) > 0;
      }
    }
    // A gang whose binds are in flight is written once they are settled, not in passing
    // through Scheduling (while 1,000 gangs bind, that halves the API server's writes).
    if (binding) continue;
    status_writer->PodGroupStatus(pg, scheduled, members);
  }
}

void Controller::Impl::WriteStatuses() {
  if (!engine || !active) return;
  status_writer->FlushEvents();  // occurrences the per-object rate limit held back
  WritePodGroupStatuses();
  // ClusterQueues: usage per flavor, pending and admitted workloads; then the metrics.
  const Model& m = engine->model();
  std::vector<int64_t> cq_pending(m.cluster_queues.size()), cq_admitted(m.cluster_queues.size());
  std::vector<MetricsCollector::Tracked> tracked;
  for (const auto& [k, g] : groups) {
    if (g.state != Group::State::kInEngine || g.id < 0) continue;
    tracked.push_back({g.id, g.foreign, std::nullopt, g.wait_limit_exceeded});
    if (g.foreign) continue;
    const WorkloadStatus& st = engine->status(g.id);
    if (st.cluster_queue < 0) continue;
    if (st.state == WorkloadState::kPending) ++cq_pending[st.cluster_queue];
    if (st.state == WorkloadState::kAdmitted) ++cq_admitted[st.cluster_queue];
  }
  status_writer->ClusterQueueStatuses(*engine, cq_pending, cq_admitted);
  const std::unordered_map<WorkloadId, double> used = TrackUsage();
  for (MetricsCollector::Tracked& t : tracked)
    if (auto u = used.find(t.id); u != used.end()) t.utilization = u->second;
  status_writer->LocalQueueStatuses(*engine, wall_start);
  collector.Collect(*engine, tracked, Now());
}

}  // namespace tessera::k8s
