#include "k8s/api/get_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

#include "engine/time/span.h"
#include "fmt/format.h"
#include "k8s/api/table.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;

// A nullable string field: its value, or `absent` when null or missing.
std::string Str(const json& j, const char* key, const std::string& absent = "-") {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absent;
  return it->get<std::string>();
}

std::string Num(double v) {
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.2f}", v);
}

// "in 5m", "now" (due), or "-".
std::string When(const json& j, const char* key, double now) {
  const std::string t = Str(j, key, "");
  if (t.empty()) return "-";
  const double at = ParseTime(t);
  if (at < 0) return t;
  return at <= now ? "now" : "in " + FormatSpan(at - now);
}

// -o wide: the nodes a workload's pods are on, "a,b" ("-" when none is placed).
std::string Nodes(const json& w) {
  std::string out;
  std::map<std::string, bool> seen;
  for (const json& p : w.at("pods")) {
    const std::string n = Str(p, "node", "");
    if (n.empty() || seen[n]) continue;
    seen[n] = true;
    out += (out.empty() ? "" : ",") + n;
  }
  return out.empty() ? "-" : out;
}

std::string Cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

template <typename F>
absl::StatusOr<std::string> Guard(const char* what, F&& f) {
  try {
    return f();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("the {} answer of tessera serve has an unexpected shape: {}", what, e.what()));
  }
}

}  // namespace

double ParseTime(const std::string& text) {
  // A simulation's "t=5400s" (k8s/api/sim_document.h).
  if (text.size() > 3 && text.compare(0, 2, "t=") == 0 && text.back() == 's') {
    char* end = nullptr;
    const double v = std::strtod(text.c_str() + 2, &end);
    return end == text.c_str() + text.size() - 1 && std::isfinite(v) && v >= 0 ? v : -1;
  }
  return ParseRfc3339(text);
}

double ParseRfc3339(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s) != 6)
    return -1;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<double>(timegm(&tm));
}

absl::StatusOr<std::string> FormatQueues(const json& queues) {
  return Guard("queues", [&] {
    Table t({"NAME", "COHORT", "STRATEGY", "PENDING", "INADMISSIBLE", "ADMITTED",
             "GPUS USED/NOMINAL", "BORROWED", "RESERVED FOR"});
    for (const json& q : queues.at("items")) {
      std::string gpus, borrowed;
      double borrowed_sum = 0;
      for (const json& r : q.at("resources")) {
        if (r.at("resource").get<std::string>() != "nvidia.com/gpu") continue;
        gpus +=
            fmt::format("{}{}:{}/{}", gpus.empty() ? "" : ",", r.at("flavor").get<std::string>(),
                        Num(r.at("used").get<double>()), Num(r.at("nominal").get<double>()));
        borrowed_sum += r.at("borrowed").get<double>();
      }
      std::string reserved = "-";
      if (const json& res = q.at("reservation"); !res.is_null())
        reserved = res.at("workload").get<std::string>();
      t.AddRow({q.at("name").get<std::string>(), Str(q, "cohort"), Str(q, "strategy"),
                Num(q.at("pending").at("active").get<double>()),
                Num(q.at("pending").at("inadmissible").get<double>()),
                Num(q.at("admitted").get<double>()), gpus.empty() ? "-" : gpus, Num(borrowed_sum),
                reserved});
    }
    return t.Render();
  });
}

absl::StatusOr<std::string> FormatWorkloads(const json& workloads, bool with_namespace,
                                            double now, bool wide) {
  return Guard("workloads", [&] {
    std::vector<std::string> header = {"NAME", "OWNER", "QUEUE",          "STATE",
                                       "PRIORITY", "GPUS", "FLAVOR", "WAIT", "EXPECTED START",
                                       "REASON"};
    if (wide) header.push_back("NODES");
    if (with_namespace) header.insert(header.begin(), "NAMESPACE");
    Table t(header);
    for (const json& w : workloads.at("items")) {
      const std::string state = w.at("state").get<std::string>();
      std::vector<std::string> row = {w.at("name").get<std::string>(),
                                      Str(w, "owner"),
                                      Str(w, "clusterQueue", Str(w, "localQueue")),
                                      state,
                                      Num(w.at("priority").get<double>()),
                                      Num(w.at("gpus").get<double>()),
                                      Str(w, "flavor"),
                                      FormatSpan(w.at("waitSeconds").get<double>()),
                                      state == "admitted" ? "-" : When(w, "expectedStart", now),
                                      wide ? Str(w, "reason") : Cut(Str(w, "reason"), 80)};
      if (wide) row.push_back(Nodes(w));
      if (with_namespace) row.insert(row.begin(), w.at("namespace").get<std::string>());
      t.AddRow(std::move(row));
    }
    return t.rows() == 0 ? std::string("No workloads found.\n") : t.Render();
  });
}

