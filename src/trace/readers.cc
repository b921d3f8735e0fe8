#include "trace/readers.h"

#include <cmath>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "model/limits.h"
#include "trace/csv.h"

namespace tessera::trace {

void ReadLog::Warn(std::string message) {
  ++warning_count;
  if (static_cast<int>(warnings.size()) < kMaxWarnings) warnings.push_back(std::move(message));
}

namespace {

// Interns strings into one of the Trace's tables.
class Interner {
 public:
  explicit Interner(std::vector<std::string>& table) : table_(table) {
    for (size_t i = 0; i < table_.size(); ++i) index_.emplace(table_[i], static_cast<int32_t>(i));
  }
  int32_t operator()(std::string_view s) {
    auto [it, inserted] = index_.try_emplace(std::string(s), static_cast<int32_t>(table_.size()));
    if (inserted) table_.emplace_back(s);
    return it->second;
  }

 private:
  std::vector<std::string>& table_;
  absl::flat_hash_map<std::string, int32_t> index_;
};

// Collects the problem of the current row; the first one wins.
struct RowCheck {
  std::string problem;
  void Fail(std::string p) {
    if (problem.empty()) problem = std::move(p);
  }
  bool ok() const { return problem.empty(); }
};

int64_t IntField(const CsvReader& r, int col, std::string_view name, int64_t dflt, int64_t min,
                 int64_t max, RowCheck& check) {
  std::string_view f = r.Field(col);
  if (f.empty()) return dflt;
  auto v = ParseInt(f);
  if (!v) {
    check.Fail(fmt::format("{}: \"{}\" is not an integer", name, f));
    return dflt;
  }
  if (*v < min || *v > max) {
    check.Fail(fmt::format("{}: {} is out of range [{}, {}]", name, *v, min, max));
    return dflt;
  }
  return *v;
}

std::optional<double> TimeField(const CsvReader& r, int col, std::string_view name,
                                RowCheck& check) {
  std::string_view f = r.Field(col);
  if (f.empty()) return std::nullopt;
  auto v = ParseDouble(f);
  if (!v) {
    check.Fail(fmt::format("{}: \"{}\" is not a number of seconds", name, f));
    return std::nullopt;
  }
  if (*v < 0) {
    check.Fail(fmt::format("{}: {} is negative", name, *v));
    return std::nullopt;
  }
  // Finite is not enough: 1e308-second arrivals and durations summed to inf, and a run "ended"
  // with a mean GPU allocation of inf%.
  if (*v > kMaxTraceSeconds) {
    check.Fail(fmt::format("{}: {} is more than {:g} seconds, the limit for a time of a trace",
                           name, *v, kMaxTraceSeconds));
    return std::nullopt;
  }
  return v;
}

// A number field within [min, max] (max itself excluded when `max_open`); nullopt when empty or
// broken (the problem goes to `check`).
std::optional<double> NumberField(const CsvReader& r, int col, std::string_view name, double min,
                                  double max, bool max_open, std::string_view what,
                                  RowCheck& check) {
  std::string_view f = r.Field(col);
  if (f.empty()) return std::nullopt;
  auto v = ParseDouble(f);
  if (!v) {
    check.Fail(fmt::format("{}: \"{}\" is not a number ({})", name, f, what));
    return std::nullopt;
  }
  if (*v < min || *v > max || (max_open && *v == max)) {
    check.Fail(
        fmt::format("{}: {} is out of range [{}, {}{}", name, *v, min, max, max_open ? ")" : "]"));
    return std::nullopt;
  }
  return v;
}

// The columns of an elastic node group (docs/trace-replay.md, "Elastic node groups"); -1 when
// absent. A row with max_nodes is a group; the others may be given only with it.
struct GroupColumns {
  int min_nodes, max_nodes, provisioning, scale_down, price, spot_discount, interruptions, notice;

