#include "engine/admission/stop_policy.h"

#include <limits>

#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {
namespace {

// How long after its admission a workload of a draining queue is evicted at the latest when
// nothing else happens: the simulator's clock needs an instant to run the drain at.
constexpr double kDrainDelay = 1.0;

const char* PolicyName(StopPolicy p) {
  switch (p) {
    case StopPolicy::kNone:
      return "None";
    case StopPolicy::kHold:
      return "Hold";
    case StopPolicy::kHoldAndDrain:
      return "HoldAndDrain";
  }
  return "?";
}

}  // namespace

bool QueueStopped(const EngineState& s, int32_t cq) {
  return cq >= 0 && s.model.cluster_queues[cq].stop_policy != StopPolicy::kNone;
}

bool HeldByStopPolicy(const EngineState& s, WorkloadId id) {
  if (!QueueStopped(s, s.recs[id].cq)) return false;
  // Already running when the queue stopped, and not evicted since.
  return !s.model.workloads[id].admitted_at_start || s.status[id].preemptions > 0;
}

std::string StoppedReason(const EngineState& s, int32_t cq) {
  const ClusterQueue& q = s.model.cluster_queues[cq];
  return fmt::format("ClusterQueue {} is stopped (stopPolicy: {})", q.name,
                     PolicyName(q.stop_policy));
}

void DrainStoppedQueues(Engine& e, double now, std::vector<Decision>& out) {
  EngineState& s = e.st;
  for (int32_t cq = 0; cq < static_cast<int32_t>(s.model.cluster_queues.size()); ++cq) {
    if (s.model.cluster_queues[cq].stop_policy != StopPolicy::kHoldAndDrain) continue;
    std::vector<WorkloadId> drained;
    for (const auto& [priority, id] : s.admitted_by_cq[cq])
      if (s.status[id].admitted_at < now) drained.push_back(id);
    for (WorkloadId id : drained) {
      WorkloadStatus& st = s.status[id];
      s.partial.erase(id);
      s.admitted_by_cq[cq].erase({s.recs[id].priority, id});
      ++st.preemptions;
      ++s.stats.preempted;
      Decision d;
      d.type = Decision::Type::kPreempt;
      d.workload = id;
      d.reason = fmt::format("The ClusterQueue is stopped: {} has stopPolicy HoldAndDrain",
                             s.model.cluster_queues[cq].name);
      if (e.terminations.Graced(id)) {
        // As a preemption's victim: told to stop, it keeps its pods for its grace period
        // (preemption/termination.h), then waits in its stopped queue.
        d.grace_seconds = s.model.workloads[id].GraceSeconds();
        e.terminations.Begin(id, /*preemptor=*/-1, now, d.reason);
      } else {
        e.statement.Evict(id);
        st.pods.clear();
        st.admitted_at = -1;
        e.pending.SetPending(id, StoppedReason(s, cq));
      }
      out.push_back(std::move(d));
    }
  }
}

double NextDrain(const EngineState& s, double now) {
  for (int32_t cq = 0; cq < static_cast<int32_t>(s.model.cluster_queues.size()); ++cq) {
    if (s.model.cluster_queues[cq].stop_policy != StopPolicy::kHoldAndDrain) continue;
    if (!s.admitted_by_cq[cq].empty()) return now + kDrainDelay;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace tessera
