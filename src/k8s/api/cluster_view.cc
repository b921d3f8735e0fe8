#include "k8s/api/cluster_view.h"

#include <algorithm>
#include <cmath>

#include "cost/ledger.h"
#include "cost/pricing.h"

namespace tessera::k8s {
namespace {

constexpr const char* kNone = "(none)";

// A quantity in base units: CPU in cores (the model keeps millicores), the rest as kept.
double BaseUnits(ResourceId r, int64_t v) {
  return r == kCpu ? static_cast<double>(v) / 1000 : static_cast<double>(v);
}

std::string PodName(const std::vector<std::vector<std::string>>& names, const PodPlacement& p) {
  if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= names.size()) return "";
  const auto& set = names[p.pod_set];
  if (p.index < 0 || static_cast<size_t>(p.index) >= set.size()) return "";
  return set[p.index];
}

// "ns/name" -> "name".
std::string ShortName(const std::string& key) {
  auto slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

ViewWorkload MakeWorkload(const ViewInput& in, const ViewInput::Tracked& t,
                          const cost::NodeFlavors& flavors) {
  const Scheduler& e = *in.engine;
  const Model& m = e.model();
  const WorkloadStatus& st = e.status(t.id);
  const Workload& w = m.workloads[t.id];
  ViewWorkload v;
  v.ns = w.ns;
  v.name = w.name;
  v.owner = t.owner;
  v.local_queue = w.queue_name;
  if (st.cluster_queue >= 0) v.cluster_queue = m.cluster_queues[st.cluster_queue].name;
  v.priority = e.priority(t.id);
  v.priority_class =
      w.workload_priority_class.empty() ? w.priority_class : w.workload_priority_class;
  const bool admitted = st.state == WorkloadState::kAdmitted;
  v.state = admitted ? "admitted" : "pending";
  if (!admitted) {
    v.reason = st.reason;
    v.reason_category = ReasonCategory(st.reason);
    v.would_fit_if = e.fit_hints(t.id);
  }
  auto wall = [&](double t) { return t < 0 ? -1 : in.wall_zero + t; };
  v.created = wall(st.created);
  v.admitted_at = admitted ? wall(st.admitted_at) : -1;
  v.expected_start = admitted ? -1 : wall(st.expected_start);
  v.wait_seconds = std::max(0.0, (admitted ? st.admitted_at : in.engine_now) - st.created);
  for (const PodSet& ps : w.pod_sets) v.gpus += ps.requests[kGpu] * ps.count;
  for (int32_t f : st.flavors) {
    if (f >= 0 && static_cast<size_t>(f) < m.flavors.size()) {
      v.flavor = m.flavors[f].name;
      break;
    }
  }
  // Its pods: placed ones where they are, then the rest.
  std::set<std::pair<int32_t, int32_t>> placed;
  for (const PodPlacement& p : st.pods) {
    ViewPod pod;
    pod.name = ShortName(PodName(t.pod_names, p));
    if (p.node >= 0 && static_cast<size_t>(p.node) < m.nodes.size()) {
      pod.node = m.nodes[p.node].name;
      if (v.flavor.empty()) v.flavor = flavors.of(p.node);
    }
    pod.gpus = p.gpus;
    placed.insert({p.pod_set, p.index});
    v.pods.push_back(std::move(pod));
  }
  for (size_t s = 0; s < t.pod_names.size(); ++s)
    for (size_t i = 0; i < t.pod_names[s].size(); ++i)
      if (!placed.count({static_cast<int32_t>(s), static_cast<int32_t>(i)}))
        v.pods.push_back({ShortName(t.pod_names[s][i]), "", {}});
  return v;
}

void AddQueues(const Scheduler& e, double wall_zero, const std::vector<ViewWorkload>& workloads,
               ClusterView& v) {
  const Model& m = e.model();
  std::map<std::string, int32_t> flavor_ids;
  for (size_t f = 0; f < m.flavors.size(); ++f)
    flavor_ids[m.flavors[f].name] = static_cast<int32_t>(f);
  for (size_t c = 0; c < m.cluster_queues.size(); ++c) {
    const ClusterQueue& cq = m.cluster_queues[c];
    const ClusterQueueStats st = e.cluster_queue_stats(static_cast<int32_t>(c));
    ViewQueue q;
    q.name = cq.name;
    q.cohort = cq.cohort;
    q.strategy = cq.strategy == QueueingStrategy::kStrictFIFO ? "StrictFIFO" : "BestEffortFIFO";
    q.pending_active = st.pending_active;
    q.pending_inadmissible = st.pending_inadmissible;
    if (std::isfinite(st.weighted_share)) q.weighted_share = st.weighted_share;
    if (st.first_reservation >= 0) {
      q.reservation_workload = m.workloads[st.first_reservation].Key();
      q.reservation_start =
          st.first_reservation_start < 0 ? -1 : wall_zero + st.first_reservation_start;
    }
    for (const ResourceGroup& rg : cq.resource_groups) {
      for (const FlavorQuotas& fq : rg.flavors) {
        auto f = flavor_ids.find(fq.flavor);
        Resources used;
        if (f != flavor_ids.end()) used = e.ClusterQueueUsage(static_cast<int32_t>(c), f->second);
        for (const ResourceQuota& rq : fq.resources) {
          ViewQuota vq;
          vq.flavor = fq.flavor;
          vq.resource = ResourceName(rq.resource);
          vq.nominal = BaseUnits(rq.resource, rq.nominal);
          if (rq.borrowing_limit) vq.borrowing_limit = BaseUnits(rq.resource, *rq.borrowing_limit);
          if (rq.lending_limit) vq.lending_limit = BaseUnits(rq.resource, *rq.lending_limit);
          vq.used = BaseUnits(rq.resource, used[rq.resource]);
          vq.borrowed = std::max(0.0, vq.used - vq.nominal);
          q.resources.push_back(std::move(vq));
        }
      }
    }
    v.queues.push_back(std::move(q));
  }
  std::map<std::string, ViewQueue*> by_name;
  for (ViewQueue& q : v.queues) by_name[q.name] = &q;
  for (const ViewWorkload& w : workloads) {
    auto it = by_name.find(w.cluster_queue);
    if (it == by_name.end()) continue;
    if (w.state == "admitted") ++it->second->admitted;
    if (w.state == "pending") ++it->second->pending_by_reason[w.reason_category];
  }
}

double Percentile95(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(i, 1, v.size()) - 1];
}

}  // namespace

