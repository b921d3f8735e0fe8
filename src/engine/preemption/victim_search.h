// Victim search plugins: in which order a preemptor's candidates are evicted until it fits.
// MakeVictimSearch is the one place that picks, from SchedulerConfig:
//   classic       candidates in the Preemptor's order (other queues' borrowers first, lowest
//                 priority, largest, newest), a required-topology gang's best domain first
//   fair-sharing  Kueue's fair sharing: from the queue with the highest share first, while
//                 its strategies (LessThanOrEqualToFinalShare, LessThanInitialShare) allow
//
// Thread-safety: none; part of one engine.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine_state.h"

namespace tessera {

struct Engine;

// Victims evicted so far, with their pods (to put back if the search gives up).
using Evicted = std::vector<std::pair<WorkloadId, std::vector<PlacedPod>>>;

class VictimSearch {
 public:
  virtual ~VictimSearch() = default;
  virtual std::string_view name() const = 0;
  // Evicts candidates through the Statement, in the policy's order, until preemptor `id` fits
  // under `combo` (within its nominal quota unless `allow_borrowing`); every eviction is
  // appended to `evicted`. True when it fits.
  virtual bool Search(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
                      std::vector<WorkloadId>& candidates, Evicted& evicted) = 0;
};

std::unique_ptr<VictimSearch> MakeVictimSearch(const SchedulerConfig& config, Engine& e);

// The preemptor fits now (quota and placement); unless `allow_borrowing`, its ClusterQueue then
// uses no more than its nominal quota of what it needs (Kueue's fit without borrowing).
bool PreemptorFits(Engine& e, WorkloadId id, const Combo& combo, const Need& need,
                   bool allow_borrowing);

// A victim of another queue helps only while that queue still borrows something the preemptor
// needs (an earlier eviction may have ended its borrowing).
bool StillBorrowing(const EngineState& s, WorkloadId preemptor, WorkloadId victim,
                    const Need& need);

// For a gang that must sit in one topology domain: moves first the candidates inside the
// domain where the fewest, lowest-priority victims free enough GPUs, so that the search frees
// room in one domain rather than a little everywhere.
void OrderForTopology(const Engine& e, WorkloadId id, const Combo& combo,
                      std::vector<WorkloadId>& candidates);

}  // namespace tessera
