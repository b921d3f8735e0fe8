#include "fgd/experiment.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <numeric>
#include <tuple>

#include "absl/status/status.h"
#include "fgd/plan.h"
#include "fmt/format.h"

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

absl::StatusOr<PolicySpec> ParsePolicySpec(std::string_view name) {
  if (std::optional<Policy> p = ParsePolicy(name)) return PolicySpec(*p);
  PolicySpec spec;
  spec.name = std::string(name);
  // "TesseraPlan", "TesseraPlan-bfd-nogangs-h90".
  if (name == "TesseraPlan" || name.starts_with("TesseraPlan-")) {
    spec.base = Policy::kTesseraFgd;
    spec.plan = true;
    std::string_view rest = name.substr(std::string_view("TesseraPlan").size());
    while (!rest.empty()) {
      rest.remove_prefix(1);  // '-'
      const size_t dash = rest.find('-');
      const std::string_view part = rest.substr(0, dash);
      rest = dash == std::string_view::npos ? std::string_view() : rest.substr(dash);
      int percent = 0;
      if (part == "bfd") {
        spec.plan_options.packing = SharePacking::kBestFitDecreasing;
      } else if (part == "noshares") {
        spec.plan_options.share_plan = false;
      } else if (part == "nogangs") {
        spec.plan_options.gang_reservations = false;
      } else if (part == "nobalance") {
        spec.plan_options.balance = false;
      } else if (part == "nomodels") {
        spec.plan_options.model_pressure = false;
      } else if (part.size() > 1 && part[0] == 'h' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 1 && percent <= 1000) {
        spec.plan_options.horizon = percent / 100.0;
      } else if (part.size() > 1 && part[0] == 'w' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 2) {
        spec.plan_options.window = static_cast<size_t>(percent);
      } else if (part.size() > 1 && part[0] == 'p' &&
                 std::from_chars(part.data() + 1, part.data() + part.size(), percent).ptr ==
                     part.data() + part.size() &&
                 percent >= 1 && percent <= 1000) {
        spec.plan_options.pressure_threshold = percent / 100.0;
      } else {
        return absl::InvalidArgumentError(fmt::format(
            "policy '{}': unknown part '{}' (TesseraPlan-[bfd|noshares|nogangs|nobalance|"
            "nomodels|hNN|pNN|wN]...)",
            name, part));
      }
    }
    return spec;
  }
  if (name == "TesseraLookahead") {
    spec.base = Policy::kTesseraFgd;
    spec.candidates = kLookaheadCandidates;
    spec.window = kLookaheadWindow;
    return spec;
  }
  // "TesseraLookahead-8x32", "FgdLookahead-4x16f".
  std::string_view rest;
  if (name.starts_with("TesseraLookahead-")) {
    spec.base = Policy::kTesseraFgd;
    rest = name.substr(17);
  } else if (name.starts_with("FgdLookahead-")) {
    spec.base = Policy::kFgd;
    rest = name.substr(13);
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "unknown policy '{}' (known: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, "
        "TesseraFGD, TesseraPlan, TesseraLookahead, TesseraLookahead-KxW, FgdLookahead-KxW)",
        name));
  }
  if (rest.ends_with('f')) {
    spec.frag_tiebreak = true;
    rest.remove_suffix(1);
  }
  const size_t x = rest.find('x');
  int k = 0, w = 0;
  const auto parse = [](std::string_view s, int& v) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && ptr == s.data() + s.size() && v >= 1 && v <= 4096;
  };
  if (x == std::string_view::npos || !parse(rest.substr(0, x), k) ||
      !parse(rest.substr(x + 1), w)) {
    return absl::InvalidArgumentError(fmt::format(
        "policy '{}': expected K x W after the dash, e.g. TesseraLookahead-8x32 (1..4096 each)",
        name));
  }
  spec.candidates = k;
  spec.window = w;
  return spec;
}

namespace {

// The cluster while one run fills it: node states, their cached fragmentation and FGD scores,
// with an undo log so that a lookahead can try a placement and the pods after it and take them
// back.
//
// With reservations (TesseraPlan), nodes_ is what the policy sees: what is free minus what the
// plan holds for pods still to come; actual_ is what is really free (nodes_ <= actual_ in every
// field). Reservations do not combine with the undo log.
class Fill {
 public:
  // `last_version` numbers the node states; Fills that copy state from each other share it.
  Fill(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
       std::vector<int32_t> rank, uint32_t* last_version)
      : workload_(workload),
        measure_(*workload.measure),
        scorer_(policy.base, &measure_),
        used_first_(policy.base == Policy::kTesseraFgd),
        rank_(std::move(rank)),
        last_version_(last_version),
        nodes_(cluster.nodes),
        tags_(nodes_.size(), 0),
        frag_(nodes_.size()),
        touched_(nodes_.size(), 0),
        version_(nodes_.size(), 0),
        cpu_free_(nodes_.size()),
        mem_free_(nodes_.size()),
        max_gpu_free_(nodes_.size()),
        idle_(nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      frag_[i] = measure_.Evaluate(nodes_[i]);
      Sync(i);
    }
    if (policy.base == Policy::kFgd || policy.base == Policy::kTesseraFgd) InitMemo();
  }