absl::StatusOr<std::string> FormatNodes(const json& nodes) {
  return Guard("nodes", [&] {
    Table t({"NAME", "FLAVOR", "GPU MODEL", "GPUS", "USED", "GPU MAP", "WORKLOADS"});
    for (const json& n : nodes.at("items")) {
      std::string map;
      int used = 0;
      std::map<std::string, int> by_workload;
      for (const json& s : n.at("gpuSlots")) {
        const std::string w = Str(s, "workload", "");
        map += w.empty() ? '.' : '#';
        if (!w.empty()) {
          ++used;
          ++by_workload[w];
        }
      }
      std::string workloads;
      for (const auto& [w, k] : by_workload)
        workloads += fmt::format("{}{}({})", workloads.empty() ? "" : ",", w, k);
      std::string name = n.at("name").get<std::string>();
      if (n.at("unschedulable").get<bool>()) name += " (cordoned)";
      t.AddRow({name, Str(n, "flavor"), Str(n, "gpuModel"), Num(n.at("gpus").get<double>()),
                std::to_string(used), map.empty() ? "-" : map,
                workloads.empty() ? "-" : workloads});
    }
    return t.Render();
  });
}

absl::StatusOr<std::string> FormatExplain(const json& w, double now) {
  return Guard("workload", [&] {
    const json& ex = w.at("explain");
    std::string out;
    auto field = [&](const char* name, const std::string& value) {
      out += fmt::format("{:<16}{}\n", std::string(name) + ":", value);
    };
    field("Workload", w.at("namespace").get<std::string>() + "/" + w.at("name").get<std::string>());
    const std::string state = w.at("state").get<std::string>();
    field("State", state);
    std::string queue = Str(w, "clusterQueue");
    if (const std::string lq = Str(w, "localQueue", ""); !lq.empty())
      queue += " (LocalQueue " + lq + ")";
    field("ClusterQueue", queue);
    std::string prio = Num(w.at("priority").get<double>());
    if (const std::string pc = Str(w, "priorityClass", ""); !pc.empty()) prio += " (" + pc + ")";
    field("Priority", prio);
    field("GPUs", Num(w.at("gpus").get<double>()) +
                      (Str(w, "flavor", "").empty() ? "" : " of flavor " + Str(w, "flavor")));
    field("Created", Str(w, "created"));
    if (state == "admitted") {
      field("Admitted", Str(w, "admittedAt") + " (waited " +
                            FormatSpan(w.at("waitSeconds").get<double>()) + ")");
    } else {
      field("Waiting", FormatSpan(w.at("waitSeconds").get<double>()));
    }
    field("Reason", Str(ex, "reason"));
    if (state != "admitted") {
      const std::string start = Str(ex, "expectedStart", "");
      field("Expected start", start.empty() ? "unknown (no estimate of when it fits)"
                                            : start + " (" + When(ex, "expectedStart", now) + ")");
      const json& hints = ex.at("wouldFitIf");
      out += "Would fit if:\n";
      if (hints.empty()) out += "  (nothing known)\n";
      for (const json& h : hints) out += "  - " + h.get<std::string>() + "\n";
    }
    Table pods({"POD", "NODE", "GPUS"});
    for (const json& p : w.at("pods")) {
      std::string gpus;
      for (const json& g : p.at("gpuIndices"))
        gpus += std::string(gpus.empty() ? "" : ",") + std::to_string(g.get<int64_t>());
      pods.AddRow({p.at("name").get<std::string>(), Str(p, "node"), gpus.empty() ? "-" : gpus});
    }
    out += "Pods:\n";
    if (pods.rows() == 0) {
      out += "  (none)\n";
    } else {
      std::string table = pods.Render();
      size_t start = 0;
      while (start < table.size()) {
        size_t end = table.find('\n', start);
        out += "  " + table.substr(start, end - start + 1);
        start = end + 1;
      }
    }
    return out;
  });
}

}  // namespace tessera::k8s
