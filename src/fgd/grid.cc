#include "fgd/grid.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"

namespace tessera::fgd {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// pandas writes floats as Python's repr: always with a decimal point.
std::string PyFloat(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string StripPolicyPrefix(std::string_view p) {
  // "06-FGD" -> "FGD"
  if (p.size() > 3 && std::isdigit(static_cast<unsigned char>(p[0])) &&
      std::isdigit(static_cast<unsigned char>(p[1])) && p[2] == '-') {
    p.remove_prefix(3);
  }
  return std::string(p);
}

}  // namespace

std::vector<RunResult> RunGrid(const Cluster& cluster, const GridSpec& spec,
                               const GridProgress& progress) {
  struct Task {
    const Workload* workload;
    const PolicySpec* policy;
    uint64_t seed;
  };
  std::vector<Task> tasks;
  for (const Workload* w : spec.workloads) {
    for (const PolicySpec& p : spec.policies) {
      for (uint64_t s : spec.seeds) tasks.push_back(Task{w, &p, s});
    }
  }
  std::vector<RunResult> results(tasks.size());
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  std::mutex progress_mu;
  auto worker = [&] {
    while (true) {
      const size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      results[i] = RunFgdExperiment(cluster, *tasks[i].workload, *tasks[i].policy, tasks[i].seed,
                                    spec.options);
      const int d = done.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        progress(d, static_cast<int>(tasks.size()));
      }
    }
  };
  const int threads = std::max(1, std::min<int>(spec.threads, static_cast<int>(tasks.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return results;
}

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(std::string_view text) {
  std::vector<uint64_t> seeds;
  for (std::string_view part : Split(text, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      std::optional<uint64_t> v = ParseU64(part);
      if (!v) return absl::InvalidArgumentError(fmt::format("--seeds: '{}' is not a seed", part));
      seeds.push_back(*v);
      continue;
    }
    std::optional<uint64_t> lo = ParseU64(part.substr(0, dash));
    std::optional<uint64_t> hi = ParseU64(part.substr(dash + 1));
    if (!lo || !hi || *lo > *hi || *hi - *lo > 100000) {
      return absl::InvalidArgumentError(fmt::format("--seeds: '{}' is not a range A-B", part));
    }
    for (uint64_t s = *lo; s <= *hi; ++s) seeds.push_back(s);
  }
  if (seeds.empty()) return absl::InvalidArgumentError("--seeds: no seed");
  return seeds;
}

absl::StatusOr<ExpectedTable> ReadExpectedCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  std::string line;
  if (!std::getline(in, line)) return absl::InvalidArgumentError(fmt::format("{}:1: empty", path));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string_view> header = Split(line, ',');
  int c_workload = -1, c_policy = -1, c_seed = -1;
  std::array<int, kLoadColumns> c_load;
  c_load.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "workload") c_workload = static_cast<int>(i);
    if (header[i] == "sc_policy") c_policy = static_cast<int>(i);
    if (header[i] == "seed") c_seed = static_cast<int>(i);
    std::optional<uint64_t> x = ParseU64(header[i]);
    if (x && *x <= kMaxLoadPercent) c_load[static_cast<size_t>(*x)] = static_cast<int>(i);
  }
  if (c_workload < 0 || c_policy < 0 || c_seed < 0) {
    return absl::InvalidArgumentError(
        fmt::format("{}:1: needs columns workload, sc_policy and seed", path));
  }
  ExpectedTable table;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = Split(line, ',');
    auto cell = [&](int c) -> std::string_view {
      return c >= 0 && static_cast<size_t>(c) < cells.size() ? cells[static_cast<size_t>(c)]
                                                             : std::string_view();
    };
    std::optional<uint64_t> seed = ParseU64(cell(c_seed));
    if (!seed) {
      return absl::InvalidArgumentError(
          fmt::format("{}:{}: seed '{}' is not an integer", path, line_no, cell(c_seed)));
    }
    auto& row =
        table[ExpectedKey{std::string(cell(c_workload)), StripPolicyPrefix(cell(c_policy)), *seed}];
    for (int x = 0; x <= kMaxLoadPercent; ++x) {
      const std::string_view v = cell(c_load[static_cast<size_t>(x)]);
      if (v.empty()) continue;
      double d = 0;
      const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ec != std::errc() || ptr != v.data() + v.size()) {
        return absl::InvalidArgumentError(
            fmt::format("{}:{}: column {}: '{}' is not a number", path, line_no, x, v));
      }
      row[static_cast<size_t>(x)] = d;
    }
  }
  return table;
}

