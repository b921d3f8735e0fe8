// Elastic clusters (docs/autoscaling.md): what the engine offers an autoscaler that adds and
// removes nodes while it runs. Nodes of an elastic NodePool are all in the model from the start
// (maxNodes of them, fixed ids); one that is not provisioned is offline in the ClusterState (in
// no bucket, offering nothing), so bringing a node or taking it away is an O(pools) change of the
// snapshot and every other record (workloads, quota, learned estimates, parked queues) stays as
// it is. The planner answers the autoscaler's question "which nodes would let which pending gang
// start?" with the engine's own admission path (quota, flavors, topology, placement), tried
// through the Statement's undo log and rolled back.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <string>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

// Brings node n online (its whole capacity offered; parked workloads retry) or takes it offline.
// REQUIRES for offline: nothing placed on it (WorkloadsOnNode empty).
void SetNodeOnline(Engine& e, NodeId n, bool online);
// Admitted workloads with a pod on node n, in id order.
std::vector<WorkloadId> WorkloadsOnNode(const EngineState& s, NodeId n);
// Takes an admitted workload's pods away (its node is going away): it returns to its queue as a
// preemption victim does, keeping its creation time. Returns the kPreempt decision.
Decision EvictForNode(Engine& e, WorkloadId id, std::string reason);

// The scale-up planner: for the pending workloads, in queue order (priority, then creation),
// at most `max_workloads` of them, which nodes of `groups` to add. Nodes in `coming` (requested
// earlier, not online yet) count as present. Gang-aware: a workload gets nodes only when its
// whole gang (minCount pods, with its flavors, topology and quota) then fits, from one group, the
// fewest nodes that do (the cheapest group when several can). Pod-by-pod: each pod that fits
// nowhere gets a node of the first group whose node would hold it, gang or not (what an
// autoscaler that sees pods does). In both, a workload its queue's quota cannot admit gets none.
// What the earlier workloads were given counts against the later ones. Changes nothing.
std::vector<NodeRequest> PlanScaleUp(Engine& e, const std::vector<NodeGroupOffer>& groups,
                                     const std::vector<NodeId>& coming, ScaleUpMode mode,
                                     int32_t max_workloads);

// Kubernetes mode's ProvisioningRequests (docs/autoscaling.md, "Kubernetes mode"): the workloads,
// in queue order (priority, then creation), at most `max_workloads`, whose ClusterQueue's quota
// can admit their minCount pods now but whose gang does not fit on the nodes that are up (placed
// as the admit action would, beside the backfill reservations of the workloads before it):
// pending ones, and ones rejected because no node could ever hold a pod (in an autoscaled
// cluster, one scaled to zero has none). What the earlier ones would take counts against the later
// ones: a gang that fits is placed tentatively, one that does not has its quota charged. Changes
// nothing.
std::vector<WorkloadId> NeedCapacity(Engine& e, int32_t max_workloads);

}  // namespace tessera
