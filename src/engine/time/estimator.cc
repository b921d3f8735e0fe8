#include "engine/time/estimator.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace tessera {

std::string_view RuntimeEstimator::NamePrefix(std::string_view name) {
  auto is_sep = [](char c) { return c == '-' || c == '.' || c == '_'; };
  std::string_view out = name;
  // A generated suffix: the last segment is 5 lower-case letters or digits with a digit in it
  // (Kubernetes' generateName), or all digits (a counter).
  const size_t cut = out.find_last_of("-._");
  if (cut != std::string_view::npos && cut + 1 < out.size()) {
    std::string_view last = out.substr(cut + 1);
    bool digits = true, alnum = true, any_digit = false;
    for (char c : last) {
      const bool d = std::isdigit(static_cast<unsigned char>(c)) != 0;
      digits = digits && d;
      any_digit = any_digit || d;
      alnum = alnum && (d || std::islower(static_cast<unsigned char>(c)) != 0);
    }
    if (digits || (alnum && any_digit && last.size() == 5)) out = out.substr(0, cut);
  }
  while (!out.empty() &&
         (std::isdigit(static_cast<unsigned char>(out.back())) != 0 || is_sep(out.back())))
    out.remove_suffix(1);
  return out.empty() ? name : out;
}

int32_t RuntimeEstimator::Intern(std::string key) {
  auto [it, inserted] =
      key_ids_.try_emplace(std::move(key), static_cast<int32_t>(histories_.size()));
  if (inserted) histories_.emplace_back();
  return it->second;
}

void RuntimeEstimator::Add(const Workload& w) {
  if (w.queue_name.empty()) {
    keys_.emplace_back(-1, -1);
    return;
  }
  std::string queue = w.ns + "/" + w.queue_name;
  const int32_t by_prefix = Intern(queue + "/" + std::string(NamePrefix(w.name)));
  keys_.emplace_back(by_prefix, Intern(std::move(queue)));
}

void RuntimeEstimator::Push(History& h, double runtime) {
  const auto cap = static_cast<size_t>(std::max(1, config_.history));
  // The sorted copy is kept by one removal and one insertion (a sort per finish was most of
  // what learning cost a long replay).
  std::vector<double>& sorted = h.sorted;
  if (h.runtimes.size() < cap) {
    h.runtimes.push_back(runtime);
  } else {
    double& oldest = h.runtimes[h.next];
    sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), oldest));
    oldest = runtime;
    h.next = (h.next + 1) % cap;
  }
  sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), runtime), runtime);
  ++h.seen;
  // Nearest rank: the smallest runtime with at least `quantile` of the runs at or below it.
  const double rank = std::ceil(config_.quantile * static_cast<double>(sorted.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size())));
  h.quantile = sorted[i - 1];
}

void RuntimeEstimator::Observe(WorkloadId id, double runtime) {
  if (id < 0 || static_cast<size_t>(id) >= keys_.size() || !std::isfinite(runtime) || runtime < 0)
    return;
  const auto [by_prefix, by_queue] = keys_[id];
  if (by_prefix < 0) return;
  ++observed_;
  Push(histories_[by_prefix], runtime);
  if (by_queue != by_prefix) Push(histories_[by_queue], runtime);
}

std::optional<double> RuntimeEstimator::Estimate(WorkloadId id, const Workload& w) const {
  if (w.runtime_estimate) return w.runtime_estimate;
  std::optional<double> learned;
  if (id >= 0 && static_cast<size_t>(id) < keys_.size()) {
    for (int32_t k : {keys_[id].first, keys_[id].second}) {
      if (k < 0 || histories_[k].seen < config_.min_samples) continue;
      learned = histories_[k].quantile;
      break;
    }
  }
  if (w.active_deadline)
    return learned ? std::min(*learned, *w.active_deadline) : w.active_deadline;
  if (!learned) learned = config_.default_estimate;
  return learned;
}

}  // namespace tessera