  struct Choice {
    int32_t node = -1;  // -1: the pod fits nowhere (or the policy's Score failed)
    GpuSet gpus = 0;
  };
  struct Undo {
    int32_t node;
    NodeGpuState state;
    AffinityTags tags;
    double frag;
    uint8_t touched;
    uint32_t version;
  };

  double FragSum() const { return std::accumulate(frag_.begin(), frag_.end(), 0.0); }
  double Frag(size_t i) const { return frag_[i]; }

  // The memo's shape of `pod` (FGD family), added when new: for requests that are not a
  // workload pod (TesseraPlan's bins).
  uint32_t Intern(const PodRequest& pod) {
    const auto key = std::make_tuple(EffectiveCpuMilli(pod.cpu_milli), pod.num_gpu, pod.gpu_milli);
    const auto [it, inserted] = shape_ids_.emplace(key, static_cast<uint32_t>(num_shapes_));
    if (inserted) {
      ++num_shapes_;
      memo_version_.resize(nodes_.size() * num_shapes_, kNever);
      memo_score_.resize(nodes_.size() * num_shapes_, 0);
      memo_gpus_.resize(nodes_.size() * num_shapes_, 0);
    }
    return it->second;
  }
  uint32_t ShapeOf(int32_t pod_index) const { return shape_of_[static_cast<size_t>(pod_index)]; }

  // The scores of the feasible nodes for workload pod `pod_index`, into feasible_ / scores_ /
  // gpus_. Returns false when a Score failed (BestFit): the pod is not placed.
  bool ScoreFeasible(int32_t pod_index, const PodRequest& pod) {
    return ScoreShape(memo_ ? shape_of_[static_cast<size_t>(pod_index)] : 0, pod);
  }
  // The same for a request of memo shape `shape` (ignored without the memo).
  bool ScoreShape(uint32_t shape, const PodRequest& pod) {
    CollectFeasible(pod);
    scores_.resize(feasible_.size());
    gpus_.resize(feasible_.size());
    bool error = false;
    for (size_t k = 0; k < feasible_.size(); ++k) {
      const size_t i = static_cast<size_t>(feasible_[k]);
      if (memo_) {
        const size_t slot = shape * nodes_.size() + i;
        if (memo_version_[slot] != version_[i]) {
          const Scored s = scorer_.Score(NodeView{&nodes_[i], tags_[i], frag_[i]}, pod);
          memo_version_[slot] = version_[i];
          memo_score_[slot] = s.score;
          memo_gpus_[slot] = s.gpus;
        }
        scores_[k] = memo_score_[slot];
        gpus_[k] = memo_gpus_[slot];
        continue;
      }
      const Scored s = scorer_.Score(NodeView{&nodes_[i], tags_[i], frag_[i]}, pod);
      error |= s.error;
      scores_[k] = s.score;
      gpus_[k] = s.gpus;
    }
    scorer_.Normalize(scores_);
    ComputeGains(nodes_, pod);
    return !error;
  }

  // True when feasible_[a] goes before feasible_[b] in the policy's order: the higher score;
  // among equals (TesseraFGD) a node in use before an untouched one; then selectHost of the
  // simulator's kube-scheduler fork (mental2008/kubernetes v1.20.5-minor): the smallest node
  // name, and node names carry a per-run random prefix (rand.Perm), so the lowest random rank.
  // TesseraPlan adds two criteria: first, for a GPU pod, a node whose GPU model is under
  // pressure goes last; among equal scores, the larger balance gain goes first.
  bool Before(size_t a, size_t b) const {
    const size_t na = static_cast<size_t>(feasible_[a]);
    const size_t nb = static_cast<size_t>(feasible_[b]);
    if (pressure_on_ && pod_uses_gpu_) {
      const bool pa = UnderPressure(nodes_[na].gpu_model);
      const bool pb = UnderPressure(nodes_[nb].gpu_model);
      if (pa != pb) return pb;
    }
    if (scores_[a] != scores_[b]) return scores_[a] > scores_[b];
    if (balance_ && gains_[a] != gains_[b]) return gains_[a] > gains_[b];
    if (used_first_ && touched_[na] != touched_[nb]) return touched_[na] > touched_[nb];
    return rank_[na] < rank_[nb];
  }

  // The policy's own choice (no lookahead). Random draws from `rng`.
  Choice Greedy(int32_t pod_index, const PodRequest& pod, Rng& rng) {
    if (scorer_.policy() == Policy::kRandom) {
      CollectFeasible(pod);
      if (feasible_.empty()) return Choice{};
      return Choice{feasible_[static_cast<size_t>(rng.Below(feasible_.size()))], 0};
    }
    if (!ScoreFeasible(pod_index, pod) || feasible_.empty()) return Choice{};
    return Pick();
  }
  // The policy's choice for a request of memo shape `shape` (FGD family).
  Choice GreedyShape(uint32_t shape, const PodRequest& pod) {
    if (!ScoreShape(shape, pod) || feasible_.empty()) return Choice{};
    return Pick();
  }

