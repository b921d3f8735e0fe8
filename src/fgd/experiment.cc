#include "fgd/experiment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace tessera::fgd {
namespace {

// Python's round(x, 2) for the values at hand (ties to even on the scaled value).
double Round2(double x) { return std::nearbyint(x * 100) / 100; }

// The pod order of one run: the simulator sorts pods by name, shuffles them, then tunes the total
// GPU request to tune_ratio x the cluster's GPUs (tuneDownPods / tuneUpPods, including
// tuneUpPods' check of the per-GPU milli rather than the pod's total before it stops).
std::vector<int32_t> PodOrder(const Workload& w, const Cluster& cluster, double tune_ratio,
                              Rng& rng) {
  std::vector<int32_t> by_name(w.pods.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(), [&](int32_t a, int32_t b) {
    return w.names[static_cast<size_t>(a)] < w.names[static_cast<size_t>(b)];
  });
  std::vector<int32_t> order = by_name;
  rng.Shuffle(order);
  if (tune_ratio <= 0 || order.empty()) return order;

  int64_t total = 0;
  for (const PodShape& p : w.pods) total += int64_t{p.num_gpu} * p.gpu_milli;
  const double target = tune_ratio * static_cast<double>(cluster.total_gpus * kMilliPerGpu);
  if (static_cast<double>(total) > target) {
    while (static_cast<double>(total) > target && !order.empty()) {
      const size_t idx = static_cast<size_t>(rng.Below(order.size()));
      const PodShape& p = w.pods[static_cast<size_t>(order[idx])];
      total -= int64_t{p.num_gpu} * p.gpu_milli;
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(idx));
    }
  } else if (static_cast<double>(total) < target) {
    while (true) {
      const int32_t idx = by_name[static_cast<size_t>(rng.Below(by_name.size()))];
      const PodShape& p = w.pods[static_cast<size_t>(idx)];
      if (static_cast<double>(total + p.gpu_milli) > target) break;
      total += int64_t{p.num_gpu} * p.gpu_milli;
      order.push_back(idx);
      // A workload of CPU-only pods would never reach the target.
      if (order.size() > 64 * w.pods.size() + 1024) break;
    }
  }
  return order;
}

struct Event {
  int64_t arrived_milli;
  int64_t used_milli;
  double frag_milli;
};

void Discretize(const std::vector<Event>& events, int64_t total_gpus, RunResult& out) {
  // Buckets one past each end so that the neighbour fallback of 0 and 130 has both sides.
  constexpr int kBuckets = kLoadColumns + 2;
  std::array<double, kBuckets> alloc_sum{};
  std::array<double, kBuckets> frag_sum{};
  std::array<int64_t, kBuckets> count{};
  const double total = static_cast<double>(total_gpus);
  for (const Event& e : events) {
    const double arrive = std::nearbyint(static_cast<double>(e.arrived_milli) / total / 10);
    if (arrive < 0 || arrive > kMaxLoadPercent + 1) continue;
    const size_t b = static_cast<size_t>(arrive) + 1;
    alloc_sum[b] += Round2(static_cast<double>(e.used_milli) / total / 10);
    frag_sum[b] += e.frag_milli;
    ++count[b];
  }
  for (int x = 0; x <= kMaxLoadPercent; ++x) {
    const size_t b = static_cast<size_t>(x) + 1;
    double a = alloc_sum[b], f = frag_sum[b];
    int64_t n = count[b];
    if (n == 0) {
      a = alloc_sum[b - 1] + alloc_sum[b + 1];
      f = frag_sum[b - 1] + frag_sum[b + 1];
      n = count[b - 1] + count[b + 1];
    }
    if (n == 0) continue;
    out.alloc_percent[static_cast<size_t>(x)] = Round2(a / static_cast<double>(n));
    out.frag_percent[static_cast<size_t>(x)] =
        Round2(100 * (f / static_cast<double>(n)) / 1000 / total);
  }
}

}  // namespace

