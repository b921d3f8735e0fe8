#include "k8s/controller.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "config/loader.h"
#include "engine/scheduler.h"
#include "fmt/format.h"
#include "k8s/event_recorder.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "k8s/proto.h"
#include "k8s/task_pool.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

using Clock = std::chrono::steady_clock;

// The status of a bind that was never sent (the replica stopped or stopped leading first).
constexpr long kBindDropped = -1;

constexpr const char* kQueueGroup = "/apis/tessera.dev/v1alpha1";
// Tessera's queue kinds, served as CRDs of group tessera.dev (deploy/crds).
constexpr const char* kQueueResources[] = {
    "resourceflavors",  "clusterqueues",          "localqueues", "cohorts", "topologies",
    "schedulerconfigs", "workloadpriorityclasses"};

std::string NowRfc3339() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool SameNode(const Node& a, bool a_ready, const Node& b, bool b_ready) {
  if (a_ready != b_ready || a.unschedulable != b.unschedulable || a.labels != b.labels ||
      !(a.allocatable == b.allocatable) || a.taints.size() != b.taints.size() ||
      a.gpu_memory_mib != b.gpu_memory_mib || a.gpu_replicas != b.gpu_replicas ||
      a.mig_dynamic != b.mig_dynamic || a.gpus.size() != b.gpus.size())
    return false;
  for (size_t i = 0; i < a.gpus.size(); ++i)
    if (a.gpus[i].nvlink != b.gpus[i].nvlink || a.gpus[i].numa != b.gpus[i].numa ||
        a.gpus[i].pcie != b.gpus[i].pcie)
      return false;
  for (size_t i = 0; i < a.taints.size(); ++i)
    if (a.taints[i].key != b.taints[i].key || a.taints[i].value != b.taints[i].value ||
        a.taints[i].effect != b.taints[i].effect)
      return false;
  return true;
}

// Keeps what the manifest loader reads of an API object: everything but status and the
// server's metadata (resourceVersion, managedFields, ... would only be noise).
json StripForLoader(const json& obj) {
  json out = obj;
  out.erase("status");
  json md;
  const json& in_md = obj.contains("metadata") ? obj["metadata"] : json::object();
  for (const char* k : {"name", "namespace", "labels", "annotations"})
    if (in_md.contains(k)) md[k] = in_md[k];
  out["metadata"] = md;
  return out;
}

}  // namespace

struct Controller::Impl {
  // --- what the loop consumes
  struct LoopEvent {
    enum class Kind { kWatch, kBindDone, kConflictPod };
    Kind kind = Kind::kWatch;
    WatchEvent watch;
    std::string pod;  // ns/name
    std::string node;
    long status = 0;
    json object;  // kConflictPod: the pod as the server has it (null when gone)
  };

  // A workload as the controller tracks it: the pods of one group.
  struct Group {
    std::string key, kind, ns, name;
    std::set<std::string> pods;  // member pod keys
    enum class State { kWaiting, kInEngine, kEvicting } state = State::kWaiting;
    WorkloadId id = -1;
    bool admitted = false;
    bool resubmit_admitted = false;  // Unsettle()d while admitted: Place() restores its pods
    bool foreign = false;            // a pod of another scheduler, bound: it only takes capacity
    std::vector<std::vector<std::string>> sets;  // engine pod set, index -> pod key
    double submitted = -1;
    std::string reason;                           // the pending reason last published
    double reason_at = -1;                        // when its FailedScheduling was last recorded
    std::map<std::string, std::string> evicting;  // pod key -> node it is evicted from
  };

  struct Assumed {
    std::string node;
    std::vector<int32_t> gpus;
    std::vector<int8_t> mig_starts;
    bool bind_ok = false;  // the server accepted the bind; its watch event has not come yet
  };

  // A Binding to send: the pod, its node, and annotations the server copies onto the pod.
  struct BindingBody {
    std::string ns, name, uid, node;
    std::vector<std::pair<std::string, std::string>> annotations;
  };

