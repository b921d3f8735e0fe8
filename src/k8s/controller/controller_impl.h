// Controller::Impl, the controller's scheduling loop and the state it owns; internal to
// src/k8s (controller.h is the public face). The loop ties together the pieces that each do one
// thing:
// - ObjectCache (object_cache.h): Nodes, PodGroups, Jobs, queues... as the informers hand them
//   in, and the engine's Model snapshot built from them;
// - gang assembly (gang_assembly.h): a group of pods -> the engine Workload, or why it waits;
// - Binder (binder.h): pods/binding and Eviction requests on a pool;
// - StatusWriter (status_writer.h): Events, pod conditions, PodGroup and ClusterQueue status.
// What stays here is the state that moves with every pod: the groups of pods and where they
// stand with the engine (waiting, in the engine, being evicted), the binds assumed and in
// flight. Its methods are defined in two files, by the direction they face:
// - controller.cc: the loop's turn, and what comes in (informer events, bind answers) and what
//   it does to the groups;
// - controller_decisions.cc: the engine (rebuilds, placing groups, cycles) and carrying its
//   decisions out (binds, evictions, pending reasons, statuses).
//
// Thread-safety: one loop thread (Loop) owns everything under "loop-owned state" and calls every
// method but Start, Stop and Push. Informer threads and the Binder's workers only Push events
// into `inbox`; Controller's accessors read `snap` and the atomics.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "accounting/live_recorder.h"
#include "engine/scheduler.h"
#include "k8s/client/informer.h"
#include "k8s/controller/binder.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/dra_objects.h"
#include "k8s/controller/object_cache.h"
#include "k8s/controller/objects.h"
#include "k8s/controller/pending_message.h"
#include "k8s/controller/provisioning.h"
#include "k8s/controller/status_writer.h"
#include "k8s/observe/metrics_collector.h"

namespace tessera::k8s {

struct Controller::Impl {
  using Clock = std::chrono::steady_clock;

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
    // Its mark from its priority class or queue where a pod has none (DefaultInterruptible).
    std::optional<bool> interruptible;
    double submitted = -1;
    // When it was admitted (engine clock; -1: not admitted): a restore after a rebuild or a
    // change in its pods keeps it, so that its runtime, its estimated end and its minimum
    // runtime count from its real start.
    double admitted_at = -1;
    PendingMessage reason;                        // the pending message last published
    std::string condition_reason;                 // ... and its PodScheduled reason
    double reason_at = -1;                        // when its FailedScheduling was last recorded
    std::map<std::string, std::string> evicting;  // pod key -> node it is evicted from
    // It waited past its wait limit: its Warning Event and metric are written (once: an engine
    // rebuilt from a snapshot moves it ahead again and says so again).
    bool wait_limit_exceeded = false;
    std::string gpu_failure_said;  // the failed GPU its Events last said (controller_health.cc)
  };

  struct Assumed {
    std::string node;
    std::vector<int32_t> gpus;
    std::vector<int8_t> mig_starts;
    bool bind_ok = false;  // the server accepted the bind; its watch event has not come yet
  };

  struct PendingBind {
    std::string pod, node;
    std::vector<int32_t> gpus;
    std::vector<int8_t> mig_starts;
    std::vector<ClaimReservation> claims;
  };

  Impl(KubeClient* c, ControllerOptions o, Metrics* m)
      : client(c),
        options(std::move(o)),
        metrics(m),
        collector(m),
        view_builder(options.trend_interval_s) {}

  KubeClient* const client;
  const ControllerOptions options;
  Metrics* const metrics;
  MetricsCollector collector;  // loop-owned: the labelled metrics (metrics_collector.h)
  UtilizationTracker utilization{options.underuse};  // its accessors are thread-safe
  ViewBuilder view_builder;  // loop-owned: the JSON API's views (cluster_view.h)
  ViewHolder view_holder;    // thread-safe: the latest view
  const Clock::time_point start = Clock::now();
  // The wall-clock time of the engine's 0 (`start`): expected starts are said in it.
  const WallClock::time_point wall_start = WallClock::now();

