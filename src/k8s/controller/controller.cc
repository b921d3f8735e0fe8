// The controller's loop (controller_impl.h says how the pieces fit): its turn, and what comes
// in (informer events, bind answers) and what that does to the groups of pods.
#include "k8s/controller/controller.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "k8s/controller/controller_impl.h"
#include "k8s/controller/json_fields.h"
#include "k8s/controller/workload_api.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

void Controller::Impl::Push(LoopEvent ev) {
  {
    std::lock_guard<std::mutex> l(mu);
    inbox.push_back(std::move(ev));
  }
  cv.notify_one();
}

void Controller::Impl::AddInformer(const std::string& resource, const std::string& path,
                                   bool optional, bool protobuf) {
  informers.push_back(std::make_unique<Informer>(
      client, resource, path,
      [this](WatchEvent ev) {
        LoopEvent le;
        le.kind = LoopEvent::Kind::kWatch;
        le.watch = std::move(ev);
        Push(std::move(le));
      },
      optional, protobuf));
}

void Controller::Impl::Start() {
  if (options.accounting)
    accounting = std::make_unique<accounting::LiveRecorder>(options.accounting,
                                                            options.accounting_checkpoint_s);
  status_writer = std::make_unique<StatusWriter>(client, options, stop);
  // The binder's workers hand their results back to the loop, as events.
  Binder::Callbacks done;
  done.bind_done = [this](const std::string& pod, const std::string& node, long code) {
    LoopEvent ev;
    ev.kind = LoopEvent::Kind::kBindDone;
    ev.pod = pod;
    ev.node = node;
    ev.status = code;
    Push(std::move(ev));
  };
  done.conflict_pod = [this](const std::string& pod, json object) {
    LoopEvent ev;
    ev.kind = LoopEvent::Kind::kConflictPod;
    ev.pod = pod;
    ev.object = std::move(object);
    Push(std::move(ev));
  };
  binder = std::make_unique<Binder>(client, options, metrics, stop, active, std::move(done));
  // Nodes and pods, the big lists and the busy watch, in protobuf where the server offers it
  // (see proto.h); the rest are small, or CRDs, which only have JSON.
  AddInformer("nodes", "/api/v1/nodes", false, options.protobuf);
  // Finished pods hold nothing; the server filters them out, as kube-scheduler's informer does.
  AddInformer(
      "pods",
      "/api/v1/pods?fieldSelector=" + UrlEncode("status.phase!=Succeeded,status.phase!=Failed"),
      false, options.protobuf);
  AddInformer("priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses", false);
  AddInformer("namespaces", "/api/v1/namespaces", false);
  AddInformer("jobs", "/apis/batch/v1/jobs", true);
  AddInformer("podgroups", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", true);
  AddInformer("volcanopodgroups", "/apis/scheduling.volcano.sh/v1beta1/podgroups", true);
  // The job kinds whose controllers create the pods (owner_kinds.h), where their CRDs are
  // installed, in the first version the server serves.
  for (const OwnerKind& k : OwnerKinds()) {
    AddInformer(k.resource, k.paths.front(), true);
    if (k.paths.size() > 1)
      informers.back()->SetAlternatePaths({k.paths.begin() + 1, k.paths.end()});
  }
  // The Workload API's PodGroups (Kubernetes 1.36+), in the newest version the server serves.
  AddInformer("workloadpodgroups", kWorkloadPodGroupPaths[0], true);
  informers.back()->SetAlternatePaths(
      {std::begin(kWorkloadPodGroupPaths) + 1, std::end(kWorkloadPodGroupPaths)});
  for (const char* r : kQueueResources) AddInformer(r, fmt::format("{}/{}", kQueueGroup, r), true);
  // Dynamic Resource Allocation (docs/dra.md), where the server serves it (v1: 1.34+).
  for (const char* r : kDraResources) {
    AddInformer(r, fmt::format("{}/{}", kDraApiPaths[0], r), true);
    informers.back()->SetAlternatePaths({fmt::format("{}/{}", kDraApiPaths[1], r)});
  }
  if (options.provisioning.enabled) {
    provisioner =
        std::make_unique<Provisioner>(client, options.provisioning, options.node_policy, stop);
    AddInformer("provisioningrequests",
                fmt::format("{}?labelSelector={}", kProvisioningPath,
                            UrlEncode(fmt::format("{}={}", kManagedByLabel, kManagedByValue))),
                true);
  }
  for (auto& i : informers) i->Start();
  loop_thread = std::thread([this] { Loop(); });
}

void Controller::Impl::Stop() {
  stop = true;
  cv.notify_all();
  if (loop_thread.joinable()) loop_thread.join();
  for (auto& i : informers) i->RequestStop();
  for (auto& i : informers) i->Stop();
  // Binds already sent finish (their results are dropped); nothing new is started. A server that
  // does not answer them within stop_drain_s has them cut, and what is queued behind them fails
  // at once.
  client->AbortAfter(Clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(options.stop_drain_s * 1000)));
  if (status_writer) status_writer->StopEvents();
  binder.reset();
  provisioner.reset();
  status_writer.reset();
  client->AbortAfter(Clock::time_point::max());
}

