// The typical pods of the replay's FGD fragmentation measure (fgd/fragmentation.h): every pod of
// the trace and of the manifests' workloads, grouped by fgd::BuildTypicalPods. The trace's jobs
// are read once as a stream and tallied by shape, so that a million jobs need no list of a
// million shapes.
//
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "fgd/fragmentation.h"
#include "fgd/gpu_models.h"
#include "model/model.h"
#include "trace/job_source.h"
#include "trace/trace.h"

namespace tessera::trace {

// `milli`: the GPU-share resource (tessera.dev/gpu-milli), < 0 for none. Fails on a GPU model
// constraint `models` cannot parse.
// `trace` gives the GPU model sets `jobs` refer to.
absl::StatusOr<std::vector<fgd::TypicalPod>> TypicalPods(const Trace& trace, const JobSource& jobs,
                                                         const Model& model, ResourceId milli,
                                                         fgd::GpuModelTable& models);

}  // namespace tessera::trace
