// The scheduling engine. One cycle:
//   1. snapshot: per-queue pending lists are kept sorted incrementally; nothing is rebuilt.
//   2. heads: each round takes the next pending workload of every ClusterQueue and orders the
//      heads with the QueueOrder plugin (priority+FIFO, or fair share).
//   3. admit: for each head, flavors are tried in order; a flavor is taken only when both the
//      quota and a placement of minCount pods hold (a gang is placed whole or not at all).
//   4. preempt: a head that does not fit looks for the cheapest set of whole-workload victims
//      the ClusterQueue's preemption policy allows, simulates their removal, and only then
//      evicts them and admits.
//   5. scale up: admitted workloads with pods beyond minCount place more pods as they fit.
// Every workload left pending carries a reason with numbers.
#include "engine/scheduler.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "engine/cluster_state.h"
#include "engine/quota_tree.h"
#include "fgd/fragmentation.h"
#include "fgd/scorer.h"
#include "fmt/format.h"
#include "policy/node_scorer.h"
#include "policy/queue_order.h"

namespace tessera {

const char* WorkloadStateName(WorkloadState s) {
  switch (s) {
    case WorkloadState::kInactive:
      return "inactive";
    case WorkloadState::kPending:
      return "pending";
    case WorkloadState::kAdmitted:
      return "running";
    case WorkloadState::kFinished:
      return "finished";
    case WorkloadState::kRejected:
      return "rejected";
  }
  return "?";
}

namespace {

// Feasible nodes looked at inside the first bucket that has any, before picking the best score.
constexpr int kCandidatesPerBucket = 8;
// Flavor combinations tried per workload (resource groups x flavors), a guard against blowup.
constexpr int kMaxFlavorCombos = 64;

struct ResolvedGroup {
  std::vector<int32_t> flavors;  // flavor ids in order; -1 for an undefined flavor
  std::vector<std::string> flavor_names;
};

struct ResolvedQueue {
  std::vector<ResolvedGroup> groups;
  std::array<int8_t, kMaxResources> group_of;  // -1: resource not covered (no quota limit)
  int tree_node = -1;
};

using Need = std::vector<std::pair<FlavorResource, int64_t>>;

// One piece of a pending workload's reason, kept as numbers and formatted only when someone
// reads the status: a backlog retried every cycle would otherwise spend most of the cycle
// formatting messages nobody reads.
struct ReasonPart {
  bool quota = false;  // a quota shortfall (the numbers below); else `text`
  FlavorResource fr = 0;
  int64_t amount = 0, usage = 0, nominal = 0, avail = 0, borrowing_limit = 0;
  std::string text;
};

// Where a pending workload waits between attempts.
enum class Parked : int8_t {
  kNo,     // in its queue's pending set (or not pending at all)
  kQuota,  // failed only on quota, one flavor combination: woken when its ClusterQueue could
           // give it `park_need` of `park_fr` (a release in its cohort tree)
  kOther,  // woken by epochs: any release (placement), or an admission in its cohort tree
           // (it may preempt)
};

// One pod placed, with what it took (needed to release it).
struct PlacedPod {
  PodPlacement placement;
  std::vector<std::pair<FlavorResource, int64_t>> quota;  // charged to the ClusterQueue
};

struct WorkloadRec {
  int32_t cq = -1;  // -1: not queued
  int32_t priority = 0;
  bool can_preempt = true;
  std::string unresolved;                    // a missing reference: pending with this reason
  std::vector<int32_t> groups_touched;       // resource groups any pod set requests from
  std::vector<std::vector<int32_t>> combos;  // flavor combinations, computed once at Resolve
  std::vector<Need> min_need;   // per combo: quota for minCount pods, nothing placed (at Resolve)
  int64_t gpus_placed = 0;      // GPUs held by placed pods (victim ordering)
  std::vector<int32_t> chosen;  // flavor per group (index into the queue's groups)
  std::vector<PlacedPod> placed;
  std::vector<int32_t> placed_per_set;
  int32_t spread_group = -1;  // hostname anti-affinity scope (see Workload::spread_group)
  // Skip a retry while nothing that could help has happened since the last failure.
  int64_t failed_release_epoch = -1;
  int64_t failed_admit_epoch = -1;
  bool failed_on_placement = false;  // some combination had quota but no placement
  Parked parked = Parked::kNo;
  FlavorResource park_fr = 0;
  int64_t park_need = 0;
  int32_t park_pos = -1;  // index in other_parked_
  // The pending reason, formatted lazily by status().
  std::vector<ReasonPart> why;
  mutable bool reason_stale = false;
};

// A tentative placement log: placements made since a mark can be rolled back.
struct UndoEntry {
  WorkloadId w;
};

using QueueKey = std::tuple<int32_t, double, int32_t>;  // (-priority, created, id)

class SchedulerImpl : public Scheduler {
 public:
  explicit SchedulerImpl(Model model) : model_(std::move(model)) {}
  absl::Status Init();

  const Model& model() const override { return model_; }
  WorkloadId AddWorkload(Workload w) override;
  void Submit(WorkloadId id, double now) override;
  void Finish(WorkloadId id, double now) override;
  absl::Status Restore(WorkloadId id, std::vector<PodPlacement> pods, double now) override;
  std::vector<Decision> RunCycle(double now) override;
  const WorkloadStatus& status(WorkloadId id) const override {
    if (recs_[id].reason_stale) {
      status_[id].reason = FormatReason(id);
      recs_[id].reason_stale = false;
    }
    return status_[id];
  }
  int32_t num_workloads() const override { return static_cast<int32_t>(status_.size()); }
  const CycleStats& stats() const override { return stats_; }
  int64_t gpus_total() const override { return cluster_->total_gpus(); }
  int64_t gpus_allocated() const override { return cluster_->allocated_gpus(); }
  Resources ClusterQueueUsage(int32_t cq, int32_t flavor) const override;
  absl::Status Verify() const override;

 private:
  // --- resolution
  void Resolve(WorkloadId id);
  std::string CanEverFit(WorkloadId id) const;
  int queue_index(int32_t cq) const { return cq + 1; }  // queue 0: workloads without a queue

  // --- flavors and quota
  // Enumerates flavor combinations (one flavor per touched group) in order.
  std::vector<std::vector<int32_t>> FlavorCombos(WorkloadId id) const;
  int32_t FlavorFor(WorkloadId id, const std::vector<int32_t>& combo, ResourceId r) const;
  std::vector<std::pair<FlavorResource, int64_t>> QuotaFor(WorkloadId id,
                                                           const std::vector<int32_t>& combo,
                                                           const Resources& req) const;
  // Quota for the pods still missing from minCount. The reference is valid until the next call.
  const Need& MinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const;
  Need ComputeMinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const;
  bool QuotaFits(int32_t cq, const std::vector<std::pair<FlavorResource, int64_t>>& need) const;
  // The first resource of `need` the queue cannot give now, with the numbers for a message.
  std::optional<ReasonPart> QuotaShortfall(WorkloadId id, const Need& need) const;
  std::string FormatQuotaPart(WorkloadId id, const ReasonPart& part) const;
  std::string FormatReason(WorkloadId id) const;

  // --- placement
  int PoolFor(WorkloadId id, const std::vector<int32_t>& combo) const;
  bool NodeEligible(WorkloadId id, int ps, const std::vector<int32_t>& combo, NodeId n) const;
  NodeId FindNode(WorkloadId id, int ps, const std::vector<int32_t>& combo);
  NodeId FindNodeOnce(WorkloadId id, int ps, const std::vector<int32_t>& combo) const;
  // The FGD paper's policies: the best-scored node among a bounded candidate set (up to
  // kCandidatesPerBucket feasible nodes of every free-GPU bucket, and nodes with shared devices
  // for a share), with the GPUs the policy picks remembered for PlacePod.
  NodeId FindNodeFgd(WorkloadId id, int ps, const std::vector<int32_t>& combo) const;
  fgd::NodeGpuState GpuStateOf(NodeId n) const;
  // The typical pods of the workloads known so far, rebuilt when their number has doubled.
  const fgd::FragmentationMeasure& Measure() const;
  // A share's milli for the typical-pod statistics: a share by memory measured on the most
  // common device memory of the cluster.
  int64_t TypicalShareMilli(const Resources& req) const {
    if (req[kGpuMemory] <= 0) return req[kGpuMilli];
    if (typical_gpu_mem_mib_ <= 0) return kMilliPerGpu;
    return std::min<int64_t>(
        kMilliPerGpu,
        (req[kGpuMemory] * kMilliPerGpu + typical_gpu_mem_mib_ - 1) / typical_gpu_mem_mib_);
  }
  void PlacePod(WorkloadId id, int ps, NodeId node, const std::vector<int32_t>& combo);
  void UnplaceLast(WorkloadId id);
  // Places pods until `min_pods` are placed; on failure rolls back to `mark` and returns false.
  bool PlaceMin(WorkloadId id, const std::vector<int32_t>& combo, size_t mark);
  void RollbackTo(size_t mark);

  // --- topology
  // Nodes grouped by the value of one label; built on first use of the label.
  struct DomainIndex {
    std::vector<int32_t> domain_of;  // per node, -1 without the label
    std::vector<std::string> names;
  };
  const DomainIndex& Domains(const std::string& label) const;
  // The topology levels (node labels, outermost first) for pod set `ps` under `combo`, and the
  // index of the level it asks for; false with `why` set when the request cannot be resolved.
  bool TopologyLevels(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                      std::vector<std::string>& levels, int& requested, std::string& why) const;
  // Places `count` more pods of pod set `ps` inside one domain (required) or as few domains
  // as possible (preferred). Leaves what it placed on success; rolls back to `mark` on failure.
  bool PlaceSetInTopology(WorkloadId id, int ps, int count, const std::vector<int32_t>& combo,
                          size_t mark);
  // Fills groups of nodes in order; true when `count` pods were placed.
  bool FillGroups(WorkloadId id, int ps, int count, const std::vector<int32_t>& combo,
                  const std::vector<std::vector<NodeId>>& groups);
  NodeId FindNodeAmong(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                       const std::vector<NodeId>& nodes) const;
  // Hostname anti-affinity: pods of the workload's spread group on node n.
  bool GroupOnNode(WorkloadId id, NodeId n) const {
    int32_t g = recs_[id].spread_group;
    auto it = group_nodes_[g].find(n);
    return it != group_nodes_[g].end() && it->second > 0;
  }
  std::string PlacementReason(WorkloadId id, const std::vector<int32_t>& combo) const;
  // Places further pods (beyond minCount) while quota and nodes allow; returns them.
  std::vector<PodPlacement> PlaceExtra(WorkloadId id);

  // --- admission, eviction, preemption
  enum class Outcome { kAdmitted, kPending, kRejected };
  Outcome TryAdmit(WorkloadId id, double now, std::vector<Decision>& out);
  void Admit(WorkloadId id, const std::vector<int32_t>& combo, double now,
             std::vector<Decision>& out);
  std::vector<PlacedPod> Evict(WorkloadId id);
  void Reinstate(WorkloadId id, std::vector<PlacedPod> pods);
  bool FitsNow(WorkloadId id, const std::vector<int32_t>& combo);
  bool TryPreempt(WorkloadId id, const std::vector<int32_t>& combo, double now,
                  std::vector<Decision>& out);
  std::vector<WorkloadId> PreemptionCandidates(WorkloadId id,
                                               const std::vector<int32_t>& combo) const;
  // For a gang that must sit in one topology domain: moves first the candidates inside the
  // domain where the fewest, lowest-priority victims free enough GPUs, so that the search frees
  // room in one domain rather than a little everywhere.
  void OrderForTopology(WorkloadId id, const std::vector<int32_t>& combo,
                        std::vector<WorkloadId>& candidates) const;
  bool HasPreemptionPolicy(int32_t cq) const {
    const PreemptionConfig& pc = model_.cluster_queues[cq].preemption;
    return pc.within_cluster_queue != WithinClusterQueuePolicy::kNever ||
           pc.reclaim_within_cohort != ReclaimPolicy::kNever ||
           pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever;
  }
  double ShareOf(int32_t cq, const std::vector<std::pair<FlavorResource, int64_t>>& delta) const;
  std::vector<std::pair<FlavorResource, int64_t>> UsageOf(WorkloadId id, int sign) const;

  void SetPending(WorkloadId id, std::string reason);
  void Enqueue(WorkloadId id);
  // Takes a pending workload out of wherever it waits (queue or parking).
  void Dequeue(WorkloadId id);
  // After a failed attempt: out of the queue until something could help (not for StrictFIFO
  // queues, whose head blocks the queue).
  void Park(WorkloadId id);
  void Unpark(WorkloadId id);
  // Moves parked workloads that could now be admitted back into their queues.
  void WakeParked();
  // The rounds of one pass; returns true when a workload woken for quota failed for another
  // reason (the quota it was woken for may serve another parked workload: wake again).
  bool Rounds(double now, std::vector<Decision>& out);
  void MarkRootReleased(int32_t cq) {
    if (cq < 0) return;
    int root = quota_->root(cq);
    if (!root_dirty_[root]) {
      root_dirty_[root] = true;
      dirty_roots_.push_back(root);
    }
  }

  Model model_;
  std::unique_ptr<NodeScorer> scorer_;
  std::unique_ptr<QueueOrder> order_;
  absl::flat_hash_map<std::string, int32_t> flavor_ids_, cq_ids_, cohort_ids_;
  absl::flat_hash_map<std::string, int32_t> local_queues_;  // "ns/name" -> cq (-1: CQ missing)
  absl::flat_hash_map<std::string, int32_t> priority_classes_, workload_priority_classes_;
  std::vector<std::string> cohort_names_;
  std::vector<ResolvedQueue> queues_;
  std::unique_ptr<QuotaTree> quota_;
  std::unique_ptr<ClusterState> cluster_;
  std::vector<std::vector<NodeId>> pools_;  // pool 0: all schedulable nodes; f+1: flavor f
  int32_t default_priority_ = 0;
  bool default_preempt_never_ = false;

