// The Scheduler face (scheduler.h) over the engine's rooms (engine.h). One cycle is the
// actions SchedulerConfig names, in order (actions/action.h), by default:
//   1. admit: pending queues are kept sorted incrementally (nothing is rebuilt); parked
//      workloads that could now fit are woken; rounds take the next head of every
//      ClusterQueue, order the heads with the QueueOrder plugin, and try each: flavors in
//      order, a flavor taken only when the quota and a placement of minCount pods both hold
//      (a gang is placed whole or not at all);
//   2. preempt (inside admit, per head, as Kueue does): a head that fits nowhere looks for the
//      cheapest set of whole-workload victims its ClusterQueue's policy allows, simulates
//      their removal, and only then evicts them and is admitted;
//   3. scale-up: admitted workloads with pods beyond minCount place more as they fit.
// Every workload left pending carries a reason with numbers.
#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/actions/action.h"
#include "engine/actions/consolidate.h"
#include "engine/admission/stop_policy.h"
#include "engine/elastic/elastic.h"
#include "engine/elastic/gpu_health.h"
#include "engine/engine.h"
#include "engine/reasons.h"
#include "engine/restore.h"
#include "engine/verify.h"
#include "fmt/format.h"

namespace tessera {

const char* WorkloadStateName(WorkloadState s) {
  switch (s) {
    case WorkloadState::kInactive:
      return "inactive";
    case WorkloadState::kPending:
      return "pending";
    case WorkloadState::kAdmitted:
      return "running";
    case WorkloadState::kTerminating:
      return "terminating";
    case WorkloadState::kFinished:
      return "finished";
    case WorkloadState::kRejected:
      return "rejected";
    case WorkloadState::kFailed:
      return "failed";
  }
  return "?";
}

namespace {

class SchedulerImpl : public Scheduler {
 public:
  explicit SchedulerImpl(Model model) : e_(std::move(model)), s_(e_.st) {}
  absl::Status Init();

