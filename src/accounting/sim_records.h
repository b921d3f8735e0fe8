// The accounting records of a finished simulation (`tessera sim --accounting-db`): built after
// the run from what the simulator exposes (its events, its scheduler's model and statuses), not
// by hooks inside its loop. docs/accounting.md says how simulated time maps to dates: time t is
// t seconds after 1970-01-01T00:00:00Z.
//
// Thread-safety: reads the simulator only; call when its Run has returned.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "accounting/record.h"
#include "accounting/recorder.h"
#include "sim/simulator.h"

namespace tessera::accounting {

// Sends a record per run of `sim` to `sink`: each admission up to its finish, preemption or
// deadline; runs still open at the end of the simulation end there as running. Returns how many.
int64_t RecordSimulation(const Simulator& sim, RecordSink& sink, RecorderOptions options = {});

// Opens (or creates) the store at `path` and appends the records of `sim`;
// `written` gets their number. Records go in transactions of up to 65,536. Errors name the file.
// With a `run_id` (RunId of the scenario and flags), the records of an earlier run of that id
// are replaced, and `replaced` gets how many there were.
[[nodiscard]] absl::Status WriteSimulationRecords(const Simulator& sim, const std::string& path,
                                                  int64_t* written = nullptr,
                                                  const std::string& run_id = "",
                                                  int64_t* replaced = nullptr);

}  // namespace tessera::accounting