const ViewWorkload* ClusterView::Find(const std::string& ns, const std::string& name) const {
  for (const ViewWorkload& w : workloads)
    if (w.ns == ns && w.name == name) return &w;
  return nullptr;
}

std::string ReasonCategory(const std::string& reason) {
  auto has = [&](const char* s) { return reason.find(s) != std::string::npos; };
  if (reason.empty()) return "other";
  if (has("waiting for a scheduling cycle")) return "not-tried-yet";
  if (has("requeued after preemption")) return "preempted";
  if (has("stopPolicy") || has("is stopped")) return "stopped";
  if (has("not found") || has("does not exist") || has("unknown")) return "unresolved";
  if (reason.starts_with("needs ") && has(" in flavor ")) return "quota";
  if (has("ClusterQueue") && has(" of nominal ")) return "quota";
  if (has("node") || has("GPU") || has("quota fits, but")) return "placement";
  return "other";
}

void ViewBuilder::OnAdmit(double wait) {
  // Bounded: a burst of admissions within one interval keeps the last 100,000.
  if (interval_waits_.size() >= 100000) interval_waits_.erase(interval_waits_.begin());
  interval_waits_.push_back(std::max(0.0, wait));
}

std::shared_ptr<const ClusterView> ViewBuilder::Build(const ViewInput& in) {
  auto v = std::make_shared<ClusterView>();
  v->time = in.wall_zero + in.engine_now;
  v->leader = in.leader;
  v->synced = in.synced;
  v->scheduler_name = in.scheduler_name;
  v->trend_interval = trend_interval_;
  const double dt = last_engine_now_ < 0 ? 0 : std::max(0.0, in.engine_now - last_engine_now_);
  last_engine_now_ = in.engine_now;
  double idle_nodes = 0;
  if (in.engine) {
    const Model& m = in.engine->model();
    const cost::NodeFlavors flavors(m);
    std::vector<double> held(m.nodes.size(), 0);
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      const Node& node = m.nodes[n];
      ViewNode vn;
      vn.name = node.name;
      vn.flavor = flavors.of(static_cast<NodeId>(n));
      vn.gpu_model = node.gpu_model;
      vn.gpus = node.gpu_count();
      vn.unschedulable = node.unschedulable;
      for (int32_t g = 0; g < vn.gpus; ++g) {
        ViewGpuSlot slot{g, "", "", std::nullopt, false};
        if (in.gpu_reading) {
          if (std::optional<ViewInput::GpuReading> r = in.gpu_reading(vn.name, g)) {
            slot.utilization = r->utilization;
            slot.underused = r->underused;
          }
        }
        vn.slots.push_back(std::move(slot));
      }
      v->gpus += vn.gpus;
      v->nodes.push_back(std::move(vn));
    }
    v->node_count = static_cast<int64_t>(m.nodes.size());
    v->gpus_allocated = in.engine->gpus_allocated();
    for (const ViewInput::Tracked& t : in.workloads) {
      if (t.id < 0 || t.id >= in.engine->num_workloads()) continue;
      const WorkloadStatus& st = in.engine->status(t.id);
      if (st.state != WorkloadState::kPending && st.state != WorkloadState::kAdmitted) continue;
      const Workload& w = m.workloads[t.id];
      const std::string cq =
          st.cluster_queue >= 0 ? m.cluster_queues[st.cluster_queue].name : std::string();
      if (st.state == WorkloadState::kAdmitted) {
        for (const PodPlacement& p : st.pods) {
          if (p.node < 0 || static_cast<size_t>(p.node) >= m.nodes.size()) continue;
          if (p.pod_set >= 0 && static_cast<size_t>(p.pod_set) < w.pod_sets.size())
            held[p.node] += cost::HeldGpus(w.pod_sets[p.pod_set].requests, m.nodes[p.node]);
          for (int32_t g : p.gpus) {
            auto& slots = v->nodes[p.node].slots;
            if (g >= 0 && static_cast<size_t>(g) < slots.size()) {
              slots[g].workload = w.Key();
              slots[g].cluster_queue = cq;
            }
          }
        }
      }
      if (t.foreign) continue;
      v->workloads.push_back(MakeWorkload(in, t, flavors));
    }
    for (size_t n = 0; n < m.nodes.size(); ++n)
      if (m.nodes[n].gpu_count() > 0 && held[n] <= 0) ++idle_nodes;
    v->idle_gpu_nodes = static_cast<int64_t>(idle_nodes);
    AddQueues(*in.engine, in.wall_zero, v->workloads, *v);
    AddCost(in, dt);
    // Idle GPUs: capacity nobody held, priced by the node's flavor or GPU model.
    const PricingConfig& pricing = m.config.pricing;
    for (size_t n = 0; n < m.nodes.size(); ++n) {
      const double idle = std::max(0.0, m.nodes[n].gpu_count() - held[n]);
      if (idle <= 0 || dt <= 0) continue;
      cost_.idle_gpu_hours += idle * dt / 3600;
      const std::string& flavor = flavors.of(static_cast<NodeId>(n));
      if (auto price = cost::LookUpPrice(pricing.gpu_hour, flavor, m.nodes[n].gpu_model))
        cost_.idle_dollars += idle * dt / 3600 * *price * cost::SpotFactor(pricing, flavor);
    }
    cost_.priced = pricing.present;
  }
  for (const ViewInput::Waiting& w : in.waiting) {
    ViewWorkload vw;
    vw.ns = w.ns;
    vw.name = w.name;
    vw.owner = w.owner;
    vw.state = "waiting-for-pods";
    vw.reason = w.reason;
    vw.reason_category = "waiting-for-pods";
    vw.created = w.created < 0 ? -1 : in.wall_zero + w.created;
    vw.wait_seconds = w.created < 0 ? 0 : std::max(0.0, in.engine_now - w.created);
    for (const std::string& p : w.pods) vw.pods.push_back({ShortName(p), "", {}});
    v->workloads.push_back(std::move(vw));
  }
  std::sort(v->workloads.begin(), v->workloads.end(),
            [](const ViewWorkload& a, const ViewWorkload& b) {
              return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
            });
  for (const ViewWorkload& w : v->workloads)
    ++(w.state == "admitted" ? v->admitted_workloads : v->pending_workloads);
  if (cost_.from < 0) cost_.from = v->time;
  cost_.to = v->time;
  v->cost = cost_;
  AddTrend(*v, idle_nodes, dt);
  v->trends.assign(trends_.begin(), trends_.end());
  return v;
}

