// A CostReport as the simulator and the replay print it: summary.cost of `--output json` and the
// short cost section of the table (docs/cost.md, "Output").
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "cost/ledger.h"
#include "nlohmann/json.hpp"

namespace tessera::cost {

// {byClusterQueue, byNamespace, byLocalQueue, byCohort, byLabel, byWorkload (when kept),
// allocated, idle, total}; every row {gpuHours, allocatedDollars, ...}, effectiveDollars null
// where no utilization is known. Figures are rounded to 1e-6.
nlohmann::json CostJson(const CostReport& report);

// A few lines: GPU-hours and dollars per ClusterQueue, the idle GPUs, the total.
std::string CostTable(const CostReport& report);

// The same as an HTML section (<h2>Cost</h2> and a table) for the replay's report, with the
// rollups by cohort and label too; names are escaped.
std::string CostHtml(const CostReport& report);

}  // namespace tessera::cost
