#include "trace/typical_pods.h"

#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"

#include "absl/strings/str_join.h"

namespace tessera::trace {

namespace {
constexpr int64_t kMiB = 1024 * 1024;
}  // namespace

absl::StatusOr<std::vector<fgd::TypicalPod>> TypicalPods(const Trace& trace, const JobSource& jobs,
                                                         const Model& model, ResourceId milli,
                                                         fgd::GpuModelTable& models) {
  std::vector<fgd::ModelMask> set_mask(trace.gpu_model_sets.size());
  std::vector<std::string> set_spec(trace.gpu_model_sets.size());
  for (size_t i = 0; i < set_mask.size(); ++i) {
    set_spec[i] = absl::StrJoin(trace.gpu_model_sets[i], "|");
    auto m = models.MaskOfSpec(set_spec[i]);
    if (!m.ok()) return m.status();
    set_mask[i] = *m;
  }
  // Equal shapes tallied as one, in the order they first appear: BuildTypicalPods groups them
  // the same (a group keeps its first pod's memory and models; counts are whole numbers).
  std::vector<fgd::PodShape> shapes;
  absl::flat_hash_map<std::tuple<int64_t, int64_t, int32_t, int32_t, int32_t>, size_t> seen;
  jobs.ForEach([&](const TraceJob& j, int64_t) {
    if (j.pods <= 0) return;  // no pod to count
    fgd::PodShape s;
    s.cpu_milli = j.cpu_milli;
    s.mem_mib = j.memory_mib;
    s.num_gpu = j.gpu_milli > 0 ? 1 : j.gpus;
    s.gpu_milli = j.gpu_milli > 0 ? j.gpu_milli : (j.gpus > 0 ? 1000 : 0);
    auto [it, added] = seen.try_emplace(
        std::make_tuple(s.cpu_milli, s.mem_mib, s.num_gpu, s.gpu_milli, j.gpu_models),
        shapes.size());
    if (!added) {
      shapes[it->second].count += j.pods;
      return;
    }
    if (j.gpu_models >= 0) {
      s.models = set_mask[static_cast<size_t>(j.gpu_models)];
      s.model_spec = set_spec[static_cast<size_t>(j.gpu_models)];
    }
    s.count = j.pods;
    shapes.push_back(std::move(s));
  });
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