  mutable std::vector<WorkloadStatus> status_;  // reasons formatted lazily
  std::vector<WorkloadRec> recs_;
  std::vector<absl::btree_set<QueueKey>> pending_;  // per queue index
  std::vector<WorkloadId> rejected_unreported_;
  std::set<WorkloadId> partial_;  // admitted with pods still to place
  // Preemption candidates by queue, lowest priority first: a preemptor walks only the prefix
  // below its own priority, and skips a queue that borrows nothing it needs.
  std::vector<absl::btree_set<std::pair<int32_t, WorkloadId>>> admitted_by_cq_;
  std::vector<std::vector<int32_t>> cqs_by_root_;  // per quota-tree root node
  std::vector<UndoEntry> undo_;
  int64_t release_epoch_ = 0;
  int64_t admit_epoch_ = 0;
  // Parking: per ClusterQueue, (flavor-resource, amount needed) -> the workloads in queue order.
  std::vector<absl::btree_map<std::pair<FlavorResource, int64_t>, absl::btree_set<QueueKey>>>
      quota_parked_;
  std::vector<WorkloadId> other_parked_;
  std::vector<bool> root_dirty_;  // a release in this quota tree since the last wake
  std::vector<int32_t> dirty_roots_;
  std::vector<WorkloadId> woken_for_quota_;  // this pass
  mutable absl::flat_hash_map<std::string, std::unique_ptr<DomainIndex>> domains_;
  std::string topology_reason_;  // why the last topology placement failed
  absl::flat_hash_map<std::string, int32_t> spread_group_ids_;
  std::vector<absl::flat_hash_map<NodeId, int32_t>> group_nodes_;  // per spread group
  bool avoid_group_nodes_ = false;  // preferred anti-affinity: first pass avoids them
  // FGD placement.
  std::optional<fgd::Policy> fgd_policy_;
  mutable std::unique_ptr<fgd::FragmentationMeasure> fgd_measure_;
  mutable int32_t fgd_measure_workloads_ = 0;
  absl::flat_hash_map<std::string, int32_t> gpu_model_ids_;
  std::vector<int32_t> node_gpu_model_;
  mutable uint64_t fgd_rng_ = 0x9e3779b97f4a7c15ULL;
  int64_t typical_gpu_mem_mib_ = 0;    // the most common known device memory, MiB
  mutable NodeId fgd_pick_node_ = -1;  // FindNodeFgd's choice and its GPUs, for PlacePod
  mutable fgd::GpuSet fgd_pick_gpus_ = 0;
  CycleStats stats_;
};

absl::Status SchedulerImpl::Init() {
  scorer_ = MakeNodeScorer(model_.config.placement);
  switch (model_.config.placement) {
    case PlacementPolicy::kRandom:
      fgd_policy_ = fgd::Policy::kRandom;
      break;
    case PlacementPolicy::kDotProd:
      fgd_policy_ = fgd::Policy::kDotProd;
      break;
    case PlacementPolicy::kGpuClustering:
      fgd_policy_ = fgd::Policy::kGpuClustering;
      break;
    case PlacementPolicy::kGpuPacking:
      fgd_policy_ = fgd::Policy::kGpuPacking;
      break;
    case PlacementPolicy::kBestFit:
      fgd_policy_ = fgd::Policy::kBestFit;
      break;
    case PlacementPolicy::kFgd:
      fgd_policy_ = fgd::Policy::kFgd;
      break;
    case PlacementPolicy::kTesseraFgd:
      fgd_policy_ = fgd::Policy::kTesseraFgd;
      break;
    default:
      break;
  }
  for (const Node& node : model_.nodes) {
    int32_t id = fgd::kNoGpuModel;
    if (node.gpu_count() > 0) {
      auto [it, inserted] =
          gpu_model_ids_.try_emplace(node.gpu_model, static_cast<int32_t>(gpu_model_ids_.size()));
      id = it->second;
    }
    node_gpu_model_.push_back(id);
  }
  order_ = MakeQueueOrder(model_.config);
  for (size_t i = 0; i < model_.flavors.size(); ++i)
    flavor_ids_[model_.flavors[i].name] = static_cast<int32_t>(i);
  for (size_t i = 0; i < model_.cluster_queues.size(); ++i)
    cq_ids_[model_.cluster_queues[i].name] = static_cast<int32_t>(i);
  // Cohorts: declared ones, plus those only named by a ClusterQueue or as a parent.
  auto cohort_id = [&](const std::string& name) {
    auto [it, inserted] = cohort_ids_.try_emplace(name, static_cast<int32_t>(cohort_names_.size()));
    if (inserted) cohort_names_.push_back(name);
    return it->second;
  };
  for (const auto& c : model_.cohorts) cohort_id(c.name);
  for (const auto& c : model_.cohorts)
    if (!c.parent.empty()) cohort_id(c.parent);
  for (const auto& cq : model_.cluster_queues)
    if (!cq.cohort.empty()) cohort_id(cq.cohort);

  const int num_cqs = static_cast<int>(model_.cluster_queues.size());
  quota_ = std::make_unique<QuotaTree>(num_cqs, static_cast<int>(cohort_names_.size()),
                                       static_cast<int>(model_.flavors.size()));
  auto set_groups = [&](int node, const std::vector<ResourceGroup>& groups) {
    for (const auto& g : groups) {
      for (const auto& fq : g.flavors) {
        auto it = flavor_ids_.find(fq.flavor);
        if (it == flavor_ids_.end()) continue;
        for (const auto& rq : fq.resources) {
          quota_->SetQuota(node, MakeFR(it->second, rq.resource), rq.nominal,
                           rq.borrowing_limit.value_or(kUnlimited),
                           rq.lending_limit.value_or(kUnlimited));
        }
      }
    }
  };
  queues_.resize(num_cqs);
  for (int i = 0; i < num_cqs; ++i) {
    const ClusterQueue& cq = model_.cluster_queues[i];
    ResolvedQueue& q = queues_[i];
    q.group_of.fill(-1);
    q.tree_node = i;
    for (const auto& g : cq.resource_groups) {
      ResolvedGroup rg;
      for (const auto& fq : g.flavors) {
        auto it = flavor_ids_.find(fq.flavor);
        rg.flavors.push_back(it == flavor_ids_.end() ? -1 : it->second);
        rg.flavor_names.push_back(fq.flavor);
      }
      for (ResourceId r : g.covered)
        if (q.group_of[r] < 0) q.group_of[r] = static_cast<int8_t>(q.groups.size());
      q.groups.push_back(std::move(rg));
    }
    set_groups(i, cq.resource_groups);
    if (!cq.cohort.empty()) quota_->SetParent(i, quota_->cohort_node(cohort_ids_[cq.cohort]));
  }
  for (const auto& c : model_.cohorts) {
    int node = quota_->cohort_node(cohort_ids_[c.name]);
    set_groups(node, c.resource_groups);
    if (!c.parent.empty()) quota_->SetParent(node, quota_->cohort_node(cohort_ids_[c.parent]));
  }
  if (auto s = quota_->Finalize(); !s.ok()) return s;

  for (const auto& lq : model_.local_queues) {
    auto it = cq_ids_.find(lq.cluster_queue);
    local_queues_[lq.ns + "/" + lq.name] = it == cq_ids_.end() ? -1 : it->second;
  }
  for (const auto& pc : model_.priority_classes) {
    priority_classes_[pc.name] = pc.value;
    if (pc.global_default) {
      default_priority_ = pc.value;
      default_preempt_never_ = pc.preemption_never;
    }
  }
  for (const auto& wpc : model_.workload_priority_classes)
    workload_priority_classes_[wpc.name] = wpc.value;

  // A node holds 1000 milli of GPU shares per device, whatever a manifest said.
  // and, for shares by memory, its devices' memory (tessera.dev/gpu-memory, MiB).
  for (Node& node : model_.nodes) {
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
  pools_.assign(model_.flavors.size() + 1, {});
  for (size_t n = 0; n < model_.nodes.size(); ++n) {
    const Node& node = model_.nodes[n];
    if (node.unschedulable) continue;
    pools_[0].push_back(static_cast<NodeId>(n));
    for (size_t f = 0; f < model_.flavors.size(); ++f)
      if (MatchesNodeSelector(model_.flavors[f].node_labels, node.labels))
        pools_[f + 1].push_back(static_cast<NodeId>(n));
  }
  cluster_ = std::make_unique<ClusterState>(model_.nodes, pools_);
  {
    absl::flat_hash_map<int64_t, int64_t> devices_by_memory;
    for (const Node& node : model_.nodes)
      if (node.gpu_memory_mib > 0) devices_by_memory[node.gpu_memory_mib] += node.gpu_count();
    int64_t most = 0;
    for (const auto& [mib, count] : devices_by_memory)
      if (count > most || (count == most && mib < typical_gpu_mem_mib_)) {
        most = count;
        typical_gpu_mem_mib_ = mib;
      }
  }
  pending_.resize(num_cqs + 1);
  quota_parked_.resize(num_cqs);
  root_dirty_.assign(quota_->num_nodes(), false);
  admitted_by_cq_.resize(num_cqs);
  cqs_by_root_.resize(quota_->num_nodes());
  for (int i = 0; i < num_cqs; ++i) cqs_by_root_[quota_->root(i)].push_back(i);

  std::vector<Workload> initial = std::move(model_.workloads);
  model_.workloads.clear();
  for (auto& w : initial) AddWorkload(std::move(w));
  return absl::OkStatus();
}

WorkloadId SchedulerImpl::AddWorkload(Workload w) {
  auto id = static_cast<WorkloadId>(model_.workloads.size());
  // A share of 1000 milli or more in whole thousands is whole GPUs.
  for (PodSet& ps : w.pod_sets) {
    int64_t& milli = ps.requests[kGpuMilli];
    if (milli >= kMilliPerGpu && milli % kMilliPerGpu == 0 && ps.requests[kGpu] == 0) {
      ps.requests[kGpu] = milli / kMilliPerGpu;
      milli = 0;
    }
  }
  // A workload alone forms its own group, named so that no spread_group can collide with it.
  std::string group = w.spread_group.empty() ? fmt::format("\x01{}", id) : w.spread_group;
  model_.workloads.push_back(std::move(w));
  status_.emplace_back();
  recs_.emplace_back();
  bool needs_group = false;
  for (const PodSet& ps : model_.workloads[id].pod_sets)
    if (ps.anti_affinity != HostnameAntiAffinity::kNone) needs_group = true;
  if (needs_group) {
    auto [it, inserted] =
        spread_group_ids_.try_emplace(group, static_cast<int32_t>(group_nodes_.size()));
    if (inserted) group_nodes_.emplace_back();
    recs_[id].spread_group = it->second;
  }
  Resolve(id);
  return id;
}

void SchedulerImpl::Resolve(WorkloadId id) {
  const Workload& w = model_.workloads[id];
  WorkloadRec& rec = recs_[id];
  rec.priority = default_priority_;
  rec.can_preempt = !default_preempt_never_;
  if (!w.priority_class.empty()) {
    auto it = priority_classes_.find(w.priority_class);
    if (it == priority_classes_.end()) {
      rec.unresolved = fmt::format("PriorityClass \"{}\" not found", w.priority_class);
    } else {
      rec.priority = it->second;
      for (const auto& pc : model_.priority_classes)
        if (pc.name == w.priority_class) rec.can_preempt = !pc.preemption_never;
    }
  }
  if (!w.workload_priority_class.empty()) {
    auto it = workload_priority_classes_.find(w.workload_priority_class);
    if (it == workload_priority_classes_.end()) {
      rec.unresolved =
          fmt::format("WorkloadPriorityClass \"{}\" not found", w.workload_priority_class);
    } else {
      rec.priority = it->second;
    }
  }
  if (!w.queue_name.empty()) {
    auto it = local_queues_.find(w.ns + "/" + w.queue_name);
    if (it != local_queues_.end()) {
      rec.cq = it->second;
      if (rec.cq < 0) {
        for (const auto& lq : model_.local_queues)
          if (lq.ns == w.ns && lq.name == w.queue_name)
            rec.unresolved = fmt::format("ClusterQueue \"{}\" of LocalQueue {}/{} not found",
                                         lq.cluster_queue, w.ns, w.queue_name);
      }
    } else if (auto cq = cq_ids_.find(w.queue_name); cq != cq_ids_.end()) {
      rec.cq = cq->second;  // a cluster-scoped queue named directly (Volcano's spec.queue)
    } else {
      rec.unresolved = fmt::format("LocalQueue {}/{} not found", w.ns, w.queue_name);
    }
    if (rec.cq >= 0 && rec.unresolved.empty()) {
      const ClusterQueue& cq = model_.cluster_queues[rec.cq];
      Labels ns_labels;
      if (auto nl = model_.namespace_labels.find(w.ns); nl != model_.namespace_labels.end())
        ns_labels = nl->second;
      ns_labels["kubernetes.io/metadata.name"] = w.ns;
      if (!Matches(cq.namespace_selector, ns_labels)) {
        rec.unresolved = fmt::format(
            "namespace {} is not selected by ClusterQueue {}'s namespaceSelector{}", w.ns, cq.name,
            cq.namespace_selector.present ? "" : " (absent: matches no namespace)");
      }
    }
  }
  if (rec.cq >= 0) {
    const ResolvedQueue& q = queues_[rec.cq];
    std::vector<bool> touched(q.groups.size(), false);
    for (const auto& ps : w.pod_sets)
      for (int r = 0; r < kMaxResources; ++r)
        if (ps.requests[r] > 0 && q.group_of[r] >= 0) touched[q.group_of[r]] = true;
    for (size_t g = 0; g < touched.size(); ++g)
      if (touched[g]) rec.groups_touched.push_back(static_cast<int32_t>(g));
  }
  rec.placed_per_set.assign(w.pod_sets.size(), 0);
  rec.combos = FlavorCombos(id);
  rec.min_need.clear();
  for (const auto& combo : rec.combos) rec.min_need.push_back(ComputeMinQuotaNeed(id, combo));
}

std::string SchedulerImpl::CanEverFit(WorkloadId id) const {
  const Workload& w = model_.workloads[id];
  const WorkloadRec& rec = recs_[id];
  if (w.pod_sets.empty() || w.TotalPods() == 0) return "";  // nothing to place: admits at once
  for (const PodSet& ps : w.pod_sets) {
    if (ClusterState::IsShare(ps.requests) && ps.requests[kGpu] > 0)
      return fmt::format("pod set {} asks for whole GPUs and a GPU share at once", ps.name);
    if (ps.requests[kGpuMilli] > 0 && ps.requests[kGpuMemory] > 0)
      return fmt::format("pod set {} asks for a GPU share by milli and by memory at once", ps.name);
    if (ps.requests[kGpuMilli] > kMilliPerGpu)
      return fmt::format(
          "pod set {} asks for {} {}: a share is at most 1000 (one device); more must be whole "
          "GPUs",
          ps.name, ps.requests[kGpuMilli], kGpuMilliResourceName);
  }
  // Quota: the min pods' needs within what the queue could ever get, in some flavor combo.
  const auto& combos = recs_[id].combos;
  std::string quota_reason;
  bool any_quota = rec.cq < 0;
  for (const auto& combo : combos) {
    if (rec.cq < 0) break;
    auto need = MinQuotaNeed(id, combo);
    bool ok = true;
    for (const auto& [fr, q] : need) {
      int64_t max = quota_->MaxPossible(rec.cq, fr);
      if (q > max) {
        ok = false;
        if (quota_reason.empty()) {
          quota_reason = fmt::format(
              "needs {} {} in flavor {} but ClusterQueue {} can get at most {} even with its "
              "cohort idle",
              FormatQuantity(ResourceOf(fr), q), ResourceName(ResourceOf(fr)),
              model_.flavors[FlavorOf(fr)].name, model_.cluster_queues[rec.cq].name,
              FormatQuantity(ResourceOf(fr), max));
        }
        break;
      }
    }
    if (ok) {
      any_quota = true;
      break;
    }
  }
  if (!any_quota) return quota_reason;
  // Nodes: every pod set with pods in the min set must fit on some empty eligible node.
  int remaining = w.MinPods();
  for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
    remaining -= w.pod_sets[ps].count;
    bool found = false;
    for (const auto& combo : combos) {
      int pool = PoolFor(id, combo);
      for (NodeId n : pools_[pool]) {
        if (w.pod_sets[ps].requests.FitsIn(model_.nodes[n].allocatable) &&
            cluster_->ShareMilli(n, w.pod_sets[ps].requests) <= kMilliPerGpu &&
            NodeEligible(id, static_cast<int>(ps), combo, n)) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) {
      Resources shown = w.pod_sets[ps].requests;
      shown[kPods] = 0;  // every pod asks for one; saying so adds nothing
      return fmt::format("pod set {} needs {} per pod and no node can ever hold that",
                         w.pod_sets[ps].name, shown.ToString());
    }
  }
  return "";
}

std::vector<std::vector<int32_t>> SchedulerImpl::FlavorCombos(WorkloadId id) const {
  const WorkloadRec& rec = recs_[id];
  if (rec.cq < 0 || rec.groups_touched.empty()) return {{}};
  const ResolvedQueue& q = queues_[rec.cq];
  std::vector<std::vector<int32_t>> out;
  std::vector<int32_t> idx(rec.groups_touched.size(), 0);
  while (static_cast<int>(out.size()) < kMaxFlavorCombos) {
    std::vector<int32_t> combo(q.groups.size(), -1);
    bool defined = true;
    for (size_t k = 0; k < idx.size(); ++k) {
      int g = rec.groups_touched[k];
      combo[g] = idx[k];
      if (q.groups[g].flavors[idx[k]] < 0) defined = false;
    }
    if (defined) out.push_back(std::move(combo));
    // Next combination, last group fastest.
    int k = static_cast<int>(idx.size()) - 1;
    while (k >= 0) {
      int g = rec.groups_touched[k];
      if (++idx[k] < static_cast<int>(q.groups[g].flavors.size())) break;
      idx[k] = 0;
      --k;
    }
    if (k < 0) break;
  }
  return out;
}

int32_t SchedulerImpl::FlavorFor(WorkloadId id, const std::vector<int32_t>& combo,
                                 ResourceId r) const {
  const WorkloadRec& rec = recs_[id];
  if (rec.cq < 0) return -1;
  const ResolvedQueue& q = queues_[rec.cq];
  int g = q.group_of[r];
  if (g < 0 || combo.empty() || combo[g] < 0) return -1;
  return q.groups[g].flavors[combo[g]];
}

std::vector<std::pair<FlavorResource, int64_t>> SchedulerImpl::QuotaFor(
    WorkloadId id, const std::vector<int32_t>& combo, const Resources& req) const {
  std::vector<std::pair<FlavorResource, int64_t>> out;
  if (recs_[id].cq < 0) return out;
  for (int r = 0; r < kMaxResources; ++r) {
    if (req[r] == 0) continue;
    int32_t f = FlavorFor(id, combo, r);
    if (f >= 0) out.emplace_back(MakeFR(f, r), req[r]);
  }
  return out;
}

const Need& SchedulerImpl::MinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const {
  const WorkloadRec& rec = recs_[id];
  // Nothing placed (every pending workload): the need computed at Resolve.
  if (rec.placed.empty() && rec.min_need.size() == rec.combos.size()) {
    for (size_t i = 0; i < rec.combos.size(); ++i)
      if (&rec.combos[i] == &combo || rec.combos[i] == combo) return rec.min_need[i];
  }
  static thread_local Need scratch;
  scratch = ComputeMinQuotaNeed(id, combo);
  return scratch;
}

Need SchedulerImpl::ComputeMinQuotaNeed(WorkloadId id, const std::vector<int32_t>& combo) const {
  const Workload& w = model_.workloads[id];
  const WorkloadRec& rec = recs_[id];
  Need sum;
  int remaining = w.MinPods();
  for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
    int need = std::max(0, std::min(w.pod_sets[ps].count, remaining) - rec.placed_per_set[ps]);
    remaining -= w.pod_sets[ps].count;
    if (need <= 0) continue;
    for (const auto& [fr, q] : QuotaFor(id, combo, w.pod_sets[ps].requests)) {
      auto it =
          std::find_if(sum.begin(), sum.end(), [fr = fr](const auto& e) { return e.first == fr; });
      if (it == sum.end()) {
        sum.emplace_back(fr, q * need);
      } else {
        it->second += q * need;
      }
    }
  }
  std::sort(sum.begin(), sum.end());
  return sum;
}

bool SchedulerImpl::QuotaFits(int32_t cq,
                              const std::vector<std::pair<FlavorResource, int64_t>>& need) const {
  if (cq < 0) return true;
  for (const auto& [fr, q] : need)
    if (q > quota_->Available(cq, fr)) return false;
  return true;
}

std::optional<ReasonPart> SchedulerImpl::QuotaShortfall(WorkloadId id, const Need& need) const {
  int32_t cq = recs_[id].cq;
  for (const auto& [fr, amount] : need) {
    int64_t avail = quota_->Available(cq, fr);
    if (amount <= avail) continue;
    ReasonPart p;
    p.quota = true;
    p.fr = fr;
    p.amount = amount;
    p.avail = avail;
    p.usage = quota_->usage(cq, fr);
    p.nominal = quota_->nominal(cq, fr);
    p.borrowing_limit = quota_->borrowing_limit(cq, fr);
    return p;
  }
  return std::nullopt;
}

std::string SchedulerImpl::FormatReason(WorkloadId id) const {
  std::string reason;
  for (const ReasonPart& p : recs_[id].why) {
    std::string r = p.quota ? FormatQuotaPart(id, p) : p.text;
    if (reason.find(r) != std::string::npos) continue;
    reason += (reason.empty() ? "" : "; ") + r;
  }
  return reason;
}

std::string SchedulerImpl::FormatQuotaPart(WorkloadId id, const ReasonPart& part) const {
  int32_t cq = recs_[id].cq;
  const ClusterQueue& q = model_.cluster_queues[cq];
  {
    const FlavorResource fr = part.fr;
    const int64_t amount = part.amount, avail = part.avail, usage = part.usage,
                  nominal = part.nominal;
    ResourceId r = ResourceOf(fr);
    std::string s =
        fmt::format("needs {} {} in flavor {}; ClusterQueue {} uses {} of nominal {}",
                    FormatQuantity(r, amount), ResourceName(r), model_.flavors[FlavorOf(fr)].name,
                    q.name, FormatQuantity(r, usage), FormatQuantity(r, nominal));
    if (part.borrowing_limit < kUnlimited)
      s += fmt::format(" (borrowing limit {})", FormatQuantity(r, part.borrowing_limit));
    if (!q.cohort.empty()) {
      int64_t own = std::max<int64_t>(0, nominal - usage);
      s += fmt::format(", cohort {} can lend {} more", q.cohort,
                       FormatQuantity(r, std::max<int64_t>(0, avail - own)));
      if (avail < own) {
        s += fmt::format("; {} of its unused nominal quota is lent to other queues of the cohort",
                         FormatQuantity(r, own - std::max<int64_t>(0, avail)));
      }
    }
    return s;
  }
}

int SchedulerImpl::PoolFor(WorkloadId id, const std::vector<int32_t>& combo) const {
  // The flavor of the GPUs if any (it narrows most), else any flavor chosen, else all nodes.
  int32_t f = FlavorFor(id, combo, kGpu);
  if (f < 0) {
    for (size_t g = 0; g < combo.size(); ++g) {
      if (combo[g] >= 0) {
        f = queues_[recs_[id].cq].groups[g].flavors[combo[g]];
        break;
      }
    }
  }
  return f < 0 ? 0 : f + 1;
}

bool SchedulerImpl::NodeEligible(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                                 NodeId n) const {
  const Node& node = model_.nodes[n];
  const PodSet& set = model_.workloads[id].pod_sets[ps];
  if ((set.anti_affinity == HostnameAntiAffinity::kRequired ||
       (avoid_group_nodes_ && set.anti_affinity == HostnameAntiAffinity::kPreferred)) &&
      recs_[id].spread_group >= 0 && GroupOnNode(id, n))
    return false;
  if (!MatchesNodeSelector(set.node_selector, node.labels)) return false;
  if (!Matches(set.affinity, node.labels)) return false;
  const WorkloadRec& rec = recs_[id];
  if (rec.cq < 0 || combo.empty()) return ToleratesAll(node.taints, set.tolerations);
  // Every chosen flavor's labels must hold (the pool checked one of them), and its tolerations
  // join the pod's.
  std::vector<Toleration> tolerations;
  const std::vector<Toleration>* tol = &set.tolerations;
  const ResolvedQueue& q = queues_[rec.cq];
  for (size_t g = 0; g < combo.size(); ++g) {
    if (combo[g] < 0) continue;
    const ResourceFlavor& f = model_.flavors[q.groups[g].flavors[combo[g]]];
    if (!MatchesNodeSelector(f.node_labels, node.labels)) return false;
    if (!f.tolerations.empty()) {
      if (tol != &tolerations) tolerations = set.tolerations;
      tolerations.insert(tolerations.end(), f.tolerations.begin(), f.tolerations.end());
      tol = &tolerations;
    }
  }
  return ToleratesAll(node.taints, *tol);
}

NodeId SchedulerImpl::FindNode(WorkloadId id, int ps, const std::vector<int32_t>& combo) {
  if (fgd_policy_) {
    const Resources& req = model_.workloads[id].pod_sets[ps].requests;
    if (req[kGpu] > 0 || ClusterState::IsShare(req)) return FindNodeFgd(id, ps, combo);
  }
  // Preferred anti-affinity: first a node without the group's pods, then any.
  if (model_.workloads[id].pod_sets[ps].anti_affinity == HostnameAntiAffinity::kPreferred &&
      recs_[id].spread_group >= 0) {
    avoid_group_nodes_ = true;
    NodeId n = FindNodeOnce(id, ps, combo);
    avoid_group_nodes_ = false;
    if (n >= 0) return n;
  }
  return FindNodeOnce(id, ps, combo);
}

NodeId SchedulerImpl::FindNodeOnce(WorkloadId id, int ps, const std::vector<int32_t>& combo) const {
  const Resources& req = model_.workloads[id].pod_sets[ps].requests;
  int pool = PoolFor(id, combo);
  const bool share = ClusterState::IsShare(req);
  // A share needs a device: one with room among the shared ones, else a free one (k >= 1).
  int g = share ? 1 : static_cast<int>(req[kGpu]);
  int max_k = cluster_->max_gpus_per_node();
  if (g > max_k) return -1;
  bool fullest = scorer_->FullestFirst();
  if (share && fullest) {
    // Binpack: fill shared devices first, the one left with the least room (best fit).
    NodeId best = -1;
    int32_t best_room = 0;
    int seen = 0;
    for (NodeId n : cluster_->SharedNodes(pool)) {
      if (cluster_->share_room(n) < cluster_->ShareMilli(n, req) || !cluster_->Fits(n, req) ||
          !NodeEligible(id, ps, combo, n))
        continue;
      if (best < 0 || cluster_->share_room(n) < best_room) {
        best = n;
        best_room = cluster_->share_room(n);
      }
      if (++seen >= kCandidatesPerBucket) break;
    }
    if (best >= 0) return best;
  }
  for (int step = 0; step <= max_k - g; ++step) {
    int k = fullest ? g + step : max_k - step;
    const auto& bucket = cluster_->Bucket(pool, k);
    NodeId best = -1;
    double best_score = 0;
    int seen = 0;
    for (NodeId n : bucket) {
      if (!cluster_->Fits(n, req) || !NodeEligible(id, ps, combo, n)) continue;
      // Nodes that can give the GPUs inside one NVLink domain (or NUMA node) first.
      double s = scorer_->Score(cluster_->free(n), model_.nodes[n].allocatable, req) +
                 (req[kGpu] > 1 ? 10.0 * cluster_->ServeTier(n, static_cast<int>(req[kGpu])) : 0);
      if (best < 0 || s > best_score || (s == best_score && n < best)) {
        best = n;
        best_score = s;
      }
      if (++seen >= kCandidatesPerBucket) break;
    }
    if (best >= 0) return best;
  }
  if (share && !fullest) {
    for (NodeId n : cluster_->SharedNodes(pool))
      if (cluster_->Fits(n, req) && NodeEligible(id, ps, combo, n)) return n;
  }
  return -1;
}

void SchedulerImpl::PlacePod(WorkloadId id, int ps, NodeId node,
                             const std::vector<int32_t>& combo) {
  WorkloadRec& rec = recs_[id];
  const Resources& req = model_.workloads[id].pod_sets[ps].requests;
  PlacedPod p;
  p.placement.pod_set = ps;
  p.placement.index = rec.placed_per_set[ps]++;
  p.placement.node = node;
  bool picked = fgd_pick_node_ == node && fgd_pick_gpus_ != 0;
  const int64_t share = cluster_->ShareMilli(node, req);
  if (picked) {
    const int32_t* owners = cluster_->gpu_owners(node);
    const int32_t* used = cluster_->gpu_used_milli(node);
    for (int g = 0; g < cluster_->gpu_count(node); ++g) {
      if (!(fgd_pick_gpus_ >> g & 1u)) continue;
      p.placement.gpus.push_back(g);
      picked =
          picked && (share ? owners[g] < 0 && used[g] + share <= kMilliPerGpu : owners[g] == -1);
    }
    picked = picked && static_cast<int64_t>(p.placement.gpus.size()) == (share ? 1 : req[kGpu]);
  }
  if (picked) {
    cluster_->AssignExact(node, req, p.placement.gpus, id);
  } else {
    p.placement.gpus.clear();
    p.placement.gpus = cluster_->Assign(node, req, id, &p.placement.mig_starts);
  }
  fgd_pick_node_ = -1;
  p.quota = QuotaFor(id, combo, req);
  for (const auto& [fr, q] : p.quota) quota_->AddUsage(rec.cq, fr, q);
  rec.gpus_placed += req[kGpu];
  if (rec.spread_group >= 0) ++group_nodes_[rec.spread_group][node];
  rec.placed.push_back(std::move(p));
  undo_.push_back({id});
}

void SchedulerImpl::UnplaceLast(WorkloadId id) {
  WorkloadRec& rec = recs_[id];
  PlacedPod& p = rec.placed.back();
  const Resources& req = model_.workloads[id].pod_sets[p.placement.pod_set].requests;
  cluster_->Release(p.placement.node, req, p.placement.gpus, p.placement.mig_starts);
  for (const auto& [fr, q] : p.quota) quota_->AddUsage(rec.cq, fr, -q);
  rec.gpus_placed -= req[kGpu];
  if (rec.spread_group >= 0) --group_nodes_[rec.spread_group][p.placement.node];
  --rec.placed_per_set[p.placement.pod_set];
  rec.placed.pop_back();
}

void SchedulerImpl::RollbackTo(size_t mark) {
  while (undo_.size() > mark) {
    UnplaceLast(undo_.back().w);
    undo_.pop_back();
  }
}

bool SchedulerImpl::PlaceMin(WorkloadId id, const std::vector<int32_t>& combo, size_t mark) {
  const Workload& w = model_.workloads[id];
  WorkloadRec& rec = recs_[id];
  int remaining = w.MinPods();
  for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
    int target = std::min(w.pod_sets[ps].count, remaining);
    remaining -= w.pod_sets[ps].count;
    if (rec.placed_per_set[ps] >= target) continue;
    if (w.pod_sets[ps].topology.present()) {
      if (!PlaceSetInTopology(id, static_cast<int>(ps), target - rec.placed_per_set[ps], combo,
                              mark))
        return false;
      continue;
    }
    while (rec.placed_per_set[ps] < target) {
      NodeId n = FindNode(id, static_cast<int>(ps), combo);
      if (n < 0) {
        RollbackTo(mark);
        return false;
      }
      PlacePod(id, static_cast<int>(ps), n, combo);
    }
  }
  return true;
}

fgd::NodeGpuState SchedulerImpl::GpuStateOf(NodeId n) const {
  fgd::NodeGpuState st;
  const Resources& free = cluster_->free(n);
  st.cpu_free_milli = free[kCpu];
  st.mem_free_mib = free[kMemory] >> 20;
  st.gpu_model = node_gpu_model_[n];
  st.num_gpus = std::min(cluster_->gpu_count(n), fgd::kMaxGpusPerNode);
  const int32_t* used = cluster_->gpu_used_milli(n);
  for (int i = 0; i < st.num_gpus; ++i)
    st.gpu_free_milli[static_cast<size_t>(i)] = kMilliPerGpu - used[i];
  return st;
}

const fgd::FragmentationMeasure& SchedulerImpl::Measure() const {
  const int32_t n = static_cast<int32_t>(model_.workloads.size());
  if (!fgd_measure_ || n >= 2 * fgd_measure_workloads_ + 16) {
    std::vector<fgd::PodShape> shapes;
    for (const Workload& w : model_.workloads) {
      for (const PodSet& ps : w.pod_sets) {
        fgd::PodShape sh;
        sh.cpu_milli = ps.requests[kCpu];
        sh.mem_mib = ps.requests[kMemory] >> 20;
        const int64_t share = TypicalShareMilli(ps.requests);
        sh.num_gpu = share > 0 ? 1 : static_cast<int32_t>(ps.requests[kGpu]);
        sh.gpu_milli = share > 0        ? static_cast<int32_t>(share)
                       : sh.num_gpu > 0 ? fgd::kMilliPerGpu
                                        : 0;
        for (int32_t i = 0; i < ps.count; ++i) shapes.push_back(sh);
      }
    }
    fgd_measure_ = std::make_unique<fgd::FragmentationMeasure>(fgd::BuildTypicalPods(shapes));
    fgd_measure_workloads_ = n;
  }
  return *fgd_measure_;
}

NodeId SchedulerImpl::FindNodeFgd(WorkloadId id, int ps, const std::vector<int32_t>& combo) const {
  const Resources& req = model_.workloads[id].pod_sets[ps].requests;
  const bool share = ClusterState::IsShare(req);
  fgd::PodRequest pod;
  pod.cpu_milli = req[kCpu];
  pod.mem_mib = req[kMemory] >> 20;
  pod.num_gpu = share ? 1 : static_cast<int32_t>(req[kGpu]);
  pod.gpu_milli = share ? static_cast<int32_t>(req[kGpuMilli]) : fgd::kMilliPerGpu;
  const fgd::FragmentationMeasure& measure = Measure();
  const fgd::Scorer scorer(*fgd_policy_, &measure);  // cheap: a policy and a pointer
  const int pool = PoolFor(id, combo);
  std::vector<NodeId> candidates;
  auto consider = [&](NodeId n) {
    if (!cluster_->Fits(n, req) || !NodeEligible(id, ps, combo, n)) return false;
    candidates.push_back(n);
    return true;
  };
  if (share) {
    int seen = 0;
    for (NodeId n : cluster_->SharedNodes(pool)) {
      if (cluster_->share_room(n) >= cluster_->ShareMilli(n, req) && consider(n) &&
          ++seen >= 4 * kCandidatesPerBucket)
        break;
    }
  }
  const int g = share ? 1 : static_cast<int>(req[kGpu]);
  for (int k = g; k <= cluster_->max_gpus_per_node(); ++k) {
    int seen = 0;
    for (NodeId n : cluster_->Bucket(pool, k))
      if (consider(n) && ++seen >= kCandidatesPerBucket) break;
  }
  NodeId best = -1;
  int64_t best_score = 0;
  bool best_used = false;
  fgd::GpuSet best_gpus = 0;
  for (NodeId n : candidates) {
    fgd::NodeGpuState st = GpuStateOf(n);
    if (req[kGpuMemory] > 0) pod.gpu_milli = static_cast<int32_t>(cluster_->ShareMilli(n, req));
    if (cluster_->gpu_count(n) > fgd::kMaxGpusPerNode || !fgd::Fits(st, pod)) continue;
    fgd::NodeView view{&st, 0, measure.Evaluate(st)};
    fgd::Scored sc = scorer.Score(view, pod);
    if (sc.error) continue;
    if (*fgd_policy_ == fgd::Policy::kRandom) {
      fgd_rng_ = fgd_rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      sc.score = static_cast<int64_t>(fgd_rng_ >> 33);
    }
    // Ties: TesseraFGD takes a node already in use first; then the lower node.
    bool used = cluster_->free_gpus(n) < cluster_->gpu_count(n) || cluster_->share_room(n) > 0;
    bool better =
        best < 0 || sc.score > best_score ||
        (sc.score == best_score && *fgd_policy_ == fgd::Policy::kTesseraFgd && used && !best_used);
    if (better) {
      best = n;
      best_score = sc.score;
      best_used = used;
      best_gpus = sc.gpus;
    }
  }
  fgd_pick_node_ = best;
  fgd_pick_gpus_ = best_gpus;
  return best;
}

const SchedulerImpl::DomainIndex& SchedulerImpl::Domains(const std::string& label) const {
  auto& slot = domains_[label];
  if (slot) return *slot;
  slot = std::make_unique<DomainIndex>();
  absl::flat_hash_map<std::string, int32_t> ids;
  slot->domain_of.assign(model_.nodes.size(), -1);
  for (size_t n = 0; n < model_.nodes.size(); ++n) {
    auto it = model_.nodes[n].labels.find(label);
    if (it == model_.nodes[n].labels.end()) continue;
    auto [id, inserted] = ids.try_emplace(it->second, static_cast<int32_t>(slot->names.size()));
    if (inserted) slot->names.push_back(it->second);
    slot->domain_of[n] = id->second;
  }
  return *slot;
}

bool SchedulerImpl::TopologyLevels(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                                   std::vector<std::string>& levels, int& requested,
                                   std::string& why) const {
  const TopologyRequest& t = model_.workloads[id].pod_sets[ps].topology;
  levels.clear();
  int pool = PoolFor(id, combo);
  if (pool > 0) {
    const std::string& name = model_.flavors[pool - 1].topology_name;
    for (const Topology& topo : model_.topologies)
      if (topo.name == name) levels = topo.levels;
  }
  if (!t.level.empty()) {
    auto it = std::find(levels.begin(), levels.end(), t.level);
    if (it == levels.end()) {
      levels = {t.level};  // a plain node label: one level
      requested = 0;
    } else {
      requested = static_cast<int>(it - levels.begin());
    }
    return true;
  }
  // A Volcano tier: tier 1 is the innermost level above the nodes themselves.
  std::vector<std::string> above = levels;
  if (!above.empty() && above.back() == "kubernetes.io/hostname") above.pop_back();
  if (above.empty()) {
    why = fmt::format(
        "pod set {} asks for network tier {} but {} has no Topology with levels above the "
        "nodes",
        model_.workloads[id].pod_sets[ps].name, t.tier,
        pool > 0 ? "flavor " + model_.flavors[pool - 1].name : "the cluster");
    return false;
  }
  levels = above;
  requested = std::max(0, static_cast<int>(above.size()) - t.tier);
  return true;
}

NodeId SchedulerImpl::FindNodeAmong(WorkloadId id, int ps, const std::vector<int32_t>& combo,
                                    const std::vector<NodeId>& nodes) const {
  const Resources& req = model_.workloads[id].pod_sets[ps].requests;
  const bool fullest = scorer_->FullestFirst();
  NodeId best = -1;
  int64_t best_key = 0;
  double best_score = 0;
  for (NodeId n : nodes) {
    if (!cluster_->Fits(n, req) || !NodeEligible(id, ps, combo, n)) continue;
    // Binpack: the fewest free GPUs (shares: the least room left); spread: the most.
    const int64_t share = cluster_->ShareMilli(n, req);
    int64_t key = share > 0 && cluster_->share_room(n) >= share
                      ? cluster_->share_room(n) - kMilliPerGpu
                      : cluster_->free_gpus(n);
    if (!fullest) key = -key;
    double score = scorer_->Score(cluster_->free(n), model_.nodes[n].allocatable, req);
    if (best < 0 || key < best_key || (key == best_key && score > best_score) ||
        (key == best_key && score == best_score && n < best)) {
      best = n;
      best_key = key;
      best_score = score;
    }
  }
  return best;
}

bool SchedulerImpl::FillGroups(WorkloadId id, int ps, int count, const std::vector<int32_t>& combo,
                               const std::vector<std::vector<NodeId>>& groups) {
  int placed = 0;
  for (const auto& group : groups) {
    while (placed < count) {
      NodeId n = FindNodeAmong(id, ps, combo, group);
      if (n < 0) break;
      PlacePod(id, ps, n, combo);
      ++placed;
    }
    if (placed >= count) return true;
  }
  return false;
}

bool SchedulerImpl::PlaceSetInTopology(WorkloadId id, int ps, int count,
                                       const std::vector<int32_t>& combo, size_t mark) {
  const PodSet& set = model_.workloads[id].pod_sets[ps];
  const bool required = set.topology.required;
  std::vector<std::string> levels;
  int requested = 0;
  if (!TopologyLevels(id, ps, combo, levels, requested, topology_reason_)) {
    RollbackTo(mark);
    return false;
  }
  // Nodes that could take a pod now, with an estimate of how many (eligibility is checked when
  // placing; an estimate that was too high sends the search to the next domain).
  const Resources& req = set.requests;
  const int pool = PoolFor(id, combo);
  const int g = ClusterState::IsShare(req) ? 0 : static_cast<int>(req[kGpu]);
  std::vector<std::pair<NodeId, int64_t>> caps;
  std::vector<int> used_resources;
  for (int r = 0; r < kMaxResources; ++r)
    if (req[r] > 0) used_resources.push_back(r);
  for (int k = g; k <= cluster_->max_gpus_per_node(); ++k) {
    for (NodeId n : cluster_->Bucket(pool, k)) {
      const Resources& free = cluster_->free(n);
      int64_t c = std::numeric_limits<int64_t>::max();
      for (int r : used_resources) c = std::min(c, free[r] / req[r]);
      if (c > 0 && !used_resources.empty()) caps.emplace_back(n, c);
    }
  }
  // Groups of `nodes` by their domain at the requested level, the roomiest first: as few
  // domains as possible.
  auto groups_by_requested = [&](const std::vector<std::pair<NodeId, int64_t>>& nodes) {
    const DomainIndex& di = Domains(levels[requested]);
    std::vector<int64_t> cap(di.names.size(), 0);
    std::vector<std::vector<NodeId>> members(di.names.size());
    for (const auto& [n, c] : nodes) {
      int32_t d = di.domain_of[n];
      if (d < 0) continue;
      cap[d] += c;
      members[d].push_back(n);
    }
    std::vector<int32_t> order;
    for (size_t d = 0; d < cap.size(); ++d)
      if (cap[d] > 0) order.push_back(static_cast<int32_t>(d));
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return cap[a] != cap[b] ? cap[a] > cap[b] : di.names[a] < di.names[b];
    });
    std::vector<std::vector<NodeId>> groups;
    for (int32_t d : order) groups.push_back(std::move(members[d]));
    return groups;
  };
  auto NodesOf = [](const std::vector<std::pair<NodeId, int64_t>>& v) {
    std::vector<NodeId> out;
    out.reserve(v.size());
    for (const auto& nc : v) out.push_back(nc.first);
    return out;
  };
  const size_t here = undo_.size();
  int64_t largest = 0;
  // The requested level first, then (preferred only) outward: the lowest level with a domain
  // that holds every pod. Among the domains that do, the one that fits best (least capacity
  // left stranded, so the next big gang still finds a whole domain).
  constexpr int kDomainsTried = 4;
  for (int j = requested; j >= (required ? requested : 0); --j) {
    const DomainIndex& di = Domains(levels[j]);
    std::vector<int64_t> cap(di.names.size(), 0);
    std::vector<std::vector<std::pair<NodeId, int64_t>>> members(di.names.size());
    for (const auto& nc : caps) {
      int32_t d = di.domain_of[nc.first];
      if (d < 0) continue;
      cap[d] += nc.second;
      members[d].push_back(nc);
    }
    std::vector<int32_t> fit;
    for (size_t d = 0; d < cap.size(); ++d) {
      if (j == requested) largest = std::max(largest, cap[d]);
      if (cap[d] >= count) fit.push_back(static_cast<int32_t>(d));
    }
    std::sort(fit.begin(), fit.end(), [&](int32_t a, int32_t b) {
      return cap[a] != cap[b] ? cap[a] < cap[b] : di.names[a] < di.names[b];
    });
    for (size_t i = 0; i < fit.size() && i < kDomainsTried; ++i) {
      bool filled = j == requested
                        ? FillGroups(id, ps, count, combo, {NodesOf(members[fit[i]])})
                        : FillGroups(id, ps, count, combo, groups_by_requested(members[fit[i]]));
      if (filled) return true;
      RollbackTo(here);
    }
  }
  if (!required) {
    // No single domain at any level: as few domains of the requested level as possible.
    if (FillGroups(id, ps, count, combo, groups_by_requested(caps))) return true;
  }
  topology_reason_ =
      fmt::format("no {} domain can hold the {} pods of {} together; the roomiest has room for {}",
                  levels[requested], count, set.name, largest);
  RollbackTo(mark);
  return false;
}

