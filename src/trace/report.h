// What a replay shows: a terminal summary table, and with --report DIR a JSON document, CSV
// files of every metric, a self-contained HTML page with inline SVG charts and the dashboard page
// of `tessera serve` with the run's end state. Everything is
// formatted with fixed rules and no clock or host information, so the same replay gives the same
// bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "trace/replay.h"

namespace tessera::trace {

// Human duration: "0s", "42s", "3.5m", "7.25h", "2.1d".
std::string FormatDuration(double seconds);

std::string SummaryTable(const ReplayResult& r);
std::string ReportJson(const ReplayResult& r);
// CSV files by name: summary.csv, queues.csv, size_classes.csv, timeseries.csv,
// delay_histogram.csv, typical_pods.csv.
std::vector<std::pair<std::string, std::string>> ReportCsv(const ReplayResult& r);
std::string ReportHtml(const ReplayResult& r, const std::string& title);
// The documents of serve's JSON API that a replay can fill (summary, queues, cost, trends; no
// workloads, no nodes), as one JSON object for the dashboard page (ui/ui_assets.h).
std::string DashboardSnapshotJson(const ReplayResult& r);

// Writes report.json, the CSV files, index.html and dashboard.html (the dashboard of `tessera
// serve` with DashboardSnapshotJson) into `dir` (created if missing).
[[nodiscard]] absl::Status WriteReport(const ReplayResult& r, const std::string& dir,
                                       const std::string& title);

}  // namespace tessera::trace
