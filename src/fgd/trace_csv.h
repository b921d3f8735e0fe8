// Readers for the openb traces (Alibaba cluster-trace-gpu-v2023) that the FGD experiment uses:
//   nodes: sn,cpu_milli,memory_mib,gpu,model
//   pods:  name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]  (extra columns ignored)
// Columns are found by the header's names. A broken row is reported as "file:line: what" and
// skipped, or ends the read when `strict` is set; it never crashes.
//
// Thread-safety: functions only; the GpuModelTable passed in is written.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fgd/fragmentation.h"
#include "fgd/gpu_models.h"

namespace tessera::fgd {

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpus = 0;
  int32_t gpu_model = kNoGpuModel;
};

struct TracePod {
  std::string name;
  PodShape shape;
};

struct ReadOptions {
  bool strict = false;  // a broken row fails the read instead of being skipped
};

template <typename T>
struct TraceRead {
  std::vector<T> rows;
  std::vector<std::string> warnings;  // "file:line: message" for each skipped row
};

[[nodiscard]] absl::StatusOr<TraceRead<TraceNode>> ReadNodesCsv(const std::string& path,
                                                                GpuModelTable& models,
                                                                const ReadOptions& options = {});

// gpu_milli is read as the simulator's converter does: values above 1000 become 1000, a GPU pod
// with 0 gets 0; CPU-only pods get 0. gpu_spec's '|' list becomes a model mask.
[[nodiscard]] absl::StatusOr<TraceRead<TracePod>> ReadPodsCsv(const std::string& path,
                                                              GpuModelTable& models,
                                                              const ReadOptions& options = {});

}  // namespace tessera::fgd
