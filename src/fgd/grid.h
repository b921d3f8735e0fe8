// The experiment grid: traces x policies x seeds, run on a pool of std::threads. Results come
// back in grid order (trace, policy, seed), whatever the number of threads, so that the same
// inputs give byte-identical output.
//
// Thread-safety: RunGrid owns its threads; its inputs are only read while it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fgd/experiment.h"
#include "model/printable.h"

namespace tessera::fgd {

struct GridSpec {
  std::vector<const Workload*> workloads;
  std::vector<PolicySpec> policies;
  std::vector<uint64_t> seeds;
  ExperimentOptions options;
  int threads = 1;
};

// Called after each finished run (from worker threads, serialized), for progress output.
using GridProgress = std::function<void(int done, int total)>;

std::vector<RunResult> RunGrid(const Cluster& cluster, const GridSpec& spec,
                               const GridProgress& progress = {});

// "42-51", "42,43,50-52" -> seeds in that order. Fails on anything else.
[[nodiscard]] absl::StatusOr<std::vector<uint64_t>> ParseSeeds(std::string_view text);

// The authors' published numbers (analysis_allo_discrete.csv, or the frag file): value per
// (workload, policy, seed) and load percent. Policy names lose their "NN-" prefix.
struct ExpectedKey {
  std::string workload;
  std::string policy;
  uint64_t seed;
  auto operator<=>(const ExpectedKey&) const = default;
};
using ExpectedTable = std::map<ExpectedKey, std::array<std::optional<double>, kLoadColumns>>;
[[nodiscard]] absl::StatusOr<ExpectedTable> ReadExpectedCsv(const std::string& path);

// Output in the shape of the authors' analysis_*_discrete.csv:
// workload,sc_policy,tune,seed,total_gpus,0,...,130 (`frag`: the fragmentation curve).
std::string CurvesCsv(const std::vector<RunResult>& runs, double tune_ratio, bool frag);

// Mean unallocated GPU % at 100% arrived load per (workload, policy), over seeds.
struct SummaryCell {
  std::string workload;
  std::string policy;
  double ours = 0;
  int runs = 0;
  std::optional<double> expected;  // the same mean over the expected table's seeds
};
std::vector<SummaryCell> Summarize(const std::vector<RunResult>& runs,
                                   const ExpectedTable* expected);
// A fixed-width table: a row per workload, a column per policy ("ours (expected)").
std::string SummaryTable(const std::vector<SummaryCell>& cells);

// --report DIR: runs.json, summary.csv, alloc.csv, frag.csv and index.html (self-contained,
// inline SVG charts of allocation and fragmentation against arrived load, and the table).
[[nodiscard]] absl::Status WriteReport(const std::string& dir, const std::vector<RunResult>& runs,
                                       const std::vector<SummaryCell>& summary, double tune_ratio);

// `s` with &, <, > and " escaped for HTML text and attribute values (model/printable.h).
using ::tessera::HtmlEscape;

}  // namespace tessera::fgd
