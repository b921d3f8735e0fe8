#include "sim/simulator.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tessera {

const char* SimEventTypeName(SimEvent::Type t) {
  switch (t) {
    case SimEvent::Type::kAdmitted:
      return "admitted";
    case SimEvent::Type::kPreempted:
      return "preempted";
    case SimEvent::Type::kFinished:
      return "finished";
    case SimEvent::Type::kRejected:
      return "rejected";
    case SimEvent::Type::kScaledUp:
      return "scaled-up";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<Simulator>> Simulator::Create(Model model, SimOptions options) {
  auto s = Scheduler::Create(std::move(model));
  if (!s.ok()) return s.status();
  return std::unique_ptr<Simulator>(new Simulator(std::move(*s), options));
}

std::string Simulator::WorkloadKey(WorkloadId id) const {
  return scheduler_->model().workloads[id].Key();
}

std::string Simulator::QueueName(int32_t cq) const {
  return cq < 0 ? "" : scheduler_->model().cluster_queues[cq].name;
}

absl::Status Simulator::Run() {
  Scheduler& s = *scheduler_;
  enum Kind { kFinish = 0, kArrive = 1 };  // finishes first at equal times: capacity frees
  // (time, kind, workload, admission): a finish belongs to one admission of the workload, its
  // sequence number; a finish of an earlier admission (preempted since, even in the cycle that
  // admitted it, then admitted again) is stale and ignored.
  using Ev = std::tuple<double, int, WorkloadId, int64_t>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> queue;
  std::vector<int64_t> admissions(s.num_workloads(), 0);  // per workload: admissions so far
  // Workloads marked tessera.dev/admitted are admitted at 0 before anything else arrives.
  std::vector<WorkloadId> at_start;
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    if (s.model().workloads[id].admitted_at_start) {
      at_start.push_back(id);
    } else {
      queue.emplace(std::max(0.0, s.model().workloads[id].arrival), kArrive, id, 0);
    }
  }

  double last_time = 0;
  int64_t last_alloc = 0;
  double alloc_area = 0;
  summary_.gpus_total = s.gpus_total();
  summary_.gpu_allocation.emplace_back(0, 0);
  auto record_alloc = [&](double now) {
    alloc_area += static_cast<double>(last_alloc) * (now - last_time);
    last_time = now;
    if (s.gpus_allocated() != last_alloc) {
      last_alloc = s.gpus_allocated();
      summary_.gpu_allocation.emplace_back(now, last_alloc);
    }
  };

  auto settle = [&](double now) -> absl::Status {
    // Cycles until nothing changes at this instant (preempted workloads may fit elsewhere).
    for (int cycle = 0;; ++cycle) {
      if (cycle >= options_.max_cycles_per_instant) {
        return absl::InternalError(
            fmt::format("scheduling did not settle after {} cycles at t={}", cycle, now));
      }
      auto decisions = s.RunCycle(now);
      ++summary_.cycles;
      if (options_.verify) {
        if (auto st = s.Verify(); !st.ok()) {
          return absl::InternalError(
              fmt::format("invariant broken at t={}: {}", now, std::string(st.message())));
        }
      }
      if (decisions.empty()) break;
      for (auto& d : decisions) {
        SimEvent e;
        e.time = now;
        e.workload = d.workload;
        e.cluster_queue = s.status(d.workload).cluster_queue;
        e.reason = d.reason;
        e.preemptor = d.preemptor;
        e.pods = d.pods;
        switch (d.type) {
          case Decision::Type::kAdmit: {
            e.type = SimEvent::Type::kAdmitted;
            const auto& rt = s.model().workloads[d.workload].runtime;
            // Numbered as the decision comes: a preemption later in the same cycle is not
            // reflected yet (status() is read after the whole cycle).
            ++admissions[d.workload];
            if (rt) queue.emplace(now + *rt, kFinish, d.workload, admissions[d.workload]);
            break;
          }
          case Decision::Type::kScaleUp:
            e.type = SimEvent::Type::kScaledUp;
            break;
          case Decision::Type::kPreempt:
            e.type = SimEvent::Type::kPreempted;
            ++summary_.preemptions;
            break;
          case Decision::Type::kReject:
            e.type = SimEvent::Type::kRejected;
            break;
        }
        events_.push_back(std::move(e));
      }
    }
    return absl::OkStatus();
  };

  if (!at_start.empty()) {
    for (WorkloadId id : at_start) s.Submit(id, 0);
    if (auto st = settle(0); !st.ok()) return st;
    for (WorkloadId id : at_start) {
      if (s.status(id).state != WorkloadState::kAdmitted) {
        return absl::FailedPreconditionError(fmt::format(
            "{} is marked tessera.dev/admitted but could not be admitted at the start: {}",
            WorkloadKey(id), s.status(id).reason));
      }
    }
    record_alloc(0);
  }

  while (!queue.empty()) {
    double now = std::get<0>(queue.top());
    record_alloc(now);
    while (!queue.empty() && std::get<0>(queue.top()) == now) {
      auto [t, kind, id, admission] = queue.top();
      queue.pop();
      if (kind == kArrive) {
        s.Submit(id, now);
      } else if (s.status(id).state == WorkloadState::kAdmitted && admission == admissions[id]) {
        s.Finish(id, now);
        SimEvent e;
        e.time = now;
        e.type = SimEvent::Type::kFinished;
        e.workload = id;
        e.cluster_queue = s.status(id).cluster_queue;
        events_.push_back(std::move(e));
      }
    }
    if (auto st = settle(now); !st.ok()) return st;
    record_alloc(now);
  }
  summary_.end_time = last_time;
  summary_.mean_gpu_allocation =
      (last_time > 0 && summary_.gpus_total > 0)
          ? alloc_area / (last_time * static_cast<double>(summary_.gpus_total))
          : (summary_.gpus_total > 0
                 ? static_cast<double>(last_alloc) / static_cast<double>(summary_.gpus_total)
                 : 0);

  // Waiting time per queue: from arrival to first admission, over admitted workloads.
  const int ncq = static_cast<int>(s.model().cluster_queues.size());
  std::vector<SimSummary::QueueWait> waits(ncq + 1);
  for (int q = 0; q < ncq; ++q) waits[q].queue = s.model().cluster_queues[q].name;
  waits[ncq].queue = "(none)";
  std::map<WorkloadId, double> first_admit;
  for (const auto& e : events_)
    if (e.type == SimEvent::Type::kAdmitted) first_admit.try_emplace(e.workload, e.time);
  for (const auto& [id, t] : first_admit) {
    int32_t cq = s.status(id).cluster_queue;
    auto& qw = waits[cq < 0 ? ncq : cq];
    const Workload& w = s.model().workloads[id];
    double wait = t - (w.admitted_at_start ? 0.0 : std::max(0.0, w.arrival));
    qw.mean_wait += wait;
    qw.max_wait = std::max(qw.max_wait, wait);
    ++qw.admitted;
  }
  for (auto& qw : waits) {
    if (qw.admitted > 0) qw.mean_wait /= static_cast<double>(qw.admitted);
    if (qw.admitted > 0 || qw.queue != "(none)") summary_.waits.push_back(qw);
  }
  return absl::OkStatus();
}

namespace {

nlohmann::json PodsJson(const Model& m, const Workload& w, const std::vector<PodPlacement>& pods) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : pods) {
    const auto& ps = w.pod_sets[p.pod_set];
    out.push_back({{"name", fmt::format("{}-{}-{}", w.name, ps.name, p.index)},
                   {"node", m.nodes[p.node].name},
                   {"gpus", p.gpus}});
  }
  return out;
}

}  // namespace