  std::vector<std::unique_ptr<Informer>> informers;
  std::unique_ptr<Binder> binder;
  std::unique_ptr<StatusWriter> status_writer;
  std::unique_ptr<Provisioner> provisioner;  // null without options.provisioning.enabled
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
  ObjectCache cache;  // everything else the informers watch
  std::unordered_map<std::string, Group> groups;
  std::unordered_map<std::string, Assumed> assumed;
  std::unordered_set<std::string> binds_in_flight;  // pods/binding sent, no answer yet
  std::unordered_map<std::string, int> victims_on_node;
  std::vector<PendingBind> nominated;  // binds that wait for victims to leave their node
  std::set<std::string> dirty;         // groups to (re)consider for submission
  // The problems with time fields (time_fields.h) said as Events, by pod key and by group key
  // (for the group object's): said again only when they change.
  std::unordered_map<std::string, std::vector<std::string>> problems_said;

  std::unique_ptr<Scheduler> engine;
  std::unordered_map<std::string, int32_t> claim_index;  // "ns/name" -> engine's dra.claims
  std::vector<Resources> claim_quota;  // per engine dra.claims entry: its deviceClassMappings
  std::vector<std::pair<NodeId, const dra::Device*>> dra_devices;  // by DraState device id
  std::unordered_map<WorkloadId, std::string> id_to_group;         // the engine's live ids
  // Ids the engine ended (finished or failed) in this turn of the loop: retired at its end
  // (RetireEnded), when no decision or list of this turn names them any more. A long-running
  // serve then holds the workloads in flight, not every one it has seen.
  std::vector<WorkloadId> ended_ids;
  std::unordered_map<std::string, NodeId> node_index;
  std::vector<std::string> node_names;
  bool need_rebuild = true;
  bool need_cycle = false;
  double last_cycle_now = 0;  // the engine time of the last cycle (its timers run from there)
  Clock::time_point last_rebuild{};
  Clock::time_point last_status{};
  Clock::time_point last_view{};
  Clock::time_point last_group_count{};
  int64_t waiting_groups = 0, pending_workloads = 0;  // as of last_group_count
  double decision_seconds = 0;
  // serve's accounting records (controller_usage.cc); null without an accounting store.
  std::unique_ptr<accounting::LiveRecorder> accounting;
  bool accounting_resume = false;  // became the leader: read the open runs before writing
  std::string accounting_error;    // the last error logged (said once per change)
  accounting::LiveRecorder::Endings ended_runs;  // group key -> how it ended, until recorded
  // group key -> its run as of its admission or the last status period (for EndRun).
  std::unordered_map<std::string, accounting::LiveRun> run_snapshots;
  double last_provisioning_sync = -1;
  // The engine's last NeedCapacity answer; stale once the engine may answer otherwise (a cycle,
  // a workload added, finished or failed, a rebuild). Between those the engine, and its clock,
  // stand still: the answer is the same.
  std::vector<WorkloadId> need_capacity;
  bool need_capacity_stale = true;

  double Now() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  // ---------------------------------------------------------------- controller.cc
  void Start();
  void Stop();
  // Thread-safe: hands an event to the loop.
  void Push(LoopEvent ev);
  void AddInformer(const std::string& resource, const std::string& path, bool optional,
                   bool protobuf = false);

  // The loop: events in, then (when leading) rebuild, place, cycle, statuses.
  void Loop();
  void UpdateSnapshot();
  // Publishes a ClusterView of the loop's state for the JSON API (controller_view.cc), at most
  // once a status period.
  void MaybePublishView();

  // Events in.
  void Apply(LoopEvent& ev);
  void ApplyWatch(WatchEvent& ev);
  void PodUpsert(const json& obj);
  void PodGone(const std::string& key);
  void BindDone(const std::string& key, const std::string& node, long status);
  Group& GroupFor(const PodInfo& p);
  // A change in a group's pods (one more, one gone, one bound by someone else). The workload
  // leaves the engine and comes back as it is now, without rebuilding anything else: Place()
  // restores the pods that are bound (or being bound) where they are, with their GPUs, and the
  // engine places the others as it places any pods beyond an admitted gang's minimum (kScaleUp).
  // A pending workload simply waits again with its new pod count, keeping its submission time.
  void Unsettle(Group& g);
  void RetireEnded();  // ended_ids, at the end of a turn of the loop
  // The object that sizes a group (PodGroup, Job) changed: a pending workload is considered
  // again with the new size; an admitted one keeps running as it is.
  void GroupObjectChanged(const std::string& key);