void Controller::Impl::Loop() {
  while (!stop) {
    std::deque<LoopEvent> batch;
    // An informer hands its first list to the inbox, then says it synced: read after the batch
    // is taken, "synced" may count a list still in the inbox, and the first engine would be
    // built without it (a SchedulerConfig's pricing: a new leader's first accounting period
    // charged GPU-hours without dollars; the pods: a run closed and started again). So the
    // informers are read before, and count once the batch that holds their lists is applied.
    bool lists_taken = synced;
    if (!lists_taken) {
      lists_taken = true;
      for (auto& i : informers) lists_taken = lists_taken && i->synced();
    }
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait_for(l, std::chrono::milliseconds(100), [this] { return stop || !inbox.empty(); });
      batch.swap(inbox);
    }
    for (auto& ev : batch) {
      try {
        Apply(ev);
      } catch (const nlohmann::json::exception& e) {
        // An object of a shape no API server sends (a field of the wrong type that a reader
        // did not check): this event is lost, the loop is not. A relist would bring it back
        // the same, so the engine is rebuilt from what the caches hold.
        spdlog::warn("tessera: an event of {} could not be applied: {}",
                     ev.kind == LoopEvent::Kind::kWatch ? ev.watch.resource : "the loop", e.what());
        need_rebuild = true;
      }
    }
    if (!synced) {
      if (!lists_taken) continue;
      synced = true;
      spdlog::info("tessera: caches synced: {} nodes, {} pods", cache.num_nodes(), pods.size());
    }
    if (!active) {
      was_active = false;
      MaybePublishView();
      continue;
    }
    if (!was_active) {
      was_active = true;
      need_rebuild = true;                        // a new leader trusts only what the server says
      accounting_resume = accounting != nullptr;  // ... and only what the store holds
      ended_runs.clear();     // ends seen when last the leader: another leader closed them since
      run_snapshots.clear();  // taken again as the rebuild restores what runs
    }
    auto t0 = Clock::now();
    if (need_rebuild &&
        std::chrono::duration<double>(t0 - last_rebuild).count() >= options.min_rebuild_interval_s)
      Rebuild();
    if (engine) {
      for (const auto& key : dirty) {
        auto it = groups.find(key);
        if (it != groups.end()) Place(it->second);
      }
      dirty.clear();
      // A wait limit or a minimum runtime ran out since the last cycle: the engine has
      // something to decide even though nothing arrived or ended.
      if (!need_cycle && engine->NextTimer(last_cycle_now) <= Now()) need_cycle = true;
      if (health_dirty) CheckGpuHealth();
      const bool cycled = need_cycle;
      if (need_cycle) Cycle();
      ReleaseNominated();
      SyncProvisioning(cycled);
    }
    decision_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (std::chrono::duration<double>(Clock::now() - last_status).count() >=
        options.status_period_s) {
      last_status = Clock::now();
      health_dirty = true;  // dcgm-exporter's readings are read once a period
      WriteStatuses();
    }
    MaybePublishView();
    RetireEnded();
    UpdateSnapshot();
  }
  CheckpointAccountingAtStop();
}

