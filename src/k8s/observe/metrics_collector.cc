#include "k8s/observe/metrics_collector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "cost/ledger.h"
#include "cost/pricing.h"

namespace tessera::k8s {
namespace {

std::string QueueName(const Model& m, int32_t cq) {
  return cq >= 0 ? m.cluster_queues[cq].name : std::string(kNoneLabel);
}

std::string FlavorLabel(const std::string& flavor) {
  return flavor.empty() ? std::string(kNoneLabel) : flavor;
}

// A quantity in Prometheus' base units: CPU in cores (the model keeps millicores), the rest as
// the model keeps them (bytes, devices, milli of a GPU for GPU shares).
double BaseUnits(ResourceId r, int64_t v) {
  return r == kCpu ? static_cast<double>(v) / 1000 : static_cast<double>(v);
}

// The value below which fraction q of the sorted `v` lie (nearest rank).
double Quantile(const std::vector<double>& v, double q) {
  size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(i, 1, v.size()) - 1];
}

}  // namespace

std::string PrometheusLabelName(const std::string& key) {
  std::string s = "label_";
  for (char c : key) s.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

void MetricsCollector::OnCycle(const Scheduler& engine, int64_t attempts_before,
                               const std::vector<Decision>& decisions, double seconds) {
  const bool admitted = std::any_of(decisions.begin(), decisions.end(), [](const Decision& d) {
    return d.type == Decision::Type::kAdmit;
  });
  if (!admitted && decisions.empty() && engine.stats().attempts == attempts_before) return;
  const LabelValues result = {admitted ? "success" : "inadmissible"};
  metrics_->Add("tessera_admission_attempts_total", result);
  metrics_->Observe("tessera_admission_attempt_duration_seconds", result, seconds);
}

void MetricsCollector::OnAdmit(const Scheduler& engine, WorkloadId id, double wait) {
  const std::string cq = QueueName(engine.model(), engine.status(id).cluster_queue);
  metrics_->Add("tessera_admitted_workloads_total", {cq});
  metrics_->Observe("tessera_admission_wait_time_seconds", {cq}, std::max(0.0, wait));
}

void MetricsCollector::OnPreempt(const Scheduler& engine, const Decision& d) {
  const Model& m = engine.model();
  const int32_t victim_cq = engine.status(d.workload).cluster_queue;
  if (d.preemptor < 0) {
    // No preemptor: the ClusterQueue's stopPolicy HoldAndDrain evicts its workloads.
    metrics_->Add("tessera_evicted_workloads_total",
                  {QueueName(m, victim_cq), "ClusterQueueStopped"});
    return;
  }
  metrics_->Add("tessera_evicted_workloads_total", {QueueName(m, victim_cq), "Preempted"});
  const int32_t cq = engine.status(d.preemptor).cluster_queue;
  const char* reason = "InClusterQueue";
  if (cq != victim_cq) {
    if (m.config.fair_sharing) {
      reason = "InCohortFairSharing";
    } else if (cq >= 0 && engine.cluster_queue_stats(cq).weighted_share > 0) {
      reason = "InCohortReclaimWhileBorrowing";  // the preemptor is above its nominal quota
    } else {
      reason = "InCohortReclamation";
    }
  }
  metrics_->Add("tessera_preempted_workloads_total", {QueueName(m, cq), reason});
}

void MetricsCollector::OnWaitLimitExceeded(const Scheduler& engine, WorkloadId id) {
  metrics_->Add("tessera_wait_limit_exceeded_total",
                {QueueName(engine.model(), engine.status(id).cluster_queue)});
}

void MetricsCollector::Collect(const Scheduler& engine, const std::vector<Tracked>& workloads,
                               double now) {
  const double dt = last_now_ < 0 ? 0 : std::max(0.0, now - last_now_);
  last_now_ = now;
  CollectQueues(engine, workloads, now);
  CollectQuotas(engine);
  CollectCapacity(engine, workloads, dt);
  CollectCost(engine, workloads, dt);
}

void MetricsCollector::CollectQueues(const Scheduler& engine, const std::vector<Tracked>& workloads,
                                     double now) {
  const Model& m = engine.model();
  std::map<LabelValues, double> pending, admitted, reservations, share, expected, overdue;
  std::map<std::string, std::vector<double>> waits;
  for (size_t c = 0; c < m.cluster_queues.size(); ++c) {
    const std::string& name = m.cluster_queues[c].name;
    const ClusterQueueStats st = engine.cluster_queue_stats(static_cast<int32_t>(c));
    pending[{name, "active"}] = static_cast<double>(st.pending_active);
    pending[{name, "inadmissible"}] = static_cast<double>(st.pending_inadmissible);
    admitted[{name}] = 0;
    reservations[{name}] = static_cast<double>(st.reservations);
    share[{name}] = st.weighted_share;
    overdue[{name}] = 0;
    // The counter's series exist from 0, so that increase() sees the first one.
    metrics_->Add("tessera_wait_limit_exceeded_total", {name}, 0);
  }
  for (const Tracked& t : workloads) {
    if (t.foreign || t.id < 0) continue;
    const WorkloadStatus& st = engine.status(t.id);
    const std::string cq = QueueName(m, st.cluster_queue);
    if (st.state == WorkloadState::kAdmitted) {
      ++admitted[{cq}];
    } else if (st.state == WorkloadState::kPending) {
      // Queued workloads are counted by the engine above; those without a queue here.
      if (st.cluster_queue < 0) ++pending[{cq, "active"}];
      if (st.expected_start >= 0) waits[cq].push_back(std::max(0.0, st.expected_start - now));
      if (t.past_wait_limit) ++overdue[{cq}];
    }
  }
  for (auto& [cq, v] : waits) {
    std::sort(v.begin(), v.end());
    for (const char* q : {"0.5", "0.9", "1"}) expected[{cq, q}] = Quantile(v, std::stod(q));
  }
  metrics_->SetGauges("tessera_pending_workloads", std::move(pending));
  metrics_->SetGauges("tessera_admitted_active_workloads", std::move(admitted));
  metrics_->SetGauges("tessera_reservations", std::move(reservations));
  metrics_->SetGauges("tessera_cluster_queue_weighted_share", std::move(share));
  metrics_->SetGauges("tessera_expected_wait_seconds", std::move(expected));
  metrics_->SetGauges("tessera_pending_workloads_past_wait_limit", std::move(overdue));
}

void MetricsCollector::CollectQuotas(const Scheduler& engine) {
  const Model& m = engine.model();
  std::map<std::string, int32_t> flavor_ids;
  for (size_t f = 0; f < m.flavors.size(); ++f)
    flavor_ids[m.flavors[f].name] = static_cast<int32_t>(f);
  std::map<LabelValues, double> usage, nominal, borrowing, lending;
  for (size_t c = 0; c < m.cluster_queues.size(); ++c) {
    const ClusterQueue& cq = m.cluster_queues[c];
    for (const ResourceGroup& rg : cq.resource_groups) {
      for (const FlavorQuotas& fq : rg.flavors) {
        auto f = flavor_ids.find(fq.flavor);
        Resources used;
        if (f != flavor_ids.end())
          used = engine.ClusterQueueUsage(static_cast<int32_t>(c), f->second);
        for (const ResourceQuota& q : fq.resources) {
          const LabelValues labels = {cq.cohort.empty() ? std::string(kNoneLabel) : cq.cohort,
                                      cq.name, fq.flavor, ResourceName(q.resource)};
          usage[labels] = BaseUnits(q.resource, used[q.resource]);
          nominal[labels] = BaseUnits(q.resource, q.nominal);
          if (q.borrowing_limit) borrowing[labels] = BaseUnits(q.resource, *q.borrowing_limit);
          if (q.lending_limit) lending[labels] = BaseUnits(q.resource, *q.lending_limit);
        }
      }
    }
  }
  metrics_->SetGauges("tessera_cluster_queue_resource_usage", std::move(usage));
  metrics_->SetGauges("tessera_cluster_queue_nominal_quota", std::move(nominal));
  metrics_->SetGauges("tessera_cluster_queue_borrowing_limit", std::move(borrowing));
  metrics_->SetGauges("tessera_cluster_queue_lending_limit", std::move(lending));
}

void MetricsCollector::CollectCapacity(const Scheduler& engine,
                                       const std::vector<Tracked>& workloads, double dt) {
  const Model& m = engine.model();
  std::vector<double> held(m.nodes.size(), 0);
  for (const Tracked& t : workloads) {
    if (t.id < 0) continue;
    const WorkloadStatus& st = engine.status(t.id);
    if (st.state != WorkloadState::kAdmitted) continue;
    const Workload& w = m.workloads[t.id];
    for (const PodPlacement& p : st.pods) {
      if (p.node < 0 || static_cast<size_t>(p.node) >= m.nodes.size()) continue;
      if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= w.pod_sets.size()) continue;
      held[p.node] += cost::HeldGpus(w.pod_sets[p.pod_set].requests, m.nodes[p.node]);
    }
  }
  const cost::NodeFlavors flavors(m);
  std::map<LabelValues, double> gpus, allocated, ratio, idle;
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const int g = m.nodes[n].gpu_count();
    if (g <= 0) continue;
    const LabelValues flavor = {FlavorLabel(flavors.of(static_cast<NodeId>(n)))};
    gpus[flavor] += g;
    allocated[flavor] += held[n];
    idle.try_emplace(flavor, 0);
    if (held[n] <= 0) {
      ++idle[flavor];
      metrics_->Add("tessera_idle_node_seconds_total", flavor, dt);
    } else if (dt == 0) {
      metrics_->Add("tessera_idle_node_seconds_total", flavor, 0);  // the series exists from 0
    }
  }
  for (const auto& [flavor, g] : gpus) ratio[flavor] = allocated[flavor] / g;
  metrics_->SetGauges("tessera_gpus", std::move(gpus));
  metrics_->SetGauges("tessera_gpus_allocated", std::move(allocated));
  metrics_->SetGauges("tessera_gpu_allocation_ratio", std::move(ratio));
  metrics_->SetGauges("tessera_idle_nodes", std::move(idle));
}

