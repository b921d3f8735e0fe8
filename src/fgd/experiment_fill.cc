// Fill (fgd/experiment_internal.h): the cluster while one experiment run fills it.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>

#include "fgd/experiment_internal.h"
#include "fgd/placement.h"

namespace tessera::fgd::experiment_internal {

Fill::Fill(const Cluster& cluster, const Workload& workload, const PolicySpec& policy,
           std::vector<int32_t> rank, uint32_t* last_version)
    : workload_(workload),
      measure_(*workload.measure),
      scorer_(policy.base, &measure_),
      used_first_(UsedFirst(policy.base)),
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

double Fill::FragSum() const { return std::accumulate(frag_.begin(), frag_.end(), 0.0); }

uint32_t Fill::Intern(const PodRequest& pod) {
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

bool Fill::ScoreShape(uint32_t shape, const PodRequest& pod) {
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

// The policy's order (PlacesBefore, fgd/placement.h): the higher score; among equals
// (TesseraFGD) a node in use before an untouched one; then selectHost of the simulator's
// kube-scheduler fork (mental2008/kubernetes v1.20.5-minor): the smallest node name, and node
// names carry a per-run random prefix (rand.Perm), so the lowest random rank. TesseraPlan adds
// two criteria: first, for a GPU pod, a node whose GPU model is under pressure goes last; among
// equal scores, the larger balance gain goes first.
bool Fill::Before(size_t a, size_t b) const {
  const size_t na = static_cast<size_t>(feasible_[a]);
  const size_t nb = static_cast<size_t>(feasible_[b]);
  if (pressure_on_ && pod_uses_gpu_) {
    const bool pa = UnderPressure(nodes_[na].gpu_model);
    const bool pb = UnderPressure(nodes_[nb].gpu_model);
    if (pa != pb) return pb;
  }
  const NodeOrderKey ka{scores_[a], balance_ ? gains_[a] : 0, touched_[na] != 0, rank_[na]};
  const NodeOrderKey kb{scores_[b], balance_ ? gains_[b] : 0, touched_[nb] != 0, rank_[nb]};
  return PlacesBefore(ka, kb, used_first_);
}

Fill::Choice Fill::Greedy(int32_t pod_index, const PodRequest& pod, Rng& rng) {
  if (scorer_.policy() == Policy::kRandom) {
    CollectFeasible(pod);
    if (feasible_.empty()) return Choice{};
    return Choice{feasible_[RandomNode(feasible_.size(), rng)], 0};
  }
  if (!ScoreFeasible(pod_index, pod) || feasible_.empty()) return Choice{};
  return Pick();
}

Fill::Choice Fill::GreedyShape(uint32_t shape, const PodRequest& pod) {
  if (!ScoreShape(shape, pod) || feasible_.empty()) return Choice{};
  return Pick();
}

std::vector<Fill::Choice> Fill::Candidates(int32_t pod_index, const PodRequest& pod, int count) {
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

void Fill::Apply(const Choice& c, const PodRequest& pod, Rng& rng, std::vector<Undo>* log) {
  const size_t i = static_cast<size_t>(c.node);
  if (log != nullptr) {
    log->push_back(Undo{c.node, nodes_[i], tags_[i], frag_[i], touched_[i], version_[i]});
  }
  const GpuSet gpus = ChooseGpus(scorer_, nodes_[i], pod, c.gpus, rng);
  Place(nodes_[i], pod, gpus);
  if (reserving()) {
    Place(actual_[i], pod, gpus);
    actual_frag_[i] = measure_.Evaluate(actual_[i]);
  }
  tags_[i] |= AffinityTagOf(pod);
  touched_[i] = 1;
  Changed(i);
}

void Fill::CopyStateFrom(const Fill& other) {
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

void Fill::Rollback(std::vector<Undo>& log) {
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

void Fill::EnablePressure() {
  pressure_on_ = true;
  pressure_.assign(kMaxGpuModels, 0);
  model_idle_.assign(kMaxGpuModels, 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const int32_t m = nodes_[i].gpu_model;
    if (m >= 0 && m < kMaxGpuModels) model_idle_[static_cast<size_t>(m)] += idle_[i];
  }
}

GpuSet Fill::GpusOf(const Choice& c, const PodRequest& pod, Rng& rng) const {
  return ChooseGpus(scorer_, nodes_[static_cast<size_t>(c.node)], pod, c.gpus, rng);
}

double Fill::ActualFragSum() const {
  return reserving() ? std::accumulate(actual_frag_.begin(), actual_frag_.end(), 0.0) : FragSum();
}

void Fill::Reserve(int32_t node, GpuSet gpus, const PodRequest& pod) {
  const size_t i = static_cast<size_t>(node);
  Place(nodes_[i], pod, gpus);
  touched_[i] = 1;
  Changed(i);
}

bool Fill::Claim(int32_t node, GpuSet gpus, const PodRequest& pod) {
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

void Fill::Release(int32_t node, GpuSet gpus, const PodRequest& pod) {
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

Fill::Choice Fill::GreedyActual(const PodRequest& pod) {
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

void Fill::ApplyActual(const Choice& c, const PodRequest& pod, Rng& rng) {
  const size_t i = static_cast<size_t>(c.node);
  const GpuSet gpus = ChooseGpus(scorer_, actual_[i], pod, c.gpus, rng);
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

Fill::Choice Fill::Pick() const {
  size_t pick = 0;
  for (size_t k = 1; k < feasible_.size(); ++k) {
    if (Before(k, pick)) pick = k;
  }
  return Choice{feasible_[pick], gpus_[pick]};
}

void Fill::ComputeGains(const std::vector<NodeGpuState>& states, const PodRequest& pod) {
  if (!balance_) return;
  gains_.resize(feasible_.size());
  for (size_t k = 0; k < feasible_.size(); ++k) {
    gains_[k] = BalanceGain(states[static_cast<size_t>(feasible_[k])], pod, ratios_);
  }
}

// Every state a node passes through gets a version of its own, so that memoized scores of a
// state the lookahead took back stay valid when the node returns to it.
void Fill::Changed(size_t i) {
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

// A pass over compact arrays of free CPU, memory and largest free GPU first: the lookahead's
// rollouts call this thousands of times per pod on a nearly full cluster, where most nodes fail
// there.
void Fill::CollectFeasible(const PodRequest& pod) {
  pod_uses_gpu_ = pod.num_gpu > 0;
  feasible_.clear();
  const int32_t milli = std::max(pod.gpu_milli, 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (cpu_free_[i] >= pod.cpu_milli && mem_free_[i] >= pod.mem_mib && max_gpu_free_[i] >= milli &&
        Fits(nodes_[i], pod)) {
      feasible_.push_back(static_cast<int32_t>(i));
    }
  }
}

void Fill::Sync(size_t i) {
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
void Fill::InitMemo() {
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

}  // namespace tessera::fgd::experiment_internal
