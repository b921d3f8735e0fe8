// What `tessera sim plan` shows (trace/plan.h): the terminal table, JSON, CSV and the HTML
// report. Fixed decimals and no clock or host data, so the same input gives the same bytes.
#include <filesystem>
#include <fstream>

#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "trace/plan.h"
#include "trace/report.h"
#include "trace/report_format.h"

namespace tessera::trace {
namespace {

using report_internal::DistJson;
using report_internal::Esc;
using report_internal::JNum;
using report_internal::Line;
using report_internal::LineChart;
using report_internal::Num;

std::string Money(double v) {
  // Dollars with thousands separators, no cents: "$1,234,567".
  std::string digits = fmt::format("{:.0f}", std::max(0.0, v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return "$" + out;
}

std::string TargetWords(const Target& t) {
  return t.kind == Target::Kind::kUtilization
             ? fmt::format("utilization <= {}%", Num(100 * t.value, 1))
             : fmt::format("{} <= {}", TargetName(t.kind), FormatDuration(t.value));
}

std::string TargetsWords(const PlanResult& r) {
  std::string s;
  for (const auto& t : r.targets) s += (s.empty() ? "" : ", ") + TargetWords(t);
  return s;
}

std::string ShapeWords(const PoolShape& p) {
  std::string s = fmt::format(
      "{} x {} GPU, {} cores, {} GiB", p.gpus, p.gpu_model.empty() ? "any" : p.gpu_model,
      Num(p.cpu_milli / 1000.0, 1), Num(static_cast<double>(p.memory_mib) / 1024, 0));
  if (p.price_per_node_hour > 0) {
    s += fmt::format(", ${}/node-hour", Num(p.price_per_node_hour, 2));
    if (p.spot_discount > 0)
      s += fmt::format(" less {}% spot = ${}", Num(100 * p.spot_discount, 0),
                       Num(p.NodeHourPrice(), 2));
  }
  if (p.spot && p.interruptions_per_node_hour > 0)
    s += fmt::format(
        "; spot: {} interruptions a node-hour{}, notice {}, replaced after {}; an interrupted "
        "job reruns from the start (or its last checkpoint: --checkpoint-interval)",
        Num(p.interruptions_per_node_hour, 4),
        p.interruptions_per_node_hour == PoolShape::kDefaultInterruptionsPerNodeHour
            ? " (the default; give interruptions= for your provider's rate)"
            : "",
        FormatDuration(p.notice_seconds), FormatDuration(p.replace_seconds));
  else if (p.spot)
    s += "; spot, never interrupted (interruptions=0)";
  return s;
}

// "beside base (4 x ...)": the fixed pools every size is replayed with.
std::string FixedWords(const PlanResult& r) {
  std::string s;
  for (const auto& f : r.fixed)
    s += fmt::format("{}{} fixed nodes of pool {} ({})", s.empty() ? "" : "; ", f.fixed_nodes,
                     f.name, ShapeWords(f));
  return s;
}

bool Interrupted(const PlanResult& r, const PoolPlan& p) {
  for (const auto& s : p.points)
    if (s.interruptions > 0) return true;
  return false;
}

// One line about the answer of a pool.
std::string AnswerWords(const PoolPlan& p) {
  if (!p.answer) return "no answer: " + p.check;
  const SizePoint& a = *p.At(*p.answer);
  return fmt::format(
             "{} nodes, {} GPUs: wait p50 / p95 / p99 {} / {} / {}, utilization {}%, effective {} "
             "GPUs, "
             "wasted {} GPUs, {} a month",
             a.nodes, a.gpus, FormatDuration(a.wait.p50), FormatDuration(a.wait.p95),
             FormatDuration(a.wait.p99), Num(100 * a.utilization, 1), Num(a.effective_gpus, 1),
             Num(a.wasted_gpus, 1), Money(a.cost_per_month)) +
         (a.interruptions > 0
              ? fmt::format("; {} spot interruptions cut short {} GPU-hours of runs",
                            a.interruptions, Num(a.gpu_hours_lost_to_interruptions, 1))
              : "");
}

// null for an on-demand pool.
nlohmann::json SpotJson(const PoolShape& p) {
  if (!p.spot) return nullptr;
  return {{"discount", JNum(p.spot_discount, 4)},
          {"interruptionsPerNodeHour", JNum(p.interruptions_per_node_hour, 6)},
          {"noticeSeconds", JNum(p.notice_seconds)},
          {"replaceSeconds", JNum(p.replace_seconds)}};
}

nlohmann::json PointJson(const SizePoint& p) {
  return {{"nodes", p.nodes},
          {"gpus", p.gpus},
          {"spanSeconds", JNum(p.span_seconds)},
          {"jobs", p.jobs},
          {"unserved", p.unserved},
          {"waitSeconds", DistJson(p.wait)},
          {"utilization", JNum(p.utilization, 4)},
          {"gpuHoursAllocated", JNum(p.gpu_hours_allocated)},
          {"gpuHoursPaid", JNum(p.gpu_hours_paid)},
          {"effectiveGpus", JNum(p.effective_gpus)},
          {"wastedGpus", JNum(p.wasted_gpus)},
          {"costPerMonth", JNum(p.cost_per_month, 2)},
          {"preemptions", p.preemptions},
          {"interruptions", p.interruptions},
          {"gpuHoursLostToInterruptions", JNum(p.gpu_hours_lost_to_interruptions)},
          {"gpuFailures", p.gpu_failures},
          {"gpuHoursLostToGpuFailures", JNum(p.gpu_hours_lost_to_failures)},
          {"meets", p.meets},
          {"whyNot", p.why_not},
          {"stoppedEarly", p.stopped_early},
          {"screenedJobs", p.screened_jobs}};
}

}  // namespace

std::string PlanTable(const PlanResult& r) {
  std::string out = fmt::format("Capacity plan: {} jobs; targets: {}; {} replays\n", r.jobs,
                                TargetsWords(r), r.replays);
  if (!r.fixed.empty())
    out += fmt::format("every size beside {}: GPUs, figures and cost are of the whole cluster\n",
                       FixedWords(r));
  for (const auto& p : r.pools) {
    out += fmt::format("\npool {} ({}): sizes {} to {}\n", p.pool.name, ShapeWords(p.pool),
                       p.min_nodes, p.max_nodes);
    // With interruptions, the spot columns: nodes interrupted, GPU-hours of runs cut short.
    const bool spot = Interrupted(r, p);
    auto spot_cols = [&](const SizePoint& s) {
      return spot ? fmt::format(" {:>7} {:>9}", s.interruptions,
                                Num(s.gpu_hours_lost_to_interruptions, 1))
                  : std::string();
    };
    if (!p.points.empty())
      out += fmt::format("{:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>6} {:>10} {:>9} {:>14}{}  {}\n",
                         "nodes", "GPUs", "wait mean", "wait p50", "wait p95", "wait p99", "util%",
                         "effective", "wasted", "per month",
                         spot ? fmt::format(" {:>7} {:>9}", "interr.", "lost GPUh") : "", "meets");
    for (const auto& s : p.points) {
      if (!s.stopped_early.empty()) {  // partial figures: only the verdict
        out +=
            fmt::format("{:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>6} {:>10} {:>9} {:>14}{}  no: {}\n",
                        s.nodes, s.gpus, "-", "-", "-", "-", "-", "-", "-", Money(s.cost_per_month),
                        spot_cols(s), s.why_not);
        continue;
      }
      out +=
          fmt::format("{:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>6} {:>10} {:>9} {:>14}{}  {}{}\n",
                      s.nodes, s.gpus, FormatDuration(s.wait.mean), FormatDuration(s.wait.p50),
                      FormatDuration(s.wait.p95), FormatDuration(s.wait.p99),
                      Num(100 * s.utilization, 1), Num(s.effective_gpus, 1), Num(s.wasted_gpus, 1),
                      Money(s.cost_per_month), spot_cols(s), s.meets ? "yes" : "no: " + s.why_not,
                      p.answer && *p.answer == s.nodes ? "  <- answer" : "");
    }
    out += "answer: " + AnswerWords(p) + "\n";
    if (p.answer) out += p.check + "\n";
    if (p.answer && p.answer_without_failures) {
      const int32_t spare = *p.answer - *p.answer_without_failures;
      out += fmt::format(
          "GPU failures: {} nodes with them, {} if no GPU failed: {} (one draw of them, --seed)\n",
          *p.answer, *p.answer_without_failures,
          spare > 0    ? fmt::format("{} spare node(s) for failures", spare)
          : spare == 0 ? std::string("no spare node needed")
                       : std::string("no spare node needed (a near tie that the failures' "
                                     "reshuffling tipped the other way)"));
    }
    for (const auto& w : p.warnings) out += "warning: " + w + "\n";
  }
  if (r.best) {
    const PoolPlan& b = r.pools[*r.best];
    out += fmt::format("\nRecommended: pool {}, {}\n", b.pool.name, AnswerWords(b));
  } else {
    out += "\nNo pool meets the targets.\n";
  }
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string PlanJson(const PlanResult& r) {
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& t : r.targets)
    targets.push_back(
        {{"target", t.text}, {"metric", TargetName(t.kind)}, {"atMost", JNum(t.value, 4)}});
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& p : r.pools) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& s : p.points) curve.push_back(PointJson(s));
    pools.push_back({{"name", p.pool.name},
                     {"gpusPerNode", p.pool.gpus},
                     {"gpuModel", p.pool.gpu_model},
                     {"cpuMilliPerNode", p.pool.cpu_milli},
                     {"memoryMiBPerNode", p.pool.memory_mib},
                     {"maxPodsPerNode", p.pool.max_pods},
                     {"pricePerNodeHour", JNum(p.pool.price_per_node_hour, 4)},
                     {"spotDiscount", JNum(p.pool.spot_discount, 4)},
                     {"spot", SpotJson(p.pool)},
                     {"minNodes", p.min_nodes},
                     {"maxNodes", p.max_nodes},
                     {"answer", p.answer ? nlohmann::json(*p.answer) : nlohmann::json(nullptr)},
                     {"answerWithoutGpuFailures", p.answer_without_failures
                                                      ? nlohmann::json(*p.answer_without_failures)
                                                      : nlohmann::json(nullptr)},
                     {"check", p.check},
                     {"unfitJobs", p.unfit_jobs},
                     {"unfitExample", p.unfit_example},
                     {"warnings", p.warnings},
                     {"curve", curve}});
  }
  nlohmann::json rec = nullptr;
  if (r.best) {
    const PoolPlan& b = r.pools[*r.best];
    rec = PointJson(*b.At(*b.answer));
    rec["pool"] = b.pool.name;
    rec["check"] = b.check;
  }
  nlohmann::json fixed = nlohmann::json::array();
  for (const auto& f : r.fixed)
    fixed.push_back({{"name", f.name},
                     {"nodes", f.fixed_nodes},
                     {"gpusPerNode", f.gpus},
                     {"gpuModel", f.gpu_model},
                     {"cpuMilliPerNode", f.cpu_milli},
                     {"memoryMiBPerNode", f.memory_mib},
                     {"maxPodsPerNode", f.max_pods},
                     {"pricePerNodeHour", JNum(f.price_per_node_hour, 4)},
                     {"spot", SpotJson(f)}});
  nlohmann::json doc = {{"jobs", r.jobs},      {"replays", r.replays}, {"targets", targets},
                        {"fixedPools", fixed}, {"recommended", rec},   {"pools", pools},
                        {"notes", r.notes}};
  return DumpJson(doc, 2) + "\n";
}

