// Fluent builders for engine tests (Kueue's test style: MakeClusterQueue("cq").Cohort("c")).
#pragma once

#include <string>

#include "model/model.h"

namespace tessera::testing {

inline Resources Req(int64_t gpus, int64_t cpu_milli = 1000, int64_t mem = 1LL << 30) {
  Resources r;
  r[kGpu] = gpus;
  r[kCpu] = cpu_milli;
  r[kMemory] = mem;
  r[kPods] = 1;
  return r;
}

inline Node MakeNode(std::string name, int gpus, Labels labels = {}) {
  Node n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.allocatable[kGpu] = gpus;
  n.allocatable[kCpu] = 64000;
  n.allocatable[kMemory] = 512LL << 30;
  n.allocatable[kPods] = 110;
  return n;
}

class CQ {
 public:
  explicit CQ(std::string name) {
    cq_.name = std::move(name);
    cq_.namespace_selector.present = true;
    cq_.resource_groups.push_back({{kGpu}, {}});
  }
  CQ& Cohort(std::string c) {
    cq_.cohort = std::move(c);
    return *this;
  }
  // Adds a flavor with a GPU quota. `borrow`/`lend` < 0 means no limit.
  CQ& Gpus(std::string flavor, int64_t nominal, int64_t borrow = -1, int64_t lend = -1) {
    ResourceQuota q;
    q.resource = kGpu;
    q.nominal = nominal;
    if (borrow >= 0) q.borrowing_limit = borrow;
    if (lend >= 0) q.lending_limit = lend;
    cq_.resource_groups[0].flavors.push_back({std::move(flavor), {q}});
    return *this;
  }
  CQ& WithinQueue(WithinClusterQueuePolicy p) {
    cq_.preemption.within_cluster_queue = p;
    return *this;
  }
  CQ& Reclaim(ReclaimPolicy p) {
    cq_.preemption.reclaim_within_cohort = p;
    return *this;
  }
  CQ& Strict() {
    cq_.strategy = QueueingStrategy::kStrictFIFO;
    return *this;
  }
  CQ& Weight(double w) {
    cq_.fair_weight = w;
    return *this;
  }
  ClusterQueue Obj() const { return cq_; }

 private:
  ClusterQueue cq_;
};

class WL {
 public:
  explicit WL(std::string name) { w_.name = std::move(name); }
  WL& Queue(std::string q) {
    w_.queue_name = std::move(q);
    return *this;
  }
  WL& Pods(int count, int64_t gpus_per_pod) {
    PodSet ps;
    ps.name = "main";
    ps.count = count;
    ps.requests = Req(gpus_per_pod);
    w_.pod_sets.push_back(ps);
    return *this;
  }
  WL& Min(int m) {
    w_.min_count = m;
    return *this;
  }
  WL& Priority(std::string pc) {
    w_.priority_class = std::move(pc);
    return *this;
  }
  WL& Arrive(double t) {
    w_.arrival = t;
    return *this;
  }
  WL& Runtime(double t) {
    w_.runtime = t;
    return *this;
  }
  WL& Selector(std::string k, std::string v) {
    w_.pod_sets.back().node_selector[k] = v;
    return *this;
  }
  Workload Obj() const { return w_; }

 private:
  Workload w_;
};

// A model with one flavor "gpu" over every node, and LocalQueue default/<cq> for each CQ.
inline Model MakeModel(std::vector<Node> nodes, std::vector<ClusterQueue> cqs,
                       std::vector<std::string> flavors = {"gpu"}) {
  Model m;
  m.nodes = std::move(nodes);
  for (auto& f : flavors) {
    ResourceFlavor rf;
    rf.name = f;
    m.flavors.push_back(rf);
  }
  for (auto& cq : cqs) {
    m.local_queues.push_back({"default", cq.name, cq.name, ""});
    m.cluster_queues.push_back(std::move(cq));
  }
  m.priority_classes.push_back({"low", 10, false, false, "", false});
  m.priority_classes.push_back({"high", 100, false, false, "", false});
  m.priority_classes.push_back({"high-never", 100, false, true, "", false});
  return m;
}

}  // namespace tessera::testing