void Controller::Impl::UpdateSnapshot() {
  ControllerSnapshot s;
  s.pods_bound = pods_bound.load();
  // The group counts walk every group: at most every 100 ms, not at every turn of the loop
  // (a turn per few bind results while thousands of pods bind).
  const auto now = Clock::now();
  if (now - last_group_count >= std::chrono::milliseconds(100)) {
    last_group_count = now;
    waiting_groups = pending_workloads = 0;
    for (const auto& [k, g] : groups) {
      if (g.state == Group::State::kWaiting && !g.foreign) ++waiting_groups;
      if (g.state == Group::State::kInEngine && !g.admitted) ++pending_workloads;
    }
  }
  s.waiting_groups = waiting_groups;
  s.pending_workloads = pending_workloads;
  s.engine_workloads = engine ? engine->num_workloads() - engine->num_retired() : 0;
  s.rebuilds = metrics->rebuilds.load();
  s.cycles = metrics->cycles.load();
  s.synced = synced.load();
  s.decision_seconds = decision_seconds;
  if (status_writer) {
    EventRecorderStats es = status_writer->event_stats();
    s.events_created = es.created;
    s.events_patched = es.patched;
    s.events_recorded = es.recorded;
    s.events_written = es.written;
    s.events_dropped = es.dropped;
    s.events_queued = es.queued;
    metrics->events_written = es.written;
    metrics->events_dropped = es.dropped;
    metrics->events_queued = es.queued;
    s.status_writes_queued = static_cast<int64_t>(status_writer->queued());
  }
  std::lock_guard<std::mutex> l(snap_mu);
  snap = s;
}

void Controller::Impl::Apply(LoopEvent& ev) {
  switch (ev.kind) {
    case LoopEvent::Kind::kWatch:
      ApplyWatch(ev.watch);
      break;
    case LoopEvent::Kind::kBindDone:
      BindDone(ev.pod, ev.node, ev.status);
      break;
    case LoopEvent::Kind::kConflictPod:
      if (ev.object.is_object()) {
        PodUpsert(ev.object);
      } else {
        PodGone(ev.pod);
      }
      break;
  }
}

void Controller::Impl::ApplyWatch(WatchEvent& ev) {
  if (ev.resource == "pods") {
    using T = WatchEvent::Type;
    if (ev.type == T::kReplace) {
      std::set<std::string> seen;
      for (auto& o : ev.objects) {
        seen.insert(ObjectKey(o));
        PodUpsert(o);
      }
      std::vector<std::string> gone;
      for (const auto& [k, p] : pods)
        if (!seen.count(k)) gone.push_back(k);
      for (const auto& k : gone) PodGone(k);
    } else if (ev.type == T::kDeleted) {
      PodGone(ObjectKey(ev.object));
    } else {
      PodUpsert(ev.object);
    }
    return;
  }
  if (ev.resource == "provisioningrequests") {
    if (provisioner) provisioner->Apply(ev);
    return;
  }
  ObjectCache::Changes changes = cache.Apply(ev);
  SayMarkProblems();
  if (changes.rebuild) need_rebuild = true;
  // Every Volcano (Workload API) gang is reconsidered: its size may have changed with what is
  // served.
  if (changes.volcano_relisted || changes.workload_podgroups_relisted)
    for (const auto& [k, g] : groups)
      if ((changes.volcano_relisted && g.kind == "Volcano") ||
          (changes.workload_podgroups_relisted && g.kind == kWorkloadPodGroupKind))
        dirty.insert(k);
  for (const auto& key : changes.sized_groups) GroupObjectChanged(key);
}

Controller::Impl::Group& Controller::Impl::GroupFor(const PodInfo& p) {
  const std::string key = p.GroupKey();
  auto [it, inserted] = groups.try_emplace(key);
  if (inserted) {
    Group& g = it->second;
    g.key = key;
    g.kind = p.group_kind;
    g.ns = p.ns;
    g.name = p.group_name;
  }
  return it->second;
}

void Controller::Impl::Unsettle(Group& g) {
  if (g.state != Group::State::kInEngine) {
    dirty.insert(g.key);
    return;
  }
  // Failed, not finished: the run goes on under a new id, and teaches the runtime estimator
  // nothing (its admission time stays with the group).
  if (engine && g.id >= 0) {
    engine->Fail(g.id, Now(), "resubmitted: its pods changed");
    ended_ids.push_back(g.id);
  }
  need_capacity_stale = true;
  ++metrics->resubmits;
  g.id = -1;
  g.state = Group::State::kWaiting;
  g.resubmit_admitted = g.admitted;
  g.admitted = false;
  dirty.insert(g.key);
}

