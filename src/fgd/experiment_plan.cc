// ReplayPlan (fgd/experiment_internal.h): a run of TesseraPlan (docs/fgd.md). The plan covers
// the pods that arrive before PlanOptions::horizon of the cluster's GPU milli. Sharing pods of the
// horizon are packed into GPU bins (PackShares); when a bin's first pod arrives, the policy places
// the whole bin (one request: the members' milli, CPU and memory summed) and the node holds the
// rest for the members to come, which then go where their bin is. Multi-GPU pods of the horizon
// hold their GPUs from the start. Every other pod, and a pod whose reservation was taken, goes
// where the policy sees room (what is free minus what is held); a pod that fits only into held
// room still goes there (it takes room from a later pod), and a pod that fits nowhere is dropped
// as in every policy.
#include <algorithm>
#include <cstdint>
#include <tuple>

#include "fgd/experiment_internal.h"

namespace tessera::fgd::experiment_internal {
namespace {

class PlanRun {
 public:
  PlanRun(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
          const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng)
      : options_(policy.plan_options),
        workload_(workload),
        order_(order),
        rng_(rng),
        horizon_(Horizon(cluster)),
        fill_(cluster, workload, PolicySpec(policy.base), rank, &last_version_),
        pressure_(HorizonQueue(), GpusPerModel(cluster)),
        bin_of_(order.size(), -1),
        gang_(order.size()),
        planned_(order.size(), 0) {
    fill_.EnableReservations();
    if (options_.balance) fill_.SetBalance(ClusterRatios(cluster.nodes));
    use_pressure_ = options_.model_pressure && pressure_.Worthwhile();
    if (use_pressure_) fill_.EnablePressure();
  }

  Replay Run() {
    Replay out;
    out.node.assign(order_.size(), -1);
    out.frag.reserve(order_.size());
    // The whole horizon at once, or a window of the next `window` pods, made again every half
    // window.
    const size_t window = options_.window > 0 ? options_.window : horizon_;
    const size_t step = std::max<size_t>(1, window / 2);
    for (size_t t = 0; t < order_.size(); ++t) {
      const PodRequest pod = Request(t);
      UpdatePressure(t);
      if (t < horizon_ && t % step == 0) Plan(t, t + window);
      int32_t node = PlaceHeld(t, pod);
      if (node < 0) node = PlaceFree(t, pod);
      out.node[t] = node;
      out.frag.push_back(fill_.ActualFragSum());
    }
    return out;
  }

 private:
  struct Hold {
    int32_t node = -1;
    GpuSet gpus = 0;
  };

  PodRequest Request(size_t t) const {
    return PodRequest::Of(workload_.pods[static_cast<size_t>(order_[t])]);
  }
  // The number of pods, from the first, that arrive before the horizon's share of the cluster's
  // GPU milli has arrived.
  size_t Horizon(const Cluster& cluster) const {
    size_t horizon = 0;
    const double limit =
        options_.horizon * static_cast<double>(cluster.total_gpus * int64_t{kMilliPerGpu});
    int64_t arrived = 0;
    while (horizon < order_.size() && static_cast<double>(arrived) < limit) {
      arrived += Request(horizon).TotalGpuMilli();
      ++horizon;
    }
    return horizon;
  }
  std::vector<const PodShape*> HorizonQueue() const {
    std::vector<const PodShape*> queue(horizon_);
    for (size_t t = 0; t < horizon_; ++t) {
      queue[t] = &workload_.pods[static_cast<size_t>(order_[t])];
    }
    return queue;
  }
  static std::vector<int64_t> GpusPerModel(const Cluster& cluster) {
    std::vector<int64_t> gpus_per_model(kMaxGpuModels, 0);
    for (const NodeGpuState& n : cluster.nodes) {
      if (n.gpu_model >= 0 && n.gpu_model < kMaxGpuModels) {
        gpus_per_model[static_cast<size_t>(n.gpu_model)] += n.num_gpus;
      }
    }
    return gpus_per_model;
  }
  void UpdatePressure(size_t t) {
    if (!use_pressure_) return;
    for (const int32_t m : pressure_.models()) {
      fill_.SetPressure(
          m, pressure_.UnderPressure(t, m, fill_.ModelIdle(m), options_.pressure_threshold));
    }
  }