  // The best `count` choices in the policy's order, and the best node in use and the best
  // untouched node when those are not among them. REQUIRES: an FGD-family policy.
  std::vector<Choice> Candidates(int32_t pod_index, const PodRequest& pod, int count) {
    std::vector<Choice> out;
    if (!ScoreFeasible(pod_index, pod) || feasible_.empty()) return out;
    std::vector<size_t> idx(feasible_.size());
    std::iota(idx.begin(), idx.end(), 0);
    const size_t n = std::min(idx.size(), static_cast<size_t>(count));
    const auto before = [&](size_t a, size_t b) { return Before(a, b); };
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), before);
    bool have_used = false, have_untouched = false;
    for (size_t j = 0; j < n; ++j) {
      out.push_back(Choice{feasible_[idx[j]], gpus_[idx[j]]});
      (touched_[static_cast<size_t>(feasible_[idx[j]])] ? have_used : have_untouched) = true;
    }
    for (const bool want_used : {true, false}) {
      if (want_used ? have_used : have_untouched) continue;
      size_t best = SIZE_MAX;
      for (size_t j = n; j < idx.size(); ++j) {
        if ((touched_[static_cast<size_t>(feasible_[idx[j]])] != 0) != want_used) continue;
        if (best == SIZE_MAX || Before(idx[j], best)) best = idx[j];
      }
      if (best != SIZE_MAX) out.push_back(Choice{feasible_[best], gpus_[best]});
    }
    return out;
  }

  // Places `pod` on the choice's node; with `log`, records what to take back.
  void Apply(const Choice& c, const PodRequest& pod, Rng& rng, std::vector<Undo>* log) {
    const size_t i = static_cast<size_t>(c.node);
    if (log != nullptr) {
      log->push_back(Undo{c.node, nodes_[i], tags_[i], frag_[i], touched_[i], version_[i]});
    }
    GpuSet gpus = c.gpus;
    if (gpus == 0) gpus = scorer_.PickGpus(nodes_[i], pod, rng);
    Place(nodes_[i], pod, gpus);
    if (reserving()) {
      Place(actual_[i], pod, gpus);
      actual_frag_[i] = measure_.Evaluate(actual_[i]);
    }
    tags_[i] |= AffinityTagOf(pod);
    touched_[i] = 1;
    Changed(i);
  }

  // The node states of `other` (a Fill of the same run); memoized scores stay with each Fill.
  void CopyStateFrom(const Fill& other) {
    nodes_ = other.nodes_;
    tags_ = other.tags_;
    frag_ = other.frag_;
    touched_ = other.touched_;
    version_ = other.version_;
    cpu_free_ = other.cpu_free_;
    mem_free_ = other.mem_free_;
    max_gpu_free_ = other.max_gpu_free_;
    idle_ = other.idle_;
  }

  void Rollback(std::vector<Undo>& log) {
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      const size_t i = static_cast<size_t>(it->node);
      nodes_[i] = it->state;
      tags_[i] = it->tags;
      frag_[i] = it->frag;
      touched_[i] = it->touched;
      version_[i] = it->version;
      Sync(i);
    }
    log.clear();
  }

  // ---- TesseraPlan ----

  // Among equal scores, the larger BalanceGain at these ratios first.
  void SetBalance(const BalanceRatios& ratios) {
    balance_ = true;
    ratios_ = ratios;
  }
  // For GPU pods, nodes whose GPU model is marked under pressure go last (SetPressure).
  void EnablePressure() {
    pressure_on_ = true;
    pressure_.assign(kMaxGpuModels, 0);
    model_idle_.assign(kMaxGpuModels, 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const int32_t m = nodes_[i].gpu_model;
      if (m >= 0 && m < kMaxGpuModels) model_idle_[static_cast<size_t>(m)] += idle_[i];
    }
  }
  void SetPressure(int32_t model, bool under) {
    if (model >= 0 && model < kMaxGpuModels) pressure_[static_cast<size_t>(model)] = under;
  }
  // The idle GPU milli of `model`'s nodes as the policy sees them. REQUIRES: EnablePressure.
  double ModelIdle(int32_t model) const {
    return model >= 0 && model < kMaxGpuModels ? model_idle_[static_cast<size_t>(model)] : 0;
  }

  // From here on, nodes_ may hold less than what is free (reservations).
  void EnableReservations() {
    actual_ = nodes_;
    actual_frag_ = frag_;
  }
  bool reserving() const { return !actual_.empty(); }
  // The GPUs the pod takes on the choice's node: the scorer's, or PickGpus'.
  GpuSet GpusOf(const Choice& c, const PodRequest& pod, Rng& rng) const {
    return c.gpus != 0 ? c.gpus : scorer_.PickGpus(nodes_[static_cast<size_t>(c.node)], pod, rng);
  }
  // The fragmentation of the cluster as it is (for the experiment's curves).
  double ActualFragSum() const {
    return reserving() ? std::accumulate(actual_frag_.begin(), actual_frag_.end(), 0.0) : FragSum();
  }

  // Holds `pod` on `gpus` of the node for later: the policy sees it as placed.
  // REQUIRES: Fits(nodes_[node], pod) on those GPUs.
  void Reserve(int32_t node, GpuSet gpus, const PodRequest& pod) {
    const size_t i = static_cast<size_t>(node);
    Place(nodes_[i], pod, gpus);
    touched_[i] = 1;
    Changed(i);
  }
  // Places `pod` on `gpus` of the node out of what is really free (a reservation made for it, or
  // what is left): false, and nothing changes, when it does not fit there.
  bool Claim(int32_t node, GpuSet gpus, const PodRequest& pod) {
    const size_t i = static_cast<size_t>(node);
    NodeGpuState& a = actual_[i];
    if (a.cpu_free_milli < pod.cpu_milli || a.mem_free_mib < pod.mem_mib) return false;
    for (int g = 0; g < a.num_gpus; ++g) {
      if (((gpus >> g) & 1u) && a.gpu_free_milli[static_cast<size_t>(g)] < pod.gpu_milli) {
        return false;
      }
    }
    Place(a, pod, gpus);
    // What the policy sees cannot exceed what is free.
    NodeGpuState& v = nodes_[i];
    v.cpu_free_milli = std::min(v.cpu_free_milli, a.cpu_free_milli);
    v.mem_free_mib = std::min(v.mem_free_mib, a.mem_free_mib);
    for (int g = 0; g < v.num_gpus; ++g) {
      const size_t k = static_cast<size_t>(g);
      v.gpu_free_milli[k] = std::min(v.gpu_free_milli[k], a.gpu_free_milli[k]);
    }
    tags_[i] |= AffinityTagOf(pod);
    touched_[i] = 1;
    actual_frag_[i] = measure_.Evaluate(a);
    Changed(i);
    return true;
  }
  // Gives back what was reserved for `pod` on `gpus` of the node (as far as it is still free).
  void Release(int32_t node, GpuSet gpus, const PodRequest& pod) {
    const size_t i = static_cast<size_t>(node);
    const NodeGpuState& a = actual_[i];
    NodeGpuState& v = nodes_[i];
    v.cpu_free_milli = std::min(v.cpu_free_milli + pod.cpu_milli, a.cpu_free_milli);
    v.mem_free_mib = std::min(v.mem_free_mib + pod.mem_mib, a.mem_free_mib);
    for (int g = 0; g < v.num_gpus; ++g) {
      const size_t k = static_cast<size_t>(g);
      if ((gpus >> g) & 1u) {
        v.gpu_free_milli[k] = std::min(v.gpu_free_milli[k] + pod.gpu_milli, a.gpu_free_milli[k]);
      }
    }
    Changed(i);
  }

  // The policy's choice among the nodes where `pod` fits what is really free, reservations
  // included: for a pod that fits nowhere else. No memo (rare).
  Choice GreedyActual(const PodRequest& pod) {
    pod_uses_gpu_ = pod.num_gpu > 0;
    feasible_.clear();
    for (size_t i = 0; i < actual_.size(); ++i) {
      if (Fits(actual_[i], pod)) feasible_.push_back(static_cast<int32_t>(i));
    }
    if (feasible_.empty()) return Choice{};
    scores_.resize(feasible_.size());
    gpus_.resize(feasible_.size());
    for (size_t k = 0; k < feasible_.size(); ++k) {
      const size_t i = static_cast<size_t>(feasible_[k]);
      const Scored s = scorer_.Score(NodeView{&actual_[i], tags_[i], actual_frag_[i]}, pod);
      scores_[k] = s.score;
      gpus_[k] = s.gpus;
    }
    ComputeGains(actual_, pod);
    return Pick();
  }
  // Places `pod` out of what is really free; the reservations it runs into shrink (the policy
  // sees the pod take what is unreserved first).
  void ApplyActual(const Choice& c, const PodRequest& pod, Rng& rng) {
    const size_t i = static_cast<size_t>(c.node);
    GpuSet gpus = c.gpus;
    if (gpus == 0) gpus = scorer_.PickGpus(actual_[i], pod, rng);
    NodeGpuState& a = actual_[i];
    NodeGpuState& v = nodes_[i];
    Place(a, pod, gpus);
    v.cpu_free_milli =
        std::min(std::max<int64_t>(0, v.cpu_free_milli - pod.cpu_milli), a.cpu_free_milli);
    v.mem_free_mib = std::min(std::max<int64_t>(0, v.mem_free_mib - pod.mem_mib), a.mem_free_mib);
    for (int g = 0; g < v.num_gpus; ++g) {
      const size_t k = static_cast<size_t>(g);
      const int32_t take = ((gpus >> g) & 1u) ? pod.gpu_milli : 0;
      v.gpu_free_milli[k] = std::min(std::max(0, v.gpu_free_milli[k] - take), a.gpu_free_milli[k]);
    }
    tags_[i] |= AffinityTagOf(pod);
    touched_[i] = 1;
    actual_frag_[i] = measure_.Evaluate(a);
    Changed(i);
  }

 private:
  // The first feasible node in the policy's order.
  Choice Pick() const {
    size_t pick = 0;
    for (size_t k = 1; k < feasible_.size(); ++k) {
      if (Before(k, pick)) pick = k;
    }
    return Choice{feasible_[pick], gpus_[pick]};
  }
  void ComputeGains(const std::vector<NodeGpuState>& states, const PodRequest& pod) {
    if (!balance_) return;
    gains_.resize(feasible_.size());
    for (size_t k = 0; k < feasible_.size(); ++k) {
      gains_[k] = BalanceGain(states[static_cast<size_t>(feasible_[k])], pod, ratios_);
    }
  }
  bool UnderPressure(int32_t model) const {
    return model >= 0 && model < kMaxGpuModels && pressure_[static_cast<size_t>(model)] != 0;
  }
  // After nodes_[i] changed. Every state a node passes through gets a version of its own, so
  // that memoized scores of a state the lookahead took back stay valid when the node returns to
  // it.
  void Changed(size_t i) {
    if (pressure_on_) {
      // model_idle_ follows nodes_ through Sync's copy of the idle milli.
      const int32_t m = nodes_[i].gpu_model;
      if (m >= 0 && m < kMaxGpuModels) {
        model_idle_[static_cast<size_t>(m)] +=
            static_cast<double>(nodes_[i].IdleGpuMilli() - idle_[i]);
      }
    }
    version_[i] = ++*last_version_;
    frag_[i] = measure_.Evaluate(nodes_[i]);
    Sync(i);
  }
  // feasible_ = the nodes where the pod fits, in index order. A pass over compact arrays of
  // free CPU, memory and largest free GPU first: the lookahead's rollouts call this thousands of
  // times per pod on a nearly full cluster, where most nodes fail there.
  void CollectFeasible(const PodRequest& pod) {
    pod_uses_gpu_ = pod.num_gpu > 0;
    feasible_.clear();
    const int32_t milli = std::max(pod.gpu_milli, 0);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (cpu_free_[i] >= pod.cpu_milli && mem_free_[i] >= pod.mem_mib &&
          max_gpu_free_[i] >= milli && Fits(nodes_[i], pod)) {
        feasible_.push_back(static_cast<int32_t>(i));
      }
    }
  }
  void Sync(size_t i) {
    const NodeGpuState& n = nodes_[i];
    cpu_free_[i] = n.cpu_free_milli;
    mem_free_[i] = n.mem_free_mib;
    int32_t m = 0;
    for (int g = 0; g < n.num_gpus; ++g) m = std::max(m, n.gpu_free_milli[static_cast<size_t>(g)]);
    max_gpu_free_[i] = m;
    idle_[i] = n.IdleGpuMilli();
  }

  // FGD's score of a node depends only on the node's state and the pod's (effective CPU, GPU
  // count, per-GPU milli): scores are kept per (node, shape) until the node changes, so a pod
  // only rescores the nodes placed on since its shape was last scored.
  void InitMemo() {
    memo_ = true;
    shape_of_.reserve(workload_.pods.size());
    for (const PodShape& p : workload_.pods) {
      const auto key = std::make_tuple(EffectiveCpuMilli(p.cpu_milli), p.num_gpu, p.gpu_milli);
      const auto [it, inserted] = shape_ids_.emplace(key, static_cast<uint32_t>(shape_ids_.size()));
      shape_of_.push_back(it->second);
    }
    num_shapes_ = shape_ids_.size();
    memo_version_.assign(nodes_.size() * num_shapes_, kNever);
    memo_score_.assign(nodes_.size() * num_shapes_, 0);
    memo_gpus_.assign(nodes_.size() * num_shapes_, 0);
  }

  static constexpr uint32_t kNever = UINT32_MAX;
  const Workload& workload_;
  const FragmentationMeasure& measure_;
  const Scorer scorer_;
  const bool used_first_;
  const std::vector<int32_t> rank_;
  uint32_t* const last_version_;

  std::vector<NodeGpuState> nodes_;
  std::vector<AffinityTags> tags_;
  std::vector<double> frag_;
  std::vector<uint8_t> touched_;
  std::vector<uint32_t> version_;
  std::vector<int64_t> cpu_free_;  // copies of nodes_' fields for CollectFeasible
  std::vector<int64_t> mem_free_;
  std::vector<int32_t> max_gpu_free_;
  std::vector<int64_t> idle_;  // IdleGpuMilli of nodes_, as of the last Sync

  // TesseraPlan: what is really free and its fragmentation (empty without reservations), the
  // balance, the model pressure.
  std::vector<NodeGpuState> actual_;
  std::vector<double> actual_frag_;
  bool balance_ = false;
  BalanceRatios ratios_;
  std::vector<int64_t> gains_;  // per feasible_ entry
  bool pressure_on_ = false;
  bool pod_uses_gpu_ = false;       // the request being ranked asks for GPUs
  std::vector<uint8_t> pressure_;   // per model id
  std::vector<double> model_idle_;  // per model id

  bool memo_ = false;
  size_t num_shapes_ = 0;
  std::map<std::tuple<int64_t, int32_t, int32_t>, uint32_t> shape_ids_;
  std::vector<uint32_t> shape_of_;      // per workload pod
  std::vector<uint32_t> memo_version_;  // per (shape, node); kNever when never scored
  std::vector<int64_t> memo_score_;
  std::vector<GpuSet> memo_gpus_;

  std::vector<int32_t> feasible_;
  std::vector<int64_t> scores_;
  std::vector<GpuSet> gpus_;
};