  const Model& model() const override { return s_.model; }
  WorkloadId AddWorkload(Workload w) override;
  void Submit(WorkloadId id, double now) override;
  void Finish(WorkloadId id, double now) override;
  void Fail(WorkloadId id, double now, std::string reason) override {
    End(id, now, /*learn=*/false);
    s_.status[id].state = WorkloadState::kFailed;
    s_.status[id].reason = std::move(reason);
  }
  void Retire(WorkloadId id) override;
  bool retired(WorkloadId id) const override {
    return id >= 0 && id < num_workloads() && s_.recs.retired(static_cast<size_t>(id));
  }
  int32_t num_retired() const override { return static_cast<int32_t>(s_.recs.retired_count()); }
  absl::Status Restore(WorkloadId id, std::vector<PodPlacement> pods, double now) override {
    return RestoreWorkload(e_, id, std::move(pods), now);
  }
  std::vector<Decision> RunCycle(double now) override;
  double NextTimer(double now) const override {
    return std::min({e_.waits.Next(now), e_.fair_usage.Next(now), NextDrain(s_, now),
                     e_.terminations.Next(), e_.stale_gangs.Next()});
  }
  double NextRetry(double now) const override {
    return s_.held_back_at == now ? now + kHeldBackRetrySeconds
                                  : std::numeric_limits<double>::infinity();
  }
  double NextGraceEnd() const override { return e_.terminations.Next(); }
  LocalQueueUsage local_queue_usage(int32_t lq) const override {
    return e_.fair_usage.Consumed(lq);
  }
  void SeedLocalQueueUsage(int32_t lq, LocalQueueUsage u) override {
    e_.fair_usage.Seed(lq, std::move(u));
  }
  const WorkloadStatus& status(WorkloadId id) const override {
    if (s_.recs[id].reason_stale) {
      s_.status[id].reason = FormatReason(s_, id);
      s_.recs[id].reason_stale = false;
    }
    return s_.status[id];
  }
  int32_t priority(WorkloadId id) const override { return s_.recs[id].priority; }
  int32_t num_workloads() const override { return static_cast<int32_t>(s_.status.size()); }
  const CycleStats& stats() const override { return s_.stats; }
  int64_t gpus_total() const override { return s_.cluster->total_gpus(); }
  int64_t gpus_allocated() const override { return s_.cluster->allocated_gpus(); }
  Resources ClusterQueueUsage(int32_t cq, int32_t flavor) const override;
  ClusterQueueStats cluster_queue_stats(int32_t cq) const override;
  std::vector<std::string> fit_hints(WorkloadId id) const override {
    if (s_.status[id].state != WorkloadState::kPending) return {};
    const Reservation* r = nullptr;
    for (const Reservation& res : e_.reservations.list())
      if (res.id == id) r = &res;
    return FitHints(s_, id, r);
  }
  absl::Status Verify() const override { return VerifyEngine(e_); }
  void SetNodeOnline(NodeId n, bool online) override { tessera::SetNodeOnline(e_, n, online); }
  bool node_online(NodeId n) const override { return s_.cluster->online(n); }
  bool node_empty(NodeId n) const override {
    return s_.cluster->online(n) && s_.cluster->free(n) == s_.model.nodes[n].allocatable;
  }
  void SetNodeCordoned(NodeId n, bool cordoned) override {
    if (s_.cordoned.empty()) s_.cordoned.assign(s_.model.nodes.size(), false);
    if (s_.cordoned[n] && !cordoned) ++s_.release_epoch;  // room again: parked ones retry
    s_.cordoned[n] = cordoned;
  }
  std::vector<WorkloadId> WorkloadsOnNode(NodeId n) const override {
    return tessera::WorkloadsOnNode(s_, n);
  }
  Decision EvictForNode(WorkloadId id, std::string reason) override {
    return tessera::EvictForNode(e_, id, std::move(reason));
  }
  void SetGpuFailed(NodeId n, int32_t gpu, bool failed) override {
    tessera::SetGpuFailed(e_, n, gpu, failed);
  }
  bool gpu_failed(NodeId n, int32_t gpu) const override {
    return !PhysicalGpuSlots(s_, n, gpu).empty() && s_.cluster->gpu_failed(n, gpu);
  }
  std::vector<WorkloadId> WorkloadsOnGpu(NodeId n, int32_t gpu) const override {
    return tessera::WorkloadsOnGpu(s_, n, gpu);
  }
  int64_t failed_gpus() const override { return s_.cluster->failed_gpus(); }
  std::vector<NodeRequest> PlanScaleUp(const std::vector<NodeGroupOffer>& groups,
                                       const std::vector<NodeId>& coming, ScaleUpMode mode,
                                       int32_t max_workloads) override {
    return tessera::PlanScaleUp(e_, groups, coming, mode, max_workloads);
  }
  std::vector<WorkloadId> NeedCapacity(int32_t max_workloads) override {
    return tessera::NeedCapacity(e_, max_workloads);
  }

 private:
  // Resolves a workload's references (priority class, queue, namespace selector) and its
  // flavor combinations, once, when it is added.
  void Resolve(WorkloadId id);
  // Finish and Fail: `learn` teaches the estimator the run's length.
  void End(WorkloadId id, double now, bool learn);
  absl::Status InitQuota();
  absl::Status InitActions();

  // Why ClusterQueue `cq` refuses namespace `ns` (its namespaceSelector), "" when it does not.
  const std::string& NamespaceRefused(int32_t cq, const std::string& ns);

