// Reading NVIDIA dcgm-exporter's Prometheus text exposition (docs/observability.md, "GPU
// utilization from DCGM"): the utilization and framebuffer use of every GPU it reports, with the
// labels that say which GPU it is (Hostname, gpu, UUID; GPU_I_ID under MIG) and, where the
// exporter maps devices to pods (its Kubernetes mode, on by default in its DaemonSet), which
// pod, namespace and container use it.
//
// dcgm-exporter's default counters (etc/default-counters.csv) export DCGM_FI_DEV_GPU_UTIL
// (percent, 0-100) and DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_FREE (MiB); its DCP counters
// (dcp-metrics-included.csv) add DCGM_FI_PROF_GR_ENGINE_ACTIVE (a ratio, 0-1), the finer
// measure: where a GPU has both, the engine activity is its utilization. DCGM_FI_DEV_XID_ERRORS
// (a default counter too) is the last XID error of the GPU, which says when it is broken.
//
// The whole body is checked as Prometheus reads it: a line that is not a comment, a blank, or
// `name{labels} value [timestamp]` makes the scrape an error naming the line, and nothing of it
// is used (a half-read exposition could hide a GPU's figures). Bodies and series are bounded
// (DcgmLimits).
//
// Thread-safety: pure functions and value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tessera::k8s {

// One GPU (or MIG instance, or one pod's view of a shared GPU) as the exporter reports it.
struct GpuReading {
  std::string hostname;            // Hostname: the node's name where the exporter sets NODE_NAME
  int32_t gpu = -1;                // gpu: the device index on the node; -1 when absent
  std::string uuid;                // UUID
  std::string gpu_instance;        // GPU_I_ID (MIG); empty otherwise
  std::string model;               // modelName
  std::string ns, pod, container;  // the pod using it; empty when none or not mapped
  std::optional<double> gpu_util;  // DCGM_FI_DEV_GPU_UTIL as a ratio (percent / 100)
  std::optional<double> engine_active;  // DCGM_FI_PROF_GR_ENGINE_ACTIVE
  std::optional<double> fb_used_mib, fb_free_mib;
  // DCGM_FI_DEV_XID_ERRORS: the last XID error of the GPU (0: none); gpu_health.h says which
  // mean broken hardware.
  std::optional<int64_t> xid;

  // The utilization in [0, 1]: the graphics engine's activity where measured, else
  // DCGM_FI_DEV_GPU_UTIL; std::nullopt when neither is.
  std::optional<double> utilization() const { return engine_active ? engine_active : gpu_util; }
};

struct DcgmLimits {
  size_t max_lines = 200000;  // lines of the body (an 8-GPU node exports a few hundred)
  size_t max_gpus = 4096;     // distinct GPU readings kept
};

// Parses an exposition. Errors name the line ("line 12: ..."). Samples of other families are
// checked and skipped; NaN values are absent; utilizations are clamped to [0, 1].
[[nodiscard]] absl::StatusOr<std::vector<GpuReading>> ParseDcgmExposition(
    std::string_view body, const DcgmLimits& limits = {});

}  // namespace tessera::k8s
