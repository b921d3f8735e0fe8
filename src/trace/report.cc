#include "trace/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "config/diagnostic_output.h"
#include "cost/report_format.h"
#include "fgd/grid.h"
#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "trace/report_format.h"
#include "ui/ui_assets.h"

namespace tessera::trace {
namespace {

using report_internal::DistJson;
using report_internal::Esc;
using report_internal::JNum;
using report_internal::Num;
using report_internal::SizeClassCsv;
using report_internal::SizeClassHtml;
using report_internal::SizeClassJson;
using report_internal::SizeClassTable;

std::string BinLabel(int b) {
  constexpr const char* kLabels[kDelayBins] = {"0s",   "<=1s", "<=10s", "<=1m", "<=5m", "<=15m",
                                               "<=1h", "<=3h", "<=12h", "<=1d", ">1d"};
  return kLabels[b];
}

double UsageOfQuotaPct(const QueueResult& q) {
  return q.quota_gpus > 0 ? 100.0 * q.mean_gpus / q.quota_gpus : std::nan("");
}

nlohmann::json QueueJson(const QueueResult& q) {
  nlohmann::json hist = nlohmann::json::array();
  for (auto c : q.wait_histogram) hist.push_back(c);
  return {{"name", q.name},
          {"quotaGpus", JNum(q.quota_gpus)},
          {"jobs", q.jobs},
          {"admitted", q.admitted},
          {"finished", q.finished},
          {"rejected", q.rejected},
          {"pendingAtEnd", q.pending_at_end},
          {"runningAtEnd", q.running_at_end},
          {"preemptions", q.preempted},
          {"gpuHours", JNum(q.gpu_hours)},
          {"gpuHoursLostToPreemption", JNum(q.gpu_hours_lost)},
          {"meanGpus", JNum(q.mean_gpus)},
          {"peakGpus", JNum(q.peak_gpus)},
          {"meanUsageOfQuotaPct", JNum(UsageOfQuotaPct(q))},
          {"queueingDelaySeconds", DistJson(q.wait)},
          {"jobCompletionTimeSeconds", DistJson(q.jct)},
          {"queueingDelayHistogram", hist}};
}

}  // namespace

// ---- SVG charts (report_format.h: the capacity plan's report draws with them too)
namespace report_internal {

constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kW = 760, kH = 300, kLeft = 60, kRight = 170, kTop = 30, kBottom = 40;

// A round step so that [0, max] shows about 5 ticks.
double NiceStep(double max) {
  if (max <= 0) return 1;
  double raw = max / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (f * mag >= raw) return f * mag;
  return 10 * mag;
}

std::string TickLabel(double v) {
  if (v == std::floor(v)) return fmt::format("{:.0f}", v);
  return Num(v, 2);
}

// Lines over a shared x (hours from the start). `ymax` < 0: from the data.
std::string LineChart(const std::string& title, const std::string& ylabel,
                      const std::vector<double>& x, const std::vector<Line>& lines, double ymax,
                      const std::string& xlabel) {
  double xmax = x.empty() ? 1 : std::max(x.back(), 1e-9);
  if (ymax < 0) {
    ymax = 0;
    for (const auto& l : lines)
      for (double v : l.y) ymax = std::max(ymax, v);
    if (ymax <= 0) ymax = 1;
  }
  double ystep = NiceStep(ymax);
  ymax = std::ceil(ymax / ystep) * ystep;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double v) { return kLeft + v / xmax * pw; };
  auto py = [&](double v) { return kTop + ph - v / ymax * ph; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\"><title>{}</title>\n",
      kW, kH, kW, kH, Esc(title));
  s += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">{}</text>\n", kLeft, Esc(title));
  for (double v = 0; v <= ymax + ystep / 2; v += ystep) {
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"yl\">{}</text>\n",
        kLeft, kLeft + pw, py(v), py(v), kLeft - 6, py(v) + 4, TickLabel(v));
  }
  double xstep = NiceStep(xmax);
  for (double v = 0; v <= xmax + xstep / 100; v += xstep) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xl\">{}</text>\n", px(v), kTop + ph + 16,
                     TickLabel(v));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xl\">{}</text>\n", kLeft + pw / 2, kH - 4,
                   Esc(xlabel));
  s += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" class=\"xl\">{}</text>\n",
                   kTop + ph / 2, Esc(ylabel));
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const char* color =
        kColors[(l.color >= 0 ? static_cast<size_t>(l.color) : i) % std::size(kColors)];
    std::string pts;
    for (size_t k = 0; k < l.y.size() && k < x.size(); ++k)
      pts += fmt::format("{}{:.1f},{:.1f}", k ? " " : "", px(x[k]), py(l.y[k]));
    s += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n", pts,
        color, l.dashed ? " stroke-dasharray=\"4 3\"" : "");
    double ly = kTop + 10 + 16.0 * static_cast<double>(i);
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"{}/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
        kW - kRight + 12, kW - kRight + 30, ly, ly, color,
        l.dashed ? " stroke-dasharray=\"4 3\"" : "", kW - kRight + 36, ly + 4, Esc(l.name));
  }
  s += "</svg>\n";
  return s;
}