void Controller::Impl::GroupObjectChanged(const std::string& key) {
  auto it = groups.find(key);
  if (it != groups.end() && it->second.state == Group::State::kInEngine && !it->second.admitted) {
    Unsettle(it->second);
    return;
  }
  dirty.insert(key);
}

void Controller::Impl::PodUpsert(const json& obj) {
  auto parsed = ParsePod(obj);
  if (!parsed.ok()) {
    SayInvalidPod(obj, std::string(parsed.status().message()));
    return;
  }
  PodInfo p = std::move(*parsed);
  const std::string key = p.Key();
  problems_said.erase(key + kInvalidSuffix);
  const bool ours = p.scheduler_name == options.scheduler_name;
  if (p.Terminal() || (p.deleting && !p.Bound())) {
    PodGone(key);
    return;
  }
  if (!ours) {
    if (!p.Bound()) return;  // another scheduler's business until it binds the pod
    p.group_kind = "Foreign";
    p.group_name = p.name;
  }
  auto it = pods.find(key);
  if (it == pods.end()) {
    Group& g = GroupFor(p);
    pods.emplace(key, std::move(p));
    g.foreign = !ours;
    g.pods.insert(key);
    Unsettle(g);
    return;
  }
  PodInfo& old = it->second;
  const bool newly_bound = p.Bound() && !old.Bound();
  // Its fields of time were edited: the workload comes back with the new values.
  const bool time_changed = !(p.time == old.time) || p.time_problems != old.time_problems;
  // A waiting pod's interruptible mark changed: where it may go changed (node_policy.h).
  const bool mark_changed =
      !p.Bound() && (ReadInterruptible(p.annotations) != ReadInterruptible(old.annotations) ||
                     p.non_preemptible != old.non_preemptible);
  // A scheduling gate went (or came): the pod joins its gang, or leaves it (gang_assembly.h).
  const bool gates_changed = p.scheduling_gates != old.scheduling_gates;
  // A DRA claim of a waiting pod got its ResourceClaim (created from its template).
  const bool claims_changed = !p.Bound() && ClaimNames(p) != ClaimNames(old);
  if (p.unhealthy != old.unhealthy) health_dirty = true;  // the kubelet's word on its devices
  old = std::move(p);
  if (!newly_bound) {
    if (auto g = groups.find(old.GroupKey());
        (time_changed || mark_changed || gates_changed || claims_changed) && g != groups.end())
      Unsettle(g->second);
    return;
  }
  auto a = assumed.find(key);
  if (a != assumed.end() && a->second.node == old.node_name) {
    assumed.erase(a);  // our own bind, confirmed
    return;
  }
  if (a != assumed.end()) assumed.erase(a);
  // Bound by someone else (or by an earlier incarnation): the engine learns the truth.
  auto g = groups.find(old.GroupKey());
  if (g != groups.end()) Unsettle(g->second);
}

void Controller::Impl::SayInvalidPod(const json& obj, const std::string& message) {
  const std::string key = ObjectKey(obj);
  spdlog::warn("pod {}: {}", key, message);
  // Only a pod Tessera is to place: another scheduler's pod is its business, and a bound pod's
  // own kubelet runs it.
  const json& spec = json_fields::At(obj, "spec");
  if (json_fields::Str(spec, "schedulerName") != options.scheduler_name ||
      !json_fields::Str(spec, "nodeName").empty())
    return;
  std::vector<std::string>& said = problems_said[key + kInvalidSuffix];
  if (said.size() == 1 && said.front() == message) return;
  said = {message};
  const json& md = json_fields::At(obj, "metadata");
  ObjectRef ref;
  ref.ns = json_fields::Str(md, "namespace");
  ref.name = json_fields::Str(md, "name");
  ref.uid = json_fields::Str(md, "uid");
  status_writer->Event(ref, "Warning", "InvalidPod",
                       message + "; Tessera leaves the pod unscheduled until it changes");
}