std::string SchedulerImpl::PlacementReason(WorkloadId id, const std::vector<int32_t>& combo) const {
  const Workload& w = model_.workloads[id];
  for (const PodSet& ps : w.pod_sets)
    if (ps.topology.required && !topology_reason_.empty()) return topology_reason_;
  int pool = PoolFor(id, combo);
  std::string where = pool == 0 ? "the cluster" : "flavor " + model_.flavors[pool - 1].name;
  // The first pod set whose pods do not all fit. Buckets are walked from the most free GPUs
  // down, so the largest free on an eligible node is the first eligible node met, and nodes
  // with too few GPUs are passed over once that is known (cheap in a full cluster).
  int remaining = w.MinPods();
  for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
    const PodSet& set = w.pod_sets[ps];
    int target = std::min(set.count, remaining);
    remaining -= set.count;
    const int g = static_cast<int>(set.requests[kGpu]);
    int fit_pods = 0, max_free_gpus = -1;
    for (int k = cluster_->max_gpus_per_node(); k >= 0 && fit_pods < target; --k) {
      if (k < g && max_free_gpus >= 0) break;
      for (NodeId n : cluster_->Bucket(pool, k)) {
        if (!NodeEligible(id, static_cast<int>(ps), combo, n)) continue;
        max_free_gpus = std::max(max_free_gpus, k);
        if (k < g) break;
        const Resources& free = cluster_->free(n);
        int64_t fits = target;
        for (int r = 0; r < kMaxResources; ++r)
          if (set.requests[r] > 0) fits = std::min(fits, free[r] / set.requests[r]);
        fit_pods += static_cast<int>(fits);
        if (fit_pods >= target) break;
      }
    }
    if (fit_pods >= target) continue;
    if (max_free_gpus < 0) {
      return fmt::format(
          "no node of {} matches pod set {}'s node selector, affinity{} and tolerations", where,
          set.name,
          set.anti_affinity == HostnameAntiAffinity::kRequired
              ? ", hostname anti-affinity (one pod per node)"
              : "");
    }
    std::string s =
        fmt::format("{} of {} pods of {} fit on nodes of {}", fit_pods, target, set.name, where);
    if (g > 0) {
      s += fmt::format("; largest free on any eligible node is {} of {} nvidia.com/gpu per pod",
                       max_free_gpus, g);
    }
    return s;
  }
  return fmt::format("the pods do not fit together on the nodes of {}", where);
}