// Grouped bars: one group per category, one bar per series.
std::string BarChart(const std::string& title, const std::string& ylabel,
                     const std::vector<std::string>& categories, const std::vector<Line>& series) {
  double ymax = 0;
  for (const auto& l : series)
    for (double v : l.y) ymax = std::max(ymax, v);
  if (ymax <= 0) ymax = 1;
  double ystep = NiceStep(ymax);
  ymax = std::ceil(ymax / ystep) * ystep;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto py = [&](double v) { return kTop + ph - v / ymax * ph; };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\"><title>{}</title>\n",
      kW, kH, kW, kH, Esc(title));
  s += fmt::format("<text x=\"{}\" y=\"18\" class=\"t\">{}</text>\n", kLeft, Esc(title));
  for (double v = 0; v <= ymax + ystep / 2; v += ystep) {
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"g\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"yl\">{}</text>\n",
        kLeft, kLeft + pw, py(v), py(v), kLeft - 6, py(v) + 4, TickLabel(v));
  }
  s += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" class=\"xl\">{}</text>\n",
                   kTop + ph / 2, Esc(ylabel));
  const double gw = pw / static_cast<double>(std::max<size_t>(1, categories.size()));
  const double bw = gw * 0.8 / static_cast<double>(std::max<size_t>(1, series.size()));
  for (size_t c = 0; c < categories.size(); ++c) {
    double gx = kLeft + gw * static_cast<double>(c);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xl\">{}</text>\n", gx + gw / 2,
                     kTop + ph + 16, Esc(categories[c]));
    for (size_t i = 0; i < series.size(); ++i) {
      double v = c < series[i].y.size() ? series[i].y[c] : 0;
      s += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
          "<title>{}: {}</title></rect>\n",
          gx + gw * 0.1 + bw * static_cast<double>(i), py(v), bw, kTop + ph - py(v),
          kColors[i % std::size(kColors)], Esc(series[i].name), TickLabel(v));
    }
  }
  for (size_t i = 0; i < series.size(); ++i) {
    double ly = kTop + 10 + 16.0 * static_cast<double>(i);
    s += fmt::format(
        "<rect x=\"{}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
        kW - kRight + 12, ly - 5, kColors[i % std::size(kColors)], kW - kRight + 32, ly + 4,
        Esc(series[i].name));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace report_internal

namespace {

using report_internal::BarChart;
using report_internal::kColors;
using report_internal::Line;
using report_internal::LineChart;

// Time axis of the series: bucket midpoints in hours (or minutes for short replays).
std::pair<std::vector<double>, std::string> TimeAxis(const ReplayResult& r) {
  const TimeSeries& ts = r.series;
  const double span = ts.width() * ts.size();
  const double unit = span >= 7200 ? 3600 : (span >= 120 ? 60 : 1);
  const std::string label = unit == 3600
                                ? "hours from start"
                                : (unit == 60 ? "minutes from start" : "seconds from start");
  std::vector<double> x;
  for (int b = 0; b < ts.size(); ++b) x.push_back((b + 0.5) * ts.width() / unit);
  return {x, label};
}

std::vector<double> Channel(const ReplayResult& r, int c) {
  std::vector<double> y;
  for (int b = 0; b < r.series.size(); ++b) y.push_back(r.series.Mean(b, c));
  return y;
}
std::vector<double> Channel(const ReplayResult& r, const std::string& name) {
  auto it = std::find(r.channels.begin(), r.channels.end(), name);
  return it == r.channels.end() ? std::vector<double>{}
                                : Channel(r, static_cast<int>(it - r.channels.begin()));
}

// Nodes up (solid) and idle (dashed) per NodePool, a colour per pool; "" without NodePools.
std::string NodesChart(const ReplayResult& r, const std::vector<double>& x,
                       const std::string& xlabel) {
  std::vector<Line> lines;
  for (size_t p = 0; p < r.node_pools.size() && p < std::size(kColors); ++p) {
    const std::string& pool = r.node_pools[p].pool;
    const int color = static_cast<int>(p);
    lines.push_back({pool + " up", Channel(r, "nodes_up:" + pool), false, color});
    lines.push_back({pool + " idle", Channel(r, "nodes_idle:" + pool), true, color});
  }
  if (lines.empty()) return "";
  return LineChart("Nodes up and idle per NodePool over time", "nodes", x, lines, -1, xlabel);
}

}  // namespace

std::string FormatDuration(double s) {
  if (s == 0) return "0s";
  if (s < 60) return Num(s, s < 10 ? 2 : 1) + "s";
  if (s < 3600) return Num(s / 60, 1) + "m";
  if (s < 86400 * 2) return Num(s / 3600, 2) + "h";
  return Num(s / 86400, 1) + "d";
}

std::string SummaryTable(const ReplayResult& r) {
  std::string out;
  out += fmt::format(
      "Replay: {} jobs on {} nodes ({} GPUs), {} simulated ({} .. {} s), {} engine cycles\n",
      r.jobs, r.nodes, r.gpus_total, FormatDuration(r.end - r.start), Num(r.start, 0),
      Num(r.end, 0), r.cycles);
  const QueueResult& a = r.all;
  out += fmt::format(
      "  jobs: {} admitted, {} finished, {} rejected, {} still pending, {} still running\n",
      a.admitted, a.finished, a.rejected, a.pending_at_end, a.running_at_end);
  out += fmt::format("  GPU allocation:  mean {}%  peak {}%  at the end {}%\n",
                     Num(r.mean_allocation_pct, 1), Num(r.peak_allocation_pct, 1),
                     Num(r.final_allocation_pct, 1));
  out += fmt::format("    while jobs pend {}% ({}% of the time), up to the last arrival {}%\n",
                     Num(r.allocation_while_pending_pct, 1), Num(r.pending_time_pct, 1),
                     Num(r.arrival_window_allocation_pct, 1));
  out += fmt::format("  fragmentation:   mean {}%  at the end {}% (FGD, % of all GPUs)\n",
                     Num(r.mean_fragmentation_pct, 1), Num(r.final_fragmentation_pct, 1));
  out += fmt::format("  preemptions:     {} ({} GPU-hours lost)\n", r.preemptions,
                     Num(r.gpu_hours_lost, 1));
  if (r.gpu_failures) out += GpuFailureLines(*r.gpu_failures);
  if (r.wait_limits_exceeded > 0)
    out += fmt::format("  wait limits:     {} job(s) waited past their limit and went ahead\n",
                       r.wait_limits_exceeded);
  out += fmt::format("  Jain's fairness: {} (mean GPUs / nominal quota over queues)\n",
                     Num(r.jain_index, 3));
  out += fmt::format(
      "\n{:<16} {:>8} {:>8} {:>8} {:>6} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} "
      "{:>9} {:>12}\n",
      "queue", "jobs", "admitted", "finished", "rej", "pending", "preempt", "wait mean", "p50",
      "p95", "p99", "JCT mean", "GPU-h lost", "GPUs/quota");
  auto row = [&](const QueueResult& q) {
    std::string usage = q.quota_gpus > 0
                            ? fmt::format("{}/{}", Num(q.mean_gpus, 1), Num(q.quota_gpus, 0))
                            : Num(q.mean_gpus, 1);
    out += fmt::format(
        "{:<16} {:>8} {:>8} {:>8} {:>6} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} "
        "{:>12}\n",
        q.name.size() > 16 ? q.name.substr(0, 15) + "~" : q.name, q.jobs, q.admitted, q.finished,
        q.rejected, q.pending_at_end, q.preempted, FormatDuration(q.wait.mean),
        FormatDuration(q.wait.p50), FormatDuration(q.wait.p95), FormatDuration(q.wait.p99),
        FormatDuration(q.jct.mean), Num(q.gpu_hours_lost, 1), usage);
  };
  for (const auto& q : r.queues) row(q);
  if (r.queues.size() > 1) row(r.all);
  out += SizeClassTable(r.size_classes);
  if (r.cost) out += "\n" + cost::CostTable(*r.cost);
  if (!r.node_pools.empty()) {
    out += fmt::format("\nNode pools{}\n", r.elastic ? (r.scale_up == ScaleUpMode::kGangAware
                                                            ? " (scale-up gang-aware)"
                                                            : " (scale-up pod-by-pod)")
                                                     : "");
    for (const PoolUsage& u : r.node_pools) {
      out += fmt::format("  {:<16} {:<8} peak {:>5} nodes {:>11} node-hours {:>11} idle", u.pool,
                         u.elastic ? (u.spot ? "spot" : "elastic") : "fixed", u.peak_nodes,
                         Num(u.node_hours, 2), Num(u.idle_node_hours, 2));
      if (u.cost) out += fmt::format("  ${} (idle ${})", Num(*u.cost, 2), Num(*u.idle_cost, 2));
      out += "\n";
    }
    if (r.elastic)
      out += fmt::format("  GPU-hours on nodes added for a gang that still waited: {}\n",
                         Num(r.waiting_gang_gpu_hours, 2));
  }
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
  return out;
}

std::string ReportJson(const ReplayResult& r) {
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : r.queues) queues.push_back(QueueJson(q));
  nlohmann::json bins = nlohmann::json::array();
  for (int b = 0; b < kDelayBins; ++b) bins.push_back(BinLabel(b));
  nlohmann::json points = nlohmann::json::array();
  for (int b = 0; b < r.series.size(); ++b) {
    nlohmann::json p = nlohmann::json::array();
    p.push_back(JNum(r.series.origin() + b * r.series.width()));
    for (int c = 0; c < static_cast<int>(r.channels.size()); ++c)
      p.push_back(JNum(r.series.Mean(b, c)));
    points.push_back(p);
  }
  nlohmann::json channels = nlohmann::json::array();
  channels.push_back("bucketStart");
  for (const auto& c : r.channels) channels.push_back(c);
  nlohmann::json typical = nlohmann::json::array();
  for (const auto& t : r.typical) {
    typical.push_back({{"cpuMilli", t.cpu_milli},
                       {"numGpu", t.num_gpu},
                       {"gpuMilli", t.gpu_milli},
                       {"models", t.model_spec},
                       {"weight", JNum(t.weight, 6)}});
  }
  nlohmann::json summary = {{"start", JNum(r.start)},
                            {"end", JNum(r.end)},
                            {"nodes", r.nodes},
                            {"gpus", r.gpus_total},
                            {"jobs", r.jobs},
                            {"engineCycles", r.cycles},
                            {"admitted", r.all.admitted},
                            {"finished", r.all.finished},
                            {"rejected", r.all.rejected},
                            {"pendingAtEnd", r.all.pending_at_end},
                            {"runningAtEnd", r.all.running_at_end},
                            {"preemptions", r.preemptions},
                            {"waitLimitsExceeded", r.wait_limits_exceeded},
                            {"gpuHours", JNum(r.all.gpu_hours)},
                            {"gpuHoursLostToPreemption", JNum(r.gpu_hours_lost)},
                            {"gpuHoursInGracePeriods", JNum(r.gpu_hours_in_grace)},
                            {"moves", r.moves},
                            {"gpuHoursLostToMoves", JNum(r.gpu_hours_lost_to_moves)},
                            {"meanGpuAllocationPct", JNum(r.mean_allocation_pct)},
                            {"peakGpuAllocationPct", JNum(r.peak_allocation_pct)},
                            {"finalGpuAllocationPct", JNum(r.final_allocation_pct)},
                            {"meanFragmentationPct", JNum(r.mean_fragmentation_pct)},
                            {"finalFragmentationPct", JNum(r.final_fragmentation_pct)},
                            {"jainFairnessIndex", JNum(r.jain_index, 4)},
                            {"overbookedGpuShares", r.overbooked_shares},
                            {"queueingDelaySeconds", DistJson(r.all.wait)},
                            {"jobCompletionTimeSeconds", DistJson(r.all.jct)},
                            {"queueingDelayHistogram", QueueJson(r.all)["queueingDelayHistogram"]}};
  summary["gpuAllocationWhilePendingPct"] = JNum(r.allocation_while_pending_pct);
  summary["timeWithPendingPct"] = JNum(r.pending_time_pct);
  summary["gpuAllocationArrivalWindowPct"] = JNum(r.arrival_window_allocation_pct);
  if (r.cost) summary["cost"] = cost::CostJson(*r.cost);
  if (r.gpu_failures) summary["gpuFailures"] = GpuFailureJson(*r.gpu_failures);
  if (!r.node_pools.empty()) {
    nlohmann::json pools = nlohmann::json::array();
    for (const PoolUsage& u : r.node_pools) {
      nlohmann::json p = {{"pool", u.pool},
                          {"elastic", u.elastic},
                          {"spot", u.spot},
                          {"peakNodes", u.peak_nodes},
                          {"nodesAtEnd", u.nodes_at_end},
                          {"nodeHours", JNum(u.node_hours)},
                          {"idleNodeHours", JNum(u.idle_node_hours)},
                          {"gpuHours", JNum(u.gpu_hours)},
                          {"nodesAdded", u.added},
                          {"nodesRemoved", u.removed},
                          {"interruptions", u.interrupted}};
      if (u.cost) {
        p["pricePerNodeHour"] = JNum(*u.price_per_node_hour);
        p["cost"] = JNum(*u.cost);
        p["idleCost"] = JNum(*u.idle_cost);
      }
      pools.push_back(std::move(p));
    }
    summary["nodePools"] = std::move(pools);
    if (r.elastic) {
      summary["scaleUp"] = r.scale_up == ScaleUpMode::kGangAware ? "gang-aware" : "pod-by-pod";
      summary["waitingGangGpuHours"] = JNum(r.waiting_gang_gpu_hours);
    }
  }
  nlohmann::json doc = {
      {"summary", summary},
      {"queues", queues},
      {"sizeClasses", SizeClassJson(r.size_classes)},
      {"queueingDelayBins", bins},
      {"timeSeries",
       {{"bucketSeconds", JNum(r.series.width())}, {"columns", channels}, {"points", points}}},
      {"typicalPods", typical},
      {"notes", r.notes},
      {"diagnostics", DiagnosticsJson(r.diagnostics)}};
  // Diagnostics quote the input as written: bytes that are not UTF-8 are replaced, not a throw.
  return DumpJson(doc, 2) + "\n";
}