void Controller::Impl::PodGone(const std::string& key) {
  problems_said.erase(key + kInvalidSuffix);
  auto it = pods.find(key);
  if (it == pods.end()) return;
  PodInfo p = std::move(it->second);
  pods.erase(it);
  // It held devices of a node whose missing GPUs the count could not name (controller_health.cc):
  // judged again before the next cycle, so that none of them is given to a pod.
  if (auto u = unplaced_said.find(p.node_name); u != unplaced_said.end() && u->second > 0)
    health_dirty = true;
  assumed.erase(key);
  problems_said.erase(key);
  auto git = groups.find(p.GroupKey());
  if (git == groups.end()) return;
  Group& g = git->second;
  g.pods.erase(key);
  if (auto ev = g.evicting.find(key); ev != g.evicting.end()) {
    if (--victims_on_node[ev->second] <= 0) victims_on_node.erase(ev->second);
    g.evicting.erase(ev);
  }
  switch (g.state) {
    case Group::State::kEvicting:
      if (g.evicting.empty()) {
        g.state = Group::State::kWaiting;
        g.admitted = false;
        dirty.insert(g.key);
      }
      break;
    case Group::State::kInEngine:
      if (g.admitted && g.pods.empty()) {
        if (engine && g.id >= 0) {
          EndRun(g, accounting::RunEnd::kFinished, "");
          engine->Finish(g.id, Now());
          ended_ids.push_back(g.id);
        }
        g.id = -1;
        need_cycle = true;
        need_capacity_stale = true;
      } else {
        Unsettle(g);
        need_cycle = true;
      }
      break;
    case Group::State::kWaiting:
      break;
  }
  if (g.pods.empty() && g.state != Group::State::kEvicting) {
    if (g.state == Group::State::kInEngine && engine && g.id >= 0 && !g.admitted) {
      engine->Finish(g.id, Now());
      ended_ids.push_back(g.id);
      need_capacity_stale = true;
    }
    problems_said.erase(g.key);
    problems_said.erase(g.key + kUnreadSuffix);
    run_snapshots.erase(g.key);
    groups.erase(git);
  }
}

void Controller::Impl::BindDone(const std::string& key, const std::string& node, long status) {
  binds_in_flight.erase(key);
  if (status == 200 || status == 201) {
    ++metrics->binds_ok;
    ++pods_bound;
    if (auto a = assumed.find(key); a != assumed.end() && a->second.node == node)
      a->second.bind_ok = true;
    auto it = pods.find(key);
    if (it != pods.end() && options.scheduled_events)
      status_writer->Event(it->second, "Normal", "Scheduled",
                           fmt::format("Successfully assigned {} to {}", key, node));
    return;
  }
  auto a = assumed.find(key);
  if (a != assumed.end() && a->second.node == node) assumed.erase(a);
  if (status == Binder::kDropped) {
    need_rebuild = true;  // the pod is pending again
    return;
  }
  if (status == 404) {
    ++metrics->binds_not_found;
    return;  // the pod is gone; its deletion event follows
  }
  if (status == 409) {
    ++metrics->binds_conflict;
  } else {
    ++metrics->binds_error;
    spdlog::warn("tessera: bind {} -> {} failed (HTTP {}); resyncing", key, node, status);
  }
  need_rebuild = true;
}

Controller::Controller(KubeClient* client, ControllerOptions options, Metrics* metrics)
    : impl_(std::make_unique<Impl>(client, std::move(options), metrics)) {}

Controller::~Controller() { Stop(); }

void Controller::Start() { impl_->Start(); }

void Controller::Stop() {
  if (impl_) impl_->Stop();
}

void Controller::SetActive(bool active) {
  impl_->active = active;
  impl_->cv.notify_all();
}

bool Controller::synced() const { return impl_->synced.load(); }

bool Controller::ready() const {
  // `informers` is filled by Start() before the loop thread that sets `synced` exists: once
  // synced reads true, the vector is complete and never changes again.
  if (!impl_->synced) return false;
  for (const auto& i : impl_->informers)
    if (!i->healthy()) return false;
  return true;
}

const UtilizationTracker& Controller::utilization() const { return impl_->utilization; }
std::shared_ptr<const ClusterView> Controller::view() const { return impl_->view_holder.Get(); }

ControllerSnapshot Controller::snapshot() const {
  std::lock_guard<std::mutex> l(impl_->snap_mu);
  return impl_->snap;
}

}  // namespace tessera::k8s