  static std::string BindingJson(const BindingBody& b) {
    json body = {{"apiVersion", "v1"},
                 {"kind", "Binding"},
                 {"metadata", {{"name", b.name}, {"namespace", b.ns}, {"uid", b.uid}}},
                 {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", b.node}}}};
    for (const auto& [k, v] : b.annotations) body["metadata"]["annotations"][k] = v;
    return body.dump();
  }

  struct PendingBind {
    std::string pod, node;
    std::vector<int32_t> gpus;
    std::vector<int8_t> mig_starts;
  };

  Impl(KubeClient* c, ControllerOptions o, Metrics* m)
      : client(c), options(std::move(o)), metrics(m) {}

  KubeClient* const client;
  const ControllerOptions options;
  Metrics* const metrics;
  const Clock::time_point start = Clock::now();

  std::vector<std::unique_ptr<Informer>> informers;
  std::unique_ptr<TaskPool> bind_pool, status_pool, event_pool;
  std::unique_ptr<EventRecorder> events;
  std::thread loop_thread;
  std::atomic<bool> stop{false};
  std::atomic<bool> active{true};
  std::atomic<bool> was_active{false};

  std::mutex mu;
  std::condition_variable cv;
  std::deque<LoopEvent> inbox;  // GUARDED_BY(mu)

  mutable std::mutex snap_mu;
  ControllerSnapshot snap;  // GUARDED_BY(snap_mu)
  std::atomic<bool> synced{false};
  std::atomic<int64_t> pods_bound{0};

  // --- loop-owned state
  std::unordered_map<std::string, PodInfo> pods;
  std::map<std::string, std::pair<Node, bool>> nodes;  // name -> node, ready
  std::map<std::string, PodGroupInfo> podgroups;
  std::map<std::string, VolcanoPodGroupInfo> volcano_groups;
  bool volcano_served = false;  // scheduling.volcano.sh PodGroups are served (CRD installed)
  std::map<std::string, JobInfo> jobs;
  std::map<std::string, PriorityClass> priority_classes;
  std::map<std::string, Labels> namespaces;
  std::map<std::string, std::map<std::string, json>> queue_objects;  // resource -> key -> obj
  std::unordered_map<std::string, Group> groups;
  std::unordered_map<std::string, Assumed> assumed;
  std::unordered_set<std::string> binds_in_flight;  // pods/binding sent, no answer yet
  std::atomic<bool> json_binds{false};  // the server refused a protobuf Binding: JSON from now
  std::unordered_map<std::string, int> victims_on_node;
  std::vector<PendingBind> nominated;
  std::set<std::string> dirty;   // groups to (re)consider for submission
  std::string eviction_version;  // "policy/v1" or "policy/v1beta1"

  std::unique_ptr<Scheduler> engine;
  std::vector<std::string> id_to_group;
  std::unordered_map<std::string, NodeId> node_index;
  std::vector<std::string> node_names;
  bool need_rebuild = true;
  bool need_cycle = false;
  Clock::time_point last_rebuild{};
  Clock::time_point last_status{};
  Clock::time_point last_group_count{};
  int64_t waiting_groups = 0, pending_workloads = 0;  // as of last_group_count
  double decision_seconds = 0;
  std::map<std::string, std::string> written_status;
  std::set<std::string> logged_diagnostics;  // object -> last status body written

  double Now() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  void Push(LoopEvent ev) {
    {
      std::lock_guard<std::mutex> l(mu);
      inbox.push_back(std::move(ev));
    }
    cv.notify_one();
  }

  void AddInformer(const std::string& resource, const std::string& path, bool optional,
                   bool protobuf = false) {
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

  void Start() {
    bind_pool = std::make_unique<TaskPool>(options.bind_workers);
    status_pool = std::make_unique<TaskPool>(options.status_workers);
    // Events have writers of their own: a burst of Scheduled Events (one per bound pod) must not
    // hold up the PodScheduled conditions and status writes that users and the autoscaler read.
    event_pool = std::make_unique<TaskPool>(options.event_workers);
    EventRecorderOptions eo;
    eo.component = options.scheduler_name;
    eo.instance = options.instance;
    eo.protobuf = options.protobuf;
    events = std::make_unique<EventRecorder>(
        client, [this](std::function<void()> f) { event_pool->Post(std::move(f)); }, eo);
    // The Eviction API moved to policy/v1 in Kubernetes 1.22; older servers only have v1beta1.
    eviction_version = "policy/v1beta1";
    if (auto r = client->Get("/apis/policy/v1"); r.ok() && r->status == 200)
      eviction_version = "policy/v1";
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
    for (const char* r : kQueueResources)
      AddInformer(r, fmt::format("{}/{}", kQueueGroup, r), true);
    for (auto& i : informers) i->Start();
    loop_thread = std::thread([this] { Loop(); });
  }

  void Stop() {
    stop = true;
    cv.notify_all();
    if (loop_thread.joinable()) loop_thread.join();
    for (auto& i : informers) i->Stop();
    // Binds already sent finish (their results are dropped); nothing new is started.
    if (events) events->Stop();
    bind_pool.reset();
    status_pool.reset();
    event_pool.reset();
  }

  // ---------------------------------------------------------------- the loop
  void Loop() {
    while (!stop) {
      std::deque<LoopEvent> batch;
      {
        std::unique_lock<std::mutex> l(mu);
        cv.wait_for(l, std::chrono::milliseconds(100), [this] { return stop || !inbox.empty(); });
        batch.swap(inbox);
      }
      for (auto& ev : batch) Apply(ev);
      if (!synced) {
        bool all = true;
        for (auto& i : informers) all = all && i->synced();
        if (!all) continue;
        synced = true;
        spdlog::info("tessera: caches synced: {} nodes, {} pods", nodes.size(), pods.size());
      }
      if (!active) {
        was_active = false;
        continue;
      }
      if (!was_active) {
        was_active = true;
        need_rebuild = true;  // a new leader trusts only what the server says
      }
      auto t0 = Clock::now();
      if (need_rebuild && std::chrono::duration<double>(t0 - last_rebuild).count() >=
                              options.min_rebuild_interval_s)
        Rebuild();
      if (engine) {
        for (const auto& key : dirty) {
          auto it = groups.find(key);
          if (it != groups.end()) Place(it->second);
        }
        dirty.clear();
        if (need_cycle) Cycle();
        ReleaseNominated();
      }
      decision_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      if (std::chrono::duration<double>(Clock::now() - last_status).count() >=
          options.status_period_s) {
        last_status = Clock::now();
        WriteStatuses();
      }
      UpdateSnapshot();
    }
  }

  void UpdateSnapshot() {
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
    s.engine_workloads = engine ? engine->num_workloads() : 0;
    s.rebuilds = metrics->rebuilds.load();
    s.cycles = metrics->cycles.load();
    s.synced = synced.load();
    s.decision_seconds = decision_seconds;
    if (events) {
      EventRecorderStats es = events->stats();
      s.events_created = es.created;
      s.events_patched = es.patched;
      s.events_recorded = es.recorded;
      s.events_written = es.written;
      s.events_dropped = es.dropped;
      s.events_queued = es.queued;
      metrics->events_written = es.written;
      metrics->events_dropped = es.dropped;
      metrics->events_queued = es.queued;
    }
    if (status_pool) s.status_writes_queued = static_cast<int64_t>(status_pool->queued());
    std::lock_guard<std::mutex> l(snap_mu);
    snap = s;
  }

  // ---------------------------------------------------------------- events in
  void Apply(LoopEvent& ev) {
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

  void ApplyWatch(WatchEvent& ev) {
    const std::string& r = ev.resource;
    using T = WatchEvent::Type;
    if (r == "pods") {
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
    if (r == "nodes") {
      auto upsert = [&](const json& o) {
        bool ready = true;
        std::vector<std::string> problems;
        auto n = ParseNode(o, &ready, &problems);
        if (!n.ok()) {
          spdlog::warn("node {}: {}", ObjectKey(o), std::string(n.status().message()));
          return;
        }
        auto it = nodes.find(n->name);
        if (it != nodes.end() && SameNode(it->second.first, it->second.second, *n, ready)) return;
        for (const auto& p : problems) spdlog::warn("node {}: {}", n->name, p);
        const std::string name = n->name;
        nodes[name] = {std::move(*n), ready};
        need_rebuild = true;
      };
      if (ev.type == T::kReplace) {
        nodes.clear();
        for (auto& o : ev.objects) upsert(o);
        need_rebuild = true;
      } else if (ev.type == T::kDeleted) {
        nodes.erase(ev.object["metadata"].value("name", ""));
        need_rebuild = true;
      } else {
        upsert(ev.object);
      }
      return;
    }
    auto each = [&](auto&& fn) {
      if (ev.type == T::kReplace) {
        for (auto& o : ev.objects) fn(o, false);
      } else {
        fn(ev.object, ev.type == T::kDeleted);
      }
    };
    if (r == "podgroups") {
      if (ev.type == T::kReplace) podgroups.clear();
      each([&](const json& o, bool del) {
        auto key = ObjectKey(o);
        if (del) {
          podgroups.erase(key);
        } else if (auto g = ParsePodGroup(o); g.ok()) {
          podgroups[key] = *g;
        }
        GroupObjectChanged("PodGroup:" + key);
      });
    } else if (r == "volcanopodgroups") {
      if (ev.type == T::kReplace) {
        volcano_groups.clear();
        volcano_served = ev.served;
        // Every Volcano gang is reconsidered: its size may have changed with what is served.
        for (const auto& [k, g] : groups)
          if (g.kind == "Volcano") dirty.insert(k);
      }
      each([&](const json& o, bool del) {
        auto key = ObjectKey(o);
        if (del) {
          volcano_groups.erase(key);
        } else if (auto g = ParseVolcanoPodGroup(o); g.ok()) {
          volcano_groups[key] = *g;
        } else {
          spdlog::warn("Volcano PodGroup {}: {}", key, std::string(g.status().message()));
          volcano_groups.erase(key);
        }
        GroupObjectChanged("Volcano:" + key);
      });
    } else if (r == "jobs") {
      if (ev.type == T::kReplace) jobs.clear();
      each([&](const json& o, bool del) {
        auto key = ObjectKey(o);
        if (del) {
          jobs.erase(key);
        } else if (auto j = ParseJob(o); j.ok()) {
          jobs[key] = *j;
        }
        GroupObjectChanged("Job:" + key);
      });
    } else if (r == "priorityclasses") {
      if (ev.type == T::kReplace) priority_classes.clear();
      each([&](const json& o, bool del) {
        auto pc = ParsePriorityClass(o);
        if (!pc.ok()) return;
        if (del) {
          priority_classes.erase(pc->name);
        } else {
          priority_classes[pc->name] = *pc;
        }
      });
      need_rebuild = true;
    } else if (r == "namespaces") {
      bool changed = ev.type == T::kReplace;
      if (ev.type == T::kReplace) namespaces.clear();
      each([&](const json& o, bool del) {
        std::string name = o["metadata"].value("name", "");
        Labels labels;
        if (o["metadata"].contains("labels") && o["metadata"]["labels"].is_object())
          for (auto it = o["metadata"]["labels"].begin(); it != o["metadata"]["labels"].end(); ++it)
            if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
        labels["kubernetes.io/metadata.name"] = name;
        if (del) {
          changed = namespaces.erase(name) > 0 || changed;
        } else if (namespaces[name] != labels) {
          namespaces[name] = labels;
          changed = true;
        }
      });
      // Only queue selection depends on namespace labels.
      if (changed && !queue_objects["clusterqueues"].empty()) need_rebuild = true;
    } else {
      auto& store = queue_objects[r];
      if (ev.type == T::kReplace) store.clear();
      each([&](const json& o, bool del) {
        auto key = ObjectKey(o);
        if (del) {
          store.erase(key);
        } else {
          store[key] = StripForLoader(o);
        }
      });
      need_rebuild = true;
    }
  }

  Group& GroupFor(const PodInfo& p) {
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

  // A change in a group's pods (one more, one gone, one bound by someone else). The workload
  // leaves the engine and comes back as it is now, without rebuilding anything else: Place()
  // restores the pods that are bound (or being bound) where they are, with their GPUs, and the
  // engine places the others as it places any pods beyond an admitted gang's minimum (kScaleUp).
  // A pending workload simply waits again with its new pod count, keeping its submission time.
  void Unsettle(Group& g) {
    if (g.state != Group::State::kInEngine) {
      dirty.insert(g.key);
      return;
    }
    if (engine && g.id >= 0) engine->Finish(g.id, Now());
    ++metrics->resubmits;
    g.id = -1;
    g.state = Group::State::kWaiting;
    g.resubmit_admitted = g.admitted;
    g.admitted = false;
    dirty.insert(g.key);
  }

  // The object that sizes a group (PodGroup, Job) changed: a pending workload is considered
  // again with the new size; an admitted one keeps running as it is.
  void GroupObjectChanged(const std::string& key) {
    auto it = groups.find(key);
    if (it != groups.end() && it->second.state == Group::State::kInEngine && !it->second.admitted) {
      Unsettle(it->second);
      return;
    }
    dirty.insert(key);
  }

  void PodUpsert(const json& obj) {
    auto parsed = ParsePod(obj);
    if (!parsed.ok()) {
      spdlog::warn("pod {}: {}", ObjectKey(obj), std::string(parsed.status().message()));
      return;
    }
    PodInfo p = std::move(*parsed);
    const std::string key = p.Key();
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
    old = std::move(p);
    if (!newly_bound) return;
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

  void PodGone(const std::string& key) {
    auto it = pods.find(key);
    if (it == pods.end()) return;
    PodInfo p = std::move(it->second);
    pods.erase(it);
    assumed.erase(key);
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
          if (engine && g.id >= 0) engine->Finish(g.id, Now());
          g.id = -1;
          need_cycle = true;
        } else {
          Unsettle(g);
          need_cycle = true;
        }
        break;
      case Group::State::kWaiting:
        break;
    }
    if (g.pods.empty() && g.state != Group::State::kEvicting) {
      if (g.state == Group::State::kInEngine && engine && g.id >= 0 && !g.admitted)
        engine->Finish(g.id, Now());
      groups.erase(git);
    }
  }

  // ---------------------------------------------------------------- the engine
  int32_t MinMember(const Group& g, std::string* wait_reason) const {
    const int32_t have = static_cast<int32_t>(g.pods.size());
    if (g.kind == "PodGroup") {
      auto it = podgroups.find(g.ns + "/" + g.name);
      if (it == podgroups.end()) {
        *wait_reason = fmt::format("waiting for PodGroup {}/{} (pods carry its label {})", g.ns,
                                   g.name, kPodGroupLabel);
        return have + 1;
      }
      return it->second.min_member;
    }
    if (g.kind == "Volcano") {
      auto it = volcano_groups.find(g.ns + "/" + g.name);
      if (it != volcano_groups.end()) return it->second.min_member;
      if (volcano_served) {
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
      for (const auto& k : g.pods) {
        const PodInfo& p = pods.at(k);
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
    if (g.kind == "Job") {
      auto it = jobs.find(g.ns + "/" + g.name);
      if (it != jobs.end()) return it->second.GangSize();
    }
    return std::max(have, 1);
  }

  // Volcano's queue names the LocalQueue when the pods name none, as for a Volcano Job in
  // `tessera sim`; but its webhook sets "default" on every PodGroup, which says nothing unless
  // that namespace has a LocalQueue "default".
  std::string VolcanoQueue(const Group& g) const {
    auto it = volcano_groups.find(g.ns + "/" + g.name);
    if (it == volcano_groups.end() || it->second.queue.empty()) return "";
    const std::string& q = it->second.queue;
    if (q == "default") {
      auto lq = queue_objects.find("localqueues");
      if (lq == queue_objects.end() || !lq->second.count(g.ns + "/" + q)) return "";
    }
    return q;
  }

  void Rebuild() {
    auto t0 = Clock::now();
    last_rebuild = t0;
    need_rebuild = false;
    ++metrics->rebuilds;
    Model m;
    node_index.clear();
    node_names.clear();
    m.nodes.reserve(nodes.size());
    for (const auto& [name, nr] : nodes) {
      node_index[name] = static_cast<NodeId>(m.nodes.size());
      node_names.push_back(name);
      m.nodes.push_back(nr.first);
      if (!nr.second) m.nodes.back().unschedulable = true;  // NotReady: keep what runs there
    }
    LoadResult lr;
    for (const char* r : kQueueResources) {
      auto qit = queue_objects.find(r);
      if (qit == queue_objects.end()) continue;
      for (const auto& [key, obj] : qit->second)
        LoadManifestText(obj.dump(), fmt::format("{} {}", r, key[0] == '/' ? key.substr(1) : key),
                         lr);
    }
    // Each problem is logged once, not at every rebuild.
    std::set<std::string> diags;
    for (const auto& d : lr.diagnostics) {
      if (d.severity == Diagnostic::Severity::kNotice) continue;
      std::string text = d.ToString();
      if (!logged_diagnostics.count(text)) spdlog::warn("queue objects: {}", text);
      diags.insert(std::move(text));
    }
    logged_diagnostics = std::move(diags);
    m.flavors = std::move(lr.model.flavors);
    m.topologies = std::move(lr.model.topologies);
    m.cluster_queues = std::move(lr.model.cluster_queues);
    m.cohorts = std::move(lr.model.cohorts);
    m.local_queues = std::move(lr.model.local_queues);
    m.workload_priority_classes = std::move(lr.model.workload_priority_classes);
    m.config = lr.model.config;
    for (const auto& [name, pc] : priority_classes) m.priority_classes.push_back(pc);
    m.namespace_labels = namespaces;
    auto created = Scheduler::Create(std::move(m));
    if (!created.ok()) {
      spdlog::error("tessera: cannot build the engine: {} (retrying on the next change)",
                    std::string(created.status().message()));
      engine.reset();
      return;
    }
    engine = std::move(*created);
    id_to_group.clear();
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
    dirty.clear();
    need_cycle = true;
    spdlog::debug("tessera: engine rebuilt: {} nodes, {} workloads in {:.1f} ms", nodes.size(),
                  engine->num_workloads(),
                  std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }

  const std::string* BoundNode(const std::string& pod_key) const {
    auto a = assumed.find(pod_key);
    if (a != assumed.end()) return &a->second.node;
    auto p = pods.find(pod_key);
    if (p != pods.end() && p->second.Bound()) return &p->second.node_name;
    return nullptr;
  }

  // Puts a group into the engine: restored where its pods are bound, submitted when its gang is
  // complete, otherwise left waiting.
  void Place(Group& g) {
    if (g.state != Group::State::kWaiting || !engine) return;
    std::vector<std::string> members(g.pods.begin(), g.pods.end());
    if (members.empty()) return;
    std::string wait_reason;
    const int32_t min = g.foreign ? 1 : MinMember(g, &wait_reason);
    size_t bound = 0;
    for (const auto& k : members) bound += BoundNode(k) != nullptr;
    if (bound == 0 && static_cast<int32_t>(members.size()) < min) {
      if (wait_reason.empty())
        wait_reason =
            fmt::format("waiting for the gang's pods: {} of {} exist", members.size(), min);
      Publish(g, wait_reason);
      return;
    }
    Workload w;
    w.ns = g.ns;
    w.name = g.name;
    w.kind = g.foreign ? "Pod" : g.kind;
    const PodInfo& first = pods.at(members.front());
    if (!g.foreign) {
      w.queue_name = first.queue_name;
      w.priority_class = first.priority_class;
      w.workload_priority_class = first.workload_priority_class;
      if (g.kind == "Job") {
        if (auto j = jobs.find(g.ns + "/" + g.name); j != jobs.end()) {
          if (w.queue_name.empty()) w.queue_name = j->second.queue_name;
          if (w.workload_priority_class.empty())
            w.workload_priority_class = j->second.workload_priority_class;
        }
      }
      if (g.kind == "Volcano") {
        if (w.queue_name.empty()) w.queue_name = VolcanoQueue(g);
        auto v = volcano_groups.find(g.ns + "/" + g.name);
        if (w.priority_class.empty() && v != volcano_groups.end())
          w.priority_class = v->second.priority_class;
      }
    }
    // One pod set when the pods are alike (the usual gang), else one per pod.
    bool alike = true;
    for (const auto& k : members) {
      const PodSet& s = pods.at(k).set;
      alike = alike && s.requests == first.set.requests &&
              s.node_selector == first.set.node_selector &&
              s.tolerations.size() == first.set.tolerations.size() &&
              s.affinity.required_terms.size() == first.set.affinity.required_terms.size() &&
              s.topology.level == first.set.topology.level &&
              s.topology.required == first.set.topology.required &&
              s.anti_affinity == first.set.anti_affinity;
    }
    g.sets.clear();
    if (alike) {
      PodSet ps = first.set;
      ps.name = "main";
      ps.count = static_cast<int32_t>(members.size());
      w.pod_sets.push_back(std::move(ps));
      g.sets.push_back(members);
    } else {
      for (const auto& k : members) {
        w.pod_sets.push_back(pods.at(k).set);
        g.sets.push_back({k});
      }
    }
    // A Deployment's replicas are workloads of one pod each: their anti-affinity spans them.
    if (g.kind == "Pod" && !first.owner_replicaset.empty() &&
        first.set.anti_affinity != HostnameAntiAffinity::kNone)
      w.spread_group = g.ns + "/ReplicaSet:" + first.owner_replicaset;
    w.min_count = std::min<int32_t>(min, static_cast<int32_t>(members.size()));
    w.source = g.key;
    WorkloadId id = engine->AddWorkload(std::move(w));
    if (static_cast<size_t>(id) >= id_to_group.size()) id_to_group.resize(id + 1);
    id_to_group[id] = g.key;
    g.id = id;
    g.state = Group::State::kInEngine;
    if (g.submitted < 0) g.submitted = Now();
    need_cycle = true;
    if (bound > 0) {
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
      absl::Status st = placements.empty()
                            ? absl::FailedPreconditionError("its nodes are not known")
                            : engine->Restore(id, placements, Now());
      if (!st.ok()) {
        // GPU indices that clash (an annotation edited by hand) are dropped before giving up:
        // the engine then picks free devices for the record.
        for (auto& pl : placements) {
          pl.gpus.clear();
          pl.mig_starts.clear();
        }
        if (!placements.empty()) st = engine->Restore(id, placements, Now());
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
      return;
    }
    g.resubmit_admitted = false;
    g.admitted = false;
    engine->Submit(id, g.submitted);
  }

  void Cycle() {
    need_cycle = false;
    for (int round = 0; round < 8; ++round) {
      auto t0 = Clock::now();
      std::vector<Decision> decisions = engine->RunCycle(Now());
      metrics->cycle_duration.Observe(std::chrono::duration<double>(Clock::now() - t0).count());
      ++metrics->cycles;
      if (decisions.empty()) break;
      // Victims first, so that the preemptor's binds wait for them.
      std::stable_sort(
          decisions.begin(), decisions.end(), [](const Decision& a, const Decision& b) {
            return (a.type == Decision::Type::kPreempt) > (b.type == Decision::Type::kPreempt);
          });
      for (const Decision& d : decisions) Carry(d);
    }
    PublishPendingReasons();
  }

  Group* GroupOf(WorkloadId id) {
    if (id < 0 || static_cast<size_t>(id) >= id_to_group.size()) return nullptr;
    auto it = groups.find(id_to_group[id]);
    if (it == groups.end() || it->second.id != id) return nullptr;
    return &it->second;
  }

  void Carry(const Decision& d) {
    Group* g = GroupOf(d.workload);
    if (!g) return;
    switch (d.type) {
      case Decision::Type::kAdmit:
      case Decision::Type::kScaleUp:
        if (d.type == Decision::Type::kAdmit) {
          metrics->admission_wait.Observe(std::max(0.0, Now() - g->submitted));
          g->admitted = true;
          g->reason.clear();
        }
        for (const PodPlacement& pl : d.pods) {
          if (pl.pod_set < 0 || static_cast<size_t>(pl.pod_set) >= g->sets.size()) continue;
          const auto& set = g->sets[pl.pod_set];
          if (pl.index < 0 || static_cast<size_t>(pl.index) >= set.size()) continue;
          const std::string& key = set[pl.index];
          const std::string& node = node_names[pl.node];
          assumed[key] = Assumed{node, pl.gpus, pl.mig_starts};
          if (victims_on_node.count(node)) {
            nominated.push_back(PendingBind{key, node, pl.gpus, pl.mig_starts});
          } else {
            Bind(key, node, pl.gpus, pl.mig_starts);
          }
        }
        break;
      case Decision::Type::kPreempt: {
        ++metrics->preemptions;
        std::string preemptor;
        if (Group* p = GroupOf(d.preemptor)) preemptor = p->key;
        for (const auto& k : g->pods) {
          const std::string* node = BoundNode(k);
          if (!node) continue;
          g->evicting[k] = *node;
          ++victims_on_node[*node];
          Evict(k, d.reason.empty() ? fmt::format("preempted by {}", preemptor) : d.reason);
        }
        engine->Finish(g->id, Now());
        g->id = -1;
        g->admitted = false;
        g->state = g->evicting.empty() ? Group::State::kWaiting : Group::State::kEvicting;
        if (g->state == Group::State::kWaiting) dirty.insert(g->key);
        break;
      }
      case Decision::Type::kReject:
        Publish(*g, d.reason);
        break;
    }
  }

  void ReleaseNominated() {
    if (nominated.empty()) return;
    std::vector<PendingBind> keep;
    for (auto& b : nominated) {
      auto a = assumed.find(b.pod);
      if (a == assumed.end() || a->second.node != b.node) continue;  // withdrawn meanwhile
      if (victims_on_node.count(b.node)) {
        keep.push_back(std::move(b));
      } else {
        Bind(b.pod, b.node, b.gpus, b.mig_starts);
      }
    }
    nominated.swap(keep);
  }

  // ---------------------------------------------------------------- API writes
  void Bind(const std::string& key, const std::string& node, const std::vector<int32_t>& gpus,
            const std::vector<int8_t>& mig_starts) {
    auto it = pods.find(key);
    if (it == pods.end()) return;
    const PodInfo& p = it->second;
    // The server copies a Binding's annotations onto the pod in the same write.
    BindingBody b{p.ns, p.name, p.uid, node, {}};
    if (!gpus.empty()) b.annotations.emplace_back(kGpuIndicesAnnotation, FormatGpuIndices(gpus));
    if (!mig_starts.empty())
      b.annotations.emplace_back(kMigStartsAnnotation, FormatGpuIndices(std::vector<int32_t>(
                                                           mig_starts.begin(), mig_starts.end())));
    std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/binding", p.ns, p.name);
    binds_in_flight.insert(key);
    bind_pool->Post([this, key, path, b = std::move(b)] {
      const std::string& node = b.node;
      // Queued binds are dropped once this replica stops or stops leading: only binds already
      // sent finish. The pod stays pending, and the next leader (or this one, rebuilt) decides.
      if (stop || !active) {
        LoopEvent dropped;
        dropped.kind = LoopEvent::Kind::kBindDone;
        dropped.pod = key;
        dropped.node = node;
        dropped.status = kBindDropped;
        Push(std::move(dropped));
        return;
      }
      // As protobuf unless --json-only: the server decodes it for less than JSON. Encoded here,
      // off the scheduling loop.
      bool pb = options.protobuf && !json_binds;
      std::string payload =
          pb ? proto::EncodeBinding(b.ns, b.name, b.uid, b.annotations, node) : BindingJson(b);
      long status = 0;
      for (int attempt = 0; attempt < 4 && !stop; ++attempt) {
        auto t0 = Clock::now();
        auto resp = pb ? client->Request("POST", path, payload, proto::kMediaType, proto::kAccept)
                       : client->Post(path, payload);
        metrics->bind_latency.Observe(std::chrono::duration<double>(Clock::now() - t0).count());
        if (pb && resp.ok() && resp->status == 415) {
          // A server (or proxy) that takes no protobuf bodies: JSON from now on.
          if (!json_binds.exchange(true))
            spdlog::warn(
                "tessera: the API server refused a protobuf Binding (415); binding "
                "with JSON");
          pb = false;
          payload = BindingJson(b);
          --attempt;
          continue;
        }
        if (resp.ok() && resp->status < 500 && resp->status != 429) {
          status = resp->status;
          break;
        }
        status = resp.ok() ? resp->status : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
      }
      LoopEvent ev;
      ev.kind = LoopEvent::Kind::kBindDone;
      ev.pod = key;
      ev.node = node;
      ev.status = status;
      if (status == 409) {
        // Someone else bound it, or a resync is due: fetch the pod as it is now.
        auto slash = key.find('/');
        auto got = client->Get(fmt::format("/api/v1/namespaces/{}/pods/{}", key.substr(0, slash),
                                           key.substr(slash + 1)));
        LoopEvent cev;
        cev.kind = LoopEvent::Kind::kConflictPod;
        cev.pod = key;
        if (got.ok() && got->status == 200)
          cev.object = json::parse(got->body, nullptr, /*allow_exceptions=*/false);
        if (got.ok() && (got->status == 200 || got->status == 404)) Push(std::move(cev));
      }
      Push(std::move(ev));
    });
  }

  void BindDone(const std::string& key, const std::string& node, long status) {
    binds_in_flight.erase(key);
    if (status == 200 || status == 201) {
      ++metrics->binds_ok;
      ++pods_bound;
      if (auto a = assumed.find(key); a != assumed.end() && a->second.node == node)
        a->second.bind_ok = true;
      auto it = pods.find(key);
      if (it != pods.end() && options.scheduled_events)
        PostEvent(it->second, "Normal", "Scheduled",
                  fmt::format("Successfully assigned {} to {}", key, node));
      return;
    }
    auto a = assumed.find(key);
    if (a != assumed.end() && a->second.node == node) assumed.erase(a);
    if (status == kBindDropped) {
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

  void Evict(const std::string& key, const std::string& why) {
    auto it = pods.find(key);
    if (it == pods.end()) return;
    const PodInfo& p = it->second;
    json body = {{"apiVersion", eviction_version},
                 {"kind", "Eviction"},
                 {"metadata", {{"name", p.name}, {"namespace", p.ns}}},
                 {"deleteOptions", {{"gracePeriodSeconds", p.grace_period}}}};
    std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/eviction", p.ns, p.name);
    PostEvent(p, "Normal", "Preempted", why);
    std::string payload = body.dump();
    bind_pool->Post([this, path, payload] {
      if (stop || !active) return;
      for (int attempt = 0; attempt < 20 && !stop; ++attempt) {
        auto resp = client->Post(path, payload);
        if (resp.ok() && (resp->status == 200 || resp->status == 201 || resp->status == 404)) {
          ++metrics->evictions_ok;
          return;
        }
        // 429: a PodDisruptionBudget says not now; 5xx and transport errors: try again.
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 100 << attempt)));
      }
      ++metrics->evictions_error;
    });
  }

  void PostEvent(const PodInfo& p, const char* type, const char* reason, const std::string& msg) {
    ObjectRef ref;
    ref.ns = p.ns;
    ref.name = p.name;
    ref.uid = p.uid;
    events->Record(ref, type, reason, msg);
  }

  // Tells the group's pods why they wait: PodScheduled=False/Unschedulable with the engine's
  // explanation (what the cluster autoscaler looks for), and a FailedScheduling Event.
  // A reason that stays the same is recorded again (the Event's count goes up, as for
  // kube-scheduler's every failed attempt) at most every failed_event_interval_s.
  void Publish(Group& g, const std::string& reason) {
    if (reason.empty() || g.foreign) return;
    const double now = Now();
    const bool changed = reason != g.reason;
    if (!changed && (options.failed_event_interval_s < 0 ||
                     now - g.reason_at < options.failed_event_interval_s))
      return;
    g.reason = reason;
    g.reason_at = now;
    for (const auto& k : g.pods) {
      auto it = pods.find(k);
      if (it == pods.end() || it->second.Bound() || assumed.count(k)) continue;
      PodInfo& p = it->second;
      PostEvent(p, "Warning", "FailedScheduling", reason);
      if (!changed || p.scheduled_condition == reason) continue;
      json patch = {{"status",
                     {{"conditions",
                       {{{"type", "PodScheduled"},
                         {"status", "False"},
                         {"reason", "Unschedulable"},
                         {"message", reason},
                         {"lastTransitionTime", NowRfc3339()}}}}}}};
      std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status", p.ns, p.name);
      std::string payload = patch.dump();
      status_pool->Post([this, path, payload] {
        // The answer is the whole pod: protobuf costs the server less to encode.
        if (!stop)
          (void)client->Patch(path, payload, PatchType::kStrategicMerge,
                              options.protobuf ? proto::kAccept : "application/json");
      });
    }
  }

  void PublishPendingReasons() {
    for (auto& [k, g] : groups) {
      if (g.state != Group::State::kInEngine || g.admitted || g.id < 0) continue;
      const WorkloadStatus& st = engine->status(g.id);
      if (st.state == WorkloadState::kPending || st.state == WorkloadState::kRejected)
        Publish(g, st.reason);
    }
  }

  void WriteStatus(const std::string& path, const json& status) {
    std::string body = json{{"status", status}}.dump();
    auto& last = written_status[path];
    if (last == body) return;
    last = body;
    status_pool->Post([this, path, body] {
      if (stop) return;
      auto r = client->Patch(path, body, PatchType::kMerge);
      if (r.ok() && r->status == 404 && path.size() > 7) {
        // A CRD without the status subresource: the status lives in the main resource.
        (void)client->Patch(path.substr(0, path.size() - 7), body, PatchType::kMerge);
      }
    });
  }

  void WriteStatuses() {
    if (!engine || !active) return;
    events->Flush();  // occurrences the per-object rate limit held back
    // PodGroups: phase and how many of their pods are bound.
    for (const auto& [key, pg] : podgroups) {
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
      std::string phase = scheduled >= pg.min_member ? "Scheduled"
                          : members >= pg.min_member ? "Pending"
                                                     : "PreScheduling";
      if (scheduled > 0 && scheduled < pg.min_member) phase = "Scheduling";
      WriteStatus(
          fmt::format("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{}/podgroups/{}/status", pg.ns,
                      pg.name),
          json{{"phase", phase}, {"scheduled", scheduled}});
    }
    // ClusterQueues: usage per flavor, pending and admitted workloads; and the gauges.
    const Model& m = engine->model();
    std::map<std::string, int64_t> pending, admitted, gpus;
    std::vector<int64_t> cq_pending(m.cluster_queues.size()), cq_admitted(m.cluster_queues.size());
    for (const auto& [k, g] : groups) {
      if (g.state != Group::State::kInEngine || g.id < 0 || g.foreign) continue;
      const WorkloadStatus& st = engine->status(g.id);
      int32_t cq = st.cluster_queue;
      std::string name = cq >= 0 ? m.cluster_queues[cq].name : "";
      if (st.state == WorkloadState::kPending) {
        ++pending[name];
        if (cq >= 0) ++cq_pending[cq];
      } else if (st.state == WorkloadState::kAdmitted) {
        ++admitted[name];
        if (cq >= 0) ++cq_admitted[cq];
      }
    }
    int64_t queued_gpus = 0;
    for (size_t c = 0; c < m.cluster_queues.size(); ++c) {
      const ClusterQueue& cq = m.cluster_queues[c];
      pending.try_emplace(cq.name, 0);
      admitted.try_emplace(cq.name, 0);
      json usage = json::array();
      std::set<std::string> flavors_seen;
      for (const auto& rg : cq.resource_groups) {
        for (const auto& fq : rg.flavors) {
          if (!flavors_seen.insert(fq.flavor).second) continue;
          int32_t f = -1;
          for (size_t i = 0; i < m.flavors.size(); ++i)
            if (m.flavors[i].name == fq.flavor) f = static_cast<int32_t>(i);
          json res = json::array();
          if (f >= 0) {
            Resources u = engine->ClusterQueueUsage(static_cast<int32_t>(c), f);
            for (ResourceId r : rg.covered)
              res.push_back({{"name", ResourceName(r)}, {"total", FormatQuantity(r, u[r])}});
            gpus[fq.flavor] += u[kGpu];
            queued_gpus += u[kGpu];
          }
          usage.push_back({{"name", fq.flavor}, {"resources", res}});
        }
      }
      WriteStatus(fmt::format("{}/clusterqueues/{}/status", kQueueGroup, cq.name),
                  json{{"pendingWorkloads", cq_pending[c]},
                       {"reservingWorkloads", cq_admitted[c]},
                       {"admittedWorkloads", cq_admitted[c]},
                       {"flavorsReservation", usage},
                       {"flavorsUsage", usage}});
    }
    gpus[""] = engine->gpus_allocated() - queued_gpus;
    metrics->SetGauges(std::move(pending), std::move(admitted), std::move(gpus));
  }
};

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

ControllerSnapshot Controller::snapshot() const {
  std::lock_guard<std::mutex> l(impl_->snap_mu);
  return impl_->snap;
}

}  // namespace tessera::k8s
