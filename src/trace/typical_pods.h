// The typical pods of the replay's FGD fragmentation measure (fgd/fragmentation.h): every pod of
// the trace and of the manifests' workloads, grouped by fgd::BuildTypicalPods.
//
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "fgd/fragmentation.h"
#include "fgd/gpu_models.h"
#include "model/model.h"
#include "trace/trace.h"

namespace tessera::trace {

// `milli`: the GPU-share resource (tessera.dev/gpu-milli), < 0 for none. Fails on a GPU model
// constraint `models` cannot parse.
absl::StatusOr<std::vector<fgd::TypicalPod>> TypicalPods(const Trace& trace, const Model& model,
                                                         ResourceId milli,
                                                         fgd::GpuModelTable& models);

}  // namespace tessera::trace