  // The plan for the pods in [from, to) of the horizon that no earlier plan covers: their sharing
  // pods are packed into bins, their multi-GPU pods reserve their GPUs.
  void Plan(size_t from, size_t to) {
    to = std::min(to, horizon_);
    if (options_.share_plan) PlanShares(from, to);
    if (options_.gang_reservations) PlanGangs(from, to);
    for (size_t t = from; t < to; ++t) planned_[t] = 1;
  }
  void PlanShares(size_t from, size_t to) {
    std::vector<ShareItem> items;
    for (size_t t = from; t < to; ++t) {
      const PodRequest p = Request(t);
      if (!planned_[t] && p.IsShare() && p.gpu_milli > 0) {
        items.push_back(ShareItem{t, p.gpu_milli, p.models});
      }
    }
    for (ShareBin& bin : PackShares(items, options_.packing)) {
      for (const size_t t : bin.members) bin_of_[t] = static_cast<int32_t>(bins_.size());
      bins_.push_back(std::move(bin));
    }
    bin_hold_.resize(bins_.size());
    bin_broken_.resize(bins_.size(), 0);
  }
  void PlanGangs(size_t from, size_t to) {
    std::vector<size_t> multi;
    for (size_t t = from; t < to; ++t) {
      if (!planned_[t] && Request(t).num_gpu >= 2) multi.push_back(t);
    }
    // The largest first (GPUs, then CPU, then memory); equal: the earlier.
    std::stable_sort(multi.begin(), multi.end(), [&](size_t a, size_t b) {
      const PodRequest x = Request(a);
      const PodRequest y = Request(b);
      return std::make_tuple(x.num_gpu, x.cpu_milli, x.mem_mib) >
             std::make_tuple(y.num_gpu, y.cpu_milli, y.mem_mib);
    });
    for (const size_t t : multi) {
      const PodRequest p = Request(t);
      const Fill::Choice c = fill_.GreedyShape(fill_.ShapeOf(order_[t]), p);
      if (c.node < 0) continue;
      const GpuSet gpus = fill_.GpusOf(c, p, rng_);
      fill_.Reserve(c.node, gpus, p);
      gang_[t] = Hold{c.node, gpus};
    }
  }

  // The pod at t where the plan holds room for it (its GPUs, or its bin's): the node, or -1 when
  // the plan has nothing for it or its room was taken (then the room is given back).
  int32_t PlaceHeld(size_t t, const PodRequest& pod) {
    const int32_t b = bin_of_[t];
    if (gang_[t].node >= 0) {
      if (fill_.Claim(gang_[t].node, gang_[t].gpus, pod)) return gang_[t].node;
      fill_.Release(gang_[t].node, gang_[t].gpus, pod);
      return -1;
    }
    if (b < 0 || bin_broken_[static_cast<size_t>(b)]) return -1;
    Hold& hold = bin_hold_[static_cast<size_t>(b)];
    if (hold.node < 0) return PlaceBin(static_cast<size_t>(b), pod);
    if (fill_.Claim(hold.node, hold.gpus, pod)) return hold.node;
    fill_.Release(hold.node, hold.gpus, pod);
    return -1;
  }
  // The bin's first pod: place the whole bin, hold the rest. When the bin fits nowhere, its pods
  // go one by one.
  int32_t PlaceBin(size_t b, const PodRequest& pod) {
    const ShareBin& bin = bins_[b];
    PodRequest total{0, 0, 1, 0, bin.models};
    for (const size_t m : bin.members) {
      const PodRequest p = Request(m);
      total.cpu_milli += p.cpu_milli;
      total.mem_mib += p.mem_mib;
      total.gpu_milli += p.gpu_milli;
    }
    const Fill::Choice c = fill_.GreedyShape(fill_.Intern(total), total);
    if (c.node < 0) {
      bin_broken_[b] = 1;
      return -1;
    }
    const GpuSet gpus = fill_.GpusOf(c, total, rng_);
    fill_.Reserve(c.node, gpus, total);
    fill_.Claim(c.node, gpus, pod);  // within what was just reserved
    bin_hold_[b] = Hold{c.node, gpus};
    return c.node;
  }
  // The pod at t where the policy sees room, else where it fits into held room; -1: dropped.
  int32_t PlaceFree(size_t t, const PodRequest& pod) {
    Fill::Choice c = fill_.Greedy(order_[t], pod, rng_);
    if (c.node >= 0) {
      fill_.Apply(c, pod, rng_, nullptr);
      return c.node;
    }
    if ((c = fill_.GreedyActual(pod)).node >= 0) {
      fill_.ApplyActual(c, pod, rng_);
      return c.node;
    }
    return -1;
  }

  const PlanOptions& options_;
  const Workload& workload_;
  const std::vector<int32_t>& order_;
  Rng& rng_;
  const size_t horizon_;
  uint32_t last_version_ = 0;
  Fill fill_;
  const ModelPressure pressure_;
  bool use_pressure_ = false;

  std::vector<ShareBin> bins_;
  std::vector<int32_t> bin_of_;  // per position: its bin, -1 for none
  std::vector<Hold> bin_hold_;   // per bin: where it was placed
  std::vector<uint8_t> bin_broken_;
  std::vector<Hold> gang_;        // per position: the GPUs a multi-GPU pod holds
  std::vector<uint8_t> planned_;  // per position: covered by a plan made already
};

}  // namespace

Replay ReplayPlan(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                  const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  return PlanRun(cluster, workload, policy, order, rank, rng).Run();
}

}  // namespace tessera::fgd::experiment_internal
