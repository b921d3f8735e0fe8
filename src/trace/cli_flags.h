// The flags `tessera sim replay` and `tessera sim plan` share: where the trace comes from (CSV
// files, manifests or a synthetic generator) and how its model is built (queues, placement,
// backfill, estimates). trace/cli.cc defines them; trace/plan_cli.cc reuses them.
//
// Thread-safety: none needed (command-line parsing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/flag_range.h"
#include "trace/cluster_snapshot.h"
#include "trace/model_builder.h"
#include "trace/readers.h"
#include "trace/trace.h"

namespace tessera::cli {

struct ReplayFlags {
  std::vector<std::string> nodes;
  std::string jobs;
  std::vector<std::string> manifests;
  int64_t synthetic_jobs = 0;
  int32_t synthetic_nodes = 1000;
  int32_t synthetic_queues = 8;
  double synthetic_load = 0.9;
  std::string synthetic_mix = "mixed";
  uint64_t seed = 1;
  std::string bad_rows = "skip";
  std::string report;
  double report_at = -1;
  int64_t report_workloads = trace::kDefaultSnapshotWorkloads;
  std::string placement;
  bool fair_sharing = false;
  std::string backfill;  // "", "on", "off"
  std::string strategy;  // "", "StrictFIFO", "BestEffortFIFO"
  std::string estimates = "none";
  // terminationGracePeriodSeconds of trace jobs: 0 (gone at once) by default, so that results
  // stay comparable with the replays before grace periods (docs/time.md)
  double grace_period = 0;
  double checkpoint_interval = 0;  // > 0: trace jobs checkpoint this often (seconds)
  double gpu_mtbf = 0;             // --gpu-failures: seconds; 0: none
  double gpu_repair = 24 * 3600;   // --gpu-repair: seconds
  bool unqueued = false;
  bool no_preemption = false;
  double cycle_interval = 0;
  double until = -1;
  std::string scale_up;
  int64_t limit = -1;
  bool ignore_times = false;
  bool verify = false;
  std::string accounting_db;
  std::string write_trace;  // replay: write the trace here instead of replaying it
  bool quiet = false;       // --manifests' notices are not printed
};

// Peak resident memory of this process, MiB.
double PeakRssMiB();

// Registers the trace input and model-building flags (--nodes, --jobs, --manifests,
// --synthetic-*, --seed, --bad-rows, --placement, --fair-sharing, --backfill, --strategy,
// --estimates, --unqueued, --no-preemption, --limit) on `app`, bound to `flags`.
void AddTraceFlags(CLI::App& app, ReplayFlags& flags);

// The trace: synthetic, or read from --nodes and --jobs (broken rows said on stderr), cut to
// --limit, with --ignore-times applied. False (said) when it cannot be read.
bool ReadTrace(const ReplayFlags& f, trace::Trace& tr, trace::ReadLog& log);

// The model builder's options from the flags. False (said) when --estimates is bad.
bool BuildOptionsOf(const ReplayFlags& f, trace::BuildOptions& bo);

}  // namespace tessera::cli