void MetricsCollector::CollectCost(const Scheduler& engine, const std::vector<Tracked>& workloads,
                                   double dt) {
  const Model& m = engine.model();
  const PricingConfig& pricing = m.config.pricing;
  std::vector<std::string> names = {"cluster_queue", "namespace"};
  for (const std::string& key : pricing.rollup_labels) names.push_back(PrometheusLabelName(key));
  metrics_->SetLabelNames("tessera_gpu_seconds_total", names);
  metrics_->SetLabelNames("tessera_cost_dollars_total", names);
  metrics_->SetLabelNames("tessera_effective_gpu_seconds_total", names);
  metrics_->SetLabelNames("tessera_effective_cost_dollars_total", names);
  if (dt <= 0) return;
  // What each workload holds now, priced as the ledger prices a run (docs/cost.md), charged for
  // the `dt` seconds since the last call.
  cost::CostLedger ledger(m, /*by_workload=*/false);
  std::vector<Metrics::Increment> grow;  // applied in one step: a scrape sees all or none
  for (const Tracked& t : workloads) {
    if (t.id < 0) continue;
    const WorkloadStatus& st = engine.status(t.id);
    if (st.state != WorkloadState::kAdmitted || st.pods.empty()) continue;
    ledger.Hold(t.id, st.cluster_queue, st.flavors, st.pods, 0);
    const std::optional<cost::CostLine> line = ledger.OpenRun(t.id, dt);
    if (!line) continue;
    const Workload& w = m.workloads[t.id];
    LabelValues labels = {QueueName(m, st.cluster_queue), w.ns};
    for (const std::string& key : pricing.rollup_labels) {
      auto it = w.labels.find(key);
      labels.push_back(it == w.labels.end() ? std::string(kNoneLabel) : it->second);
    }
    grow.push_back({"tessera_gpu_seconds_total", labels, line->gpu_hours * 3600});
    if (pricing.present)
      grow.push_back({"tessera_cost_dollars_total", labels, line->allocated_dollars()});
    // Effective (docs/cost.md): what it held x the utilization measured now, for `dt`.
    if (t.utilization) {
      grow.push_back(
          {"tessera_effective_gpu_seconds_total", labels, line->gpu_hours * 3600 * *t.utilization});
      if (pricing.present)
        grow.push_back({"tessera_effective_cost_dollars_total", labels,
                        line->allocated_dollars() * *t.utilization});
    }
  }
  metrics_->AddAll(grow);
}

}  // namespace tessera::k8s