std::string Simulator::ToJson() const {
  const Scheduler& s = *scheduler_;
  const Model& m = s.model();
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : events_) {
    nlohmann::json j = {{"time", e.time},
                        {"type", SimEventTypeName(e.type)},
                        {"workload", WorkloadKey(e.workload)}};
    if (e.type == SimEvent::Type::kAdmitted || e.type == SimEvent::Type::kScaledUp) {
      j["clusterQueue"] = QueueName(e.cluster_queue);
      j["pods"] = PodsJson(m, m.workloads[e.workload], e.pods);
    }
    if (e.type == SimEvent::Type::kPreempted) {
      j["preemptor"] = WorkloadKey(e.preemptor);
      j["reason"] = e.reason;
    }
    if (e.type == SimEvent::Type::kRejected) j["reason"] = e.reason;
    events.push_back(std::move(j));
  }
  nlohmann::json workloads = nlohmann::json::array();
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    const auto& st = s.status(id);
    workloads.push_back({{"name", WorkloadKey(id)},
                         {"state", WorkloadStateName(st.state)},
                         {"clusterQueue", QueueName(st.cluster_queue)},
                         {"reason", st.reason},
                         {"preemptions", st.preemptions},
                         {"pods", PodsJson(m, m.workloads[id], st.pods)}});
  }
  nlohmann::json alloc = nlohmann::json::array();
  for (const auto& [t, g] : summary_.gpu_allocation) alloc.push_back({{"time", t}, {"gpus", g}});
  nlohmann::json waits = nlohmann::json::array();
  for (const auto& qw : summary_.waits) {
    waits.push_back({{"clusterQueue", qw.queue},
                     {"admitted", qw.admitted},
                     {"meanWait", qw.mean_wait},
                     {"maxWait", qw.max_wait}});
  }
  nlohmann::json summary = {{"endTime", summary_.end_time},
                            {"gpusTotal", summary_.gpus_total},
                            {"meanGpuAllocation", summary_.mean_gpu_allocation},
                            {"gpuAllocation", alloc},
                            {"waitingTime", waits},
                            {"preemptions", summary_.preemptions},
                            {"cycles", summary_.cycles}};
  nlohmann::json doc = {{"events", events}, {"workloads", workloads}, {"summary", summary}};
  return doc.dump(2) + "\n";
}

