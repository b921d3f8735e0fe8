// The size classes in the replay's outputs: a terminal table, a JSON array, size_classes.csv and
// an HTML table (trace/report_format.h).
#include "trace/report.h"
#include "trace/report_format.h"

namespace tessera::trace::report_internal {

std::string SizeClassTable(const std::vector<SizeClassResult>& classes) {
  constexpr const char* kFormat =
      "{:<6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>10} "
      "{:>9}\n";
  std::string out = fmt::format(
      "\njobs by size (GPUs; waits of admitted jobs, bounded slowdown and JCT of finished ones)\n");
  out +=
      fmt::format(kFormat, "GPUs", "jobs", "admitted", "pending", "wait p50", "p95", "p99", "max",
                  "pend max", "bsld mean", "bsld p99", "JCT p50", "JCT p95", "GPU-h", "mean GPUs");
  for (const auto& c : classes) {
    if (c.jobs == 0) continue;
    out += fmt::format(kFormat, c.name, c.jobs, c.admitted, c.pending_at_end,
                       FormatDuration(c.wait.p50), FormatDuration(c.wait.p95),
                       FormatDuration(c.wait.p99), FormatDuration(c.wait.max),
                       FormatDuration(c.pending_max_wait), Num(c.slowdown.mean, 2),
                       Num(c.slowdown.p99, 2), FormatDuration(c.jct.p50), FormatDuration(c.jct.p95),
                       Num(c.gpu_hours, 1), Num(c.mean_gpus, 1));
  }
  return out;
}

nlohmann::json SizeClassJson(const std::vector<SizeClassResult>& classes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : classes) {
    out.push_back({{"name", c.name},
                   {"jobs", c.jobs},
                   {"admitted", c.admitted},
                   {"finished", c.finished},
                   {"rejected", c.rejected},
                   {"pendingAtEnd", c.pending_at_end},
                   {"runningAtEnd", c.running_at_end},
                   {"preemptions", c.preempted},
                   {"pendingMaxWaitSeconds", JNum(c.pending_max_wait)},
                   {"gpuHours", JNum(c.gpu_hours)},
                   {"meanGpus", JNum(c.mean_gpus)},
                   {"queueingDelaySeconds", DistJson(c.wait)},
                   {"boundedSlowdown", DistJson(c.slowdown)},
                   {"jobCompletionTimeSeconds", DistJson(c.jct)}});
  }
  return out;
}

std::string SizeClassCsv(const std::vector<SizeClassResult>& classes) {
  std::string s =
      "gpus,jobs,admitted,finished,rejected,pending_at_end,running_at_end,preemptions,"
      "wait_mean_s,wait_p50_s,wait_p95_s,wait_p99_s,wait_max_s,pending_max_wait_s,"
      "bounded_slowdown_mean,bounded_slowdown_p50,bounded_slowdown_p95,bounded_slowdown_p99,"
      "bounded_slowdown_max,jct_mean_s,jct_p50_s,jct_p95_s,jct_p99_s,jct_max_s,gpu_hours,"
      "mean_gpus\n";
  for (const auto& c : classes) {
    s += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.name,
        c.jobs, c.admitted, c.finished, c.rejected, c.pending_at_end, c.running_at_end, c.preempted,
        Num(c.wait.mean), Num(c.wait.p50), Num(c.wait.p95), Num(c.wait.p99), Num(c.wait.max),
        Num(c.pending_max_wait), Num(c.slowdown.mean), Num(c.slowdown.p50), Num(c.slowdown.p95),
        Num(c.slowdown.p99), Num(c.slowdown.max), Num(c.jct.mean), Num(c.jct.p50), Num(c.jct.p95),
        Num(c.jct.p99), Num(c.jct.max), Num(c.gpu_hours), Num(c.mean_gpus));
  }
  return s;
}

std::string SizeClassHtml(const std::vector<SizeClassResult>& classes) {
  std::string h =
      "<h2>Jobs by size</h2>\n<p>A job's size is its GPUs with every pod (shares as their "
      "fraction). Waits are those of the admitted jobs; \"pending max\" is the longest wait of "
      "the jobs still pending at the end. Bounded slowdown: max(1, (finish - arrival) / "
      "max(duration, 10 s)), over finished jobs.</p>\n<table>\n<tr><th>GPUs</th><th>jobs</th>"
      "<th>admitted</th><th>pending</th><th>wait p50</th><th>p95</th><th>p99</th><th>max</th>"
      "<th>pending max</th><th>slowdown mean</th><th>slowdown p99</th><th>JCT p50</th>"
      "<th>JCT p95</th><th>GPU-h</th><th>mean GPUs</th></tr>\n";
  for (const auto& c : classes) {
    if (c.jobs == 0) continue;
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        Esc(c.name), c.jobs, c.admitted, c.pending_at_end, FormatDuration(c.wait.p50),
        FormatDuration(c.wait.p95), FormatDuration(c.wait.p99), FormatDuration(c.wait.max),
        FormatDuration(c.pending_max_wait), Num(c.slowdown.mean, 2), Num(c.slowdown.p99, 2),
        FormatDuration(c.jct.p50), FormatDuration(c.jct.p95), Num(c.gpu_hours, 1),
        Num(c.mean_gpus, 2));
  }
  return h + "</table>\n";
}

}  // namespace tessera::trace::report_internal
