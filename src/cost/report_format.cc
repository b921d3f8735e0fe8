#include "cost/report_format.h"

#include <cmath>

#include "fmt/format.h"
#include "model/printable.h"

namespace tessera::cost {
namespace {

// Rounded to a millionth: sums of hours such as 1/3 + 2/3 print as 1, not 0.9999999999999999.
double R(double x) { return std::round(x * 1e6) / 1e6; }

nlohmann::json LineJson(const CostLine& l) {
  nlohmann::json j = {{"gpuHours", R(l.gpu_hours)},
                      {"allocatedDollars", R(l.allocated_dollars())},
                      {"gpuDollars", R(l.gpu_dollars)},
                      {"cpuHours", R(l.cpu_hours)},
                      {"cpuDollars", R(l.cpu_dollars)},
                      {"memoryGiBHours", R(l.memory_gib_hours)},
                      {"memoryDollars", R(l.memory_dollars)},
                      {"effectiveDollars", nullptr},
                      {"runs", l.runs}};
  if (l.effective_dollars) j["effectiveDollars"] = R(*l.effective_dollars);
  if (l.unpriced_gpu_hours > 0) j["unpricedGpuHours"] = R(l.unpriced_gpu_hours);
  return j;
}

nlohmann::json RowsJson(const CostRows& rows) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, line] : rows) j[name] = LineJson(line);
  return j;
}

std::string Esc(std::string_view s) { return HtmlEscape(s); }

}  // namespace

nlohmann::json CostJson(const CostReport& report) {
  nlohmann::json by_label = nlohmann::json::object();
  for (const auto& [key, rows] : report.by_label) by_label[key] = RowsJson(rows);
  nlohmann::json idle = {{"gpuHours", R(report.idle.gpu_hours)},
                         {"dollars", R(report.idle.dollars)}};
  if (report.idle.unpriced_gpu_hours > 0)
    idle["unpricedGpuHours"] = R(report.idle.unpriced_gpu_hours);
  nlohmann::json j = {{"endTime", report.end_time},
                      {"byClusterQueue", RowsJson(report.by_cluster_queue)},
                      {"byCohort", RowsJson(report.by_cohort)},
                      {"byLocalQueue", RowsJson(report.by_local_queue)},
                      {"byNamespace", RowsJson(report.by_namespace)},
                      {"byLabel", by_label},
                      {"allocated", LineJson(report.allocated)},
                      {"idle", idle},
                      {"total",
                       {{"gpuHours", R(report.allocated.gpu_hours + report.idle.gpu_hours)},
                        {"allocatedDollars", R(report.allocated.allocated_dollars())},
                        {"idleDollars", R(report.idle.dollars)},
                        {"dollars", R(report.total_dollars())}}}};
  if (!report.by_workload.empty()) j["byWorkload"] = RowsJson(report.by_workload);
  return j;
}

std::string CostTable(const CostReport& report) {
  std::string out =
      fmt::format("  cost (spec.pricing; docs/cost.md)  {:>10} {:>12}\n", "GPU-hours", "dollars");
  for (const auto& [name, line] : report.by_cluster_queue)
    out += fmt::format("    {:<32} {:>10.2f} {:>12.2f}\n", name, line.gpu_hours,
                       line.allocated_dollars());
  out += fmt::format("    {:<32} {:>10.2f} {:>12.2f}\n", "idle GPUs (not shared out)",
                     report.idle.gpu_hours, report.idle.dollars);
  out += fmt::format("    {:<32} {:>10.2f} {:>12.2f}\n", "total",
                     report.allocated.gpu_hours + report.idle.gpu_hours, report.total_dollars());
  const double unpriced = report.allocated.unpriced_gpu_hours + report.idle.unpriced_gpu_hours;
  if (unpriced > 0)
    out += fmt::format("    {:.2f} GPU-hours had no price (no gpuHour key and no default)\n",
                       unpriced);
  return out;
}

std::string CostHtml(const CostReport& report) {
  std::string h =
      "<h2>Cost</h2>\n<p>Allocated: what workloads held x the price (spec.pricing); idle: GPUs "
      "nobody held, not shared out; effective cost needs utilization data, which a replay has "
      "not (docs/cost.md).</p>\n<table>\n<tr><th>rollup</th><th>name</th><th>GPU-h</th>"
      "<th>CPU core-h</th><th>memory GiB-h</th><th>allocated $</th></tr>\n";
  auto row = [&](std::string_view rollup, const std::string& name, const CostLine& l) {
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td>"
        "</tr>\n",
        rollup, Esc(name), l.gpu_hours, l.cpu_hours, l.memory_gib_hours, l.allocated_dollars());
  };
  for (const auto& [name, line] : report.by_cluster_queue) row("ClusterQueue", name, line);
  for (const auto& [name, line] : report.by_cohort) row("cohort", name, line);
  for (const auto& [key, rows] : report.by_label)
    for (const auto& [name, line] : rows) row("label " + Esc(key), name, line);
  h += fmt::format(
      "<tr><td>idle</td><td>GPUs nobody held</td><td>{:.2f}</td><td></td><td></td>"
      "<td>{:.2f}</td></tr>\n<tr><th>total</th><th></th><th>{:.2f}</th><th></th><th></th>"
      "<th>{:.2f}</th></tr>\n</table>\n",
      report.idle.gpu_hours, report.idle.dollars,
      report.allocated.gpu_hours + report.idle.gpu_hours, report.total_dollars());
  return h;
}

}  // namespace tessera::cost