std::string Simulator::PodsText(const std::vector<PodPlacement>& pods) const {
  // "node-a[0-3] node-b[0,2]" grouped by node in first-seen order.
  const Model& m = scheduler_->model();
  std::vector<std::pair<NodeId, std::vector<int32_t>>> by_node;
  std::map<NodeId, size_t> index;
  for (const auto& p : pods) {
    auto [it, inserted] = index.try_emplace(p.node, by_node.size());
    if (inserted) by_node.push_back({p.node, {}});
    auto& g = by_node[it->second].second;
    g.insert(g.end(), p.gpus.begin(), p.gpus.end());
  }
  std::string out;
  for (auto& [node, gpus] : by_node) {
    std::sort(gpus.begin(), gpus.end());
    if (!out.empty()) out += " ";
    out += m.nodes[node].name;
    if (gpus.empty()) continue;
    std::string list;
    for (size_t i = 0; i < gpus.size();) {
      size_t j = i;
      while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
      if (!list.empty()) list += ",";
      list += j > i ? fmt::format("{}-{}", gpus[i], gpus[j]) : fmt::format("{}", gpus[i]);
      i = j + 1;
    }
    out += "[" + list + "]";
  }
  return out;
}

std::string Simulator::ToTable() const {
  const Scheduler& s = *scheduler_;
  std::string out = "Timeline\n";
  for (const auto& e : events_) {
    std::string line = fmt::format("  t={:>7.0f}s  {:<10} {}", e.time, SimEventTypeName(e.type),
                                   WorkloadKey(e.workload));
    switch (e.type) {
      case SimEvent::Type::kAdmitted:
      case SimEvent::Type::kScaledUp:
        line += fmt::format(" [{}] {} pod(s) on {}", QueueName(e.cluster_queue), e.pods.size(),
                            PodsText(e.pods));
        break;
      case SimEvent::Type::kPreempted:
      case SimEvent::Type::kRejected:
        line += ": " + e.reason;
        break;
      case SimEvent::Type::kFinished:
        break;
    }
    out += line + "\n";
  }
  out += "\nWorkloads at the end\n";
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    const auto& st = s.status(id);
    std::string q = st.cluster_queue < 0 ? "-" : QueueName(st.cluster_queue);
    out += fmt::format("  {:<40} {:<9} {:<20}", WorkloadKey(id), WorkloadStateName(st.state), q);
    if (!st.reason.empty()) out += " " + st.reason;
    out += "\n";
  }
  out += fmt::format(
      "\nSummary\n  simulated time      {:.0f}s\n  GPUs                {}\n"
      "  mean GPU allocation {:.1f}%\n  preemptions         {}\n",
      summary_.end_time, summary_.gpus_total, 100.0 * summary_.mean_gpu_allocation,
      summary_.preemptions);
  out += "  waiting time by ClusterQueue (arrival to first admission):\n";
  for (const auto& qw : summary_.waits) {
    out += fmt::format("    {:<24} admitted {:>4}  mean {:>7.0f}s  max {:>7.0f}s\n", qw.queue,
                       qw.admitted, qw.mean_wait, qw.max_wait);
  }
  return out;
}

}  // namespace tessera
