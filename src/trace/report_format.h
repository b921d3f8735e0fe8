// Number formatting shared by the replay's report writers (trace/report.cc and
// trace/size_class_report.cc): fixed decimals, so that outputs do not depend on how a library
// prints doubles. Internal to tessera_trace (nlohmann_json is a private dependency).
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <vector>

#include "fgd/grid.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "trace/metrics.h"
#include "trace/size_classes.h"

namespace tessera::trace::report_internal {

// Fixed decimals; "" for NaN; never "-0.000".
inline std::string Num(double v, int decimals = 3) {
  if (std::isnan(v)) return "";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s == fmt::format("-{:.{}f}", 0.0, decimals)) s = s.substr(1);
  return s;
}

// A JSON number rounded the same way (the value, not a string); null when not finite.
inline nlohmann::json JNum(double v, int decimals = 3) {
  if (!std::isfinite(v)) return nullptr;
  double p = std::pow(10.0, decimals);
  return std::round(v * p) / p;
}

// Simulated seconds as an RFC 3339 time since 1970-01-01T00:00:00Z (the dashboard's times).
inline std::string Rfc3339(double seconds) {
  const auto t = static_cast<std::time_t>(std::floor(std::max(0.0, seconds)));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline nlohmann::json DistJson(const Distribution& d, int decimals = 3) {
  return {{"count", d.count},
          {"mean", JNum(d.mean, decimals)},
          {"p50", JNum(d.p50, decimals)},
          {"p95", JNum(d.p95, decimals)},
          {"p99", JNum(d.p99, decimals)},
          {"max", JNum(d.max, decimals)}};
}

inline std::string Esc(const std::string& s) { return fgd::HtmlEscape(s); }

// A line (or a bar series) of the SVG charts.
struct Line {
  std::string name;
  std::vector<double> y;
  bool dashed = false;
  int color = -1;  // index in the charts' colours; -1: the line's own index
};

// Lines over a shared x from 0 (hours from the start in the replay report; nodes in the plan's).
// `ymax` < 0: from the data. Inline SVG, every text escaped.
std::string LineChart(const std::string& title, const std::string& ylabel,
                      const std::vector<double>& x, const std::vector<Line>& lines, double ymax,
                      const std::string& xlabel);
// Grouped bars: one group per category, one bar per series.
std::string BarChart(const std::string& title, const std::string& ylabel,
                     const std::vector<std::string>& categories, const std::vector<Line>& series);

// The size classes (trace/size_class_report.cc): the terminal table and the HTML table list the
// classes that had jobs; JSON and CSV list every class.
std::string SizeClassTable(const std::vector<SizeClassResult>& classes);
nlohmann::json SizeClassJson(const std::vector<SizeClassResult>& classes);
std::string SizeClassCsv(const std::vector<SizeClassResult>& classes);
std::string SizeClassHtml(const std::vector<SizeClassResult>& classes);

}  // namespace tessera::trace::report_internal