std::vector<PodPlacement> SchedulerImpl::PlaceExtra(WorkloadId id) {
  const Workload& w = model_.workloads[id];
  WorkloadRec& rec = recs_[id];
  std::vector<PodPlacement> added;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    const PodSet& set = w.pod_sets[ps];
    // Topology: later pods join the domain of the pod set's first pods (required: only there).
    std::vector<NodeId> domain_nodes;
    bool have_domain = false;
    while (rec.placed_per_set[ps] < set.count) {
      auto need = QuotaFor(id, rec.chosen, set.requests);
      if (!QuotaFits(rec.cq, need)) break;
      NodeId n = -1;
      if (set.topology.present()) {
        if (rec.placed_per_set[ps] == 0) {
          const size_t mark = undo_.size();
          if (!PlaceSetInTopology(id, static_cast<int>(ps), 1, rec.chosen, mark)) break;
          added.push_back(rec.placed.back().placement);
          continue;
        }
        if (!have_domain) {
          have_domain = true;
          std::vector<std::string> levels;
          int requested = 0;
          std::string why;
          if (TopologyLevels(id, static_cast<int>(ps), rec.chosen, levels, requested, why)) {
            const DomainIndex& di = Domains(levels[requested]);
            int32_t d = -1;
            for (const auto& p : rec.placed)
              if (p.placement.pod_set == static_cast<int32_t>(ps))
                d = di.domain_of[p.placement.node];
            for (NodeId m : pools_[PoolFor(id, rec.chosen)])
              if (d >= 0 && di.domain_of[m] == d) domain_nodes.push_back(m);
          }
        }
        n = FindNodeAmong(id, static_cast<int>(ps), rec.chosen, domain_nodes);
        if (n < 0 && !set.topology.required) n = FindNode(id, static_cast<int>(ps), rec.chosen);
      } else {
        n = FindNode(id, static_cast<int>(ps), rec.chosen);
      }
      if (n < 0) break;
      PlacePod(id, static_cast<int>(ps), n, rec.chosen);
      added.push_back(rec.placed.back().placement);
    }
  }
  undo_.clear();
  return added;
}

