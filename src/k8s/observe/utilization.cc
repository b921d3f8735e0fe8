#include "k8s/observe/utilization.h"

#include <algorithm>
#include <unordered_map>

namespace tessera::k8s {

std::vector<std::string> UtilizationTracker::Update(const std::vector<GpuReading>& readings,
                                                    const std::vector<HeldGpus>& running,
                                                    double now) {
  // Where each of Tessera's pods is, and which pod holds each GPU it bound.
  struct PodRef {
    size_t workload;
    const HeldGpus::Pod* pod;
  };
  std::unordered_map<std::string, PodRef> by_pod;  // ns/pod
  std::map<std::pair<std::string, int32_t>, size_t> by_gpu;
  for (size_t w = 0; w < running.size(); ++w) {
    for (const HeldGpus::Pod& p : running[w].pods) {
      by_pod[running[w].ns + "/" + p.name] = {w, &p};
      for (int32_t i : p.gpu_indices) by_gpu[{p.node, i}] = w;
    }
  }
  std::map<std::pair<std::string, int32_t>, GpuUsage> gpus;
  std::vector<double> sum(running.size(), 0);
  std::vector<int32_t> count(running.size(), 0);
  int64_t unjoined = 0;
  for (const GpuReading& r : readings) {
    std::optional<size_t> w;
    std::string node;
    if (!r.pod.empty() && !r.ns.empty()) {
      auto it = by_pod.find(r.ns + "/" + r.pod);
      if (it == by_pod.end()) continue;  // a pod of another scheduler: not ours to report
      w = it->second.workload;
      node = it->second.pod->node;
    } else if (!r.hostname.empty() && r.gpu >= 0) {
      node = r.hostname;
      if (auto it = by_gpu.find({node, r.gpu}); it != by_gpu.end()) w = it->second;
    } else {
      ++unjoined;
      continue;
    }
    const std::optional<double> u = r.utilization();
    if (r.gpu >= 0) {
      GpuUsage& g = gpus[{node, r.gpu}];
      g.node = node;
      g.index = r.gpu;
      if (w) g.workload = running[*w].key;
      // A GPU seen twice (time-sliced between pods): its busiest view.
      if (u) g.utilization = std::max(g.utilization.value_or(0), *u);
      if (r.fb_used_mib) g.fb_used_mib = r.fb_used_mib;
      if (r.fb_free_mib) g.fb_free_mib = r.fb_free_mib;
    }
    if (w && u) {
      sum[*w] += *u;
      ++count[*w];
    }
  }
  std::vector<std::string> became;
  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, WorkloadUsage> next;
  for (size_t w = 0; w < running.size(); ++w) {
    const HeldGpus& h = running[w];
    WorkloadUsage u;
    if (auto old = workloads_.find(h.key); old != workloads_.end()) u = old->second;
    u.key = h.key;
    u.ns = h.ns;
    u.name = h.name;
    u.cluster_queue = h.cluster_queue;
    u.gpus = h.gpus;
    u.measured_gpus = count[w];
    if (count[w] == 0) {
      u.utilization.reset();  // no reading now: the evidence so far stands
    } else {
      u.utilization = sum[w] / count[w];
      if (*u.utilization >= options_.threshold) {
        u.low_since = -1;
        u.underused = false;
      } else if (u.low_since < 0) {
        u.low_since = now;
      }
    }
    if (!u.underused && u.low_since >= 0 && now - u.low_since >= options_.for_s) {
      u.underused = true;
      became.push_back(h.key);
    }
    next[h.key] = std::move(u);
  }
  workloads_ = std::move(next);
  gpus_ = std::move(gpus);
  unjoined_ = unjoined;
  return became;
}

std::map<std::string, WorkloadUsage> UtilizationTracker::workloads() const {
  std::lock_guard<std::mutex> l(mu_);
  return workloads_;
}

std::map<std::pair<std::string, int32_t>, GpuUsage> UtilizationTracker::gpus() const {
  std::lock_guard<std::mutex> l(mu_);
  return gpus_;
}

std::optional<double> UtilizationTracker::gpu_utilization(const std::string& node,
                                                          int32_t index) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = gpus_.find({node, index});
  return it == gpus_.end() ? std::nullopt : it->second.utilization;
}

bool UtilizationTracker::gpu_underused(const std::string& node, int32_t index) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = gpus_.find({node, index});
  if (it == gpus_.end() || it->second.workload.empty()) return false;
  auto w = workloads_.find(it->second.workload);
  return w != workloads_.end() && w->second.underused;
}

int64_t UtilizationTracker::unjoined() const {
  std::lock_guard<std::mutex> l(mu_);
  return unjoined_;
}

}  // namespace tessera::k8s
