// `tessera report cost`: the monthly report of issue 16 from the accounting store
// (docs/accounting.md, "The report"). Per group (namespace, ClusterQueue, LocalQueue or the value
// of a label): GPU-hours, allocated dollars, jobs, runs, the five costliest jobs and the mean
// GPU utilization where measured.
//
// A run belongs to the period in which it ended: [from, to), so that consecutive periods never
// count a run twice. A job is a workload (namespace/name): its runs in the period together.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/record.h"

namespace tessera::accounting {

enum class GroupBy { kNamespace, kClusterQueue, kLocalQueue, kLabel };

struct ReportQuery {
  double from = 0;  // seconds since the epoch, inclusive
  double to = 0;    // exclusive
  GroupBy by = GroupBy::kNamespace;
  std::string label;  // the label key, for kLabel
};

// "namespace", "cluster-queue", "local-queue", "label:KEY" into `query` (by, label).
[[nodiscard]] absl::Status ParseGroupBy(std::string_view text, ReportQuery& query);
std::string GroupByName(const ReportQuery& query);

// "2026-01-31", "2026-01-31T12:00:00Z" (or without the Z, or with a space): seconds since the
// epoch, UTC. InvalidArgument naming the text otherwise.
[[nodiscard]] absl::StatusOr<double> ParseDate(std::string_view text);
// "2026-01-31T12:00:00Z" (fractions of a second dropped).
std::string FormatDate(double seconds);

struct JobCost {
  std::string job;  // namespace/name
  double gpu_hours = 0;
  std::optional<double> dollars;  // none: no run of it was priced
  int64_t runs = 0;
};

struct GroupCost {
  std::string group;  // "(none)" for runs without a queue or the label
  double gpu_hours = 0;
  std::optional<double> dollars;  // sum of the priced runs; none when no run was priced
  // Sum of the runs' effective dollars (allocated x measured utilization, docs/cost.md); none
  // when no run had both prices and a measurement.
  std::optional<double> effective_dollars;
  int64_t jobs = 0;
  int64_t runs = 0;
  std::vector<JobCost> top_jobs;  // at most five: dollars, then GPU-hours, descending, then name
  // Mean utilization weighted by GPU-hours, over runs where it was measured; none otherwise.
  std::optional<double> utilization;
};

struct CostSummary {
  ReportQuery query;
  std::vector<GroupCost> groups;  // costliest first (dollars, GPU-hours, then name)
  GroupCost total;                // every run of the period; its top jobs too
};

inline constexpr int kTopJobs = 5;

// The report over `records`; those that did not end in [from, to) are left out.
CostSummary BuildCostReport(const std::vector<RunRecord>& records, const ReportQuery& query);

}  // namespace tessera::accounting