void SchedulerImpl::SetPending(WorkloadId id, std::string reason) {
  status_[id].state = WorkloadState::kPending;
  status_[id].reason = std::move(reason);
  recs_[id].why.clear();
  recs_[id].reason_stale = false;
}

void SchedulerImpl::Enqueue(WorkloadId id) {
  pending_[queue_index(recs_[id].cq)].insert({-recs_[id].priority, status_[id].created, id});
}

void SchedulerImpl::Dequeue(WorkloadId id) {
  if (recs_[id].parked != Parked::kNo) {
    Unpark(id);
    return;
  }
  pending_[queue_index(recs_[id].cq)].erase({-recs_[id].priority, status_[id].created, id});
}

void SchedulerImpl::Park(WorkloadId id) {
  WorkloadRec& rec = recs_[id];
  const QueueKey key{-rec.priority, status_[id].created, id};
  pending_[queue_index(rec.cq)].erase(key);
  const bool quota_only = rec.cq >= 0 && !rec.failed_on_placement && rec.combos.size() == 1 &&
                          (!rec.can_preempt || !HasPreemptionPolicy(rec.cq));
  std::optional<ReasonPart> shortfall;
  if (quota_only) shortfall = QuotaShortfall(id, rec.min_need[0]);
  if (shortfall) {
    rec.parked = Parked::kQuota;
    rec.park_fr = shortfall->fr;
    rec.park_need = shortfall->amount;
    quota_parked_[rec.cq][{rec.park_fr, rec.park_need}].insert(key);
  } else {
    rec.parked = Parked::kOther;
    rec.park_pos = static_cast<int32_t>(other_parked_.size());
    other_parked_.push_back(id);
  }
}

void SchedulerImpl::Unpark(WorkloadId id) {
  WorkloadRec& rec = recs_[id];
  if (rec.parked == Parked::kQuota) {
    auto& buckets = quota_parked_[rec.cq];
    auto it = buckets.find({rec.park_fr, rec.park_need});
    it->second.erase({-rec.priority, status_[id].created, id});
    if (it->second.empty()) buckets.erase(it);
  } else if (rec.parked == Parked::kOther) {
    WorkloadId last = other_parked_.back();
    other_parked_[rec.park_pos] = last;
    recs_[last].park_pos = rec.park_pos;
    other_parked_.pop_back();
    rec.park_pos = -1;
  }
  rec.parked = Parked::kNo;
}

void SchedulerImpl::WakeParked() {
  // Quota-parked: in each tree that released something, wake, queue by queue, the earliest
  // parked workloads (in queue order) whose need the queue can give now, counting the need of
  // those already woken against it. A woken workload that then fails for another reason sends
  // the pass round again (Rounds' return), so quota is never left unused by a wrong guess.
  for (int32_t root : dirty_roots_) {
    root_dirty_[root] = false;
    for (int32_t cq : cqs_by_root_[root]) {
      auto& buckets = quota_parked_[cq];
      constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
      // Erasing from a btree invalidates its iterators: every step looks up again.
      for (auto fr_it = buckets.begin(); fr_it != buckets.end();) {
        const FlavorResource fr = fr_it->first.first;
        int64_t avail = quota_->Available(cq, fr);
        while (true) {
          std::optional<QueueKey> best;
          int64_t best_need = 0;
          for (auto it = buckets.lower_bound({fr, kMin});
               it != buckets.end() && it->first.first == fr && it->first.second <= avail; ++it) {
            if (!best || *it->second.begin() < *best) {
              best = *it->second.begin();
              best_need = it->first.second;
            }
          }
          if (!best) break;
          WorkloadId id = std::get<2>(*best);
          avail -= best_need;
          Unpark(id);
          Enqueue(id);
          woken_for_quota_.push_back(id);
        }
        fr_it = buckets.lower_bound({fr + 1, kMin});
      }
    }
  }
  dirty_roots_.clear();
  // Other parked: woken when the epochs they wait on moved.
  for (size_t i = 0; i < other_parked_.size();) {
    WorkloadId id = other_parked_[i];
    const WorkloadRec& rec = recs_[id];
    bool stale = rec.failed_release_epoch == release_epoch_ &&
                 (!rec.can_preempt || rec.failed_admit_epoch == admit_epoch_);
    if (stale) {
      ++i;
      continue;
    }
    Unpark(id);  // swaps the last one into position i
    Enqueue(id);
  }
}