Cluster MakeCluster(const std::vector<TraceNode>& nodes) {
  Cluster c;
  c.nodes.reserve(nodes.size());
  for (const TraceNode& n : nodes) {
    NodeGpuState s;
    s.cpu_free_milli = n.cpu_milli;
    s.mem_free_mib = n.memory_mib;
    s.gpu_model = n.gpu_model;
    s.num_gpus = n.num_gpus;
    for (int i = 0; i < n.num_gpus; ++i) s.gpu_free_milli[static_cast<size_t>(i)] = kMilliPerGpu;
    c.nodes.push_back(s);
    c.names.push_back(n.name);
    c.total_gpus += n.num_gpus;
  }
  return c;
}

Workload MakeWorkload(std::string name, std::vector<TracePod> pods) {
  Workload w;
  w.name = std::move(name);
  w.names.reserve(pods.size());
  w.pods.reserve(pods.size());
  for (TracePod& p : pods) {
    w.names.push_back(std::move(p.name));
    w.pods.push_back(std::move(p.shape));
  }
  w.typical = BuildTypicalPods(w.pods);
  w.measure = std::make_unique<FragmentationMeasure>(w.typical);
  return w;
}

RunResult RunFgdExperiment(const Cluster& cluster, const Workload& workload, Policy policy,
                           uint64_t seed, const ExperimentOptions& options) {
  RunResult out;
  out.workload = workload.name;
  out.policy = policy;
  out.seed = seed;
  out.total_gpus = cluster.total_gpus;

  Rng rng(seed);
  const std::vector<int32_t> order = PodOrder(workload, cluster, options.tune_ratio, rng);
  const FragmentationMeasure& measure = *workload.measure;
  const Scorer scorer(policy, &measure);

  // The simulator renames node i (in name order) to "%04d-name" with rand.Perm, after tuning.
  std::vector<int32_t> rank(cluster.nodes.size());
  {
    std::vector<size_t> by_name(cluster.nodes.size());
    std::iota(by_name.begin(), by_name.end(), 0);
    std::stable_sort(by_name.begin(), by_name.end(),
                     [&](size_t a, size_t b) { return cluster.names[a] < cluster.names[b]; });
    std::vector<int32_t> perm(cluster.nodes.size());
    std::iota(perm.begin(), perm.end(), 0);
    rng.Shuffle(perm);
    for (size_t k = 0; k < by_name.size(); ++k) rank[by_name[k]] = perm[k];
  }
  std::vector<NodeGpuState> nodes = cluster.nodes;
  std::vector<AffinityTags> tags(nodes.size(), 0);
  std::vector<double> frag(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) frag[i] = measure.Evaluate(nodes[i]);

  const bool used_first = policy == Policy::kTesseraFgd;
  std::vector<uint8_t> touched(nodes.size(), 0);
  std::vector<Event> events;
  events.reserve(order.size());
  // FGD's score of a node depends only on the node's state and the pod's (effective CPU, GPU
  // count, per-GPU milli): scores are kept per (node, shape) until the node changes, so a pod
  // only rescores the nodes placed on since its shape was last scored.
  struct Memo {
    bool enabled = false;
    size_t num_shapes = 0;
    std::vector<uint32_t> shape_of;  // per workload pod
    std::vector<uint32_t> version;   // per (node, shape); kNever when never scored
    std::vector<int64_t> score;
    std::vector<GpuSet> gpus;
  } memo;
  constexpr uint32_t kNever = UINT32_MAX;
  std::vector<uint32_t> node_version(nodes.size(), 0);
  if (policy == Policy::kFgd || policy == Policy::kTesseraFgd) {
    memo.enabled = true;
    std::map<std::tuple<int64_t, int32_t, int32_t>, uint32_t> ids;
    memo.shape_of.reserve(workload.pods.size());
    for (const PodShape& p : workload.pods) {
      const auto key = std::make_tuple(EffectiveCpuMilli(p.cpu_milli), p.num_gpu, p.gpu_milli);
      const auto [it, inserted] = ids.emplace(key, static_cast<uint32_t>(ids.size()));
      memo.shape_of.push_back(it->second);
    }
    memo.num_shapes = ids.size();
    memo.version.assign(nodes.size() * memo.num_shapes, kNever);
    memo.score.assign(nodes.size() * memo.num_shapes, 0);
    memo.gpus.assign(nodes.size() * memo.num_shapes, 0);
  }
  std::vector<int32_t> feasible;
  std::vector<int64_t> scores;
  std::vector<GpuSet> gpus;
  feasible.reserve(nodes.size());
  int64_t arrived = 0;
  int64_t used = 0;

  for (const int32_t pod_index : order) {
    const PodRequest pod = PodRequest::Of(workload.pods[static_cast<size_t>(pod_index)]);
    arrived += pod.TotalGpuMilli();
    ++out.pods_arrived;

    feasible.clear();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (Fits(nodes[i], pod)) feasible.push_back(static_cast<int32_t>(i));
    }
    int32_t chosen = -1;
    GpuSet chosen_gpus = 0;
    if (!feasible.empty()) {
      if (policy == Policy::kRandom) {
        chosen = feasible[static_cast<size_t>(rng.Below(feasible.size()))];
      } else {
        scores.resize(feasible.size());
        gpus.resize(feasible.size());
        bool error = false;
        const uint32_t shape = memo.enabled ? memo.shape_of[static_cast<size_t>(pod_index)] : 0;
        for (size_t k = 0; k < feasible.size(); ++k) {
          const size_t i = static_cast<size_t>(feasible[k]);
          if (memo.enabled) {
            const size_t slot = i * memo.num_shapes + shape;
            if (memo.version[slot] != node_version[i]) {
              const Scored s = scorer.Score(NodeView{&nodes[i], tags[i], frag[i]}, pod);
              memo.version[slot] = node_version[i];
              memo.score[slot] = s.score;
              memo.gpus[slot] = s.gpus;
            }
            scores[k] = memo.score[slot];
            gpus[k] = memo.gpus[slot];
            continue;
          }
          const Scored s = scorer.Score(NodeView{&nodes[i], tags[i], frag[i]}, pod);
          error |= s.error;
          scores[k] = s.score;
          gpus[k] = s.gpus;
        }
        scorer.Normalize(scores);
        if (!error) {
          // selectHost of the simulator's kube-scheduler fork (mental2008/kubernetes
          // v1.20.5-minor): the highest score; among equals the smallest node name, and node
          // names carry a per-run random prefix (rand.Perm), so ties go to the node of lowest
          // random rank.
          size_t pick = 0;
          for (size_t k = 1; k < feasible.size(); ++k) {
            const size_t nk = static_cast<size_t>(feasible[k]);
            const size_t np = static_cast<size_t>(feasible[pick]);
            if (scores[k] != scores[pick]) {
              if (scores[k] > scores[pick]) pick = k;
              continue;
            }
            // TesseraFGD: among equal scores a node already in use before an untouched one.
            if (used_first && touched[nk] != touched[np]) {
              if (touched[nk]) pick = k;
              continue;
            }
            if (rank[nk] < rank[np]) {
              pick = k;
            }
          }
          chosen = feasible[pick];
          chosen_gpus = gpus[pick];
        }
      }
    }
    if (chosen < 0) {
      ++out.pods_failed;
    } else {
      NodeGpuState& node = nodes[static_cast<size_t>(chosen)];
      if (chosen_gpus == 0) chosen_gpus = scorer.PickGpus(node, pod, rng);
      Place(node, pod, chosen_gpus);
      tags[static_cast<size_t>(chosen)] |= AffinityTagOf(pod);
      touched[static_cast<size_t>(chosen)] = 1;
      ++node_version[static_cast<size_t>(chosen)];
      frag[static_cast<size_t>(chosen)] = measure.Evaluate(node);
      used += pod.TotalGpuMilli();
      ++out.pods_placed;
    }
    const double frag_sum = std::accumulate(frag.begin(), frag.end(), 0.0);
    events.push_back(Event{arrived, used, frag_sum});
  }
  Discretize(events, cluster.total_gpus, out);
  return out;
}

}  // namespace tessera::fgd
