#include "k8s/api/sim_document.h"

#include <cmath>
#include <map>
#include <utility>

#include "fmt/format.h"
#include "model/bounded_read.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;

// The deepest nesting of arrays and objects in `text` (strings skipped), stopping past `limit`:
// checked before parsing, so that no document builds a tree deeper than the limit.
bool DepthAtMost(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    }
    if (c == ']' || c == '}') --depth;
  }
  return true;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? std::string() : it->get<std::string>();
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

double Num(const json& j, const char* key, double absent = -1) {
  auto it = j.find(key);
  return it == j.end() || !it->is_number() ? absent : it->get<double>();
}

// sim's state names (engine/scheduler.cc WorkloadStateName) as serve's: running is admitted.
std::string State(const std::string& s) { return s == "running" ? "admitted" : s; }

template <typename F>
absl::StatusOr<json> Guard(const SimDocument& d, F&& f) {
  try {
    return f();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: not the output of `tessera sim -o json` of this version: {}", d.file, e.what()));
  }
}

// One item of serve's /api/v1/workloads from one of sim's workloads.
json Item(const json& w, double end) {
  const std::string state = State(w.at("state").get<std::string>());
  const double created = Num(w, "created", 0), admitted = Num(w, "admittedAt");
  const double expected = state == "pending" ? Num(w, "expectedStart") : -1;
  json pods = json::array();
  for (const json& p : w.at("pods"))
    pods.push_back({{"name", p.at("name")}, {"node", p.at("node")}, {"gpuIndices", p.at("gpus")}});
  const std::string cq = Str(w, "clusterQueue"), reason = Str(w, "reason");
  const std::string expected_text = expected >= 0 ? SimTime(expected) : "";
  return {{"namespace", w.at("namespace")},
          {"name", w.at("workloadName")},
          {"labels", w.value("labels", json::object())},
          {"owner", nullptr},
          {"localQueue", OrNull(Str(w, "localQueue"))},
          {"clusterQueue", OrNull(cq)},
          {"priority", w.at("priority")},
          {"priorityClass", nullptr},
          {"state", state},
          {"reason", state == "admitted" ? json(nullptr) : OrNull(reason)},
          {"created", SimTime(created)},
          {"admittedAt", admitted >= 0 ? json(SimTime(admitted)) : json(nullptr)},
          {"waitSeconds", std::max(0.0, (admitted >= 0 ? admitted : end) - created)},
          {"expectedStart", OrNull(expected_text)},
          {"gpus", w.at("gpus")},
          {"flavor", nullptr},
          {"pods", std::move(pods)},
          {"explain",
           {{"reason", state == "admitted" ? json(fmt::format("admitted to ClusterQueue {}", cq))
                                           : OrNull(reason)},
            {"expectedStart", OrNull(expected_text)},
            {"wouldFitIf", json::array()}}}};
}

}  // namespace

std::string SimTime(double seconds) { return fmt::format("t={:.0f}s", seconds); }

absl::StatusOr<SimDocument> LoadSimDocument(const std::string& file) {
  absl::StatusOr<std::string> text =
      ReadFileBounded(file, kMaxSimDocumentBytes, "the output of tessera sim (1 GiB)");
  if (!text.ok()) return absl::InvalidArgumentError(
        fmt::format("--from {}", std::string(text.status().message())));
  if (!DepthAtMost(*text, kMaxSimDocumentDepth))
    return absl::InvalidArgumentError(fmt::format(
        "--from {}: nested deeper than {} levels: not the output of `tessera sim -o json`", file,
        kMaxSimDocumentDepth));
  SimDocument d;
  d.file = file;
  d.doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (d.doc.is_discarded() || !d.doc.is_object() || !d.doc.contains("workloads") ||
      !d.doc["workloads"].is_array() || !d.doc.contains("summary"))
    return absl::InvalidArgumentError(fmt::format(
        "--from {}: not the output of `tessera sim -o json` (a JSON object with workloads and "
        "summary)",
        file));
  if (!d.doc.contains("nodes") || !d.doc.contains("clusterQueues"))
    return absl::InvalidArgumentError(fmt::format(
        "--from {}: written by an older tessera sim (no nodes or clusterQueues): run it again",
        file));
  d.end = Num(d.doc["summary"], "endTime", 0);
  return d;
}

