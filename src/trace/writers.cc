#include "trace/writers.h"

#include <filesystem>
#include <fstream>
#include <string_view>

#include "absl/strings/str_join.h"
#include "fmt/format.h"

namespace tessera::trace {
namespace {

// A field as the CSV reader (trace/csv.h) gives it back: quoted when it holds a comma or a quote
// or starts with '#' (a line starting with '#' is a comment).
std::string Field(std::string_view s) {
  if (s.find_first_of(",\"") == std::string_view::npos && (s.empty() || s.front() != '#'))
    return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Why the reader cannot give `s` back (it splits lines before fields and trims fields), or "".
std::string_view Unwritable(std::string_view s) {
  if (s.find_first_of("\r\n") != std::string_view::npos) return "a line break";
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  if (!s.empty() && (blank(s.front()) || blank(s.back()))) return "a blank at either end";
  return "";
}

absl::Status CheckText(std::string_view what, std::string_view field, std::string_view s,
                       std::string_view forbidden = "") {
  std::string_view why = Unwritable(s);
  std::string with;
  if (why.empty() && !forbidden.empty()) {
    for (char c : forbidden) {
      if (s.find(c) != std::string_view::npos) {
        with = fmt::format("'{}'", c);
        why = with;
        break;
      }
    }
  }
  if (why.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format(
      "{}: its {} \"{}\" has {}, which the CSV reader cannot give back; nothing was written", what,
      field, s, why));
}

absl::Status CheckNode(const TraceNode& n) {
  const std::string what = fmt::format("node {}", n.name);
  if (n.name.empty()) return absl::InvalidArgumentError("a node has no name; nothing was written");
  if (auto s = CheckText(what, "name", n.name); !s.ok()) return s;
  if (auto s = CheckText(what, "gpu_model", n.gpu_model); !s.ok()) return s;
  for (const auto& [k, v] : n.labels) {
    if (auto s = CheckText(what, "label key", k, ";="); !s.ok()) return s;
    if (auto s = CheckText(what, "label value", v, ";"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckJob(const Trace& t, size_t i) {
  const TraceJob& j = t.jobs[i];
  const std::string what = fmt::format("job {}", j.name.empty() ? fmt::format("#{}", i) : j.name);
  if (auto s = CheckText(what, "name", j.name); !s.ok()) return s;
  if (auto s = CheckText(what, "queue", t.queues.at(static_cast<size_t>(j.queue))); !s.ok())
    return s;
  if (auto s = CheckText(what, "namespace", t.namespaces.at(static_cast<size_t>(j.ns))); !s.ok())
    return s;
  if (auto s = CheckText(what, "priority", t.priorities.at(static_cast<size_t>(j.priority)));
      !s.ok())
    return s;
  if (j.gpu_models >= 0) {
    for (const auto& m : t.gpu_model_sets.at(static_cast<size_t>(j.gpu_models)))
      if (auto s = CheckText(what, "gpu_model", m, "|"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// "" for an absent optional, else the number as the shortest text that reads back the same.
std::string Opt(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

absl::Status Close(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) return absl::InternalError(fmt::format("{}: cannot be written", path));
  return absl::OkStatus();
}

absl::Status WriteNodesUnchecked(const Trace& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(fmt::format("{}: cannot be written", path));
  bool groups = false;
  for (const auto& n : t.nodes) groups = groups || n.autoscaling.has_value();
  out << "name,cpu_milli,memory_mib,gpus,gpu_model,max_pods,labels";
  if (groups)
    out << ",min_nodes,max_nodes,provisioning_seconds,scale_down_after_seconds,"
           "price_per_node_hour,spot_discount,interruptions_per_node_hour,notice_seconds";
  out << "\n";
  for (const auto& n : t.nodes) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : n.labels) labels.push_back(k + "=" + v);
    out << fmt::format("{},{},{},{},{},{},{}", Field(n.name), n.cpu_milli, n.memory_mib, n.gpus,
                       Field(n.gpu_model), n.max_pods, Field(absl::StrJoin(labels, ";")));
    if (groups && n.autoscaling) {
      const auto& a = *n.autoscaling;
      out << fmt::format(",{},{},{},{},{}", a.min_nodes, a.max_nodes, a.provisioning_seconds,
                         a.scale_down_after_seconds, Opt(n.price_per_node_hour));
      if (n.spot) {
        out << fmt::format(",{},{},{}", n.spot->discount, n.spot->interruptions_per_node_hour,
                           n.spot->notice_seconds);
      } else {
        out << ",,,";
      }
    } else if (groups) {
      out << ",,,,,,,,";
    }
    out << "\n";
  }
  return Close(out, path);
}

absl::Status WriteJobsUnchecked(const Trace& t, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(fmt::format("{}: cannot be written", path));
  // arrival first: a number, so that no row starts with '#' or a blank
  out << "arrival,name,duration,pods,gpus,gpu_milli,cpu_milli,memory_mib,gpu_model,queue,"
         "namespace,priority,max_wait\n";
  for (const auto& j : t.jobs) {
    const std::string models =
        j.gpu_models < 0
            ? ""
            : absl::StrJoin(t.gpu_model_sets.at(static_cast<size_t>(j.gpu_models)), "|");
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", j.arrival, Field(j.name),
                       j.duration < 0 ? "" : fmt::format("{}", j.duration), j.pods, j.gpus,
                       j.gpu_milli, j.cpu_milli, j.memory_mib, Field(models),
                       Field(t.queues.at(static_cast<size_t>(j.queue))),
                       Field(t.namespaces.at(static_cast<size_t>(j.ns))),
                       Field(t.priorities.at(static_cast<size_t>(j.priority))),
                       j.max_wait < 0 ? "" : fmt::format("{}", j.max_wait));
  }
  return Close(out, path);
}

absl::Status CheckNodes(const Trace& t) {
  for (const auto& n : t.nodes)
    if (auto s = CheckNode(n); !s.ok()) return s;
  return absl::OkStatus();
}

absl::Status CheckJobs(const Trace& t) {
  for (size_t i = 0; i < t.jobs.size(); ++i)
    if (auto s = CheckJob(t, i); !s.ok()) return s;
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteNodes(const Trace& trace, const std::string& path) {
  if (auto s = CheckNodes(trace); !s.ok()) return s;
  return WriteNodesUnchecked(trace, path);
}

absl::Status WriteJobs(const Trace& trace, const std::string& path) {
  if (auto s = CheckJobs(trace); !s.ok()) return s;
  return WriteJobsUnchecked(trace, path);
}

bool QueueOrderKept(const Trace& trace) {
  int32_t last = -1;
  std::vector<bool> seen(trace.queues.size(), false);
  for (const auto& j : trace.jobs) {
    if (seen.at(static_cast<size_t>(j.queue))) continue;
    seen[static_cast<size_t>(j.queue)] = true;
    if (j.queue < last) return false;
    last = j.queue;
  }
  return true;
}

absl::Status WriteTrace(const Trace& trace, const std::string& dir) {
  if (auto s = CheckNodes(trace); !s.ok()) return s;
  if (auto s = CheckJobs(trace); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(fmt::format("{}: cannot be created: {}", dir, ec.message()));
  if (auto s = WriteNodesUnchecked(trace, dir + "/nodes.csv"); !s.ok()) return s;
  return WriteJobsUnchecked(trace, dir + "/jobs.csv");
}

}  // namespace tessera::trace
