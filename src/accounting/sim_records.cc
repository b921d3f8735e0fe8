#include "accounting/sim_records.h"

#include <algorithm>
#include <vector>

#include "accounting/store.h"
#include "model/labels.h"

namespace tessera::accounting {
namespace {

// The flavors an earlier run of a workload was admitted with: the simulator's events do not say,
// and the status keeps only the last admission's. Per resource group of the ClusterQueue, the
// first flavor (in the queue's order, as admission tries them) whose node labels every node of
// the run has; -1 when none does.
std::vector<int32_t> InferFlavors(const Model& m, int32_t cq,
                                  const std::vector<PodPlacement>& pods) {
  std::vector<int32_t> out;
  if (cq < 0) return out;
  for (const ResourceGroup& g : m.cluster_queues[static_cast<size_t>(cq)].resource_groups) {
    int32_t chosen = -1;
    for (const FlavorQuotas& fq : g.flavors) {
      auto it = std::find_if(m.flavors.begin(), m.flavors.end(),
                             [&](const ResourceFlavor& f) { return f.name == fq.flavor; });
      if (it == m.flavors.end()) continue;
      const bool all = std::all_of(pods.begin(), pods.end(), [&](const PodPlacement& p) {
        return MatchesNodeSelector(it->node_labels, m.nodes[static_cast<size_t>(p.node)].labels);
      });
      if (all) {
        chosen = static_cast<int32_t>(it - m.flavors.begin());
        break;
      }
    }
    out.push_back(chosen);
  }
  return out;
}

}  // namespace

int64_t RecordSimulation(const Simulator& sim, RecordSink& sink, RecorderOptions options) {
  const Scheduler& s = sim.scheduler();
  const Model& m = s.model();
  // Which admission of each workload is its last: that one's flavors are in its status.
  std::vector<int32_t> admissions(static_cast<size_t>(s.num_workloads()), 0);
  for (const SimEvent& e : sim.events())
    if (e.type == SimEvent::Type::kAdmitted) ++admissions[static_cast<size_t>(e.workload)];

  RunRecorder recorder(m, sink, std::move(options));
  std::vector<int32_t> seen(admissions.size(), 0);
  for (const SimEvent& e : sim.events()) {
    const auto id = static_cast<size_t>(e.workload);
    switch (e.type) {
      case SimEvent::Type::kAdmitted: {
        const Workload& w = m.workloads[id];
        const double submit = w.admitted_at_start ? 0.0 : std::max(0.0, w.arrival);
        const bool last = ++seen[id] == admissions[id];
        recorder.Admitted(
            e.workload, submit, e.cluster_queue,
            last ? s.status(e.workload).flavors : InferFlavors(m, e.cluster_queue, e.pods), e.pods,
            e.time);
        break;
      }
      case SimEvent::Type::kScaledUp:
        recorder.ScaledUp(e.workload, e.pods, e.time);
        break;
      case SimEvent::Type::kPreempted:
        // With a grace period the run holds its GPUs until it is terminated.
        if (e.grace_seconds <= 0) recorder.Ended(e.workload, RunEnd::kPreempted, e.reason, e.time);
        break;
      case SimEvent::Type::kTerminated:
        recorder.Ended(e.workload, RunEnd::kPreempted, e.reason, e.time);
        break;
      case SimEvent::Type::kMoved: {
        // Consolidation: the run ends where it was and a new one starts at the new place.
        recorder.Ended(e.workload, RunEnd::kPreempted, e.reason, e.time);
        const Workload& w = m.workloads[id];
        const double submit = w.admitted_at_start ? 0.0 : std::max(0.0, w.arrival);
        recorder.Admitted(e.workload, submit, e.cluster_queue,
                          InferFlavors(m, e.cluster_queue, e.pods), e.pods, e.time);
        break;
      }
      case SimEvent::Type::kFinished:
        recorder.Ended(e.workload, RunEnd::kFinished, "", e.time);
        break;
      case SimEvent::Type::kFailed:
        recorder.Ended(e.workload, RunEnd::kFailed, e.reason, e.time);
        break;
      case SimEvent::Type::kRejected:
      case SimEvent::Type::kWaitLimitExceeded:
      case SimEvent::Type::kNodeAdded:  // node events: no workload run
      case SimEvent::Type::kNodeRemoved:
      case SimEvent::Type::kNodeInterrupted:
        break;
    }
  }
  recorder.CloseAll(sim.summary().end_time);
  return recorder.recorded();
}

absl::Status WriteSimulationRecords(const Simulator& sim, const std::string& path, int64_t* written,
                                    const std::string& run_id, int64_t* replaced) {
  auto store = AccountingStore::Open(path);
  if (!store.ok()) return store.status();
  StoreWriter writer(**store, /*batch_size=*/1 << 16, run_id);
  RecordSimulation(sim, writer);
  if (auto st = writer.Finish(); !st.ok()) return st;
  if (written != nullptr) *written = writer.written();
  if (replaced != nullptr) *replaced = writer.replaced();
  return absl::OkStatus();
}

}  // namespace tessera::accounting
