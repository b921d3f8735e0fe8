// The simulator's cluster autoscaler (docs/autoscaling.md): elastic NodePools
// (spec.autoscaling) grow when pending workloads need nodes, after provisioningSeconds; nodes
// empty for scaleDownAfterSeconds go, down to minNodes; spot nodes (spec.spot) are interrupted at
// their rate, drawn from a seeded generator, after a notice during which they take no new pods.
// Which nodes to add is the engine's answer (Scheduler::PlanScaleUp): gang-aware by default, or
// pod by pod like today's autoscalers. It also keeps, for every NodePool (elastic or not), the
// node-hours paid and the node-hours with nothing on the node.
//
// Thread-safety: not thread-safe; part of one simulator run.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace tessera {

struct SimEvent;

// Per NodePool over a run: what was paid and what stood empty.
struct PoolUsage {
  std::string pool;
  bool elastic = false;
  bool spot = false;
  int64_t peak_nodes = 0;
  int64_t nodes_at_end = 0;
  double node_hours = 0;       // node-hours up (paid)
  double idle_node_hours = 0;  // node-hours up with no pod on the node
  double gpu_hours = 0;        // GPU-hours up (node-hours x GPUs per node)
  int64_t added = 0, removed = 0, interrupted = 0;
  std::optional<double> price_per_node_hour;  // after the spot discount; none: unpriced
  std::optional<double> cost, idle_cost;      // dollars: node_hours / idle_node_hours x price
};

class Autoscaler {
 public:
  // `mode` overrides SchedulerConfig spec.autoscaler.scaleUp when given.
  Autoscaler(Scheduler& s, std::optional<ScaleUpMode> mode);

  // True when some NodePool is elastic (else nothing here ever changes a node).
  bool elastic() const { return elastic_; }
  ScaleUpMode mode() const { return mode_; }
  // The next instant a node is due to come, go or get its interruption notice; +inf when none.
  // `with_spot`: also spot notices and interruptions (which alone do not keep a run going).
  double Next(bool with_spot) const;
  // What is due at `now`, before the engine's cycles: nodes ready come online, spot notices
  // cordon their node, interrupted nodes preempt what runs on them and go, idle nodes past their
  // time go. Events are appended to `events`; the preemptions to `evicted` (the caller records
  // them as it records the engine's). True when a workload was preempted or a node went away by
  // interruption (pending work may need nodes: the caller should let it plan).
  bool Advance(double now, std::vector<SimEvent>& events, std::vector<Decision>& evicted);
  // What runs where, from the simulator's events: workload `id` placed `pods` at `now` (an
  // admission or a scale-up); every pod of `id` gone at `now` (finished, failed, preempted).
  // Nodes becoming empty or busy are known from these alone: no pass over the nodes.
  void Placed(WorkloadId id, const std::vector<PodPlacement>& pods, double now);
  void Released(WorkloadId id, double now);
  // After the cycles at `now`: with `plan`, asks the engine which nodes to add for pending
  // workloads and requests them.
  void AfterCycles(double now, bool plan);
  // Node-hours from the last call up to `now` (call before anything changes at `now`).
  void Account(double now);

  std::vector<PoolUsage> Usage() const;
  // Nodes of NodePool `pool` (Model::node_pools order) up now, those under a spot notice
  // included, and of them the ones with no pod (for charts of nodes over time).
  int32_t nodes_up(size_t pool) const { return pools_[pool].up; }
  int32_t nodes_idle(size_t pool) const { return pools_[pool].idle; }
  // GPU-hours of nodes added for a workload, up and empty while that workload still waited (a
  // gang half-placed by pod-by-pod scale-up waits on paid, idle GPUs).
  double waiting_gang_gpu_hours() const { return waiting_gang_gpu_seconds_ / 3600; }
  // Seconds each node was up (for the cost ledger's idle GPUs).
  std::vector<double> NodeUptime(double end) const;

 private:
  enum class State : int8_t { kOff, kComing, kUp, kNotice };
  enum Due : int8_t { kReady = 0, kInterrupt = 1, kNoticeDue = 2, kScaleDown = 3 };
  struct NodeRec {
    State state = State::kOff;
    int32_t pods = 0;
    double up_since = -1;
    double up_seconds = 0;
    double empty_since = -1;   // up and empty since then; -1: something runs on it
    double requested_at = -1;  // when it was asked for
    WorkloadId booked_for = -1;
    std::string booked_key;  // its key (a workload may be retired by the time the node is up)
    bool whole_gang = true;
  };
  struct Pool {
    const NodePoolSpec* spec = nullptr;
    int32_t up = 0;      // kUp or kNotice
    int32_t coming = 0;  // requested, not up yet
    int32_t idle = 0;    // up and empty
    int32_t peak = 0;
    int32_t gpus = 0;  // per node
    double node_seconds = 0, idle_seconds = 0;
    int64_t added = 0, removed = 0, interrupted = 0;
    std::optional<double> price;  // per node-hour after the spot discount
  };

  void Request(double now, int32_t pool, NodeId n, WorkloadId for_workload, bool whole_gang);
  void BringUp(double now, NodeId n, std::vector<SimEvent>& events);
  void TakeDown(double now, NodeId n, const std::string& reason, std::vector<SimEvent>& events);
  void ReplaceToMin(double now, int32_t pool);
  // Node n (up) has just become empty / busy.
  void BecameEmpty(double now, NodeId n);
  void BecameBusy(NodeId n);
  double DrawInterruption(double now, const Pool& p);
  std::string Key(WorkloadId id) const;

  Scheduler& s_;
  ScaleUpMode mode_;
  bool elastic_ = false;
  std::vector<Pool> pools_;
  std::vector<NodeRec> nodes_;  // per model node; only NodePool nodes are used
  std::vector<int32_t> pool_of_;
  // Per workload holding pods: the node of each pod.
  absl::flat_hash_map<WorkloadId, std::vector<NodeId>> on_;
  std::set<NodeId> booked_;  // up or coming, added for a workload that may wait
  std::set<std::tuple<double, int, NodeId>> due_;  // (time, Due, node)
  std::mt19937_64 rng_;
  double last_ = 0;
  double waiting_gang_gpu_seconds_ = 0;
  double waiting_gpus_ = 0;  // GPUs of booked, empty nodes whose workload waits (since last_)
};

}  // namespace tessera