  explicit GroupColumns(const CsvReader& r)
      : min_nodes(r.Column("min_nodes")),
        max_nodes(r.Column("max_nodes")),
        provisioning(r.Column("provisioning_seconds")),
        scale_down(r.Column("scale_down_after_seconds")),
        price(r.Column("price_per_node_hour")),
        spot_discount(r.Column("spot_discount")),
        interruptions(r.Column("interruptions_per_node_hour")),
        notice(r.Column("notice_seconds")) {}

  // Reads the group's fields of the current row into `n`.
  void Read(const CsvReader& r, TraceNode& n, RowCheck& check) const {
    const std::pair<int, std::string_view> others[] = {
        {min_nodes, "min_nodes"},
        {provisioning, "provisioning_seconds"},
        {scale_down, "scale_down_after_seconds"},
        {price, "price_per_node_hour"},
        {spot_discount, "spot_discount"},
        {interruptions, "interruptions_per_node_hour"},
        {notice, "notice_seconds"}};
    if (r.Field(max_nodes).empty()) {
      for (const auto& [col, name] : others)
        if (!r.Field(col).empty())
          check.Fail(fmt::format("{}: only an elastic group has it; give max_nodes too", name));
      return;
    }
    NodePoolAutoscaling a;
    a.max_nodes = IntField(r, max_nodes, "max_nodes", 1, 1, kMaxNodePoolSize, check);
    a.min_nodes = IntField(r, min_nodes, "min_nodes", 0, 0, kMaxNodePoolSize, check);
    if (check.ok() && a.min_nodes > a.max_nodes)
      check.Fail(fmt::format("min_nodes: {} is more than max_nodes {}", a.min_nodes, a.max_nodes));
    constexpr double kMaxSeconds = kMaxTraceSeconds;
    a.provisioning_seconds = NumberField(r, provisioning, "provisioning_seconds", 0, kMaxSeconds,
                                         false, "seconds", check)
                                 .value_or(a.provisioning_seconds);
    a.scale_down_after_seconds = NumberField(r, scale_down, "scale_down_after_seconds", 0,
                                             kMaxSeconds, false, "seconds", check)
                                     .value_or(a.scale_down_after_seconds);
    n.autoscaling = a;
    n.price_per_node_hour = NumberField(r, price, "price_per_node_hour", 0, kMaxNodePricePerHour,
                                        false, "dollars per node-hour", check);
    auto discount = NumberField(r, spot_discount, "spot_discount", 0, 1, true, "a fraction", check);
    auto rate = NumberField(r, interruptions, "interruptions_per_node_hour", 0,
                            kMaxInterruptionsPerNodeHour, false, "a rate per node-hour", check);
    auto notice_s =
        NumberField(r, notice, "notice_seconds", 0, kMaxSeconds, false, "seconds", check);
    if (discount || rate || notice_s) {
      NodePoolSpot spot;
      spot.discount = discount.value_or(spot.discount);
      spot.interruptions_per_node_hour = rate.value_or(spot.interruptions_per_node_hour);
      spot.notice_seconds = notice_s.value_or(spot.notice_seconds);
      n.spot = spot;
    }
  }
};

// Handles the end of one row: keeps it, skips it with a warning, or fails the read.
absl::Status EndRow(const CsvReader& r, const RowCheck& check, BadRows bad_rows, ReadLog& log,
                    bool& keep) {
  keep = check.ok();
  if (keep) return absl::OkStatus();
  std::string msg = fmt::format("{}: {}", r.Where(), check.problem);
  if (bad_rows == BadRows::kFail) return absl::InvalidArgumentError(msg);
  ++log.skipped_rows;
  log.Warn(msg + " (row skipped)");
  return absl::OkStatus();
}

void WarnUnreadColumns(const CsvReader& r, std::initializer_list<std::string_view> known,
                       ReadLog& log) {
  for (const auto& h : r.header()) {
    bool found = false;
    for (auto k : known) found = found || h == k;
    if (!found) log.Warn(fmt::format("{}:1: column \"{}\" is not read", r.path(), h));
  }
}

int32_t InternModels(std::string_view spec, Trace& trace,
                     absl::flat_hash_map<std::string, int32_t>& index) {
  std::vector<std::string> models;
  for (auto m : SplitTrimmed(spec, '|'))
    if (!m.empty()) models.emplace_back(m);
  if (models.empty()) return -1;
  std::string key = absl::StrJoin(models, "|");
  auto [it, inserted] = index.try_emplace(key, static_cast<int32_t>(trace.gpu_model_sets.size()));
  if (inserted) trace.gpu_model_sets.push_back(std::move(models));
  return it->second;
}

absl::Status CheckRecord(const CsvReader& r, BadRows bad_rows, ReadLog& log, bool& keep) {
  keep = true;
  if (r.error().empty()) return absl::OkStatus();
  // Nothing after an overlong line is read, so skipping it would drop the rest silently.
  if (r.too_long()) return absl::InvalidArgumentError(fmt::format("{}: {}", r.Where(), r.error()));
  RowCheck check;
  check.Fail(r.error());
  return EndRow(r, check, bad_rows, log, keep);
}

}  // namespace

bool OpenbQosPriority(std::string_view qos, std::string_view& priority) {
  // Latency-sensitive and guaranteed pods outrank burstable ones, which outrank best effort.
  if (qos.empty()) {
    priority = {};
  } else if (qos == "LS" || qos == "LSE" || qos == "LSR" || qos == "Guaranteed") {
    priority = "1000";
  } else if (qos == "Burstable") {
    priority = "500";
  } else if (qos == "BE" || qos == "BestEffort") {
    priority = "0";
  } else {
    return false;
  }
  return true;
}

absl::Status ReadNodes(const std::string& path, BadRows bad_rows, Trace& trace, ReadLog& log) {
  CsvReader r;
  if (auto s = r.Open(path); !s.ok()) return s;
  const int c_name = r.Column({"name", "sn"});
  const int c_cpu = r.Column("cpu_milli");
  const int c_mem = r.Column("memory_mib");
  const int c_gpu = r.Column({"gpus", "gpu"});
  const int c_model = r.Column({"gpu_model", "model"});
  const int c_pods = r.Column("max_pods");
  const int c_labels = r.Column("labels");
  if (c_name < 0 || c_cpu < 0 || c_mem < 0) {
    return absl::InvalidArgumentError(fmt::format(
        "{}:1: not a node list: the header needs name (or sn), cpu_milli and memory_mib; it has "
        "{}",
        path, absl::StrJoin(r.header(), ",")));
  }
  WarnUnreadColumns(
      r,
      {"name", "sn", "cpu_milli", "memory_mib", "gpus", "gpu", "gpu_model", "model", "max_pods",
       "labels", "min_nodes", "max_nodes", "provisioning_seconds", "scale_down_after_seconds",
       "price_per_node_hour", "spot_discount", "interruptions_per_node_hour", "notice_seconds"},
      log);
  const GroupColumns group(r);
  absl::flat_hash_set<std::string> names;
  for (const auto& n : trace.nodes) names.insert(n.name);
  while (r.Next()) {
    bool keep = true;
    if (auto s = CheckRecord(r, bad_rows, log, keep); !s.ok()) return s;
    if (!keep) continue;
    RowCheck check;
    TraceNode n;
    n.name = std::string(r.Field(c_name));
    if (n.name.empty()) check.Fail("name is empty");
    constexpr int64_t kMaxMilli = int64_t{1} << 40;
    n.cpu_milli = IntField(r, c_cpu, "cpu_milli", 0, 0, kMaxMilli, check);
    n.memory_mib = IntField(r, c_mem, "memory_mib", 0, 0, kMaxMilli, check);
    n.gpus = static_cast<int32_t>(IntField(r, c_gpu, "gpus", 0, 0, 1024, check));
    n.max_pods = static_cast<int32_t>(IntField(r, c_pods, "max_pods", 110, 0, 1 << 20, check));
    n.gpu_model = std::string(r.Field(c_model));
    std::string_view labels = r.Field(c_labels);
    for (auto kv : labels.empty() ? std::vector<std::string_view>{} : SplitTrimmed(labels, ';')) {
      if (kv.empty()) continue;
      size_t eq = kv.find('=');
      std::string key(eq == std::string_view::npos ? std::string_view{} : Trim(kv.substr(0, eq)));
      if (key.empty()) {
        check.Fail(fmt::format("labels: \"{}\" is not key=value", kv));
        break;
      }
      n.labels[key] = std::string(Trim(kv.substr(eq + 1)));
    }
    group.Read(r, n, check);
    if (check.ok() && !names.insert(n.name).second)
      check.Fail(fmt::format("node {} is listed twice", n.name));
    if (auto s = EndRow(r, check, bad_rows, log, keep); !s.ok()) return s;
    if (!keep) continue;
    n.source = r.Where();
    trace.nodes.push_back(std::move(n));
  }
  return absl::OkStatus();
}

absl::Status ReadJobs(const std::string& path, BadRows bad_rows, Trace& trace, ReadLog& log) {
  CsvReader r;
  if (auto s = r.Open(path); !s.ok()) return s;
  trace.jobs_file = path;
  const bool openb = r.Column("num_gpu") >= 0;
  const bool generic = r.Column("arrival") >= 0;
  if (!openb && !generic) {
    return absl::InvalidArgumentError(fmt::format(
        "{}:1: not a job list: expected the openb pod columns (name,cpu_milli,memory_mib,num_gpu,"
        "gpu_milli,...) or the generic job columns (arrival,duration,...); the header is {}",
        path, absl::StrJoin(r.header(), ",")));
  }
  Interner queues(trace.queues), priorities(trace.priorities), namespaces(trace.namespaces);
  absl::flat_hash_map<std::string, int32_t> model_index;
  for (size_t i = 0; i < trace.gpu_model_sets.size(); ++i)
    model_index.emplace(absl::StrJoin(trace.gpu_model_sets[i], "|"), static_cast<int32_t>(i));

  const int c_name = r.Column("name");
  const int c_cpu = r.Column("cpu_milli");
  const int c_mem = r.Column("memory_mib");
  const int c_milli = r.Column("gpu_milli");
  // openb
  const int c_num_gpu = r.Column("num_gpu");
  const int c_spec = r.Column("gpu_spec");
  const int c_qos = r.Column("qos");
  const int c_created = r.Column("creation_time");
  const int c_deleted = r.Column("deletion_time");
  const int c_scheduled = r.Column("scheduled_time");
  // generic
  const int c_arrival = r.Column("arrival");
  const int c_duration = r.Column("duration");
  const int c_pods = r.Column("pods");
  const int c_gpus = r.Column("gpus");
  const int c_model = r.Column("gpu_model");
  const int c_queue = r.Column("queue");
  const int c_ns = r.Column("namespace");
  const int c_prio = r.Column("priority");
  const int c_max_wait = r.Column("max_wait");

  if (openb) {
    if (c_cpu < 0 || c_mem < 0 || c_milli < 0) {
      return absl::InvalidArgumentError(fmt::format(
          "{}:1: an openb pod list needs cpu_milli, memory_mib, num_gpu and gpu_milli", path));
    }
    WarnUnreadColumns(r,
                      {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                       "pod_phase", "creation_time", "deletion_time", "scheduled_time"},
                      log);
  } else {
    if (c_duration < 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}:1: a generic job list needs the column duration", path));
    }
    WarnUnreadColumns(r,
                      {"name", "arrival", "duration", "pods", "cpu_milli", "memory_mib", "gpus",
                       "gpu_milli", "gpu_model", "queue", "namespace", "priority", "max_wait"},
                      log);
  }

