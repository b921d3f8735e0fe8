// Runtime estimates: how long a workload will run, for reservations, backfill and expected
// start times (docs/time.md). In order:
//   1. what the user wrote: Workload::runtime_estimate (tessera.dev/runtime-estimate);
//   2. learned: a high quantile (EstimatorConfig::quantile, 0.9) of the last runtimes
//      (EstimatorConfig::history, 50) of finished workloads with the same namespace, LocalQueue
//      and name prefix (the name without its trailing counter or generated suffix), else of the
//      same LocalQueue, once EstimatorConfig::min_samples (3) runs have been seen; capped by
//      the workload's hard limit (Workload::active_deadline), which it cannot outlive;
//   3. the hard limit alone;
//   4. EstimatorConfig::default_estimate, unset by default: no estimate.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/id_pages.h"
#include "model/model.h"

namespace tessera {

class RuntimeEstimator {
 public:
  explicit RuntimeEstimator(const EstimatorConfig& config) : config_(config) {}

  // Interns the workload's learning keys; call once when it is added.
  void Add(const Workload& w);
  // The estimate of workload `id` (index in the order of Add), seconds; nullopt: none.
  std::optional<double> Estimate(WorkloadId id, const Workload& w) const;
  // A finished run of `runtime` seconds (not one the scheduler ended by failure).
  void Observe(WorkloadId id, double runtime);
  // Workload `id` is retired (Scheduler::Retire): what it taught stays, its keys go.
  void Retire(WorkloadId id) { keys_.Retire(static_cast<size_t>(id)); }
  // Runs observed so far: a change means estimates may have changed.
  int64_t observed() const { return observed_; }

  // The name a workload is learned under: `name` without a trailing counter ("train-17",
  // "train.3") or generated suffix ("train-x7k2p"); the whole name when nothing is left.
  static std::string_view NamePrefix(std::string_view name);

 private:
  struct History {
    std::vector<double> runtimes;  // ring of the last `history`
    std::vector<double> sorted;    // the same, ascending
    size_t next = 0;
    int64_t seen = 0;
    double quantile = 0;  // of `runtimes`, kept on Observe
  };
  int32_t Intern(std::string key);
  void Push(History& h, double runtime);

  EstimatorConfig config_;
  int64_t observed_ = 0;
  absl::flat_hash_map<std::string, int32_t> key_ids_;
  std::vector<History> histories_;
  // Per workload: its (queue + prefix) and (queue) histories; -1: not queued.
  IdPages<std::pair<int32_t, int32_t>> keys_;
};

}  // namespace tessera
