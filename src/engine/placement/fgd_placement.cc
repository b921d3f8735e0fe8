#include "engine/placement/fgd_placement.h"

#include <algorithm>

#include "engine/engine.h"
#include "fgd/placement.h"

namespace tessera {

FgdPlacement::FgdPlacement(Engine& e, const NodeScorer& scorer, fgd::Policy policy)
    : e_(e),
      s_(e.st),
      walk_(e, scorer),
      policy_(policy),
      node_gpu_model_(DenseGpuModelIds(e.st.model.nodes)) {
  absl::flat_hash_map<int64_t, int64_t> devices_by_memory;
  for (const Node& node : s_.model.nodes)
    if (node.gpu_memory_mib > 0) devices_by_memory[node.gpu_memory_mib] += node.gpu_count();
  int64_t most = 0;
  for (const auto& [mib, count] : devices_by_memory)
    if (count > most || (count == most && mib < typical_gpu_mem_mib_)) {
      most = count;
      typical_gpu_mem_mib_ = mib;
    }
}

std::string_view FgdPlacement::name() const { return fgd::PolicyName(policy_); }

NodeChoice FgdPlacement::FindNode(WorkloadId id, int ps, const Combo& combo) {
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  if (req[kGpu] > 0 || ClusterState::IsShare(req)) return FindNodeFgd(id, ps, combo);
  return walk_.FindNode(id, ps, combo);
}

int64_t FgdPlacement::TypicalShareMilli(const Resources& req) const {
  if (req[kGpuMemory] <= 0) return req[kGpuMilli];
  if (typical_gpu_mem_mib_ <= 0) return kMilliPerGpu;
  return std::min<int64_t>(
      kMilliPerGpu,
      (req[kGpuMemory] * kMilliPerGpu + typical_gpu_mem_mib_ - 1) / typical_gpu_mem_mib_);
}

fgd::NodeGpuState FgdPlacement::GpuStateOf(NodeId n) const {
  fgd::NodeGpuState st;
  const Resources& free = s_.cluster->free(n);
  st.cpu_free_milli = free[kCpu];
  st.mem_free_mib = free[kMemory] >> 20;
  st.gpu_model = node_gpu_model_[n];
  st.num_gpus = std::min(s_.cluster->gpu_count(n), fgd::kMaxGpusPerNode);
  const int32_t* used = s_.cluster->gpu_used_milli(n);
  for (int i = 0; i < st.num_gpus; ++i)
    st.gpu_free_milli[static_cast<size_t>(i)] = kMilliPerGpu - used[i];
  return st;
}

const fgd::FragmentationMeasure& FgdPlacement::Measure() {
  const int32_t n = static_cast<int32_t>(s_.model.workloads.size());
  if (!measure_ || n >= 2 * measure_workloads_ + 16) {
    Tally();
    measure_ = std::make_unique<fgd::FragmentationMeasure>(fgd::BuildTypicalPods(shapes_.shapes()));
    measure_workloads_ = n;
  }
  return *measure_;
}

void FgdPlacement::Tally() {
  const auto n = static_cast<int32_t>(s_.model.workloads.size());
  for (; tallied_ < n; ++tallied_) {
    for (const PodSet& ps : s_.model.workloads[static_cast<size_t>(tallied_)].pod_sets) {
      fgd::PodShape sh;
      sh.cpu_milli = ps.requests[kCpu];
      sh.mem_mib = ps.requests[kMemory] >> 20;
      const int64_t share = TypicalShareMilli(ps.requests);
      sh.num_gpu = share > 0 ? 1 : static_cast<int32_t>(ps.requests[kGpu]);
      sh.gpu_milli = share > 0        ? static_cast<int32_t>(share)
                     : sh.num_gpu > 0 ? fgd::kMilliPerGpu
                                      : 0;
      sh.count = ps.count;
      shapes_.Add(sh);
    }
  }
}

NodeChoice FgdPlacement::FindNodeFgd(WorkloadId id, int ps, const Combo& combo) {
  const Resources& req = s_.model.workloads[id].pod_sets[ps].requests;
  const bool share = ClusterState::IsShare(req);
  fgd::PodRequest pod;
  pod.cpu_milli = req[kCpu];
  pod.mem_mib = req[kMemory] >> 20;
  pod.num_gpu = share ? 1 : static_cast<int32_t>(req[kGpu]);
  pod.gpu_milli = share ? static_cast<int32_t>(req[kGpuMilli]) : fgd::kMilliPerGpu;
  const fgd::FragmentationMeasure& measure = Measure();
  const fgd::Scorer scorer(policy_, &measure);  // cheap: a policy and a pointer
  const int pool = e_.flavors.PoolFor(id, combo, ps);
  std::vector<NodeId> candidates;
  auto consider = [&](NodeId n) {
    if (!s_.cluster->Fits(n, req) || !e_.placer.NodeEligible(id, ps, combo, n)) return false;
    candidates.push_back(n);
    return true;
  };
  if (share) {
    int seen = 0;
    for (NodeId n : s_.cluster->SharedNodes(pool)) {
      if (s_.cluster->share_room(n) >= s_.cluster->ShareMilli(n, req) && consider(n) &&
          ++seen >= 4 * kCandidatesPerBucket)
        break;
    }
  }
  const int g = share ? 1 : static_cast<int>(req[kGpu]);
  for (int k = g; k <= s_.cluster->max_gpus_per_node(); ++k) {
    int seen = 0;
    for (NodeId n : s_.cluster->Bucket(pool, k))
      if (consider(n) && ++seen >= kCandidatesPerBucket) break;
  }
  NodeId best = -1;
  fgd::NodeOrderKey best_key;
  fgd::GpuSet best_gpus = 0;
  const bool used_first = fgd::UsedFirst(policy_);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const NodeId n = candidates[i];
    fgd::NodeGpuState st = GpuStateOf(n);
    if (req[kGpuMemory] > 0) pod.gpu_milli = static_cast<int32_t>(s_.cluster->ShareMilli(n, req));
    if (s_.cluster->gpu_count(n) > fgd::kMaxGpusPerNode || !fgd::Fits(st, pod)) continue;
    fgd::NodeView view{&st, 0, measure.Evaluate(st)};
    fgd::Scored sc = scorer.Score(view, pod);
    if (sc.error) continue;
    if (policy_ == fgd::Policy::kRandom) {
      rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      sc.score = static_cast<int64_t>(rng_ >> 33);
    }
    // The experiment's node order (fgd/placement.h): ties go to a node in use under
    // TesseraFGD, then to the first candidate.
    const bool used =
        s_.cluster->free_gpus(n) < s_.cluster->gpu_count(n) || s_.cluster->share_room(n) > 0;
    const fgd::NodeOrderKey key{sc.score, 0, used, static_cast<int64_t>(i)};
    if (best < 0 || fgd::PlacesBefore(key, best_key, used_first)) {
      best = n;
      best_key = key;
      best_gpus = sc.gpus;
    }
  }
  return {best, best_gpus};
}

}  // namespace tessera