absl::StatusOr<json> SimWorkloads(const SimDocument& d, const std::string& ns) {
  return Guard(d, [&] {
    json items = json::array();
    for (const json& w : d.doc.at("workloads"))
      if (ns.empty() || w.at("namespace") == ns) items.push_back(Item(w, d.end));
    const auto total = items.size();
    return json{{"time", SimTime(d.end)}, {"total", total}, {"items", std::move(items)}};
  });
}

absl::StatusOr<json> SimWorkload(const SimDocument& d, const std::string& ns,
                                 const std::string& name) {
  absl::StatusOr<json> all = Guard(d, [&]() -> json {
    for (const json& w : d.doc.at("workloads"))
      if (w.at("namespace") == ns && w.at("workloadName") == name) return Item(w, d.end);
    return nullptr;
  });
  if (!all.ok()) return all.status();
  if (all->is_null())
    return absl::NotFoundError(fmt::format("{}: no workload {}/{}", d.file, ns, name));
  return all;
}

absl::StatusOr<json> SimQueues(const SimDocument& d) {
  return Guard(d, [&] {
    struct Counts {
      double used = 0;
      int64_t admitted = 0, pending = 0;
    };
    std::map<std::string, Counts> counts;
    for (const json& w : d.doc.at("workloads")) {
      const std::string state = State(w.at("state").get<std::string>());
      Counts& c = counts[Str(w, "clusterQueue")];
      if (state == "pending") ++c.pending;
      if (state == "admitted" || state == "terminating") {
        ++c.admitted;
        c.used += w.at("gpus").get<double>();
      }
    }
    json items = json::array();
    for (const json& q : d.doc.at("clusterQueues")) {
      const Counts c = counts[q.at("name").get<std::string>()];
      items.push_back({{"name", q.at("name")},
                       {"cohort", OrNull(Str(q, "cohort"))},
                       {"strategy", nullptr},
                       {"resources",
                        json::array({{{"flavor", "(all)"},
                                      {"resource", "nvidia.com/gpu"},
                                      {"nominal", q.at("nominalGpus")},
                                      {"borrowingLimit", nullptr},
                                      {"lendingLimit", nullptr},
                                      {"used", std::round(c.used * 1000) / 1000},
                                      {"borrowed", 0}}})},
                       {"pending", {{"active", c.pending}, {"inadmissible", 0}}},
                       {"pendingByReason", json::object()},
                       {"admitted", c.admitted},
                       {"weightedShare", nullptr},
                       {"reservation", nullptr}});
    }
    return json{{"time", SimTime(d.end)}, {"items", std::move(items)}};
  });
}

absl::StatusOr<json> SimNodes(const SimDocument& d) {
  return Guard(d, [&] {
    std::map<std::string, json> slots;  // node -> its slots
    for (const json& n : d.doc.at("nodes")) {
      json s = json::array();
      for (int64_t g = 0; g < n.at("gpus").get<int64_t>() && g < 1024; ++g)
        s.push_back({{"index", g},
                     {"workload", nullptr},
                     {"clusterQueue", nullptr},
                     {"utilization", nullptr},
                     {"underused", false}});
      slots[n.at("name").get<std::string>()] = std::move(s);
    }
    for (const json& w : d.doc.at("workloads")) {
      const std::string state = State(w.at("state").get<std::string>());
      if (state != "admitted" && state != "terminating") continue;
      for (const json& p : w.at("pods")) {
        auto it = slots.find(p.at("node").get<std::string>());
        if (it == slots.end()) continue;
        for (const json& g : p.at("gpus")) {
          const auto i = g.get<int64_t>();
          if (i < 0 || static_cast<size_t>(i) >= it->second.size()) continue;
          it->second[static_cast<size_t>(i)]["workload"] = w.at("name");
          it->second[static_cast<size_t>(i)]["clusterQueue"] = OrNull(Str(w, "clusterQueue"));
        }
      }
    }
    json items = json::array();
    for (const json& n : d.doc.at("nodes")) {
      const std::string name = n.at("name").get<std::string>();
      items.push_back({{"name", name},
                       {"labels", n.value("labels", json::object())},
                       {"flavor", nullptr},
                       {"gpuModel", OrNull(Str(n, "gpuModel"))},
                       {"gpus", n.at("gpus")},
                       {"unschedulable", n.value("unschedulable", false)},
                       {"gpuSlots", std::move(slots[name])}});
    }
    return json{{"time", SimTime(d.end)}, {"items", std::move(items)}};
  });
}

}  // namespace tessera::k8s