  // ---------------------------------------------------------------- controller_decisions.cc
  // The engine.
  void Rebuild();
  // Where the pod is bound, or being bound by us; null when neither.
  const std::string* BoundNode(const std::string& pod_key) const;
  // Puts a group into the engine: restored where its pods are bound, submitted when its gang is
  // complete (gang_assembly.h), otherwise left waiting.
  void Place(Group& g);
  // Admits the group's workload (just added to the engine) where its pods are bound, or being
  // bound, with their GPUs.
  void RestoreBound(Group& g);
  void Cycle();
  Group* GroupOf(WorkloadId id);

  // Decisions out.
  void Carry(const Decision& d);
  // Sends the nominated binds whose node no victim holds any more.
  void ReleaseNominated();
  void Bind(const std::string& key, const std::string& node, const std::vector<int32_t>& gpus,
            const std::vector<int8_t>& mig_starts, std::vector<ClaimReservation> claims = {});
  // Admission fair sharing usage into a new engine: the old engine's, else the LocalQueues'
  // status (a restart).
  void SeedFairUsage(Scheduler& next);
  void Evict(const std::string& key, const std::string& why);
  // Takes an admitted group's pods away (Eviction API, each with its grace period) and out of
  // the engine: it waits for them to leave, then for its pods to come back (a preemption, a
  // failed GPU).
  void EvictGroup(Group& g, const std::string& why);
  // Tells the group's pods why they wait: PodScheduled=False/Unschedulable with the engine's
  // explanation (what the cluster autoscaler looks for), and a FailedScheduling Event.
  // A reason that stays the same is recorded again (the Event's count goes up, as for
  // kube-scheduler's every failed attempt) at most every failed_event_interval_s. With an
  // expected start (engine clock, >= 0), the message says it in wall-clock terms
  // (pending_message.h); one that differs from the last only by the clock is not new.
  void Publish(Group& g, const std::string& reason, double expected_start = -1);
  // Warning Events for the time fields of the group's pods and group object that could not be
  // used (InvalidAnnotation, InvalidLabel, InvalidField), each once.
  void SayTimeProblems(const Group& g);
  // An Event on the object of an owner kind (owner_kinds.h: a JobSet, a LeaderWorkerSet ...) whose
  // gang `g` is: admitted, preempted, or waiting (with the reason its pods show).
  void OwnerEvent(const Group& g, const char* type, const char* reason, const std::string& message);
  // "JobSet/train", "Job/x", "PodGroup/y": what `tessera get workloads` shows as its OWNER.
  std::string OwnerOf(const Group& g) const;
  // Warning Events (UnsupportedField) for what a Workload API PodGroup sets that Tessera does
  // not act on (workload_api.h), once while it lasts; kept in problems_said under `key`.
  void SayUnread(const std::string& key, const ObjectRef& ref,
                 const std::vector<std::string>& unread);
  static constexpr const char* kUnreadSuffix = " unread";
  // A pod that cannot be read (ParsePod's error): logged, and when it is Tessera's to place, a
  // Warning Event InvalidPod on it, once per message (kept in problems_said under the pod's key
  // and kInvalidSuffix until it reads or goes).
  void SayInvalidPod(const json& obj, const std::string& message);
  static constexpr const char* kInvalidSuffix = " invalid";
  void PublishPendingReasons();
  // PodGroups: phase and how many of their pods are bound.
  void WritePodGroupStatuses();
  void WriteStatuses();