std::vector<std::pair<std::string, std::string>> ReportCsv(const ReplayResult& r) {
  std::vector<std::pair<std::string, std::string>> files;
  std::string s = "metric,value\n";
  auto kv = [&](const std::string& k, const std::string& v) { s += k + "," + v + "\n"; };
  kv("start_s", Num(r.start));
  kv("end_s", Num(r.end));
  kv("nodes", fmt::format("{}", r.nodes));
  kv("gpus", fmt::format("{}", r.gpus_total));
  kv("jobs", fmt::format("{}", r.jobs));
  kv("engine_cycles", fmt::format("{}", r.cycles));
  kv("admitted", fmt::format("{}", r.all.admitted));
  kv("finished", fmt::format("{}", r.all.finished));
  kv("rejected", fmt::format("{}", r.all.rejected));
  kv("pending_at_end", fmt::format("{}", r.all.pending_at_end));
  kv("running_at_end", fmt::format("{}", r.all.running_at_end));
  kv("preemptions", fmt::format("{}", r.preemptions));
  kv("wait_limits_exceeded", fmt::format("{}", r.wait_limits_exceeded));
  kv("gpu_hours", Num(r.all.gpu_hours));
  kv("gpu_hours_lost_to_preemption", Num(r.gpu_hours_lost));
  kv("gpu_hours_in_grace_periods", Num(r.gpu_hours_in_grace));
  if (r.moves > 0) {  // consolidation: only when it moved something
    kv("moves", fmt::format("{}", r.moves));
    kv("gpu_hours_lost_to_moves", Num(r.gpu_hours_lost_to_moves));
  }
  kv("mean_gpu_allocation_pct", Num(r.mean_allocation_pct));
  kv("gpu_allocation_while_pending_pct", Num(r.allocation_while_pending_pct));
  kv("time_with_pending_pct", Num(r.pending_time_pct));
  kv("gpu_allocation_arrival_window_pct", Num(r.arrival_window_allocation_pct));
  kv("peak_gpu_allocation_pct", Num(r.peak_allocation_pct));
  kv("final_gpu_allocation_pct", Num(r.final_allocation_pct));
  kv("mean_fragmentation_pct", Num(r.mean_fragmentation_pct));
  kv("final_fragmentation_pct", Num(r.final_fragmentation_pct));
  kv("jain_fairness_index", Num(r.jain_index, 4));
  kv("overbooked_gpu_shares", fmt::format("{}", r.overbooked_shares));
  kv("queueing_delay_mean_s", Num(r.all.wait.mean));
  kv("queueing_delay_p50_s", Num(r.all.wait.p50));
  kv("queueing_delay_p95_s", Num(r.all.wait.p95));
  kv("queueing_delay_p99_s", Num(r.all.wait.p99));
  kv("job_completion_time_mean_s", Num(r.all.jct.mean));
  kv("job_completion_time_p50_s", Num(r.all.jct.p50));
  kv("job_completion_time_p95_s", Num(r.all.jct.p95));
  kv("job_completion_time_p99_s", Num(r.all.jct.p99));
  files.emplace_back("summary.csv", s);

  s = "queue,quota_gpus,jobs,admitted,finished,rejected,pending_at_end,running_at_end,"
      "preemptions,gpu_hours,gpu_hours_lost,mean_gpus,peak_gpus,mean_usage_of_quota_pct,"
      "wait_mean_s,wait_p50_s,wait_p95_s,wait_p99_s,wait_max_s,jct_mean_s,jct_p50_s,jct_p95_s,"
      "jct_p99_s,jct_max_s\n";
  auto qrow = [&](const QueueResult& q) {
    s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                     q.name, Num(q.quota_gpus), q.jobs, q.admitted, q.finished, q.rejected,
                     q.pending_at_end, q.running_at_end, q.preempted, Num(q.gpu_hours),
                     Num(q.gpu_hours_lost), Num(q.mean_gpus), Num(q.peak_gpus),
                     Num(UsageOfQuotaPct(q)), Num(q.wait.mean), Num(q.wait.p50), Num(q.wait.p95),
                     Num(q.wait.p99), Num(q.wait.max), Num(q.jct.mean), Num(q.jct.p50),
                     Num(q.jct.p95), Num(q.jct.p99), Num(q.jct.max));
  };
  for (const auto& q : r.queues) qrow(q);
  qrow(r.all);
  files.emplace_back("queues.csv", s);
  files.emplace_back("size_classes.csv", SizeClassCsv(r.size_classes));

  s = "bucket_start_s";
  for (const auto& c : r.channels) s += fmt::format(",{}", c);
  s += "\n";
  for (int b = 0; b < r.series.size(); ++b) {
    s += Num(r.series.origin() + b * r.series.width());
    for (int c = 0; c < static_cast<int>(r.channels.size()); ++c)
      s += fmt::format(",{}", Num(r.series.Mean(b, c)));
    s += "\n";
  }
  files.emplace_back("timeseries.csv", s);

  s = "bin";
  for (const auto& q : r.queues) s += fmt::format(",{}", q.name);
  s += ",(all)\n";
  for (int b = 0; b < kDelayBins; ++b) {
    s += BinLabel(b);
    for (const auto& q : r.queues)
      s += fmt::format(",{}", q.wait_histogram[static_cast<size_t>(b)]);
    s += fmt::format(",{}\n", r.all.wait_histogram[static_cast<size_t>(b)]);
  }
  files.emplace_back("delay_histogram.csv", s);

  s = "cpu_milli,num_gpu,gpu_milli,models,weight\n";
  for (const auto& t : r.typical)
    s += fmt::format("{},{},{},{},{}\n", t.cpu_milli, t.num_gpu, t.gpu_milli, t.model_spec,
                     Num(t.weight, 6));
  files.emplace_back("typical_pods.csv", s);
  return files;
}