  int64_t ordinal = 0;  // data rows so far: the arrival of openb rows without times
  std::string_view prio;
  constexpr int64_t kMaxMilli = int64_t{1} << 40;
  while (r.Next()) {
    bool keep = true;
    if (auto s = CheckRecord(r, bad_rows, log, keep); !s.ok()) return s;
    if (!keep) continue;
    RowCheck check;
    TraceJob j;
    j.line = r.line();
    j.name = std::string(r.Field(c_name));
    j.cpu_milli = IntField(r, c_cpu, "cpu_milli", 0, 0, kMaxMilli, check);
    j.memory_mib = IntField(r, c_mem, "memory_mib", 0, 0, kMaxMilli, check);
    if (openb) {
      int64_t num_gpu = IntField(r, c_num_gpu, "num_gpu", 0, 0, 1024, check);
      int64_t milli = IntField(r, c_milli, "gpu_milli", 0, 0, 1000, check);
      if (check.ok()) {
        if (num_gpu == 0 && milli != 0) {
          check.Fail(fmt::format("gpu_milli is {} but num_gpu is 0", milli));
        } else if (num_gpu > 0 && milli == 0) {
          check.Fail(fmt::format("num_gpu is {} but gpu_milli is 0", num_gpu));
        } else if (num_gpu > 1 && milli < 1000) {
          check.Fail(fmt::format(
              "num_gpu {} with gpu_milli {}: a share of several GPUs is not an openb pod", num_gpu,
              milli));
        } else if (milli == 1000 || num_gpu == 0) {
          j.gpus = static_cast<int32_t>(num_gpu);
        } else {
          j.gpu_milli = static_cast<int32_t>(milli);
        }
      }
      j.gpu_models = InternModels(r.Field(c_spec), trace, model_index);
      if (!OpenbQosPriority(r.Field(c_qos), prio))
        check.Fail(fmt::format("qos: \"{}\" is not LS, LSE, LSR, Guaranteed, Burstable or BE",
                               r.Field(c_qos)));
      j.priority = priorities(prio);
      if (c_created < 0) {
        j.arrival = static_cast<double>(ordinal);  // no times: one pod a second, never leaving
      } else {
        auto created = TimeField(r, c_created, "creation_time", check);
        auto deleted = TimeField(r, c_deleted, "deletion_time", check);
        auto scheduled = TimeField(r, c_scheduled, "scheduled_time", check);
        if (!created && check.ok()) check.Fail("creation_time is empty");
        if (created) j.arrival = *created;
        if (created && deleted && check.ok()) {
          double start = scheduled ? *scheduled : *created;
          if (*deleted < start) {
            check.Fail(fmt::format("deletion_time {} is before {} {}", *deleted,
                                   scheduled ? "scheduled_time" : "creation_time", start));
          }
          j.duration = *deleted - start;
        }
      }
    } else {
      auto arrival = TimeField(r, c_arrival, "arrival", check);
      if (!arrival && check.ok()) check.Fail("arrival is empty");
      if (arrival) j.arrival = *arrival;
      if (auto d = TimeField(r, c_duration, "duration", check)) j.duration = *d;
      j.pods = static_cast<int32_t>(IntField(r, c_pods, "pods", 1, 1, 1 << 20, check));
      j.gpus = static_cast<int32_t>(IntField(r, c_gpus, "gpus", 0, 0, 1024, check));
      int64_t milli = IntField(r, c_milli, "gpu_milli", 0, 0, 1000, check);
      if (check.ok() && milli > 0 && milli < 1000) {
        if (j.gpus > 1) {
          check.Fail(
              fmt::format("gpus {} with gpu_milli {}: a share is of one GPU", j.gpus, milli));
        }
        j.gpus = 0;
        j.gpu_milli = static_cast<int32_t>(milli);
      } else if (check.ok() && milli == 1000 && j.gpus == 0) {
        j.gpus = 1;
      }
      j.gpu_models = InternModels(r.Field(c_model), trace, model_index);
      j.queue = queues(r.Field(c_queue));
      std::string_view ns = r.Field(c_ns);
      j.ns = namespaces(ns.empty() ? "default" : ns);
      j.priority = priorities(r.Field(c_prio));
      if (auto m = TimeField(r, c_max_wait, "max_wait", check)) j.max_wait = *m;
    }
    if (auto s = EndRow(r, check, bad_rows, log, keep); !s.ok()) return s;
    ++ordinal;
    if (keep) trace.jobs.push_back(std::move(j));
  }
  return absl::OkStatus();
}

}  // namespace tessera::trace