void ViewBuilder::AddCost(const ViewInput& in, double dt) {
  const Scheduler& e = *in.engine;
  const Model& m = e.model();
  const PricingConfig& pricing = m.config.pricing;
  std::set<std::string> now_admitted;
  cost::CostLedger ledger(m, /*by_workload=*/false);
  for (const ViewInput::Tracked& t : in.workloads) {
    if (t.foreign || t.id < 0 || t.id >= e.num_workloads()) continue;
    const WorkloadStatus& st = e.status(t.id);
    if (st.state != WorkloadState::kAdmitted || st.pods.empty()) continue;
    const Workload& w = m.workloads[t.id];
    now_admitted.insert(w.Key());
    std::vector<std::pair<std::string, std::string>> groups = {
        {"namespace", w.ns},
        {"cluster-queue", st.cluster_queue >= 0 ? m.cluster_queues[st.cluster_queue].name : kNone}};
    for (const std::string& key : pricing.rollup_labels) {
      auto it = w.labels.find(key);
      groups.push_back({"label:" + key, it == w.labels.end() ? kNone : it->second});
    }
    const bool new_run = !charged_.count(w.Key());
    std::optional<cost::CostLine> line;
    if (dt > 0) {
      ledger.Hold(t.id, st.cluster_queue, st.flavors, st.pods, 0);
      line = ledger.OpenRun(t.id, dt);
    }
    for (const auto& [by, group] : groups) {
      CostRow& row = cost_.rows[by][group];
      if (new_run) ++row.jobs;
      if (line) {
        row.gpu_hours += line->gpu_hours;
        row.dollars += line->allocated_dollars();
      }
    }
  }
  charged_ = std::move(now_admitted);
}

void ViewBuilder::AddTrend(const ClusterView& v, double idle_nodes, double dt) {
  interval_idle_ += idle_nodes * dt;
  if (interval_start_ < 0) {
    interval_start_ = v.time;
    return;
  }
  if (v.time - interval_start_ < trend_interval_) return;
  TrendPoint p;
  p.time = v.time;
  p.gpu_allocation =
      v.gpus > 0 ? static_cast<double>(v.gpus_allocated) / static_cast<double>(v.gpus) : 0;
  if (!interval_waits_.empty()) p.wait_p95 = Percentile95(interval_waits_);
  p.idle_node_seconds = interval_idle_;
  p.pending_workloads = v.pending_workloads;
  trends_.push_back(p);
  while (trends_.size() > kMaxTrendPoints) trends_.pop_front();
  interval_start_ = v.time;
  interval_idle_ = 0;
  interval_waits_.clear();
}

}  // namespace tessera::k8s