std::string CurvesCsv(const std::vector<RunResult>& runs, double tune_ratio, bool frag) {
  std::string out =
      frag ? "workload,sc_policy,tune,seed" : "workload,sc_policy,tune,seed,total_gpus";
  for (int x = 0; x <= kMaxLoadPercent; ++x) out += fmt::format(",{}", x);
  out += '\n';
  for (const RunResult& r : runs) {
    out += fmt::format("{},{},{},{}", r.workload, r.policy_name, PyFloat(tune_ratio), r.seed);
    if (!frag) out += fmt::format(",{}", r.total_gpus);
    const auto& values = frag ? r.frag_percent : r.alloc_percent;
    for (const std::optional<double>& v : values) {
      out += ',';
      if (v) out += PyFloat(*v);
    }
    out += '\n';
  }
  return out;
}

std::vector<SummaryCell> Summarize(const std::vector<RunResult>& runs,
                                   const ExpectedTable* expected) {
  std::vector<SummaryCell> cells;
  auto find = [&](const std::string& w, const std::string& p) -> SummaryCell& {
    for (SummaryCell& c : cells) {
      if (c.workload == w && c.policy == p) return c;
    }
    cells.push_back(SummaryCell{w, p, 0, 0, std::nullopt});
    return cells.back();
  };
  for (const RunResult& r : runs) {
    SummaryCell& c = find(r.workload, std::string(r.policy_name));
    if (std::optional<double> u = r.UnallocatedAt100()) {
      c.ours += *u;
      ++c.runs;
    }
  }
  for (SummaryCell& c : cells) {
    if (c.runs > 0) c.ours /= c.runs;
    if (expected == nullptr) continue;
    double sum = 0;
    int n = 0;
    for (const auto& [key, row] : *expected) {
      if (key.workload == c.workload && key.policy == c.policy && row[100]) {
        sum += 100.0 - *row[100];
        ++n;
      }
    }
    if (n > 0) c.expected = sum / n;
  }
  return cells;
}

std::string SummaryTable(const std::vector<SummaryCell>& cells) {
  std::vector<std::string> workloads, policies;
  for (const SummaryCell& c : cells) {
    if (std::find(workloads.begin(), workloads.end(), c.workload) == workloads.end()) {
      workloads.push_back(c.workload);
    }
    if (std::find(policies.begin(), policies.end(), c.policy) == policies.end()) {
      policies.push_back(c.policy);
    }
  }
  const bool any_expected =
      std::any_of(cells.begin(), cells.end(), [](const SummaryCell& c) { return c.expected; });
  size_t wcol = 8;
  for (const std::string& w : workloads) wcol = std::max(wcol, w.size());
  size_t pcol = any_expected ? 15 : 8;
  for (const std::string& p : policies) pcol = std::max(pcol, p.size());
  std::string out = "Unallocated GPU % at 100% arrived load (mean over seeds";
  out += any_expected ? "; expected in parentheses)\n" : ")\n";
  out += fmt::format("{:<{}}", "workload", wcol);
  for (const std::string& p : policies) out += fmt::format(" {:>{}}", p, pcol);
  out += '\n';
  for (const std::string& w : workloads) {
    out += fmt::format("{:<{}}", w, wcol);
    for (const std::string& p : policies) {
      std::string cell = "-";
      for (const SummaryCell& c : cells) {
        if (c.workload != w || c.policy != p || c.runs == 0) continue;
        cell = fmt::format("{:.2f}", c.ours);
        if (c.expected) cell += fmt::format(" ({:.2f})", *c.expected);
      }
      out += fmt::format(" {:>{}}", cell, pcol);
    }
    out += '\n';
  }
  return out;
}