void SchedulerImpl::Submit(WorkloadId id, double now) {
  WorkloadStatus& st = status_[id];
  if (st.state != WorkloadState::kInactive) return;
  st.created = now;
  st.cluster_queue = recs_[id].cq;
  if (!recs_[id].unresolved.empty()) {
    SetPending(id, recs_[id].unresolved);
    return;  // never enters a queue: nothing can admit it
  }
  const Workload& w = model_.workloads[id];
  if (w.MinPods() > w.TotalPods()) {
    SetPending(id,
               fmt::format("waiting for pods: {} of minimum {} exist", w.TotalPods(), w.MinPods()));
    return;
  }
  if (std::string why = CanEverFit(id); !why.empty()) {
    st.state = WorkloadState::kRejected;
    st.reason = std::move(why);
    rejected_unreported_.push_back(id);
    return;
  }
  SetPending(id, "waiting for a scheduling cycle");
  Enqueue(id);
}

std::vector<std::pair<FlavorResource, int64_t>> SchedulerImpl::UsageOf(WorkloadId id,
                                                                       int sign) const {
  std::map<FlavorResource, int64_t> sum;
  for (const auto& p : recs_[id].placed)
    for (const auto& [fr, q] : p.quota) sum[fr] += sign * q;
  return {sum.begin(), sum.end()};
}

std::vector<PlacedPod> SchedulerImpl::Evict(WorkloadId id) {
  WorkloadRec& rec = recs_[id];
  std::vector<PlacedPod> pods = rec.placed;
  while (!rec.placed.empty()) UnplaceLast(id);
  ++release_epoch_;
  MarkRootReleased(rec.cq);
  return pods;
}

void SchedulerImpl::Reinstate(WorkloadId id, std::vector<PlacedPod> pods) {
  WorkloadRec& rec = recs_[id];
  for (auto& p : pods) {
    const Resources& req = model_.workloads[id].pod_sets[p.placement.pod_set].requests;
    cluster_->AssignExact(p.placement.node, req, p.placement.gpus, id, p.placement.mig_starts);
    for (const auto& [fr, q] : p.quota) quota_->AddUsage(rec.cq, fr, q);
    rec.gpus_placed += req[kGpu];
    if (rec.spread_group >= 0) ++group_nodes_[rec.spread_group][p.placement.node];
    ++rec.placed_per_set[p.placement.pod_set];
    rec.placed.push_back(std::move(p));
  }
}

void SchedulerImpl::Finish(WorkloadId id, double now) {
  WorkloadStatus& st = status_[id];
  if (st.state == WorkloadState::kAdmitted) {
    Evict(id);
    partial_.erase(id);
    if (recs_[id].cq >= 0) admitted_by_cq_[recs_[id].cq].erase({recs_[id].priority, id});
  } else if (st.state == WorkloadState::kPending) {
    Dequeue(id);
  }
  st.state = WorkloadState::kFinished;
  st.reason.clear();
  recs_[id].why.clear();
  recs_[id].reason_stale = false;
  st.pods.clear();
}

absl::Status SchedulerImpl::Restore(WorkloadId id, std::vector<PodPlacement> pods, double now) {
  if (id < 0 || id >= num_workloads()) return absl::InvalidArgumentError("no such workload");
  const Workload& w = model_.workloads[id];
  WorkloadStatus& st = status_[id];
  WorkloadRec& rec = recs_[id];
  if (st.state != WorkloadState::kInactive && st.state != WorkloadState::kPending)
    return absl::FailedPreconditionError(
        fmt::format("{} is {}: only a workload not yet admitted can be restored", w.Key(),
                    WorkloadStateName(st.state)));
  if (pods.empty()) return absl::InvalidArgumentError(fmt::format("{}: no pods", w.Key()));
  // Check everything before changing anything.
  std::vector<int32_t> per_set(w.pod_sets.size(), 0);
  for (const PodPlacement& p : pods) {
    if (p.pod_set < 0 || p.pod_set >= static_cast<int32_t>(w.pod_sets.size()))
      return absl::InvalidArgumentError(fmt::format("{}: no pod set {}", w.Key(), p.pod_set));
    if (p.node < 0 || p.node >= static_cast<NodeId>(model_.nodes.size()))
      return absl::InvalidArgumentError(fmt::format("{}: no node {}", w.Key(), p.node));
    const PodSet& set = w.pod_sets[p.pod_set];
    if (++per_set[p.pod_set] > set.count)
      return absl::InvalidArgumentError(
          fmt::format("{}: more pods than pod set {} has", w.Key(), set.name));
    const int64_t devices = ClusterState::IsShare(set.requests) ? 1 : set.requests[kGpu];
    if (!p.gpus.empty() && p.mig_starts.empty() && static_cast<int64_t>(p.gpus.size()) != devices)
      return absl::InvalidArgumentError(
          fmt::format("{}: {} GPU indices for a pod asking {}", w.Key(), p.gpus.size(), devices));
    for (int32_t g : p.gpus)
      if (g < 0 || g >= model_.nodes[p.node].gpu_count())
        return absl::InvalidArgumentError(
            fmt::format("{}: node {} has no GPU {}", w.Key(), model_.nodes[p.node].name, g));
  }
  // The flavor combination: the first one whose flavors' node labels hold on every node used.
  std::vector<int32_t> combo;
  if (rec.cq >= 0) {
    if (!rec.unresolved.empty())
      return absl::FailedPreconditionError(fmt::format("{}: {}", w.Key(), rec.unresolved));
    bool found = false;
    for (const auto& c : rec.combos) {
      bool ok = true;
      const ResolvedQueue& q = queues_[rec.cq];
      for (const PodPlacement& p : pods) {
        for (size_t g = 0; g < c.size() && ok; ++g) {
          if (c[g] < 0) continue;
          ok = MatchesNodeSelector(model_.flavors[q.groups[g].flavors[c[g]]].node_labels,
                                   model_.nodes[p.node].labels);
        }
        if (!ok) break;
      }
      if (ok) {
        combo = c;
        found = true;
        break;
      }
    }
    if (!found)
      return absl::FailedPreconditionError(
          fmt::format("{}: no flavor of ClusterQueue {} matches the nodes its pods run on", w.Key(),
                      model_.cluster_queues[rec.cq].name));
    std::vector<std::pair<FlavorResource, int64_t>> total;
    for (const PodPlacement& p : pods)
      for (const auto& fq : QuotaFor(id, combo, w.pod_sets[p.pod_set].requests))
        total.push_back(fq);
    std::sort(total.begin(), total.end());
    std::vector<std::pair<FlavorResource, int64_t>> merged;
    for (const auto& [fr, q] : total) {
      if (!merged.empty() && merged.back().first == fr) {
        merged.back().second += q;
      } else {
        merged.emplace_back(fr, q);
      }
    }
    if (!QuotaFits(rec.cq, merged))
      return absl::FailedPreconditionError(fmt::format(
          "{}: running pods exceed what ClusterQueue {} may use: {}", w.Key(),
          model_.cluster_queues[rec.cq].name, FormatQuotaPart(id, *QuotaShortfall(id, merged))));
  }
  // Nodes and devices, pod by pod; a pod that does not fit rolls back those before it.
  for (size_t i = 0; i < pods.size(); ++i) {
    const PodPlacement& p = pods[i];
    const Resources& req = w.pod_sets[p.pod_set].requests;
    const int32_t* owners = cluster_->gpu_owners(p.node);
    const int32_t* used = cluster_->gpu_used_milli(p.node);
    bool ok = cluster_->Fits(p.node, req);
    const int64_t share = cluster_->ShareMilli(p.node, req);
    if (!p.mig_starts.empty()) {
      ok = ok && cluster_->MigPlacementFree(p.node, req, p.gpus, p.mig_starts);
    } else {
      for (int32_t g : p.gpus) {
        if (share > 0) {
          ok = ok && owners[g] < 0 && used[g] + share <= kMilliPerGpu;
        } else {
          ok = ok && owners[g] == -1;
        }
      }
    }
    if (!ok) {
      for (size_t j = i; j-- > 0;)
        cluster_->Release(pods[j].node, w.pod_sets[pods[j].pod_set].requests, pods[j].gpus,
                          pods[j].mig_starts);
      return absl::FailedPreconditionError(fmt::format(
          "{}: node {} cannot hold pod {} of {} (free {}{})", w.Key(), model_.nodes[p.node].name, i,
          w.pod_sets[p.pod_set].name, cluster_->free(p.node).ToString(),
          p.gpus.empty() ? "" : ", or a GPU asked for is taken"));
    }
    if (p.gpus.empty()) {
      pods[i].gpus = cluster_->Assign(p.node, req, id, &pods[i].mig_starts);
    } else {
      cluster_->AssignExact(p.node, req, p.gpus, id, p.mig_starts);
    }
  }
  if (st.state == WorkloadState::kPending) Dequeue(id);
  if (st.state == WorkloadState::kInactive) {
    st.created = now;
    st.cluster_queue = rec.cq;
  }
  for (const PodPlacement& p : pods) {
    const Resources& req = w.pod_sets[p.pod_set].requests;
    PlacedPod pp;
    pp.placement.pod_set = p.pod_set;
    pp.placement.index = rec.placed_per_set[p.pod_set]++;
    pp.placement.node = p.node;
    pp.placement.gpus = p.gpus;  // assigned above
    pp.placement.mig_starts = p.mig_starts;
    pp.quota = QuotaFor(id, combo, req);
    for (const auto& [fr, q] : pp.quota) quota_->AddUsage(rec.cq, fr, q);
    rec.gpus_placed += req[kGpu];
    if (rec.spread_group >= 0) ++group_nodes_[rec.spread_group][p.node];
    rec.placed.push_back(std::move(pp));
  }
  rec.chosen = combo;
  st.state = WorkloadState::kAdmitted;
  st.reason.clear();
  recs_[id].why.clear();
  recs_[id].reason_stale = false;
  st.admitted_at = now;
  st.pods.clear();
  for (const auto& p : rec.placed) st.pods.push_back(p.placement);
  st.flavors.clear();
  for (size_t g = 0; g < combo.size(); ++g)
    st.flavors.push_back(combo[g] < 0 ? -1 : queues_[rec.cq].groups[g].flavors[combo[g]]);
  if (static_cast<int>(rec.placed.size()) < w.TotalPods()) partial_.insert(id);
  if (rec.cq >= 0) admitted_by_cq_[rec.cq].insert({rec.priority, id});
  ++admit_epoch_;
  return absl::OkStatus();
}

void SchedulerImpl::Admit(WorkloadId id, const std::vector<int32_t>& combo, double now,
                          std::vector<Decision>& out) {
  WorkloadRec& rec = recs_[id];
  WorkloadStatus& st = status_[id];
  rec.chosen = combo;
  undo_.clear();
  Dequeue(id);
  st.state = WorkloadState::kAdmitted;
  st.reason.clear();
  recs_[id].why.clear();
  recs_[id].reason_stale = false;
  st.admitted_at = now;
  PlaceExtra(id);
  st.pods.clear();
  for (const auto& p : rec.placed) st.pods.push_back(p.placement);
  st.flavors.clear();
  for (size_t g = 0; g < combo.size(); ++g)
    st.flavors.push_back(combo[g] < 0 ? -1 : queues_[rec.cq].groups[g].flavors[combo[g]]);
  if (static_cast<int>(rec.placed.size()) < model_.workloads[id].TotalPods()) {
    partial_.insert(id);
  }
  if (rec.cq >= 0) admitted_by_cq_[rec.cq].insert({rec.priority, id});
  ++admit_epoch_;
  ++stats_.admitted;
  Decision d;
  d.type = Decision::Type::kAdmit;
  d.workload = id;
  d.pods = st.pods;
  out.push_back(std::move(d));
}

bool SchedulerImpl::FitsNow(WorkloadId id, const std::vector<int32_t>& combo) {
  if (!QuotaFits(recs_[id].cq, MinQuotaNeed(id, combo))) return false;
  size_t mark = undo_.size();
  if (!PlaceMin(id, combo, mark)) return false;
  RollbackTo(mark);
  return true;
}

SchedulerImpl::Outcome SchedulerImpl::TryAdmit(WorkloadId id, double now,
                                               std::vector<Decision>& out) {
  WorkloadRec& rec = recs_[id];
  ++stats_.attempts;
  topology_reason_.clear();
  const auto& combos = recs_[id].combos;
  // Why each flavor combination failed, in order: the user sees every flavor that was tried.
  std::vector<ReasonPart> why;
  rec.failed_on_placement = false;
  for (const auto& combo : combos) {
    const Need& need = MinQuotaNeed(id, combo);
    if (rec.cq >= 0) {
      if (auto shortfall = QuotaShortfall(id, need)) {
        why.push_back(std::move(*shortfall));
        continue;
      }
    }
    undo_.clear();
    if (PlaceMin(id, combo, 0)) {
      Admit(id, combo, now, out);
      return Outcome::kAdmitted;
    }
    rec.failed_on_placement = true;
    ReasonPart part;
    part.text =
        (rec.cq >= 0 && !combo.empty() ? "quota fits, but " : "") + PlacementReason(id, combo);
    why.push_back(std::move(part));
  }
  if (rec.can_preempt && rec.cq >= 0 && HasPreemptionPolicy(rec.cq)) {
    for (const auto& combo : combos) {
      if (TryPreempt(id, combo, now, out)) return Outcome::kAdmitted;
    }
  }
  if (combos.empty()) {
    SetPending(id, "no flavor of the ClusterQueue is defined");
  } else {
    status_[id].state = WorkloadState::kPending;
    rec.why = std::move(why);
    rec.reason_stale = true;
  }
  rec.failed_release_epoch = release_epoch_;
  rec.failed_admit_epoch = admit_epoch_;
  return Outcome::kPending;
}

