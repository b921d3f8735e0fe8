// The readable timeline and summary of a simulation (`tessera sim`'s table output): split from
// simulator.cc, which runs it.
#include <map>

#include "cost/report_format.h"
#include "engine/time/span.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {

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
    // fmt, not "(" + string + ")": GCC 12 at -O3 warns a false -Wrestrict on the latter here.
    const std::string span = e.time >= 60 ? fmt::format("({})", FormatSpan(e.time)) : "";
    if (e.node >= 0) {
      out += fmt::format("  t={:>7.0f}s {:>7}  {:<10} node {}: {}\n", e.time, span,
                         SimEventTypeName(e.type), s.model().nodes[e.node].name, e.reason);
      continue;
    }
    std::string line = fmt::format("  t={:>7.0f}s {:>7}  {:<10} {}", e.time, span,
                                   SimEventTypeName(e.type), WorkloadKey(e.workload));
    switch (e.type) {
      case SimEvent::Type::kAdmitted:
      case SimEvent::Type::kScaledUp:
        line += fmt::format(" [{}] {} pod(s) on {}", QueueName(e.cluster_queue), e.pods.size(),
                            PodsText(e.pods));
        break;
      case SimEvent::Type::kPreempted:
        line += ": " + e.reason;
        if (e.grace_seconds > 0)
          line += fmt::format(" (grace period {:.0f}s: its GPUs stay held)", e.grace_seconds);
        break;
      case SimEvent::Type::kMoved:
        line += fmt::format(" to {}: {}", PodsText(e.pods), e.reason);
        break;
      case SimEvent::Type::kTerminated:
      case SimEvent::Type::kRejected:
      case SimEvent::Type::kFailed:
      case SimEvent::Type::kWaitLimitExceeded:
        line += ": " + e.reason;
        break;
      case SimEvent::Type::kFinished:
      case SimEvent::Type::kNodeAdded:
      case SimEvent::Type::kNodeRemoved:
      case SimEvent::Type::kNodeInterrupted:
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
      "\nSummary\n  simulated time      {:.0f}s ({})\n  GPUs                {}\n"
      "  mean GPU allocation {:.1f}%\n  preemptions         {}\n",
      summary_.end_time, FormatSpan(summary_.end_time), summary_.gpus_total,
      100.0 * summary_.mean_gpu_allocation, summary_.preemptions);
  if (summary_.gpu_hours_lost > 0)
    out += fmt::format("  GPU-hours lost      {:.2f} (runs cut short, less checkpoints)\n",
                       summary_.gpu_hours_lost);
  if (summary_.gpu_hours_in_grace > 0)
    out += fmt::format("    of which in grace {:.2f} (preempted, still holding their GPUs)\n",
                       summary_.gpu_hours_in_grace);
  if (summary_.moves > 0)
    out += fmt::format("  moves               {} (consolidation; {:.2f} GPU-hours lost)\n",
                       summary_.moves, summary_.gpu_hours_lost_to_moves);
  if (summary_.deadlines_exceeded > 0)
    out += fmt::format("  deadlines exceeded  {}\n", summary_.deadlines_exceeded);
  if (summary_.gpu_failures) out += GpuFailureLines(*summary_.gpu_failures);
  out += "  waiting time by ClusterQueue (arrival to first admission):\n";
  for (const auto& qw : summary_.waits) {
    out += fmt::format("    {:<24} admitted {:>4}  mean {:>7}  max {:>7}\n", qw.queue, qw.admitted,
                       FormatSpan(qw.mean_wait), FormatSpan(qw.max_wait));
  }
  if (!summary_.node_pools.empty()) {
    out += fmt::format("  node pools{}:\n", summary_.elastic
                                                ? (summary_.scale_up == ScaleUpMode::kGangAware
                                                       ? " (scale-up gang-aware)"
                                                       : " (scale-up pod-by-pod)")
                                                : "");
    for (const PoolUsage& u : summary_.node_pools) {
      out += fmt::format("    {:<16} {:<8} peak {:>4} nodes  {:>9.2f} node-hours  {:>9.2f} idle",
                         u.pool, u.elastic ? (u.spot ? "spot" : "elastic") : "fixed", u.peak_nodes,
                         u.node_hours, u.idle_node_hours);
      if (u.cost) out += fmt::format("  ${:.2f} (idle ${:.2f})", *u.cost, *u.idle_cost);
      out += "\n";
    }
    if (summary_.elastic)
      out += fmt::format("  GPU-hours on nodes added for a gang that still waited: {:.2f}\n",
                         summary_.waiting_gang_gpu_hours);
  }
  if (summary_.cost) out += cost::CostTable(*summary_.cost);
  return out;
}

}  // namespace tessera
