#include "accounting/report_format.h"

#include <cmath>

#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"

namespace tessera::accounting {
namespace {

// Rounded to a millionth, as docs/cost.md's figures are.
double Round6(double v) { return std::round(v * 1e6) / 1e6; }

nlohmann::json OrNull(const std::optional<double>& v) {
  return v ? nlohmann::json(Round6(*v)) : nlohmann::json(nullptr);
}

std::string Money(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "-"; }

std::string Percent(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}%", 100 * *v) : "-";
}

nlohmann::json GroupJson(const GroupCost& g) {
  nlohmann::json top = nlohmann::json::array();
  for (const JobCost& j : g.top_jobs) {
    top.push_back({{"job", j.job},
                   {"gpuHours", Round6(j.gpu_hours)},
                   {"dollars", OrNull(j.dollars)},
                   {"runs", j.runs}});
  }
  return {{"group", g.group},
          {"gpuHours", Round6(g.gpu_hours)},
          {"dollars", OrNull(g.dollars)},
          {"effectiveDollars", OrNull(g.effective_dollars)},
          {"jobs", g.jobs},
          {"runs", g.runs},
          {"utilization", OrNull(g.utilization)},
          {"topJobs", top}};
}

// CSV quoting (RFC 4180): a field with a comma, quote or line break is quoted, quotes doubled.
std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvNumber(const std::optional<double>& v) {
  return v ? fmt::format("{}", Round6(*v)) : "";
}

std::string CsvRow(const GroupCost& g) {
  std::string top;
  for (const JobCost& j : g.top_jobs) {
    if (!top.empty()) top += ";";
    top += fmt::format("{}={}", j.job, j.dollars ? CsvNumber(j.dollars) : "");
  }
  return fmt::format("{},{},{},{},{},{},{}\n", Csv(g.group), g.jobs, g.runs, Round6(g.gpu_hours),
                     CsvNumber(g.dollars), CsvNumber(g.utilization), Csv(top));
}

}  // namespace

std::string CostReportJson(const CostSummary& report) {
  nlohmann::json groups = nlohmann::json::array();
  for (const GroupCost& g : report.groups) groups.push_back(GroupJson(g));
  auto date = [](double t) {  // null: the period is open on that side
    return std::isfinite(t) ? nlohmann::json(FormatDate(t)) : nlohmann::json(nullptr);
  };
  nlohmann::json doc = {{"from", date(report.query.from)},
                        {"to", date(report.query.to)},
                        {"by", GroupByName(report.query)},
                        {"groups", groups},
                        {"total", GroupJson(report.total)}};
  return DumpJson(doc, 2) + "\n";
}

std::string CostReportCsv(const CostSummary& report) {
  std::string out = "group,jobs,runs,gpu_hours,dollars,utilization,top_jobs\n";
  for (const GroupCost& g : report.groups) out += CsvRow(g);
  return out + CsvRow(report.total);
}

std::string CostReportTable(const CostSummary& report) {
  const double from = report.query.from, to = report.query.to;
  std::string out =
      fmt::format("cost by {}, runs that ended from {} to {}\n\n", GroupByName(report.query),
                  std::isfinite(from) ? FormatDate(from) : "the first",
                  std::isfinite(to) ? FormatDate(to) + " (excluded)" : "the last");
  size_t width = 5;
  for (const GroupCost& g : report.groups) width = std::max(width, g.group.size());
  out += fmt::format("  {:<{}}  {:>6}  {:>6}  {:>10}  {:>12}  {:>11}\n", "GROUP", width, "JOBS",
                     "RUNS", "GPU-HOURS", "DOLLARS", "UTILIZATION");
  auto line = [&](const GroupCost& g) {
    return fmt::format("  {:<{}}  {:>6}  {:>6}  {:>10.2f}  {:>12}  {:>11}\n", g.group, width,
                       g.jobs, g.runs, g.gpu_hours, Money(g.dollars), Percent(g.utilization));
  };
  for (const GroupCost& g : report.groups) out += line(g);
  out += line(report.total);
  if (report.groups.empty()) {
    out += "\n  no run ended in this period\n";
    return out;
  }
  out += "\ntop jobs (by dollars, then GPU-hours)\n";
  for (const GroupCost& g : report.groups) {
    out += fmt::format("  {}\n", g.group);
    for (const JobCost& j : g.top_jobs) {
      out += fmt::format("    {:<40}  {:>10.2f} GPU-h  {:>12}  {} run{}\n", j.job, j.gpu_hours,
                         Money(j.dollars), j.runs, j.runs == 1 ? "" : "s");
    }
  }
  return out;
}

}  // namespace tessera::accounting