// TesseraLookahead's choice for the pod at order[t] (docs/fgd.md): each candidate is placed, the
// next `window` pods of the queue follow by the base policy's greedy choice, and the GPU milli of
// the pods that fit nowhere are counted; then everything is taken back. The fewest dropped milli
// wins; equal drops keep the policy's order (or, with frag_tiebreak, the lower fragmentation at
// the end of the window first). A rollout that drops nothing ends the search.
Fill::Choice LookaheadChoice(Fill& fill, const Workload& workload,
                             const std::vector<int32_t>& order, size_t t, const PodRequest& pod,
                             const PolicySpec& policy, Rng& rng, std::vector<Fill::Undo>& log,
                             int64_t& best_dropped) {
  const std::vector<Fill::Choice> candidates = fill.Candidates(order[t], pod, policy.candidates);
  best_dropped = INT64_MAX;
  if (candidates.size() <= 1) return candidates.empty() ? Fill::Choice{} : candidates[0];
  const size_t end = std::min(order.size(), t + 1 + static_cast<size_t>(policy.window));
  Fill::Choice best;
  double best_frag = 0;
  for (const Fill::Choice& c : candidates) {
    fill.Apply(c, pod, rng, &log);
    int64_t dropped = 0;
    for (size_t u = t + 1; u < end && dropped <= best_dropped; ++u) {
      const int32_t next_index = order[u];
      const PodRequest next = PodRequest::Of(workload.pods[static_cast<size_t>(next_index)]);
      const Fill::Choice g = fill.Greedy(next_index, next, rng);
      if (g.node < 0) {
        dropped += next.TotalGpuMilli();
      } else {
        fill.Apply(g, next, rng, &log);
      }
    }
    double frag = 0;
    if (policy.frag_tiebreak && dropped <= best_dropped) {
      // Only the nodes the rollout changed differ between candidates; a node's first log entry
      // holds its fragmentation before the candidate.
      for (size_t e = 0; e < log.size(); ++e) {
        const auto first = std::find_if(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(e),
                                        [&](const Fill::Undo& u) { return u.node == log[e].node; });
        if (first != log.begin() + static_cast<std::ptrdiff_t>(e)) continue;
        frag += fill.Frag(static_cast<size_t>(log[e].node)) - log[e].frag;
      }
    }
    fill.Rollback(log);
    if (dropped < best_dropped ||
        (policy.frag_tiebreak && dropped == best_dropped && frag < best_frag)) {
      best = c;
      best_dropped = dropped;
      best_frag = frag;
    }
    if (best_dropped == 0 && !policy.frag_tiebreak) break;
  }
  return best;
}

