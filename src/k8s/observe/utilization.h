// UtilizationTracker: joins dcgm-exporter's GPU readings (dcgm.h) to the workloads that hold the
// GPUs, and decides which workloads hold GPUs they barely use (docs/observability.md, "GPU
// utilization from DCGM").
//
// The join, per reading:
// 1. with `pod` and `namespace` labels (dcgm-exporter's Kubernetes mapping): the workload of that
//    pod, on that pod's node, GPU index from the `gpu` label;
// 2. without them: `Hostname` as the node's name and `gpu` as the device index, to the pod that
//    Tessera bound with that index (tessera.dev/gpu-indices); no such pod: an idle GPU;
// 3. neither: not joined (counted in unjoined()).
// A workload's utilization is the mean over its GPUs that have a reading.
//
// The underuse rule: a workload is underused once every reading of it for `underuse_for_s`
// seconds was below `underuse_threshold` (from the first low reading after a reading at or
// above the threshold, or after it started being measured). A reading at or above the threshold
// ends it; a scrape without a reading of it (an exporter down) neither ends nor extends the
// evidence, but the period must have passed since the first low reading. A workload that stops
// running is forgotten.
//
// Thread-safety: Update from one thread (the loop); the accessors return copies under a mutex
// and are thread-safe (the JSON API reads them).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/observe/dcgm.h"

namespace tessera::k8s {

struct UnderuseOptions {
  double threshold = 0.1;  // utilization below this is "barely used" (10 %)
  double for_s = 1800;     // ... for this long (30 minutes)
};

// One running workload of Tessera's as the loop sees it.
struct HeldGpus {
  std::string key;  // its group key ("Job:ns/name")
  std::string ns, name;
  std::string cluster_queue = "(none)";
  double gpus = 0;  // GPUs it holds (shares as fractions)
  struct Pod {
    std::string name, node;
    std::vector<int32_t> gpu_indices;
  };
  std::vector<Pod> pods;  // in its namespace
};

// One GPU with a reading.
struct GpuUsage {
  std::string node;
  int32_t index = -1;
  std::string workload;  // group key; empty when no workload of Tessera's holds it
  std::optional<double> utilization;
  std::optional<double> fb_used_mib, fb_free_mib;
};

struct WorkloadUsage {
  std::string key, ns, name, cluster_queue;
  double gpus = 0;
  std::optional<double> utilization;  // mean over its measured GPUs, as of the last Update
  int32_t measured_gpus = 0;
  double low_since = -1;  // the first low reading of the current stretch; -1: none
  bool underused = false;
};

class UtilizationTracker {
 public:
  explicit UtilizationTracker(UnderuseOptions options) : options_(options) {}

  // Joins `readings` to `running` at `now` (seconds, any steady clock). Returns the keys of the
  // workloads that became underused at this call.
  std::vector<std::string> Update(const std::vector<GpuReading>& readings,
                                  const std::vector<HeldGpus>& running, double now);

  // Thread-safe copies.
  std::map<std::string, WorkloadUsage> workloads() const;
  // By (node, GPU index).
  std::map<std::pair<std::string, int32_t>, GpuUsage> gpus() const;
  // The utilization of GPU `index` of `node`; std::nullopt when it has no reading.
  std::optional<double> gpu_utilization(const std::string& node, int32_t index) const;
  // Whether the workload holding GPU `index` of `node` is underused.
  bool gpu_underused(const std::string& node, int32_t index) const;
  int64_t unjoined() const;

  const UnderuseOptions& options() const { return options_; }

 private:
  const UnderuseOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, WorkloadUsage> workloads_;            // GUARDED_BY(mu_)
  std::map<std::pair<std::string, int32_t>, GpuUsage> gpus_;  // GUARDED_BY(mu_)
  int64_t unjoined_ = 0;                                      // GUARDED_BY(mu_)
};

}  // namespace tessera::k8s
