// One record of the accounting store (docs/accounting.md): one run of one workload, from its
// admission to its finish, preemption or failure, or to the end of the observation while still
// running. Slurm's sacct keeps one such record per job step; a workload preempted and admitted
// again has one record per run.
//
// Thread-safety: plain values. RecordSink implementations say their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::accounting {

// How a run ended.
enum class RunEnd {
  kFinished,   // completed
  kPreempted,  // evicted to make room for another workload (or a draining queue)
  kFailed,     // ended by a deadline (DeadlineExceeded) or another failure
  kRunning,    // still running when the observation ended (the simulation, the replay)
};
const char* RunEndName(RunEnd e);
// The RunEnd named `name` ("finished", ...); std::nullopt for any other text.
std::optional<RunEnd> ParseRunEnd(std::string_view name);

struct RunRecord {
  int64_t id = 0;      // the store's row id; 0 until written
  std::string source;  // who wrote it: "sim", "sim replay", "serve"
  std::string ns;      // namespace
  std::string name;
  std::string local_queue;    // LocalQueue name (in `ns`); empty: none
  std::string cluster_queue;  // empty: none
  std::string cohort;         // the ClusterQueue's own cohort; empty: none
  std::string labels = "{}";  // metadata.labels as a JSON object
  int32_t priority = 0;
  int32_t attempt = 1;    // which run of the workload this is: 1 for its first admission
  int32_t pods = 0;       // most pods held at once during the run
  double gpus = 0;        // most GPUs held at once (shares as fractions)
  std::string gpu_model;  // GPU models of the nodes used, comma-separated, sorted
  std::string flavors;    // ResourceFlavors admission chose, comma-separated
  double submit = 0;      // seconds since 1970-01-01T00:00:00Z
  double start = 0;       // admission
  double end = 0;         // finish, preemption, failure, or end of observation
  RunEnd how = RunEnd::kFinished;
  std::string reason;       // why it was preempted or failed; empty otherwise
  int32_t preemptions = 0;  // times the workload was preempted, this run's end included
  double gpu_hours = 0;     // GPUs held x hours, over this run
  // Allocated cost of the run (docs/cost.md): std::nullopt when no prices were given.
  std::optional<double> allocated_dollars;
  // Mean GPU utilization over the run in [0, 1], weighted by GPU-hours, over the part of the
  // run dcgm-exporter measured (tessera serve --dcgm-url); std::nullopt where nothing was.
  std::optional<double> utilization;
  // Effective cost (docs/cost.md): allocated dollars x utilization over the measured part of
  // the run; std::nullopt without prices or without a measurement.
  std::optional<double> effective_dollars;
  // tessera serve's key of a run it keeps open in the store while it runs (the workload's
  // group, "Kind:namespace/name"); empty for records written when their run ended.
  std::string run_key;
  // The run of `tessera sim` or `sim replay` that wrote the record (RunId: its source, the
  // content of its input files and the flags that change its results); a re-run of the same
  // replaces the records of the earlier one instead of adding to them. Empty for serve's.
  std::string run_id;
};

// Where records go as they are made: the store's batching writer, or a vector in tests.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void Add(RunRecord record) = 0;
};

}  // namespace tessera::accounting