std::string PlanCsv(const PlanResult& r) {
  std::string out =
      "pool,nodes,gpus,jobs,unserved,wait_mean_s,wait_p50_s,wait_p95_s,wait_p99_s,wait_max_s,"
      "utilization,gpu_hours_allocated,gpu_hours_paid,effective_gpus,wasted_gpus,cost_per_month,"
      "preemptions,meets,answer,replayed,interruptions,gpu_hours_lost_to_interruptions\n";
  for (const auto& p : r.pools)
    for (const auto& s : p.points)
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                         p.pool.name, s.nodes, s.gpus, s.jobs, s.unserved, Num(s.wait.mean),
                         Num(s.wait.p50), Num(s.wait.p95), Num(s.wait.p99), Num(s.wait.max),
                         Num(s.utilization, 4), Num(s.gpu_hours_allocated), Num(s.gpu_hours_paid),
                         Num(s.effective_gpus), Num(s.wasted_gpus), Num(s.cost_per_month, 2),
                         s.preemptions, s.meets ? 1 : 0, p.answer && *p.answer == s.nodes ? 1 : 0,
                         s.screened_jobs > 0        ? "prefix"
                         : !s.stopped_early.empty() ? "stopped"
                                                    : "full",
                         s.interruptions, Num(s.gpu_hours_lost_to_interruptions));
  return out;
}