double SchedulerImpl::ShareOf(int32_t cq,
                              const std::vector<std::pair<FlavorResource, int64_t>>& delta) const {
  return quota_->DominantShare(cq, delta, model_.cluster_queues[cq].fair_weight);
}

std::vector<WorkloadId> SchedulerImpl::PreemptionCandidates(
    WorkloadId id, const std::vector<int32_t>& combo) const {
  const WorkloadRec& rec = recs_[id];
  const ClusterQueue& cq = model_.cluster_queues[rec.cq];
  const PreemptionConfig& pc = cq.preemption;
  const Need need = MinQuotaNeed(id, combo);
  // Would the preemptor borrow? Then, as in Kueue, it may only take from its own queue (or
  // from others under borrowWithinCohort).
  bool borrows = false;
  for (const auto& [fr, q] : need)
    if (quota_->usage(rec.cq, fr) + q > quota_->subtree_quota(rec.cq, fr)) borrows = true;
  bool fair = model_.config.fair_sharing;
  std::vector<WorkloadId> out;
  if (!HasPreemptionPolicy(rec.cq)) return out;
  const bool other_queues =
      !cq.cohort.empty() && (pc.reclaim_within_cohort != ReclaimPolicy::kNever ||
                             pc.borrow_within_cohort != BorrowWithinCohortPolicy::kNever);
  // Each queue's admitted workloads are ordered by priority: the policy allows a prefix of each,
  // up to `limit` (inclusive when `inclusive`; with `equal_if_newer`, equal priority only if
  // created after the preemptor).
  struct Slice {
    int32_t q;
    int32_t limit;
    bool inclusive;
    bool equal_if_newer;
  };
  constexpr int32_t kTop = std::numeric_limits<int32_t>::max();
  std::vector<Slice> slices;
  switch (pc.within_cluster_queue) {
    case WithinClusterQueuePolicy::kNever:
      break;
    case WithinClusterQueuePolicy::kLowerPriority:
      slices.push_back({rec.cq, rec.priority, false, false});
      break;
    case WithinClusterQueuePolicy::kLowerOrNewerEqualPriority:
      slices.push_back({rec.cq, rec.priority, false, true});
      break;
  }
  if (other_queues) {
    for (int32_t q : cqs_by_root_[quota_->root(rec.cq)]) {
      if (q == rec.cq || admitted_by_cq_[q].empty()) continue;
      // Only workloads of queues that borrow what the preemptor needs are reclaimable.
      bool victim_borrows = false;
      for (const auto& [fr, amount] : need)
        if (quota_->IsBorrowing(q, fr)) victim_borrows = true;
      if (!victim_borrows) continue;
      if (!borrows || fair) {
        if (pc.reclaim_within_cohort == ReclaimPolicy::kLowerPriority)
          slices.push_back({q, rec.priority, false, false});
        if (pc.reclaim_within_cohort == ReclaimPolicy::kAny)
          slices.push_back({q, kTop, true, false});
      } else if (pc.borrow_within_cohort == BorrowWithinCohortPolicy::kLowerPriority) {
        if (pc.max_priority_threshold && *pc.max_priority_threshold < rec.priority) {
          slices.push_back({q, *pc.max_priority_threshold, true, false});
        } else {
          slices.push_back({q, rec.priority, false, false});
        }
      }
    }
  }
  // A cheap bound before walking any list: all that the queues hold, plus what is free of
  // quota, must cover the need (most preemptors that cannot win stop here).
  for (const auto& [fr, amount] : need) {
    int64_t could = quota_->Available(rec.cq, fr);
    for (const Slice& sl : slices) could += quota_->usage(sl.q, fr);
    if (could < amount) return out;
  }
  for (const Slice& sl : slices) {
    for (const auto& [prio, v] : admitted_by_cq_[sl.q]) {
      if (prio > sl.limit) break;
      if (prio == sl.limit && !sl.inclusive) {
        if (!sl.equal_if_newer) break;
        if (!(status_[v].created > status_[id].created)) continue;
      }
      if (v != id) out.push_back(v);
    }
  }
  // Other queues' (reclaim) first, then lowest priority, then the largest (fewest victims),
  // then most recently admitted (least work lost).
  // The keys are gathered once: comparing through recs_ and status_ costs a cache miss each.
  struct Key {
    bool own;
    int32_t priority;
    int64_t gpus;
    double admitted_at;
    WorkloadId v;
  };
  std::vector<Key> keys;
  keys.reserve(out.size());
  for (WorkloadId v : out)
    keys.push_back({recs_[v].cq == rec.cq, recs_[v].priority, recs_[v].gpus_placed,
                    status_[v].admitted_at, v});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.own != b.own) return !a.own;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    if (a.admitted_at != b.admitted_at) return a.admitted_at > b.admitted_at;
    return a.v > b.v;
  });
  for (size_t i = 0; i < keys.size(); ++i) out[i] = keys[i].v;
  return out;
}

void SchedulerImpl::OrderForTopology(WorkloadId id, const std::vector<int32_t>& combo,
                                     std::vector<WorkloadId>& candidates) const {
  const Workload& w = model_.workloads[id];
  int ps = -1;
  for (size_t i = 0; i < w.pod_sets.size(); ++i)
    if (w.pod_sets[i].topology.required && w.pod_sets[i].requests[kGpu] > 0) {
      ps = static_cast<int>(i);
      break;
    }
  if (ps < 0) return;
  std::vector<std::string> levels;
  int requested = 0;
  std::string why;
  if (!TopologyLevels(id, ps, combo, levels, requested, why)) return;
  const DomainIndex& di = Domains(levels[requested]);
  const int64_t need = w.pod_sets[ps].requests[kGpu] * w.pod_sets[ps].count;
  const int pool = PoolFor(id, combo);
  std::vector<int64_t> free(di.names.size(), 0);
  for (int k = 1; k <= cluster_->max_gpus_per_node(); ++k)
    for (NodeId n : cluster_->Bucket(pool, k))
      if (di.domain_of[n] >= 0) free[di.domain_of[n]] += k;
  // Walk the candidates in their order (lowest priority first), per domain, until the domain
  // would have enough: the cost of a domain is (highest victim priority, victims).
  std::vector<int64_t> got = free;
  std::vector<int32_t> victims(di.names.size(), 0),
      top(di.names.size(), std::numeric_limits<int32_t>::min());
  std::vector<bool> done(di.names.size(), false);
  for (size_t d = 0; d < got.size(); ++d) done[d] = got[d] >= need;
  for (WorkloadId v : candidates) {
    absl::flat_hash_map<int32_t, int64_t> per_domain;
    for (const auto& p : recs_[v].placed) {
      int32_t d = di.domain_of[p.placement.node];
      if (d >= 0) per_domain[d] += static_cast<int64_t>(p.placement.gpus.size());
    }
    for (const auto& [d, gpus] : per_domain) {
      if (done[d]) continue;
      got[d] += gpus;
      ++victims[d];
      top[d] = std::max(top[d], recs_[v].priority);
      done[d] = got[d] >= need;
    }
  }
  int32_t best = -1;
  for (size_t d = 0; d < got.size(); ++d) {
    if (got[d] < need) continue;
    auto key = std::make_pair(top[d], victims[d]);
    if (best < 0 || key < std::make_pair(top[best], victims[best])) best = static_cast<int32_t>(d);
  }
  if (best < 0) return;
  std::stable_partition(candidates.begin(), candidates.end(), [&](WorkloadId v) {
    for (const auto& p : recs_[v].placed)
      if (di.domain_of[p.placement.node] == best) return true;
    return false;
  });
}

bool SchedulerImpl::TryPreempt(WorkloadId id, const std::vector<int32_t>& combo, double now,
                               std::vector<Decision>& out) {
  WorkloadRec& rec = recs_[id];
  std::vector<WorkloadId> candidates = PreemptionCandidates(id, combo);
  if (candidates.empty()) return false;
  const Need need = MinQuotaNeed(id, combo);
  // Cheap bound before any eviction: even every candidate gone must cover the quota gap and
  // the GPUs (one pool, all nodes; exact placement is checked later).
  {
    // Only the flavor-resources the preemptor needs matter (a handful).
    std::vector<int64_t> freed(need.size(), 0);
    int64_t freed_gpus = 0;
    for (WorkloadId v : candidates) {
      for (const auto& p : recs_[v].placed) {
        for (const auto& [fr, q] : p.quota)
          for (size_t i = 0; i < need.size(); ++i)
            if (need[i].first == fr) freed[i] += q;
        freed_gpus += static_cast<int64_t>(p.placement.gpus.size());
      }
    }
    for (size_t i = 0; i < need.size(); ++i)
      if (need[i].second > quota_->Available(rec.cq, need[i].first) + freed[i]) return false;
    int64_t want_gpus = 0;
    const Workload& w = model_.workloads[id];
    int remaining = w.MinPods();
    for (size_t ps = 0; ps < w.pod_sets.size() && remaining > 0; ++ps) {
      want_gpus += std::min(w.pod_sets[ps].count, remaining) * w.pod_sets[ps].requests[kGpu];
      remaining -= w.pod_sets[ps].count;
    }
    if (want_gpus > cluster_->PoolFreeGpus(0) + freed_gpus) return false;
  }
  auto still_borrowing = [&](WorkloadId v) {
    if (recs_[v].cq == rec.cq) return true;
    for (const auto& [fr, q] : need)
      if (quota_->IsBorrowing(recs_[v].cq, fr)) return true;
    return false;
  };
  std::vector<std::pair<WorkloadId, std::vector<PlacedPod>>> removed;
  const int64_t epoch = release_epoch_;  // a search that gives up releases nothing
  bool fits = false;
  if (!model_.config.fair_sharing) {
    OrderForTopology(id, combo, candidates);
    for (WorkloadId v : candidates) {
      if (!still_borrowing(v)) continue;
      removed.emplace_back(v, Evict(v));
      if (FitsNow(id, combo)) {
        fits = true;
        break;
      }
    }
  } else {
    // Fair sharing: take from the queue with the highest share first, while the strategy
    // holds; each strategy is a pass over what is left.
    std::map<int32_t, std::vector<WorkloadId>> by_queue;
    for (WorkloadId v : candidates) by_queue[recs_[v].cq].push_back(v);
    for (auto& [q, list] : by_queue) std::reverse(list.begin(), list.end());  // pop_back order
    for (FairSharingStrategy strategy : model_.config.fair_sharing_strategies) {
      std::set<int32_t> skipped;
      while (!fits) {
        auto my_delta = need;
        double my_share = ShareOf(rec.cq, my_delta);
        int32_t best_q = -2;
        double best_share = -1;
        for (auto& [q, list] : by_queue) {
          if (list.empty() || skipped.count(q)) continue;
          double s = ShareOf(q, {});
          if (s > best_share) {
            best_share = s;
            best_q = q;
          }
        }
        if (best_q == -2) break;
        WorkloadId v = by_queue[best_q].back();
        by_queue[best_q].pop_back();
        if (best_q != rec.cq) {
          if (!still_borrowing(v)) continue;
          double after = ShareOf(best_q, UsageOf(v, -1));
          bool ok = strategy == FairSharingStrategy::kLessThanOrEqualToFinalShare
                        ? my_share <= after
                        : my_share < best_share;
          if (!ok) {
            by_queue[best_q].push_back(v);
            skipped.insert(best_q);
            continue;
          }
        }
        removed.emplace_back(v, Evict(v));
        if (FitsNow(id, combo)) fits = true;
      }
      if (fits) break;
    }
  }
  if (!fits) {
    for (auto it = removed.rbegin(); it != removed.rend(); ++it) Reinstate(it->first, it->second);
    release_epoch_ = epoch;
    return false;
  }
  // Keep the set minimal: give back every victim the preemptor can do without.
  for (int i = static_cast<int>(removed.size()) - 2; i >= 0; --i) {
    Reinstate(removed[i].first, removed[i].second);
    if (FitsNow(id, combo)) {
      removed.erase(removed.begin() + i);
    } else {
      Evict(removed[i].first);
    }
  }
  const std::string& preemptor = model_.workloads[id].name;
  for (auto& [v, pods] : removed) {
    WorkloadStatus& vs = status_[v];
    WorkloadRec& vr = recs_[v];
    partial_.erase(v);
    admitted_by_cq_[vr.cq].erase({vr.priority, v});
    vs.pods.clear();
    ++vs.preemptions;
    ++stats_.preempted;
    Decision d;
    d.type = Decision::Type::kPreempt;
    d.workload = v;
    d.preemptor = id;
    if (vr.cq == rec.cq) {
      d.reason =
          fmt::format("preempted within ClusterQueue {} by {} (priority {} > {})",
                      model_.cluster_queues[rec.cq].name, preemptor, rec.priority, vr.priority);
    } else if (model_.config.fair_sharing) {
      d.reason = fmt::format(
          "preempted by {} of ClusterQueue {} for fair sharing: {} was above "
          "its fair share",
          preemptor, model_.cluster_queues[rec.cq].name, model_.cluster_queues[vr.cq].name);
    } else {
      d.reason =
          fmt::format("preempted by {}: ClusterQueue {} reclaims quota lent to {}", preemptor,
                      model_.cluster_queues[rec.cq].name, model_.cluster_queues[vr.cq].name);
    }
    SetPending(v, "requeued after preemption: " + d.reason);
    vs.admitted_at = -1;
    Enqueue(v);
    out.push_back(std::move(d));
  }
  undo_.clear();
  bool placed = PlaceMin(id, combo, 0);
  if (!placed) return false;  // cannot happen: FitsNow just held
  Admit(id, combo, now, out);
  return true;
}

