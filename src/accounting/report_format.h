// The cost report (accounting/cost_report.h) as text: a table for a terminal, one JSON
// document, or CSV (one row per group, the total last). docs/accounting.md shows each.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "accounting/cost_report.h"

namespace tessera::accounting {

std::string CostReportTable(const CostSummary& report);
std::string CostReportJson(const CostSummary& report);
std::string CostReportCsv(const CostSummary& report);

}  // namespace tessera::accounting