  // ---------------------------------------------------------------- controller_dra.cc
  // DRA (docs/dra.md, "Kubernetes mode"): after a rebuild, the engine's claims by "ns/name" and
  // its devices by id.
  void IndexDra();
  // Each pod claim of `w` finds its ResourceClaim in the engine's model (one that does not
  // exist yet leaves the pod waiting, with that reason); a claim made from a template adds its
  // mapped devices to the pod's requests (quota), as Kueue counts them.
  void ResolveClaims(Workload& w) const;
  // What to write to the claims of pod `key` before binding it at placement `pl` on `node`.
  std::vector<ClaimReservation> Reservations(const std::string& key, const std::string& node,
                                             const PodPlacement& pl) const;

  // ---------------------------------------------------------------- controller_health.cc
  // GPUs that fail (gpu_health.h, docs/gpu-failures.md): judges the nodes some signal points
  // at, gives their failed devices to nobody (and repaired ones back), says it in Events and
  // tessera_failed_gpus, and requeues the workloads on them by their ClusterQueue's policy. Run
  // after a rebuild (a new engine knows no failure), when a pod's resource health changed, and
  // every status period (dcgm-exporter's readings).
  void CheckGpuHealth();
  // The devices said failed, by node name (what the engine was told, and what Events said).
  std::map<std::string, std::map<int32_t, std::string>> failed_gpus;
  std::map<std::string, int32_t> unplaced_said;  // node -> unplaced count said in an Event
  bool health_dirty = true;

  // ---------------------------------------------------------------- controller_provisioning.cc
  // ProvisioningRequests for the gangs the engine says need capacity (provisioning.h), at most
  // every status period unless a cycle ran; the pods' messages are rewritten when a request's
  // state changed.
  void SyncProvisioning(bool cycled);
  // The bad interruptible marks of Jobs, PodGroups, priority classes and queues as Warning
  // Events on them (InvalidAnnotation), each once while it lasts (ObjectCache::TakeMarkProblems).
  void SayMarkProblems();
  // The Cluster Autoscaler's consume annotations (provisioning.h) on the pods of every gang
  // with a request: set to its newest request; taken off (serve's own values only) where the
  // gang has none any more and the pod is not bound. Bound pods keep theirs, as Kueue's do.
  void SyncConsumeAnnotations();
  // What a waiting group's pods say of its request, and their PodScheduled reason: Unschedulable
  // unless requests are being made (then no autoscaler should scale for them pod by pod).
  std::string ProvisioningNote(const Group& g) const;
  const char* PendingConditionReason(const Group& g) const;
  // Whether the pods of the group are marked kDoNotDisruptAnnotation when bound.
  bool ProtectFromDisruption(const Group& g) const;

  // ---------------------------------------------------------------- controller_usage.cc
  // What the admitted workloads use: joins the DCGM readings to them (utilization.h), reports
  // the underused (gauges, an Event each), and writes the accounting records (leader only).
  // Returns the utilization of each measured workload, by engine id, for the cost counters.
  std::unordered_map<WorkloadId, double> TrackUsage();
  // The admitted workloads of the engine and the GPUs they hold; `ids`: their engine ids.
  std::vector<HeldGpus> HeldNow(std::unordered_map<std::string, WorkloadId>* ids) const;
  // As the loop ends while leading: every open run written as it stands (its last checkpoint
  // is now), so that one ending before the next leader's first period loses none of its time.
  void CheckpointAccountingAtStop();
  void RecordAccounting(const std::vector<HeldGpus>& held,
                        const std::map<std::string, WorkloadUsage>& usage);
  void SayUnderused(const std::string& key, const WorkloadUsage& u);
  // The accounting record of `g`'s run as it stands (an admitted group in the engine).
  accounting::LiveRun LiveRunOf(const Group& g) const;
  // Keeps what an admitted `g` holds now, for EndRun (at its admission and restore).
  void RememberRun(const Group& g);
  // Says that `g`'s run ends now, and what it held, for the next RecordAccounting: a run that
  // began and ended within one status period is recorded too.
  void EndRun(const Group& g, accounting::RunEnd how, std::string reason);
  double WallTime(double engine_time) const;  // seconds since the epoch of an engine time
};

}  // namespace tessera::k8s