// One run's placements: each position's node (-1: the pod fit nowhere) and the cluster's
// fragmentation after it.
struct Replay {
  std::vector<int32_t> node;
  std::vector<double> frag;
};

// The paper's policies, TesseraFGD and the lookahead.
Replay ReplayGreedy(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                    const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  Replay out;
  out.node.assign(order.size(), -1);
  out.frag.reserve(order.size());
  uint32_t last_version = 0;
  Fill fill(cluster, workload, policy, rank, &last_version);
  // Lookahead only for the FGD family, whose choices draw nothing from the generator.
  const bool lookahead =
      policy.lookahead() && (policy.base == Policy::kFgd || policy.base == Policy::kTesseraFgd);
  // The shadow: the cluster as the base policy alone leaves it after the pods order[t..
  // shadow_end), run ahead of the real one. While it placed every GPU pod of the window, the
  // lookahead's first candidate (the base policy's choice) drops nothing in its rollout and
  // wins; the shadow's choice is taken without rollouts. The result is the same as with the
  // rollouts; the cost far from a full cluster is two greedy steps per pod instead of W.
  std::unique_ptr<Fill> shadow;
  std::deque<Fill::Choice> shadow_choices;  // for order[t..shadow_end)
  size_t shadow_end = 0;
  bool shadow_valid = false;
  if (lookahead && !policy.frag_tiebreak) {
    shadow = std::make_unique<Fill>(cluster, workload, policy, rank, &last_version);
    shadow_valid = true;
  }

  std::vector<Fill::Undo> log;
  for (size_t t = 0; t < order.size(); ++t) {
    const int32_t pod_index = order[t];
    const PodRequest pod = PodRequest::Of(workload.pods[static_cast<size_t>(pod_index)]);
    Fill::Choice c;
    if (!lookahead) {
      c = fill.Greedy(pod_index, pod, rng);
    } else {
      const size_t need = std::min(order.size(), t + 1 + static_cast<size_t>(policy.window));
      while (shadow_valid && shadow_end < need) {
        const int32_t u = order[shadow_end];
        const PodRequest next = PodRequest::Of(workload.pods[static_cast<size_t>(u)]);
        const Fill::Choice g = shadow->Greedy(u, next, rng);
        if (g.node >= 0) shadow->Apply(g, next, rng, nullptr);
        if (g.node < 0 && next.TotalGpuMilli() > 0) shadow_valid = false;
        shadow_choices.push_back(g);
        ++shadow_end;
      }
      if (shadow_valid) {
        c = shadow_choices.front();
        shadow_choices.pop_front();
      } else {
        int64_t dropped = 0;
        c = LookaheadChoice(fill, workload, order, t, pod, policy, rng, log, dropped);
        if (shadow && dropped == 0) {
          // The chosen placement's rollout was clean: the shadow restarts from it.
          if (c.node >= 0) fill.Apply(c, pod, rng, &log);
          shadow->CopyStateFrom(fill);
          fill.Rollback(log);
          shadow_choices.clear();
          shadow_end = t + 1;
          shadow_valid = true;
        }
      }
    }
    if (c.node >= 0) {
      fill.Apply(c, pod, rng, nullptr);
      out.node[t] = c.node;
    }
    out.frag.push_back(fill.FragSum());
  }
  return out;
}

