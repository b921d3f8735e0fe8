#include "engine/placement/plan_placement.h"

#include <algorithm>

#include "engine/engine.h"
#include "fgd/scorer.h"

namespace tessera {
namespace {

bool SameState(const fgd::NodeGpuState& a, const fgd::NodeGpuState& b) {
  if (a.cpu_free_milli != b.cpu_free_milli || a.num_gpus != b.num_gpus) return false;
  for (int i = 0; i < a.num_gpus; ++i)
    if (a.gpu_free_milli[static_cast<size_t>(i)] != b.gpu_free_milli[static_cast<size_t>(i)])
      return false;
  return true;
}

}  // namespace

PlanPlacement::PlanPlacement(Engine& e)
    : e_(e), s_(e.st), node_gpu_model_(DenseGpuModelIds(e.st.model.nodes)) {
  std::vector<fgd::NodeGpuState> capacity;
  // The balance ratios: the cluster's free CPU and memory per idle GPU milli, as it starts (the
  // capacity is known; nothing of the workloads is).
  for (NodeId n = 0; n < s_.cluster->num_nodes(); ++n) capacity.push_back(GpuStateOf(n));
  ratios_ = fgd::ClusterRatios(capacity);
  cached_state_.resize(static_cast<size_t>(s_.cluster->num_nodes()));
  cached_frag_.resize(static_cast<size_t>(s_.cluster->num_nodes()));
  cached_.assign(static_cast<size_t>(s_.cluster->num_nodes()), 0);
}

fgd::PodRequest PlanPlacement::RequestOf(const Resources& req) const {
  const bool share = ClusterState::IsShare(req);
  fgd::PodRequest pod;
  pod.cpu_milli = req[kCpu];
  pod.mem_mib = req[kMemory] >> 20;
  pod.num_gpu = share ? 1 : static_cast<int32_t>(req[kGpu]);
  pod.gpu_milli = share ? static_cast<int32_t>(req[kGpuMilli]) : pod.num_gpu > 0 ? 1000 : 0;
  return pod;
}

fgd::NodeGpuState PlanPlacement::GpuStateOf(NodeId n) const {
  fgd::NodeGpuState st;
  const Resources& free = s_.cluster->free(n);
  st.cpu_free_milli = free[kCpu];
  st.mem_free_mib = free[kMemory] >> 20;
  st.gpu_model = node_gpu_model_[static_cast<size_t>(n)];
  st.num_gpus = std::min(s_.cluster->gpu_count(n), fgd::kMaxGpusPerNode);
  const int32_t* used = s_.cluster->gpu_used_milli(n);
  for (int i = 0; i < st.num_gpus; ++i)
    st.gpu_free_milli[static_cast<size_t>(i)] = kMilliPerGpu - used[i];
  return st;
}

void PlanPlacement::Observe() {
  // Workloads are added to the model as they arrive (replay) or all at the start (sim); only the
  // submitted ones count. A workload not submitted when first seen is looked at again later.
  if (retired_in_list_ > 0 && 2 * static_cast<size_t>(retired_in_list_) > submitted_.size()) {
    std::erase_if(submitted_,
                  [&](WorkloadId w) { return s_.recs.retired(static_cast<size_t>(w)); });
    retired_in_list_ = 0;
  }
  auto submitted = [&](WorkloadId id) {
    submitted_.push_back(id);
    ++submitted_count_;
    for (const PodSet& ps : s_.model.workloads[static_cast<size_t>(id)].pod_sets) {
      const fgd::PodRequest r = RequestOf(ps.requests);
      fgd::PodShape sh;
      sh.cpu_milli = r.cpu_milli;
      sh.mem_mib = r.mem_mib;
      sh.num_gpu = r.num_gpu;
      sh.gpu_milli = r.gpu_milli;
      sh.count = ps.count;
      shapes_.Add(sh);
    }
  };
  std::vector<WorkloadId> still;
  for (WorkloadId id : unsubmitted_) {
    if (s_.status[static_cast<size_t>(id)].state == WorkloadState::kInactive) {
      still.push_back(id);
    } else {
      submitted(id);
    }
  }
  unsubmitted_ = std::move(still);
  const auto n = static_cast<int32_t>(s_.model.workloads.size());
  for (; observed_ < n; ++observed_) {
    if (s_.status[static_cast<size_t>(observed_)].state == WorkloadState::kInactive) {
      unsubmitted_.push_back(observed_);
    } else {
      submitted(observed_);
    }
  }
}

const fgd::FragmentationMeasure& PlanPlacement::Measure() {
  const int32_t n = submitted_count_;
  if (!measure_ || n >= measure_submitted_ + measure_submitted_ / 10 + 16) {
    measure_ = std::make_unique<fgd::FragmentationMeasure>(fgd::BuildTypicalPods(shapes_.shapes()));
    measure_submitted_ = n;
    std::fill(cached_.begin(), cached_.end(), 0);
  }
  return *measure_;
}

double PlanPlacement::FragOf(NodeId n, const fgd::NodeGpuState& st) {
  const auto i = static_cast<size_t>(n);
  if (!cached_[i] || !SameState(cached_state_[i], st)) {
    cached_frag_[i] = measure_->Evaluate(st);
    cached_state_[i] = st;
    cached_[i] = 1;
  }
  return cached_frag_[i];
}

PlanPlacement::Best PlanPlacement::Choose(WorkloadId id, int ps, const Combo& combo,
                                          const fgd::PodRequest& pod) {
  const Resources& req = s_.model.workloads[static_cast<size_t>(id)].pod_sets[ps].requests;
  const fgd::FragmentationMeasure& measure = Measure();
  const fgd::Scorer scorer(fgd::Policy::kFgd, &measure);
  const int pool = e_.flavors.PoolFor(id, combo, ps);
  Best best;
  for (NodeId n : s_.pools[static_cast<size_t>(pool)]) {
    if (!s_.cluster->Fits(n, req) || !e_.placer.NodeEligible(id, ps, combo, n)) continue;
    if (s_.cluster->gpu_count(n) > fgd::kMaxGpusPerNode) continue;
    const fgd::NodeGpuState st = GpuStateOf(n);
    if (!fgd::Fits(st, pod)) continue;  // a share bin's total may not fit where the pod does
    const fgd::NodeView view{&st, 0, FragOf(n, st)};
    const fgd::Scored sc = scorer.Score(view, pod);
    if (sc.error) continue;
    const int64_t gain = fgd::BalanceGain(st, pod, ratios_);
    if (best.node >= 0 && sc.score < best.score) continue;
    const bool used = s_.cluster->free_gpus(n) < s_.cluster->gpu_count(n) ||
                      s_.cluster->share_room(n) > 0 ||
                      st.cpu_free_milli < s_.model.nodes[static_cast<size_t>(n)].allocatable[kCpu];
    const bool better = best.node < 0 || sc.score > best.score ||
                        (gain > best.gain || (gain == best.gain && used && !best.used));
    if (better) best = Best{n, sc.score, gain, used, sc.gpus};
  }
  return best;
}

std::vector<WorkloadId> PlanPlacement::PendingBin(WorkloadId id, const fgd::PodRequest& pod) {
  std::vector<fgd::ShareItem> items;
  std::vector<WorkloadId> of_item;
  items.push_back(fgd::ShareItem{0, pod.gpu_milli, 0});
  of_item.push_back(id);
  for (WorkloadId w : submitted_) {
    if (w == id || s_.recs.retired(static_cast<size_t>(w)) ||
        s_.status[static_cast<size_t>(w)].state != WorkloadState::kPending)
      continue;
    if (hints_.contains(w)) continue;  // already in a bin placed earlier
    const Workload& wl = s_.model.workloads[static_cast<size_t>(w)];
    if (wl.pod_sets.size() != 1 || wl.pod_sets[0].count != 1) continue;
    const Resources& r = wl.pod_sets[0].requests;
    if (!ClusterState::IsShare(r) || r[kGpuMemory] > 0 || r[kGpuMilli] >= kMilliPerGpu) continue;
    items.push_back(fgd::ShareItem{items.size(), static_cast<int32_t>(r[kGpuMilli]), 0});
    of_item.push_back(w);
  }
  if (items.size() < 2) return {};
  for (const fgd::ShareBin& bin : fgd::PackShares(items, fgd::SharePacking::kMinimumBinSlack)) {
    if (bin.members.empty() || bin.members.front() != 0) continue;  // members are ascending
    if (bin.members.size() < 2) return {};
    std::vector<WorkloadId> out;
    for (size_t m : bin.members) out.push_back(of_item[m]);
    return out;
  }
  return {};
}

NodeChoice PlanPlacement::FindNode(WorkloadId id, int ps, const Combo& combo) {
  Observe();
  const Workload& w = s_.model.workloads[static_cast<size_t>(id)];
  const Resources& req = w.pod_sets[ps].requests;
  const fgd::PodRequest pod = RequestOf(req);
  const bool plain_share = ClusterState::IsShare(req) && req[kGpuMemory] == 0 &&
                           req[kGpuMilli] < kMilliPerGpu && w.pod_sets.size() == 1 &&
                           w.pod_sets[0].count == 1;

  // A member of a bin placed earlier goes where its bin is, if it still fits there.
  if (auto it = hints_.find(id); it != hints_.end()) {
    const Hint h = it->second;
    hints_.erase(it);
    if (plain_share && s_.cluster->Fits(h.node, req) &&
        e_.placer.NodeEligible(id, ps, combo, h.node) &&
        kMilliPerGpu - s_.cluster->gpu_used_milli(h.node)[h.gpu] >= req[kGpuMilli]) {
      return {h.node, fgd::GpuSet{1} << h.gpu};
    }
  }
  if (plain_share) {
    const std::vector<WorkloadId> bin = PendingBin(id, pod);
    if (!bin.empty()) {
      fgd::PodRequest total{0, 0, 1, 0, 0};
      for (WorkloadId m : bin) {
        const fgd::PodRequest r =
            RequestOf(s_.model.workloads[static_cast<size_t>(m)].pod_sets[0].requests);
        total.cpu_milli += r.cpu_milli;
        total.mem_mib += r.mem_mib;
        total.gpu_milli += r.gpu_milli;
      }
      const Best b = Choose(id, ps, combo, total);
      if (b.node >= 0 && b.gpus != 0) {
        const int gpu = __builtin_ctz(b.gpus);
        for (WorkloadId m : bin)
          if (m != id) hints_[m] = Hint{b.node, gpu};
        return {b.node, b.gpus};
      }
    }
  }
  const Best b = Choose(id, ps, combo, pod);
  return {b.node, b.gpus};
}

}  // namespace tessera