namespace {

// Mean curve per (workload, policy) over seeds, for the charts.
struct Curve {
  std::string policy;
  std::array<std::optional<double>, kLoadColumns> alloc, frag;
};

std::vector<Curve> MeanCurves(const std::vector<RunResult>& runs, const std::string& workload) {
  std::vector<Curve> curves;
  std::vector<std::array<int, kLoadColumns>> counts;
  for (const RunResult& r : runs) {
    if (r.workload != workload) continue;
    const std::string p(r.policy_name);
    size_t i = 0;
    while (i < curves.size() && curves[i].policy != p) ++i;
    if (i == curves.size()) {
      curves.push_back(Curve{p, {}, {}});
      counts.push_back({});
    }
    for (size_t x = 0; x < kLoadColumns; ++x) {
      if (!r.alloc_percent[x] || !r.frag_percent[x]) continue;
      curves[i].alloc[x] = curves[i].alloc[x].value_or(0) + *r.alloc_percent[x];
      curves[i].frag[x] = curves[i].frag[x].value_or(0) + *r.frag_percent[x];
      ++counts[i][x];
    }
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    for (size_t x = 0; x < kLoadColumns; ++x) {
      if (counts[i][x] == 0) continue;
      *curves[i].alloc[x] /= counts[i][x];
      *curves[i].frag[x] /= counts[i][x];
    }
  }
  return curves;
}

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string SvgChart(const std::vector<Curve>& curves, bool frag, std::string_view title) {
  constexpr double kW = 520, kH = 300, kL = 48, kR = 130, kT = 26, kB = 36;
  double y_max = 100;
  if (frag) {
    y_max = 1;
    for (const Curve& c : curves) {
      for (const auto& v : c.frag) {
        if (v) y_max = std::max(y_max, *v);
      }
    }
    y_max = std::ceil(y_max / 5) * 5;
  }
  auto px = [&](double x) { return kL + x / kMaxLoadPercent * (kW - kL - kR); };
  auto py = [&](double y) { return kT + (1 - y / y_max) * (kH - kT - kB); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kW, kH);
  s += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\">{}</text>\n", kL, HtmlEscape(title));
  for (int i = 0; i <= 5; ++i) {
    const double y = y_max * i / 5;
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n",
        px(0), py(y), px(kMaxLoadPercent), py(y), kL - 4, py(y) + 4, y);
  }
  for (int x = 0; x <= kMaxLoadPercent; x += 10) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px(x),
                     kH - kB + 14, x);
  }
  s += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">arrived GPU request (% of "
      "GPUs)</text>\n",
      px(kMaxLoadPercent / 2.0), kH - 6);
  s += fmt::format(
      "<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" "
      "text-anchor=\"middle\">{}</text>\n",
      py(y_max / 2), py(y_max / 2), frag ? "fragmented GPUs (%)" : "GPUs allocated (%)");
  for (size_t i = 0; i < curves.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::string points;
    const auto& values = frag ? curves[i].frag : curves[i].alloc;
    for (size_t x = 0; x < kLoadColumns; ++x) {
      if (values[x])
        points += fmt::format("{:.1f},{:.1f} ", px(static_cast<double>(x)), py(*values[x]));
    }
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                     color, points);
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"3\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        kW - kR + 10, kT + 14.0 * static_cast<double>(i) + 6, kW - kR + 26,
        kT + 14.0 * static_cast<double>(i) + 6, color, kW - kR + 30,
        kT + 14.0 * static_cast<double>(i) + 10, HtmlEscape(curves[i].policy));
  }
  s += "</svg>\n";
  return s;
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::UnavailableError(fmt::format("{}: cannot write", path.string()));
  out << content;
  out.close();
  if (!out) return absl::UnavailableError(fmt::format("{}: write failed", path.string()));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteReport(const std::string& dir, const std::vector<RunResult>& runs,
                         const std::vector<SummaryCell>& summary, double tune_ratio) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(fmt::format("{}: {}", dir, ec.message()));
  const std::filesystem::path root(dir);

  nlohmann::ordered_json j;
  j["tune_ratio"] = tune_ratio;
  nlohmann::ordered_json jr = nlohmann::ordered_json::array();
  for (const RunResult& r : runs) {
    nlohmann::ordered_json o;
    o["workload"] = r.workload;
    o["policy"] = r.policy_name;
    o["seed"] = r.seed;
    o["total_gpus"] = r.total_gpus;
    o["pods_arrived"] = r.pods_arrived;
    o["pods_placed"] = r.pods_placed;
    o["pods_failed"] = r.pods_failed;
    if (std::optional<double> u = r.UnallocatedAt100()) o["unallocated_at_100"] = *u;
    nlohmann::ordered_json alloc = nlohmann::ordered_json::array();
    nlohmann::ordered_json frag = nlohmann::ordered_json::array();
    for (size_t x = 0; x < kLoadColumns; ++x) {
      alloc.push_back(r.alloc_percent[x] ? nlohmann::ordered_json(*r.alloc_percent[x]) : nullptr);
      frag.push_back(r.frag_percent[x] ? nlohmann::ordered_json(*r.frag_percent[x]) : nullptr);
    }
    o["alloc_percent"] = std::move(alloc);
    o["frag_percent"] = std::move(frag);
    jr.push_back(std::move(o));
  }
  j["runs"] = std::move(jr);
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  std::string summary_csv = "workload,policy,runs,unallocated_at_100,expected\n";
  for (const SummaryCell& c : summary) {
    nlohmann::ordered_json o;
    o["workload"] = c.workload;
    o["policy"] = c.policy;
    o["runs"] = c.runs;
    o["unallocated_at_100"] = c.ours;
    o["expected"] = c.expected ? nlohmann::ordered_json(*c.expected) : nullptr;
    js.push_back(std::move(o));
    summary_csv += fmt::format("{},{},{},{:.4f},{}\n", c.workload, c.policy, c.runs, c.ours,
                               c.expected ? fmt::format("{:.4f}", *c.expected) : "");
  }
  j["summary"] = std::move(js);
  if (absl::Status s = WriteFile(root / "runs.json", DumpJson(j, 1) + "\n"); !s.ok()) return s;
  if (absl::Status s = WriteFile(root / "summary.csv", summary_csv); !s.ok()) return s;
  if (absl::Status s = WriteFile(root / "alloc.csv", CurvesCsv(runs, tune_ratio, false)); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFile(root / "frag.csv", CurvesCsv(runs, tune_ratio, true)); !s.ok()) {
    return s;
  }

  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Tessera: FGD "
      "experiment</title>\n<style>body{font-family:sans-serif;margin:24px}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
      "text-align:right}td:first-child,th:first-child{text-align:left}"
      ".pair{display:flex;flex-wrap:wrap;gap:8px}</style></head><body>\n"
      "<h1>FGD fragmentation experiment</h1>\n";
  html += fmt::format(
      "<p>{} runs; workloads tuned to {} x the cluster's GPUs. Unallocated GPUs at 100% arrived "
      "load, mean over seeds (the authors' published value in parentheses where given):</p>\n",
      runs.size(), tune_ratio);
  html += "<pre>" + HtmlEscape(SummaryTable(summary)) + "</pre>\n";
  std::vector<std::string> workloads;
  for (const RunResult& r : runs) {
    if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end()) {
      workloads.push_back(r.workload);
    }
  }
  for (const std::string& w : workloads) {
    const std::vector<Curve> curves = MeanCurves(runs, w);
    html += fmt::format("<h2>{}</h2>\n<div class=\"pair\">\n", HtmlEscape(w));
    html += SvgChart(curves, false, "GPU allocation");
    html += SvgChart(curves, true, "Fragmented GPUs");
    html += "</div>\n";
  }
  html += "</body></html>\n";
  return WriteFile(root / "index.html", html);
}

}  // namespace tessera::fgd