// TesseraPlan (docs/fgd.md). The plan covers the pods that arrive before PlanOptions::horizon
// of the cluster's GPU milli. Sharing pods of the horizon are packed into GPU bins
// (PackShares); when a bin's first pod arrives, the policy places the whole bin (one request:
// the members' milli, CPU and memory summed) and the node holds the rest for the members to
// come, which then go where their bin is. Multi-GPU pods of the horizon hold their GPUs from the
// start. Every other pod, and a pod whose reservation was taken, goes where the policy sees room
// (what is free minus what is held); a pod that fits only into held room still goes there (it
// takes room from a later pod), and a pod that fits nowhere is dropped as in every policy.
Replay ReplayPlan(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                  const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  const PlanOptions& options = policy.plan_options;
  Replay out;
  out.node.assign(order.size(), -1);
  out.frag.reserve(order.size());
  const auto request = [&](size_t t) {
    return PodRequest::Of(workload.pods[static_cast<size_t>(order[t])]);
  };

  size_t horizon = 0;
  {
    const double limit =
        options.horizon * static_cast<double>(cluster.total_gpus * int64_t{kMilliPerGpu});
    int64_t arrived = 0;
    while (horizon < order.size() && static_cast<double>(arrived) < limit) {
      arrived += request(horizon).TotalGpuMilli();
      ++horizon;
    }
  }

  uint32_t last_version = 0;
  Fill fill(cluster, workload, PolicySpec(policy.base), rank, &last_version);
  fill.EnableReservations();
  if (options.balance) fill.SetBalance(ClusterRatios(cluster.nodes));

  std::vector<const PodShape*> queue(horizon);
  for (size_t t = 0; t < horizon; ++t) queue[t] = &workload.pods[static_cast<size_t>(order[t])];
  std::vector<int64_t> gpus_per_model(kMaxGpuModels, 0);
  for (const NodeGpuState& n : cluster.nodes) {
    if (n.gpu_model >= 0 && n.gpu_model < kMaxGpuModels) {
      gpus_per_model[static_cast<size_t>(n.gpu_model)] += n.num_gpus;
    }
  }
  const ModelPressure pressure(queue, gpus_per_model);
  const bool use_pressure = options.model_pressure && pressure.Worthwhile();
  if (use_pressure) fill.EnablePressure();
  const auto update_pressure = [&](size_t t) {
    if (!use_pressure) return;
    for (const int32_t m : pressure.models()) {
      fill.SetPressure(m,
                       pressure.UnderPressure(t, m, fill.ModelIdle(m), options.pressure_threshold));
    }
  };

  struct Hold {
    int32_t node = -1;
    GpuSet gpus = 0;
  };
  // The plan is made for the pods in [from, to) of the horizon that no earlier plan covers:
  // their sharing pods are packed into bins, their multi-GPU pods reserve their GPUs.
  std::vector<ShareBin> bins;
  std::vector<int32_t> bin_of(order.size(), -1);
  std::vector<Hold> bin_hold;
  std::vector<uint8_t> bin_broken;
  std::vector<Hold> gang(order.size());
  std::vector<uint8_t> planned(order.size(), 0);
  const auto plan = [&](size_t from, size_t to) {
    to = std::min(to, horizon);
    if (options.share_plan) {
      std::vector<ShareItem> items;
      for (size_t t = from; t < to; ++t) {
        const PodRequest p = request(t);
        if (!planned[t] && p.IsShare() && p.gpu_milli > 0) {
          items.push_back(ShareItem{t, p.gpu_milli, p.models});
        }
      }
      for (ShareBin& bin : PackShares(items, options.packing)) {
        for (const size_t t : bin.members) bin_of[t] = static_cast<int32_t>(bins.size());
        bins.push_back(std::move(bin));
      }
      bin_hold.resize(bins.size());
      bin_broken.resize(bins.size(), 0);
    }
    if (options.gang_reservations) {
      std::vector<size_t> multi;
      for (size_t t = from; t < to; ++t) {
        if (!planned[t] && request(t).num_gpu >= 2) multi.push_back(t);
      }
      // The largest first (GPUs, then CPU, then memory); equal: the earlier.
      std::stable_sort(multi.begin(), multi.end(), [&](size_t a, size_t b) {
        const PodRequest x = request(a);
        const PodRequest y = request(b);
        return std::make_tuple(x.num_gpu, x.cpu_milli, x.mem_mib) >
               std::make_tuple(y.num_gpu, y.cpu_milli, y.mem_mib);
      });
      for (const size_t t : multi) {
        const PodRequest p = request(t);
        const Fill::Choice c = fill.GreedyShape(fill.ShapeOf(order[t]), p);
        if (c.node < 0) continue;
        const GpuSet gpus = fill.GpusOf(c, p, rng);
        fill.Reserve(c.node, gpus, p);
        gang[t] = Hold{c.node, gpus};
      }
    }
    for (size_t t = from; t < to; ++t) planned[t] = 1;
  };
  // The whole horizon at once, or a window of the next `window` pods, made again every half
  // window.
  const size_t window = options.window > 0 ? options.window : horizon;
  const size_t step = std::max<size_t>(1, window / 2);

  for (size_t t = 0; t < order.size(); ++t) {
    const PodRequest pod = request(t);
    update_pressure(t);
    if (t < horizon && t % step == 0) plan(t, t + window);
    int32_t node = -1;
    const int32_t b = bin_of[t];
    if (gang[t].node >= 0) {
      if (fill.Claim(gang[t].node, gang[t].gpus, pod)) {
        node = gang[t].node;
      } else {
        fill.Release(gang[t].node, gang[t].gpus, pod);
      }
    } else if (b >= 0 && !bin_broken[static_cast<size_t>(b)]) {
      Hold& hold = bin_hold[static_cast<size_t>(b)];
      if (hold.node < 0) {
        // The bin's first pod: place the whole bin, hold the rest.
        const ShareBin& bin = bins[static_cast<size_t>(b)];
        PodRequest total{0, 0, 1, 0, bin.models};
        for (const size_t m : bin.members) {
          const PodRequest p = request(m);
          total.cpu_milli += p.cpu_milli;
          total.mem_mib += p.mem_mib;
          total.gpu_milli += p.gpu_milli;
        }
        const Fill::Choice c = fill.GreedyShape(fill.Intern(total), total);
        if (c.node >= 0) {
          const GpuSet gpus = fill.GpusOf(c, total, rng);
          fill.Reserve(c.node, gpus, total);
          fill.Claim(c.node, gpus, pod);  // within what was just reserved
          hold = Hold{c.node, gpus};
          node = c.node;
        } else {
          bin_broken[static_cast<size_t>(b)] = 1;  // its pods go one by one
        }
      } else if (fill.Claim(hold.node, hold.gpus, pod)) {
        node = hold.node;
      } else {
        fill.Release(hold.node, hold.gpus, pod);
      }
    }
    if (node < 0) {
      Fill::Choice c = fill.Greedy(order[t], pod, rng);
      if (c.node >= 0) {
        fill.Apply(c, pod, rng, nullptr);
        node = c.node;
      } else if ((c = fill.GreedyActual(pod)).node >= 0) {
        fill.ApplyActual(c, pod, rng);
        node = c.node;
      }
    }
    out.node[t] = node;
    out.frag.push_back(fill.ActualFragSum());
  }
  return out;
}