  Engine e_;
  EngineState& s_;
  std::vector<std::unique_ptr<Action>> actions_;
  absl::flat_hash_map<std::pair<int32_t, std::string>, std::string> ns_refused_;
};

absl::Status SchedulerImpl::Init() {
  for (size_t i = 0; i < s_.model.flavors.size(); ++i)
    s_.flavor_ids[s_.model.flavors[i].name] = static_cast<int32_t>(i);
  for (size_t i = 0; i < s_.model.cluster_queues.size(); ++i)
    s_.cq_ids[s_.model.cluster_queues[i].name] = static_cast<int32_t>(i);
  if (auto st = InitQuota(); !st.ok()) return st;

  for (const auto& lq : s_.model.local_queues) {
    s_.local_queue_ids.try_emplace(lq.ns + "/" + lq.name,
                                   static_cast<int32_t>(&lq - s_.model.local_queues.data()));
    auto it = s_.cq_ids.find(lq.cluster_queue);
    s_.local_queues[lq.ns + "/" + lq.name] = it == s_.cq_ids.end() ? -1 : it->second;
  }
  for (const auto& pc : s_.model.priority_classes) {
    s_.priority_classes[pc.name] = pc.value;
    if (pc.global_default) {
      s_.default_priority = pc.value;
      s_.default_preempt_never = pc.preemption_never;
    }
  }
  for (const auto& wpc : s_.model.workload_priority_classes)
    s_.workload_priority_classes[wpc.name] = wpc.value;

  // A node holds 1000 milli of GPU shares per device, whatever a manifest said.
  // and, for shares by memory, its devices' memory (tessera.dev/gpu-memory, MiB).
  for (Node& node : s_.model.nodes) {
    node.allocatable[kGpuMilli] = kMilliPerGpu * node.gpu_count();
    node.allocatable[kGpuMemory] = node.gpu_memory_mib * node.gpu_count();
    // A node whose MIG layout Tessera chooses offers, of each profile of its GPUs' family, as
    // many instances as its devices could hold (what is free now is ClusterState's to say).
    if (!node.mig_dynamic) continue;
    for (const MigProfile& p : MigProfilesFor(node.gpu_memory_mib, node.gpu_model)) {
      auto id = ResourceRegistry::Global().Intern(fmt::format("{}{}", kMigResourcePrefix, p.name));
      if (!id.ok()) return id.status();
      node.allocatable[*id] = int64_t{MigCapacity(0, p)} * node.gpu_count();
    }
  }
  // Node pools.
  s_.pools.assign(s_.model.flavors.size() + 1, {});
  for (size_t n = 0; n < s_.model.nodes.size(); ++n) {
    const Node& node = s_.model.nodes[n];
    if (node.unschedulable) continue;
    s_.pools[0].push_back(static_cast<NodeId>(n));
    for (size_t f = 0; f < s_.model.flavors.size(); ++f)
      if (MatchesNodeSelector(s_.model.flavors[f].node_labels, node.labels))
        s_.pools[f + 1].push_back(static_cast<NodeId>(n));
  }
  s_.cluster = std::make_unique<ClusterState>(s_.model.nodes, s_.pools);
  s_.dra = std::make_unique<DraState>(s_.model);
  for (size_t n = 0; n < s_.model.nodes.size(); ++n)
    if (!s_.model.nodes[n].provisioned) s_.cluster->SetOnline(static_cast<NodeId>(n), false);
  const int num_cqs = static_cast<int>(s_.model.cluster_queues.size());
  e_.pending.Init(num_cqs, s_.quota->num_nodes());
  s_.admitted_by_cq.resize(num_cqs);
  s_.cqs_by_root.resize(s_.quota->num_nodes());
  s_.ends_by_root.assign(s_.quota->num_nodes(), 0);
  for (int i = 0; i < num_cqs; ++i) s_.cqs_by_root[s_.quota->root(i)].push_back(i);

  e_.placer.Init(s_.model.config.placement);
  e_.preemptor.Init(s_.model.config);
  if (auto st = InitActions(); !st.ok()) return st;

  IdPages<Workload> initial = std::move(s_.model.workloads);
  s_.model.workloads.clear();
  for (auto& w : initial) AddWorkload(std::move(w));
  return absl::OkStatus();
}

// Dense ids for flavors, ClusterQueues and cohorts; the quota tree and each queue's resource
// groups.
absl::Status SchedulerImpl::InitQuota() {
  // Cohorts: declared ones, plus those only named by a ClusterQueue or as a parent.
  auto cohort_id = [&](const std::string& name) {
    auto [it, inserted] =
        s_.cohort_ids.try_emplace(name, static_cast<int32_t>(s_.cohort_names.size()));
    if (inserted) s_.cohort_names.push_back(name);
    return it->second;
  };
  for (const auto& c : s_.model.cohorts) cohort_id(c.name);
  for (const auto& c : s_.model.cohorts)
    if (!c.parent.empty()) cohort_id(c.parent);
  for (const auto& cq : s_.model.cluster_queues)
    if (!cq.cohort.empty()) cohort_id(cq.cohort);

  const int num_cqs = static_cast<int>(s_.model.cluster_queues.size());
  s_.quota = std::make_unique<QuotaTree>(num_cqs, static_cast<int>(s_.cohort_names.size()),
                                         static_cast<int>(s_.model.flavors.size()));
  // A stopped ClusterQueue lends nothing: Kueue leaves it out of its cohort.
  auto set_groups = [&](int node, const std::vector<ResourceGroup>& groups, bool lends = true) {
    for (const auto& g : groups) {
      for (const auto& fq : g.flavors) {
        auto it = s_.flavor_ids.find(fq.flavor);
        if (it == s_.flavor_ids.end()) continue;
        for (const auto& rq : fq.resources) {
          // nvidia.com/gpu in milli-GPUs (QuotaScale): shares may count against it.
          const ResourceId r = rq.resource;
          s_.quota->SetQuota(node, MakeFR(it->second, r), ToQuotaUnits(r, rq.nominal),
                             ToQuotaUnits(r, rq.borrowing_limit.value_or(kUnlimited)),
                             lends ? ToQuotaUnits(r, rq.lending_limit.value_or(kUnlimited)) : 0);
        }
      }
    }
  };
  s_.queues.resize(num_cqs);
  for (int i = 0; i < num_cqs; ++i) {
    const ClusterQueue& cq = s_.model.cluster_queues[i];
    ResolvedQueue& q = s_.queues[i];
    q.group_of.fill(-1);
    q.tree_node = i;
    for (const auto& g : cq.resource_groups) {
      ResolvedGroup rg;
      for (const auto& fq : g.flavors) {
        auto it = s_.flavor_ids.find(fq.flavor);
        rg.flavors.push_back(it == s_.flavor_ids.end() ? -1 : it->second);
        rg.flavor_names.push_back(fq.flavor);
      }
      for (ResourceId r : g.covered)
        if (q.group_of[r] < 0) q.group_of[r] = static_cast<int8_t>(q.groups.size());
      q.groups.push_back(std::move(rg));
    }
    set_groups(i, cq.resource_groups, cq.stop_policy == StopPolicy::kNone);
    if (!cq.cohort.empty()) s_.quota->SetParent(i, s_.quota->cohort_node(s_.cohort_ids[cq.cohort]));
  }
  for (const auto& c : s_.model.cohorts) {
    int node = s_.quota->cohort_node(s_.cohort_ids[c.name]);
    set_groups(node, c.resource_groups);
    if (!c.parent.empty())
      s_.quota->SetParent(node, s_.quota->cohort_node(s_.cohort_ids[c.parent]));
  }
  return s_.quota->Finalize();
}

absl::Status SchedulerImpl::InitActions() {
  bool preempt = false;
  for (const std::string& name : s_.model.config.actions) {
    if (name == "preempt") {
      preempt = true;
      continue;
    }
    std::unique_ptr<Action> action = MakeAction(name, e_);
    if (!action)
      return absl::InvalidArgumentError(
          fmt::format("unknown action \"{}\" (known: {})", name, fmt::join(ActionNames(), ", ")));
    s_.stats.actions.push_back({std::string(action->name()), 0, 0});
    actions_.push_back(std::move(action));
    // A ClusterQueue that opts into consolidation gets it after `admit` when it is not listed.
    const auto& names = s_.model.config.actions;
    const auto& cqs = s_.model.cluster_queues;
    if (name == "admit" && std::find(names.begin(), names.end(), "consolidate") == names.end() &&
        std::any_of(cqs.begin(), cqs.end(),
                    [](const ClusterQueue& cq) { return cq.consolidation == true; })) {
      actions_.push_back(std::make_unique<ConsolidateAction>(e_, /*listed=*/false));
      s_.stats.actions.push_back({"consolidate", 0, 0});
    }
  }
  e_.admission.set_preemption(preempt);
  return absl::OkStatus();
}

WorkloadId SchedulerImpl::AddWorkload(Workload w) {
  auto id = static_cast<WorkloadId>(s_.model.workloads.size());
  // A share of 1000 milli or more in whole thousands is whole GPUs.
  for (PodSet& ps : w.pod_sets) {
    int64_t& milli = ps.requests[kGpuMilli];
    if (milli >= kMilliPerGpu && milli % kMilliPerGpu == 0 && ps.requests[kGpu] == 0) {
      ps.requests[kGpu] = milli / kMilliPerGpu;
      milli = 0;
    }
  }
  s_.model.workloads.push_back(std::move(w));
  e_.estimator.Add(s_.model.workloads[id]);
  s_.status.emplace_back();
  s_.recs.emplace_back();
  bool needs_group = false;
  for (const PodSet& ps : s_.model.workloads[id].pod_sets)
    if (ps.anti_affinity != HostnameAntiAffinity::kNone || !ps.spread.empty()) needs_group = true;
  if (needs_group) {
    // A workload alone forms its own group, named so that no spread_group can collide with it.
    const std::string& named = s_.model.workloads[id].spread_group;
    std::string group = named.empty() ? fmt::format("\x01{}", id) : named;
    auto [it, inserted] =
        s_.spread_group_ids.try_emplace(group, static_cast<int32_t>(s_.group_nodes.size()));
    if (inserted) s_.group_nodes.emplace_back();
    s_.recs[id].spread_group = it->second;
  }
  Resolve(id);
  return id;
}

const std::string& SchedulerImpl::NamespaceRefused(int32_t cq_id, const std::string& ns) {
  // The model's queues and namespaces do not change under an engine: once per pair.
  auto [it, fresh] = ns_refused_.try_emplace(std::make_pair(cq_id, ns));
  if (!fresh) return it->second;
  const ClusterQueue& cq = s_.model.cluster_queues[cq_id];
  Labels ns_labels;
  if (auto nl = s_.model.namespace_labels.find(ns); nl != s_.model.namespace_labels.end())
    ns_labels = nl->second;
  ns_labels["kubernetes.io/metadata.name"] = ns;
  if (!Matches(cq.namespace_selector, ns_labels)) {
    it->second = fmt::format(
        "namespace {} is not selected by ClusterQueue {}'s namespaceSelector{}", ns, cq.name,
        cq.namespace_selector.present ? "" : " (absent: matches no namespace)");
  }
  return it->second;
}

void SchedulerImpl::Resolve(WorkloadId id) {
  const Workload& w = s_.model.workloads[id];
  WorkloadRec& rec = s_.recs[id];
  rec.priority = s_.default_priority;
  rec.can_preempt = !s_.default_preempt_never;
  if (!w.priority_class.empty()) {
    auto it = s_.priority_classes.find(w.priority_class);
    if (it == s_.priority_classes.end()) {
      rec.unresolved = fmt::format("PriorityClass \"{}\" not found", w.priority_class);
    } else {
      rec.priority = it->second;
      for (const auto& pc : s_.model.priority_classes)
        if (pc.name == w.priority_class) rec.can_preempt = !pc.preemption_never;
    }
  }
  if (!w.workload_priority_class.empty()) {
    auto it = s_.workload_priority_classes.find(w.workload_priority_class);
    if (it == s_.workload_priority_classes.end()) {
      rec.unresolved =
          fmt::format("WorkloadPriorityClass \"{}\" not found", w.workload_priority_class);
    } else {
      rec.priority = it->second;
    }
  }
  rec.non_preemptible = NonPreemptible(s_.model, w);
  if (!w.queue_name.empty()) {
    const std::string lq_key = absl::StrCat(w.ns, "/", w.queue_name);
    auto it = s_.local_queues.find(lq_key);
    if (auto lq = s_.local_queue_ids.find(lq_key); lq != s_.local_queue_ids.end())
      rec.lq = lq->second;
    if (it != s_.local_queues.end()) {
      rec.cq = it->second;
      if (rec.cq < 0) {
        for (const auto& lq : s_.model.local_queues)
          if (lq.ns == w.ns && lq.name == w.queue_name)
            rec.unresolved = fmt::format("ClusterQueue \"{}\" of LocalQueue {}/{} not found",
                                         lq.cluster_queue, w.ns, w.queue_name);
      }
    } else if (auto cq = s_.cq_ids.find(w.queue_name); cq != s_.cq_ids.end()) {
      rec.cq = cq->second;  // a cluster-scoped queue named directly (Volcano's spec.queue)
    } else {
      rec.unresolved = fmt::format("LocalQueue {}/{} not found", w.ns, w.queue_name);
    }
    if (rec.cq >= 0 && rec.unresolved.empty()) rec.unresolved = NamespaceRefused(rec.cq, w.ns);
  }
  if (rec.cq >= 0) {
    const ResolvedQueue& q = s_.queues[rec.cq];
    std::vector<bool> touched;
    for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
      touched.assign(q.groups.size(), false);
      for (int r = 0; r < kMaxResources; ++r)
        if (w.pod_sets[ps].requests[r] > 0 && q.group_of[r] >= 0) touched[q.group_of[r]] = true;
      // A share that counts against the GPU quota takes a flavor of the GPU's group too.
      if (s_.model.cluster_queues[rec.cq].shares_in_gpu_quota && q.group_of[kGpu] >= 0 &&
          w.pod_sets[ps].requests[kGpuMilli] > 0 && w.pod_sets[ps].requests[kGpu] == 0)
        touched[q.group_of[kGpu]] = true;
      for (size_t g = 0; g < touched.size(); ++g)
        if (touched[g]) rec.slots.emplace_back(static_cast<int32_t>(ps), static_cast<int32_t>(g));
    }
  }
  rec.placed_per_set.assign(w.pod_sets.size(), 0);
  rec.combos = e_.flavors.FlavorCombos(id);
  rec.min_need.clear();
  for (const auto& combo : rec.combos)
    rec.min_need.push_back(e_.flavors.ComputeMinQuotaNeed(id, combo));
}

void SchedulerImpl::Submit(WorkloadId id, double now) {
  WorkloadStatus& st = s_.status[id];
  if (st.state != WorkloadState::kInactive) return;
  st.created = s_.model.workloads[id].created.value_or(now);  // the FIFO key
  s_.recs[id].order_created = st.created;
  s_.recs[id].submitted = now;
  st.cluster_queue = s_.recs[id].cq;
  if (!s_.recs[id].unresolved.empty()) {
    e_.pending.SetPending(id, s_.recs[id].unresolved);
    return;  // never enters a queue: nothing can admit it
  }
  if (HeldByStopPolicy(s_, id)) {
    e_.pending.SetPending(id, StoppedReason(s_, s_.recs[id].cq));
    return;  // a stopped queue admits nothing new (engine/admission/stop_policy.h)
  }
  if (std::string why = e_.admission.Uncovered(id); !why.empty()) {
    e_.pending.SetPending(id, std::move(why));
    return;  // its ClusterQueue never covers what it asks for (quotaCheckStrategy)
  }
  const Workload& w = s_.model.workloads[id];
  if (w.MinPods() > w.TotalPods()) {
    e_.pending.SetPending(
        id, fmt::format("waiting for pods: {} of minimum {} exist", w.TotalPods(), w.MinPods()));
    return;
  }
  if (std::string why = e_.admission.CanEverFit(id); !why.empty()) {
    st.state = WorkloadState::kRejected;
    st.reason = std::move(why);
    s_.rejected_unreported.push_back(id);
    return;
  }
  e_.pending.SetPending(id, "waiting for a scheduling cycle");
  e_.pending.Enqueue(id);
  e_.waits.Track(id, now);
}

void SchedulerImpl::Finish(WorkloadId id, double now) { End(id, now, /*learn=*/true); }

void SchedulerImpl::Retire(WorkloadId id) {
  if (id < 0 || id >= num_workloads() || retired(id)) return;
  const WorkloadState state = s_.status[id].state;
  if (state != WorkloadState::kFinished && state != WorkloadState::kFailed &&
      state != WorkloadState::kRejected)
    return;
  // A rejection the next cycle has yet to report still names it.
  const auto& unreported = s_.rejected_unreported;
  if (std::find(unreported.begin(), unreported.end(), id) != unreported.end()) return;
  // An ended workload is in no queue, candidate set, reservation or grace period (End took it
  // out of each); what is left of it is these records, and what the placement plugin learns.
  e_.placer.Retiring(id);
  e_.estimator.Retire(id);
  s_.model.workloads.Retire(static_cast<size_t>(id));
  s_.status.Retire(static_cast<size_t>(id));
  s_.recs.Retire(static_cast<size_t>(id));
}

void SchedulerImpl::End(WorkloadId id, double now, bool learn) {
  WorkloadStatus& st = s_.status[id];
  if (st.state == WorkloadState::kAdmitted) {
    if (learn && st.admitted_at >= 0) e_.estimator.Observe(id, now - st.admitted_at);
    e_.statement.Evict(id);
    s_.partial.erase(id);
    if (s_.recs[id].cq >= 0) {
      s_.admitted_by_cq[s_.recs[id].cq].erase({s_.recs[id].priority, id});
      ++s_.ends_by_root[s_.quota->root(s_.recs[id].cq)];
    }
    s_.admitted_without_queue.erase(id);
  } else if (st.state == WorkloadState::kTerminating) {
    e_.terminations.Release(id);
  } else if (st.state == WorkloadState::kPending) {
    e_.terminations.DropClaim(id);
    e_.reservations.Forget(id);
    e_.pending.Dequeue(id);
  }
  st.state = WorkloadState::kFinished;
  st.reason.clear();
  st.expected_start = -1;
  s_.recs[id].time_note.clear();
  s_.recs[id].why.clear();
  s_.recs[id].reason_stale = false;
  st.pods.clear();
}

std::vector<Decision> SchedulerImpl::RunCycle(double now) {
  std::vector<Decision> out;
  for (WorkloadId id : s_.rejected_unreported) {
    Decision d;
    d.type = Decision::Type::kReject;
    d.workload = id;
    d.reason = s_.status[id].reason;
    out.push_back(std::move(d));
  }
  s_.rejected_unreported.clear();
  // Workloads a preemption search passed over at an earlier instant, admitted then, are
  // candidates now: preemptors parked since may find victims.
  if (s_.held_back_at >= 0 && now > s_.held_back_at) {
    s_.held_back_at = -1;
    ++s_.admit_epoch;
  }
  e_.terminations.ReleaseDue(now, out);
  e_.waits.Expire(now, out);
  DrainStoppedQueues(e_, now, out);
  e_.fair_usage.Sample(now);
  e_.stale_gangs.Complete(now, out);  // gangs restored below their minimum go first

  const bool timed = s_.model.config.time_actions;
  for (size_t i = 0; i < actions_.size(); ++i) {
    ActionStats& as = s_.stats.actions[i];
    ++as.runs;
    if (!timed) {
      actions_[i]->Execute(now, out);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    actions_[i]->Execute(now, out);
    as.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  e_.stale_gangs.EvictDue(now, out);  // those still below it past their grace time

  return out;
}

Resources SchedulerImpl::ClusterQueueUsage(int32_t cq, int32_t flavor) const {
  Resources r;
  // GPUs in whole units, a share's part rounded up (QuotaScale).
  for (int i = 0; i < kMaxResources; ++i) {
    const int64_t u = s_.quota->usage(cq, MakeFR(flavor, i)), scale = QuotaScale(i);
    r[i] = (u + scale - 1) / scale;
  }
  return r;
}

ClusterQueueStats SchedulerImpl::cluster_queue_stats(int32_t cq) const {
  ClusterQueueStats st;
  for (size_t id = 0; id < s_.recs.size(); ++id) {
    if (s_.recs.retired(id)) continue;
    if (s_.recs[id].cq != cq || s_.status[id].state != WorkloadState::kPending) continue;
    ++(s_.recs[id].parked == Parked::kNo ? st.pending_active : st.pending_inadmissible);
  }
  st.reservations = e_.reservations.Count(cq);
  for (const Reservation& r : e_.reservations.list()) {
    if (s_.recs[r.id].cq != cq) continue;
    st.first_reservation = r.id;
    st.first_reservation_start = r.start;
    break;
  }
  st.weighted_share = s_.quota->DominantShare(cq, {}, s_.model.cluster_queues[cq].fair_weight);
  return st;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(Model model) {
  auto s = std::make_unique<SchedulerImpl>(std::move(model));
  if (auto st = s->Init(); !st.ok()) return st;
  return std::unique_ptr<Scheduler>(std::move(s));
}

}  // namespace tessera