bool SchedulerImpl::Rounds(double now, std::vector<Decision>& out) {
  // 1. Every queue is walked in its order (priority, then creation) from a cursor; workloads
  //    that fail are parked, so a queue holds only what is worth trying.
  const int nq = static_cast<int>(pending_.size());
  std::vector<std::optional<QueueKey>> cursor(nq);
  std::vector<bool> blocked(nq, false);
  auto strict = [&](int q) {
    return q > 0 && model_.cluster_queues[q - 1].strategy == QueueingStrategy::kStrictFIFO;
  };
  auto next = [&](int q) {
    return cursor[q] ? pending_[q].upper_bound(*cursor[q]) : pending_[q].begin();
  };
  // 2. Rounds: the next head of every queue, ordered by the QueueOrder plugin.
  std::vector<std::pair<HeadKey, int>> heads;
  while (true) {
    heads.clear();
    for (int q = 0; q < nq; ++q) {
      if (blocked[q]) continue;
      for (auto it = next(q); it != pending_[q].end(); it = next(q)) {
        WorkloadId id = std::get<2>(*it);
        const WorkloadRec& rec = recs_[id];
        // Only a StrictFIFO queue keeps failed workloads in place: its head blocks the queue
        // until something that could help has happened.
        bool stale = strict(q) && rec.failed_release_epoch == release_epoch_ &&
                     (!rec.can_preempt || rec.failed_admit_epoch == admit_epoch_);
        if (stale) {
          blocked[q] = true;
          break;
        }
        HeadKey key{rec.priority, status_[id].created, id, 0};
        if (order_->NeedsShare() && rec.cq >= 0) {
          const auto& combos = recs_[id].combos;
          key.share = combos.empty() ? 0 : ShareOf(rec.cq, MinQuotaNeed(id, combos[0]));
        }
        heads.emplace_back(key, q);
        break;
      }
    }
    if (heads.empty()) break;
    std::sort(heads.begin(), heads.end(),
              [&](const auto& a, const auto& b) { return order_->Less(a.first, b.first); });
    // 3./4. Admit (or preempt for) each head in order.
    for (const auto& [key, q] : heads) {
      cursor[q] = QueueKey{-key.priority, key.created, key.id};
      WorkloadId id = key.id;
      if (status_[id].state != WorkloadState::kPending || recs_[id].parked != Parked::kNo) continue;
      Outcome o = TryAdmit(id, now, out);
      if (o != Outcome::kPending) continue;
      if (strict(q)) {
        blocked[q] = true;
      } else {
        Park(id);
      }
    }
  }
  bool again = false;
  for (WorkloadId id : woken_for_quota_) {
    if (status_[id].state == WorkloadState::kPending && recs_[id].parked == Parked::kOther)
      again = true;
  }
  woken_for_quota_.clear();
  return again;
}

std::vector<Decision> SchedulerImpl::RunCycle(double now) {
  std::vector<Decision> out;
  for (WorkloadId id : rejected_unreported_) {
    Decision d;
    d.type = Decision::Type::kReject;
    d.workload = id;
    d.reason = status_[id].reason;
    out.push_back(std::move(d));
  }
  rejected_unreported_.clear();

  // Passes: wake what could now be admitted, then rounds over the queues. Another pass only
  // when a workload woken for quota failed for another reason (bounded: each pass moves such
  // workloads from quota parking to the other kind).
  for (int pass = 0; pass < 64; ++pass) {
    WakeParked();
    if (!Rounds(now, out)) break;
  }
  // 5. Pods beyond minCount, for workloads admitted earlier.
  for (auto it = partial_.begin(); it != partial_.end();) {
    WorkloadId id = *it;
    auto added = PlaceExtra(id);
    for (const auto& p : added) status_[id].pods.push_back(p);
    if (!added.empty()) {
      Decision d;
      d.type = Decision::Type::kScaleUp;
      d.workload = id;
      d.pods = std::move(added);
      out.push_back(std::move(d));
    }
    if (static_cast<int>(recs_[id].placed.size()) >= model_.workloads[id].TotalPods()) {
      it = partial_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Resources SchedulerImpl::ClusterQueueUsage(int32_t cq, int32_t flavor) const {
  Resources r;
  for (int i = 0; i < kMaxResources; ++i) r[i] = quota_->usage(cq, MakeFR(flavor, i));
  return r;
}

absl::Status SchedulerImpl::Verify() const {
  const int nn = static_cast<int>(model_.nodes.size());
  std::vector<Resources> used(nn);
  std::vector<std::vector<int32_t>> owners(nn), milli(nn);
  std::vector<std::vector<uint8_t>> mig(nn);  // used MIG memory slices per device
  for (int n = 0; n < nn; ++n) {
    owners[n].assign(model_.nodes[n].gpu_count(), -1);
    milli[n].assign(model_.nodes[n].gpu_count(), 0);
    mig[n].assign(model_.nodes[n].gpu_count(), 0);
  }
  std::vector<std::vector<int64_t>> usage(queues_.size(),
                                          std::vector<int64_t>(quota_->num_frs(), 0));
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(status_.size()); ++id) {
    const WorkloadRec& rec = recs_[id];
    const Workload& w = model_.workloads[id];
    bool admitted = status_[id].state == WorkloadState::kAdmitted;
    if (!admitted && !rec.placed.empty())
      return absl::InternalError(
          fmt::format("{} holds pods while {}", w.Key(), WorkloadStateName(status_[id].state)));
    if (admitted && static_cast<int>(rec.placed.size()) < w.MinPods())
      return absl::InternalError(fmt::format("gang {} partly placed: {} of minimum {}", w.Key(),
                                             rec.placed.size(), w.MinPods()));
    for (const auto& p : rec.placed) {
      NodeId n = p.placement.node;
      const PodSet& ps = w.pod_sets[p.placement.pod_set];
      used[n] += ps.requests;
      if (!p.placement.mig_starts.empty()) {
        // MIG instances: valid starts, no slice used twice, nothing else on those devices.
        auto instances = cluster_->MigInstances(n, ps.requests);
        if (instances.size() != p.placement.gpus.size() ||
            instances.size() != p.placement.mig_starts.size())
          return absl::InternalError(fmt::format("{} got {} MIG instances for a pod asking {}",
                                                 w.Key(), p.placement.gpus.size(),
                                                 instances.size()));
        for (size_t i = 0; i < instances.size(); ++i) {
          const int32_t g = p.placement.gpus[i];
          const int start = p.placement.mig_starts[i];
          const uint8_t take = MigSlices(*instances[i], start);
          if ((owners[n][g] != -1 && owners[n][g] != ClusterState::kMigDevice) ||
              (mig[n][g] & take) || !(instances[i]->starts >> start & 1u))
            return absl::InternalError(fmt::format(
                "MIG instance {} at slice {} of GPU {} of node {} overlaps or is misplaced",
                instances[i]->name, start, g, model_.nodes[n].name));
          mig[n][g] |= take;
          owners[n][g] = ClusterState::kMigDevice;
          milli[n][g] = kMilliPerGpu;
        }
        for (const auto& [fr, q] : p.quota) usage[rec.cq][fr] += q;
        continue;
      }
      const int64_t share = cluster_->ShareMilli(n, ps.requests);
      const int64_t want_devices = share ? 1 : ps.requests[kGpu];
      if (static_cast<int64_t>(p.placement.gpus.size()) != want_devices)
        return absl::InternalError(fmt::format("{} got {} GPUs for a pod asking {}", w.Key(),
                                               p.placement.gpus.size(), want_devices));
      for (int32_t g : p.placement.gpus) {
        if (owners[n][g] >= 0 || (!share && owners[n][g] != -1) ||
            owners[n][g] == ClusterState::kMigDevice)
          return absl::InternalError(
              fmt::format("GPU {} of node {} double-booked", g, model_.nodes[n].name));
        if (share) {
          owners[n][g] = ClusterState::kSharedDevice;
          milli[n][g] += static_cast<int32_t>(share);
          if (milli[n][g] > kMilliPerGpu)
            return absl::InternalError(
                fmt::format("GPU {} of node {} shared beyond 1000 milli", g, model_.nodes[n].name));
        } else {
          owners[n][g] = id;
          milli[n][g] = kMilliPerGpu;
        }
      }
      for (const auto& [fr, q] : p.quota) usage[rec.cq][fr] += q;
    }
  }
  // Required topology: every pod of the pod set in one domain of the level; required hostname
  // anti-affinity: at most one pod of the spread group per node.
  absl::flat_hash_map<std::pair<int32_t, NodeId>, int> group_pods;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(status_.size()); ++id) {
    const WorkloadRec& rec = recs_[id];
    const Workload& w = model_.workloads[id];
    if (rec.placed.empty()) continue;
    for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
      const PodSet& set = w.pod_sets[ps];
      if (set.topology.required) {
        std::vector<std::string> levels;
        int requested = 0;
        std::string why;
        if (!TopologyLevels(id, static_cast<int>(ps), rec.chosen, levels, requested, why))
          return absl::InternalError(
              fmt::format("{} admitted without a topology: {}", w.Key(), why));
        const DomainIndex& di = Domains(levels[requested]);
        int32_t domain = -2;
        for (const auto& p : rec.placed) {
          if (p.placement.pod_set != static_cast<int32_t>(ps)) continue;
          int32_t d = di.domain_of[p.placement.node];
          if (d < 0 || (domain != -2 && d != domain))
            return absl::InternalError(fmt::format("{} pod set {} spans {} domains", w.Key(),
                                                   set.name, levels[requested]));
          domain = d;
        }
      }
      if (set.anti_affinity == HostnameAntiAffinity::kRequired) {
        for (const auto& p : rec.placed) {
          if (p.placement.pod_set != static_cast<int32_t>(ps)) continue;
          if (++group_pods[{rec.spread_group, p.placement.node}] > 1)
            return absl::InternalError(
                fmt::format("{}: two pods on node {} despite hostname anti-affinity", w.Key(),
                            model_.nodes[p.placement.node].name));
        }
      }
    }
  }
  for (int n = 0; n < nn; ++n) {
    const Node& node = model_.nodes[n];
    if (!used[n].FitsIn(node.allocatable))
      return absl::InternalError(fmt::format("node {} over capacity: uses {} of {}", node.name,
                                             used[n].ToString(), node.allocatable.ToString()));
    // Devices: kGpu free = devices with nothing on them; kGpuMilli free = milli left on all.
    Resources expect_free = node.allocatable - used[n];
    expect_free[kGpu] = 0;
    expect_free[kGpuMilli] = 0;
    for (int g = 0; g < node.gpu_count(); ++g) {
      if (milli[n][g] == 0) ++expect_free[kGpu];
      expect_free[kGpuMilli] += kMilliPerGpu - milli[n][g];
    }
    expect_free[kGpuMemory] = expect_free[kGpuMilli] * cluster_->gpu_memory_mib(n) / kMilliPerGpu;
    if (node.mig_dynamic) {
      for (const MigProfile& p : MigProfilesFor(node.gpu_memory_mib, node.gpu_model)) {
        ResourceId rid =
            ResourceRegistry::Global().Find(fmt::format("{}{}", kMigResourcePrefix, p.name));
        if (rid < 0) continue;
        expect_free[rid] = 0;
        for (int g = 0; g < node.gpu_count(); ++g)
          if (owners[n][g] == -1 || owners[n][g] == ClusterState::kMigDevice)
            expect_free[rid] += MigCapacity(mig[n][g], p);
      }
      for (int g = 0; g < node.gpu_count(); ++g)
        if (mig[n][g] != cluster_->mig_masks(n)[g])
          return absl::InternalError(
              fmt::format("node {} GPU {} MIG slices out of sync", node.name, g));
    }
    if (!(expect_free == cluster_->free(n)))
      return absl::InternalError(fmt::format("node {} free resources out of sync", node.name));
    for (int g = 0; g < node.gpu_count(); ++g)
      if (owners[n][g] != cluster_->gpu_owners(n)[g] ||
          milli[n][g] != cluster_->gpu_used_milli(n)[g])
        return absl::InternalError(fmt::format("node {} GPU {} owner out of sync", node.name, g));
  }
  for (size_t cq = 0; cq < queues_.size(); ++cq) {
    for (int fr = 0; fr < quota_->num_frs(); ++fr) {
      if (usage[cq][fr] != quota_->usage(static_cast<int>(cq), fr))
        return absl::InternalError(
            fmt::format("ClusterQueue {} usage out of sync", model_.cluster_queues[cq].name));
      if (usage[cq][fr] > 0 && quota_->Available(static_cast<int>(cq), fr) < 0)
        return absl::InternalError(
            fmt::format("ClusterQueue {} over quota in {} {}", model_.cluster_queues[cq].name,
                        model_.flavors[FlavorOf(fr)].name, ResourceName(ResourceOf(fr))));
      int64_t bl = quota_->borrowing_limit(static_cast<int>(cq), fr);
      if (bl < kUnlimited && usage[cq][fr] > quota_->subtree_quota(static_cast<int>(cq), fr) + bl)
        return absl::InternalError(fmt::format("ClusterQueue {} over its borrowing limit",
                                               model_.cluster_queues[cq].name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(Model model) {
  auto s = std::make_unique<SchedulerImpl>(std::move(model));
  if (auto st = s->Init(); !st.ok()) return st;
  return std::unique_ptr<Scheduler>(std::move(s));
}

}  // namespace tessera