Replay ReplayOrder(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
                   const std::vector<int32_t>& order, const std::vector<int32_t>& rank, Rng& rng) {
  if (policy.plan && (policy.base == Policy::kFgd || policy.base == Policy::kTesseraFgd)) {
    return ReplayPlan(cluster, workload, policy, order, rank, rng);
  }
  return ReplayGreedy(cluster, workload, policy, order, rank, rng);
}

}  // namespace

RunResult RunFgdExperiment(const Cluster& cluster, const Workload& workload,
                           const PolicySpec& policy, uint64_t seed,
                           const ExperimentOptions& options) {
  RunResult out;
  out.workload = workload.name;
  out.policy = policy.base;
  out.policy_name = policy.Name();
  out.seed = seed;
  out.total_gpus = cluster.total_gpus;

  Rng rng(seed);
  const std::vector<int32_t> order = PodOrder(workload, cluster, options.tune_ratio, rng);

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
  const Replay replay = ReplayOrder(cluster, workload, policy, order, rank, rng);

  std::vector<Event> events;
  events.reserve(order.size());
  int64_t arrived = 0;
  int64_t used = 0;
  for (size_t t = 0; t < order.size(); ++t) {
    const int64_t milli =
        PodRequest::Of(workload.pods[static_cast<size_t>(order[t])]).TotalGpuMilli();
    arrived += milli;
    ++out.pods_arrived;
    if (replay.node[t] < 0) {
      ++out.pods_failed;
    } else {
      used += milli;
      ++out.pods_placed;
    }
    events.push_back(Event{arrived, used, replay.frag[t]});
  }
  Discretize(events, cluster.total_gpus, out);
  return out;
}

std::vector<int32_t> PlaceQueue(const Cluster& cluster, const Workload& workload,
                                const PolicySpec& policy, const std::vector<int32_t>& order,
                                const std::vector<int32_t>& rank, uint64_t seed) {
  Rng rng(seed);
  return ReplayOrder(cluster, workload, policy, order, rank, rng).node;
}

}  // namespace tessera::fgd