std::string PlanHtml(const PlanResult& r, const std::string& title) {
  std::string h =
      fmt::format(
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n",
          Esc(title)) +
      "<style>\n"
      "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}\n"
      "table{border-collapse:collapse;margin:8px 0 24px}td,th{border:1px solid #ccc;"
      "padding:3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{"
      "text-align:left}tr.answer td{background:#e8f4e8;font-weight:600}\n"
      "svg{display:block;margin:8px 0 24px}.t{font-weight:600;font-size:14px}"
      ".g{stroke:#e5e5e5}.yl{font-size:11px;text-anchor:end}.xl{font-size:11px;"
      "text-anchor:middle}.lg{font-size:11px}\n</style></head><body>\n";
  h += fmt::format("<h1>{}</h1>\n<p>{} jobs; targets: {}; {} replays.</p>\n", Esc(title), r.jobs,
                   Esc(TargetsWords(r)), r.replays);
  if (!r.fixed.empty())
    h += fmt::format(
        "<p>Every size beside {}: GPUs, figures and cost are of the whole cluster.</p>\n",
        Esc(FixedWords(r)));
  if (r.best) {
    const PoolPlan& b = r.pools[*r.best];
    h += fmt::format("<p><b>Recommended: pool {}, {}</b><br>{}</p>\n", Esc(b.pool.name),
                     Esc(AnswerWords(b)), Esc(b.check));
  } else {
    h += "<p><b>No pool meets the targets.</b></p>\n";
  }
  for (const auto& p : r.pools) {
    h += fmt::format("<h2>Pool {}</h2>\n<p>{}; sizes {} to {}.<br>Answer: {}</p>\n",
                     Esc(p.pool.name), Esc(ShapeWords(p.pool)), p.min_nodes, p.max_nodes,
                     Esc(AnswerWords(p)));
    if (p.answer) h += fmt::format("<p>{}</p>\n", Esc(p.check));
    for (const auto& w : p.warnings) h += fmt::format("<p>Warning: {}</p>\n", Esc(w));
    if (p.points.empty()) continue;
    const bool spot = Interrupted(r, p);
    auto spot_cells = [&](const SizePoint& s) {
      return spot ? fmt::format("<td>{}</td><td>{}</td>", s.interruptions,
                                Num(s.gpu_hours_lost_to_interruptions, 1))
                  : std::string();
    };
    h += "<table>\n<tr><th>nodes</th><th>GPUs</th><th>wait mean</th><th>p50</th><th>p95</th>"
         "<th>p99</th><th>utilization</th><th>effective GPUs</th><th>wasted GPUs</th>"
         "<th>per month</th>";
    h += spot ? "<th>interruptions</th><th>GPU-hours lost to them</th>" : "";
    h += "<th>meets</th></tr>\n";
    double wmax = 0;
    std::vector<double> x, p50, p95, p99, cost, eff, waste;
    for (const auto& s : p.points) {
      if (!s.stopped_early.empty()) {  // partial figures: only the verdict, and off the charts
        h += fmt::format(
            "<tr><td>{}</td><td>{}</td><td colspan=\"7\">-</td><td>{}</td>{}"
            "<td>{}</td></tr>\n",
            s.nodes, s.gpus, Money(s.cost_per_month), spot_cells(s), Esc(s.why_not));
        continue;
      }
      h += fmt::format(
          "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}%</td>"
          "<td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td></tr>\n",
          p.answer && *p.answer == s.nodes ? " class=\"answer\"" : "", s.nodes, s.gpus,
          FormatDuration(s.wait.mean), FormatDuration(s.wait.p50), FormatDuration(s.wait.p95),
          FormatDuration(s.wait.p99), Num(100 * s.utilization, 1), Num(s.effective_gpus, 1),
          Num(s.wasted_gpus, 1), Money(s.cost_per_month), spot_cells(s),
          Esc(s.meets ? "yes" : s.why_not));
      x.push_back(s.nodes);
      p50.push_back(s.wait.p50);
      p95.push_back(s.wait.p95);
      p99.push_back(s.wait.p99);
      cost.push_back(s.cost_per_month);
      eff.push_back(s.effective_gpus);
      waste.push_back(s.wasted_gpus);
      wmax = std::max(wmax, s.wait.p99);
    }
    h += "</table>\n";
    const double unit = wmax >= 7200 ? 3600 : (wmax >= 120 ? 60 : 1);
    const char* uname = unit == 3600 ? "hours" : (unit == 60 ? "minutes" : "seconds");
    std::vector<Line> waits = {{"wait p50", p50}, {"wait p95", p95}, {"wait p99", p99}};
    for (const auto& t : r.targets)
      if (t.kind != Target::Kind::kUtilization && t.kind != Target::Kind::kWaitMean &&
          t.kind != Target::Kind::kWaitMax)
        waits.push_back(
            {"target " + TargetName(t.kind), std::vector<double>(x.size(), t.value), true});
    for (auto& l : waits)
      for (double& v : l.y) v /= unit;
    h += LineChart(fmt::format("Wait against cluster size, pool {}", p.pool.name), uname, x, waits,
                   -1, "nodes");
    h += LineChart(fmt::format("GPUs against cluster size, pool {}", p.pool.name), "GPUs", x,
                   {{"effective (allocated)", eff}, {"wasted (paid, idle)", waste, true}}, -1,
                   "nodes");
    if (p.pool.price_per_node_hour > 0)
      h += LineChart(fmt::format("Cost a month against cluster size, pool {}", p.pool.name),
                     "dollars a month", x, {{"cost", cost}}, -1, "nodes");
  }
  if (!r.notes.empty()) {
    h += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) h += fmt::format("<li>{}</li>\n", Esc(n));
    h += "</ul>\n";
  }
  h += "<p>Data: plan.json and plan.csv beside this page.</p>\n</body></html>\n";
  return h;
}

absl::Status WritePlanReport(const PlanResult& r, const std::string& dir,
                             const std::string& title) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"plan.json", PlanJson(r)},
                                   {"plan.csv", PlanCsv(r)},
                                   {"index.html", PlanHtml(r, title)}}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return absl::InternalError(fmt::format("{}: cannot write", path));
  }
  return absl::OkStatus();
}

}  // namespace tessera::trace
