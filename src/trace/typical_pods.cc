#include "trace/typical_pods.h"

#include <string>

#include "absl/strings/str_join.h"

namespace tessera::trace {

namespace {
constexpr int64_t kMiB = 1024 * 1024;
}  // namespace

absl::StatusOr<std::vector<fgd::TypicalPod>> TypicalPods(const Trace& trace, const Model& model,
                                                         ResourceId milli,
                                                         fgd::GpuModelTable& models) {
  std::vector<fgd::ModelMask> set_mask(trace.gpu_model_sets.size());
  std::vector<std::string> set_spec(trace.gpu_model_sets.size());
  for (size_t i = 0; i < set_mask.size(); ++i) {
    set_spec[i] = absl::StrJoin(trace.gpu_model_sets[i], "|");
    auto m = models.MaskOfSpec(set_spec[i]);
    if (!m.ok()) return m.status();
    set_mask[i] = *m;
  }
  std::vector<fgd::PodShape> shapes;
  shapes.reserve(trace.jobs.size());
  for (const auto& j : trace.jobs) {
    fgd::PodShape s;
    s.cpu_milli = j.cpu_milli;
    s.mem_mib = j.memory_mib;
    s.num_gpu = j.gpu_milli > 0 ? 1 : j.gpus;
    s.gpu_milli = j.gpu_milli > 0 ? j.gpu_milli : (j.gpus > 0 ? 1000 : 0);
    if (j.gpu_models >= 0) {
      s.models = set_mask[static_cast<size_t>(j.gpu_models)];
      s.model_spec = set_spec[static_cast<size_t>(j.gpu_models)];
    }
    s.count = j.pods;
    shapes.push_back(std::move(s));
  }
  for (const auto& w : model.workloads) {
    for (const auto& ps : w.pod_sets) {
      fgd::PodShape s;
      s.cpu_milli = ps.requests[kCpu];
      s.mem_mib = ps.requests[kMemory] / kMiB;
      int64_t share = milli >= 0 ? ps.requests[milli] : 0;
      s.num_gpu = share > 0 ? 1 : static_cast<int32_t>(ps.requests[kGpu]);
      s.gpu_milli = share > 0 ? static_cast<int32_t>(share) : (ps.requests[kGpu] > 0 ? 1000 : 0);
      if (auto it = ps.node_selector.find("nvidia.com/gpu.product"); it != ps.node_selector.end()) {
        auto m = models.MaskOfSpec(it->second);
        if (!m.ok()) return m.status();
        s.models = *m;
        s.model_spec = it->second;
      }
      s.count = ps.count;
      shapes.push_back(std::move(s));
    }
  }
  return fgd::BuildTypicalPods(shapes);
}

}  // namespace tessera::trace