std::string ReportHtml(const ReplayResult& r, const std::string& title) {
  std::string h =
      fmt::format(
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n",
          Esc(title)) +
      "<style>\n"
      "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\n"
      "table{border-collapse:collapse;margin:8px 0 24px}td,th{border:1px solid #ccc;"
      "padding:3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{"
      "text-align:left}\n"
      "svg{display:block;margin:8px 0 24px}.t{font-weight:600;font-size:14px}"
      ".g{stroke:#e5e5e5}.yl{font-size:11px;text-anchor:end}.xl{font-size:11px;"
      "text-anchor:middle}.lg{font-size:11px}\n</style></head><body>\n";
  h += fmt::format("<h1>{}</h1>\n", Esc(title));
  h += fmt::format("<p>{} jobs on {} nodes ({} GPUs); {} simulated; {} engine cycles.</p>\n",
                   r.jobs, r.nodes, r.gpus_total, FormatDuration(r.end - r.start), r.cycles);

  h += "<h2>Summary</h2>\n<table>\n";
  auto tr = [&](const std::string& k, const std::string& v) {
    h += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", Esc(k), Esc(v));
  };
  tr("GPU allocation, mean / peak / at the end",
     fmt::format("{}% / {}% / {}%", Num(r.mean_allocation_pct, 1), Num(r.peak_allocation_pct, 1),
                 Num(r.final_allocation_pct, 1)));
  tr("GPU allocation while jobs pend (share of the time) / up to the last arrival",
     fmt::format("{}% ({}%) / {}%", Num(r.allocation_while_pending_pct, 1),
                 Num(r.pending_time_pct, 1), Num(r.arrival_window_allocation_pct, 1)));
  tr("Fragmentation (FGD), mean / at the end",
     fmt::format("{}% / {}%", Num(r.mean_fragmentation_pct, 1), Num(r.final_fragmentation_pct, 1)));
  tr("Queueing delay mean / p50 / p95 / p99",
     fmt::format("{} / {} / {} / {}", FormatDuration(r.all.wait.mean),
                 FormatDuration(r.all.wait.p50), FormatDuration(r.all.wait.p95),
                 FormatDuration(r.all.wait.p99)));
  tr("Job completion time mean / p50 / p95 / p99",
     fmt::format("{} / {} / {} / {}", FormatDuration(r.all.jct.mean), FormatDuration(r.all.jct.p50),
                 FormatDuration(r.all.jct.p95), FormatDuration(r.all.jct.p99)));
  tr("Preemptions (GPU-hours lost)",
     fmt::format("{} ({})", r.preemptions, Num(r.gpu_hours_lost, 1)));
  tr("Jain's fairness index", Num(r.jain_index, 3));
  tr("Jobs admitted / finished / rejected / pending / running at the end",
     fmt::format("{} / {} / {} / {} / {}", r.all.admitted, r.all.finished, r.all.rejected,
                 r.all.pending_at_end, r.all.running_at_end));
  h += "</table>\n";

  h += "<h2>Queues</h2>\n<table>\n<tr><th>ClusterQueue</th><th>jobs</th><th>admitted</th>"
       "<th>finished</th><th>rejected</th><th>pending</th><th>preempted</th><th>wait mean</th>"
       "<th>p50</th><th>p95</th><th>p99</th><th>JCT mean</th><th>GPU-h</th><th>GPU-h lost</th>"
       "<th>mean GPUs</th><th>quota GPUs</th><th>usage/quota</th></tr>\n";
  auto qrow = [&](const QueueResult& q) {
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        Esc(q.name), q.jobs, q.admitted, q.finished, q.rejected, q.pending_at_end, q.preempted,
        FormatDuration(q.wait.mean), FormatDuration(q.wait.p50), FormatDuration(q.wait.p95),
        FormatDuration(q.wait.p99), FormatDuration(q.jct.mean), Num(q.gpu_hours, 1),
        Num(q.gpu_hours_lost, 1), Num(q.mean_gpus, 2), Num(q.quota_gpus, 0),
        q.quota_gpus > 0 ? Num(UsageOfQuotaPct(q), 1) + "%" : std::string("-"));
  };
  for (const auto& q : r.queues) qrow(q);
  if (r.queues.size() > 1) qrow(r.all);
  h += "</table>\n";
  h += SizeClassHtml(r.size_classes);
  if (r.cost) h += cost::CostHtml(*r.cost);

  h += "<h2>Charts</h2>\n";
  // Jobs admitted at once are most of them in a healthy cluster; drawn, they would flatten every
  // other bar, so the chart shows the jobs that waited and the title says how many did not.
  std::vector<std::string> cats;
  for (int b = 1; b < kDelayBins; ++b) cats.push_back(BinLabel(b));
  std::vector<Line> bars;
  auto hist_line = [](const std::string& name, const std::array<int64_t, kDelayBins>& h) {
    Line l{name, {}};
    for (size_t b = 1; b < h.size(); ++b) l.y.push_back(static_cast<double>(h[b]));
    return l;
  };
  if (r.queues.size() <= std::size(kColors) && r.queues.size() > 1) {
    for (const auto& q : r.queues) bars.push_back(hist_line(q.name, q.wait_histogram));
  } else {
    bars.push_back(hist_line("all queues", r.all.wait_histogram));
  }
  h += BarChart(fmt::format("Queueing delay of the jobs that waited ({} of {} admitted jobs did "
                            "not wait)",
                            r.all.wait_histogram[0], r.all.admitted),
                "jobs", cats, bars);

  auto [x, xlabel] = TimeAxis(r);
  std::vector<Line> usage;
  for (size_t q = 0; q < r.queues.size() && q < std::size(kColors); ++q)
    usage.push_back({r.queues[q].name, Channel(r, "gpus_used:" + r.queues[q].name)});
  h += LineChart("GPUs in use per ClusterQueue over time", "GPUs", x, usage, -1, xlabel);
  h += NodesChart(r, x, xlabel);
  h += LineChart("GPU allocation and fragmentation over time", "% of all GPUs", x,
                 {{"allocation", Channel(r, 0)}, {"fragmentation (FGD)", Channel(r, 1), true}}, 100,
                 xlabel);
  h += LineChart("Jobs pending and running over time", "jobs", x,
                 {{"pending", Channel(r, 2)}, {"running", Channel(r, 3)}}, -1, xlabel);
  h += fmt::format(
      "<p>Each point is a time-weighted mean over a bucket of {}. Data: report.json and the CSV "
      "files beside this page.</p>\n",
      FormatDuration(r.series.width()));
  if (!r.notes.empty()) {
    h += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) h += fmt::format("<li>{}</li>\n", Esc(n));
    h += "</ul>\n";
  }
  h += "</body></html>\n";
  return h;
}

absl::Status WriteReport(const ReplayResult& r, const std::string& dir, const std::string& title) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  auto write = [&](const std::string& name, const std::string& text) -> absl::Status {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return absl::InternalError(fmt::format("{}: cannot write", path));
    return absl::OkStatus();
  };
  if (auto s = write("report.json", ReportJson(r)); !s.ok()) return s;
  for (const auto& [name, text] : ReportCsv(r))
    if (auto s = write(name, text); !s.ok()) return s;
  if (auto s = write("index.html", ReportHtml(r, title)); !s.ok()) return s;
  return write("dashboard.html", ui::DashboardPage(DashboardSnapshotJson(r)));
}

}  // namespace tessera::trace
