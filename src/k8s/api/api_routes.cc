#include "k8s/api/api_routes.h"

#include <httplib.h>

#include <cmath>
#include <ctime>

#include "fmt/format.h"
#include "model/json_text.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

void Error(httplib::Response& res, int status, const std::string& message) {
  Reply(res, status, json{{"error", message}});
}

// "2026-01-31" or "2026-01-31T12:00:00Z": Unix seconds; none when it is neither.
std::optional<double> ParseDay(const std::string& text) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%c", &y, &mo, &d, &h, &mi, &s, &tail);
  if (!(n == 3 && text.size() == 10) && n != 6) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

json TimeJson(double t) {
  if (t < 0 || !std::isfinite(t)) return nullptr;
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json SummaryJson(const ClusterView& v) {
  return {{"time", TimeJson(v.time)},
          {"leader", v.leader},
          {"synced", v.synced},
          {"schedulerName", v.scheduler_name},
          {"nodes", v.node_count},
          {"gpus", v.gpus},
          {"gpusAllocated", v.gpus_allocated},
          {"idleGpuNodes", v.idle_gpu_nodes},
          {"pendingWorkloads", v.pending_workloads},
          {"admittedWorkloads", v.admitted_workloads}};
}

json QueuesJson(const ClusterView& v) {
  json items = json::array();
  for (const ViewQueue& q : v.queues) {
    json resources = json::array();
    for (const ViewQuota& r : q.resources)
      resources.push_back({{"flavor", r.flavor},
                           {"resource", r.resource},
                           {"nominal", r.nominal},
                           {"borrowingLimit", OrNull(r.borrowing_limit)},
                           {"lendingLimit", OrNull(r.lending_limit)},
                           {"used", r.used},
                           {"borrowed", r.borrowed}});
    json reservation = nullptr;
    if (!q.reservation_workload.empty())
      reservation = {{"workload", q.reservation_workload},
                     {"expectedStart", TimeJson(q.reservation_start)}};
    items.push_back(
        {{"name", q.name},
         {"cohort", OrNull(q.cohort)},
         {"strategy", q.strategy},
         {"resources", std::move(resources)},
         {"pending", {{"active", q.pending_active}, {"inadmissible", q.pending_inadmissible}}},
         {"pendingByReason", q.pending_by_reason},
         {"admitted", q.admitted},
         {"weightedShare", OrNull(q.weighted_share)},
         {"reservation", std::move(reservation)}});
  }
  return {{"items", std::move(items)}};
}

json WorkloadJson(const ClusterView& v, const ViewWorkload& w, bool explain) {
  (void)v;
  json pods = json::array();
  for (const ViewPod& p : w.pods)
    pods.push_back({{"name", p.name}, {"node", OrNull(p.node)}, {"gpuIndices", p.gpus}});
  json out = {{"namespace", w.ns},
              {"name", w.name},
              {"owner", OrNull(w.owner)},
              {"localQueue", OrNull(w.local_queue)},
              {"clusterQueue", OrNull(w.cluster_queue)},
              {"priority", w.priority},
              {"priorityClass", OrNull(w.priority_class)},
              {"state", w.state},
              {"reason", OrNull(w.reason)},
              {"created", TimeJson(w.created)},
              {"admittedAt", TimeJson(w.admitted_at)},
              {"waitSeconds", w.wait_seconds},
              {"expectedStart", TimeJson(w.expected_start)},
              {"gpus", w.gpus},
              {"flavor", OrNull(w.flavor)},
              {"pods", std::move(pods)}};
  if (explain) {
    std::string reason = w.reason;
    if (w.state == "admitted") reason = fmt::format("admitted to ClusterQueue {}", w.cluster_queue);
    out["explain"] = {{"reason", reason},
                      {"expectedStart", TimeJson(w.expected_start)},
                      {"wouldFitIf", w.would_fit_if}};
  }
  return out;
}

json WorkloadsJson(const ClusterView& v, const std::string& ns, const std::string& state) {
  json items = json::array();
  for (const ViewWorkload& w : v.workloads) {
    if (!ns.empty() && w.ns != ns) continue;
    if (!state.empty() && w.state != state) continue;
    items.push_back(WorkloadJson(v, w, false));
  }
  return {{"items", std::move(items)}};
}

json NodesJson(const ClusterView& v) {
  json items = json::array();
  for (const ViewNode& n : v.nodes) {
    json slots = json::array();
    for (const ViewGpuSlot& s : n.slots)
      slots.push_back({{"index", s.index},
                       {"workload", OrNull(s.workload)},
                       {"clusterQueue", OrNull(s.cluster_queue)},
                       {"utilization", OrNull(s.utilization)},
                       {"underused", s.underused}});
    items.push_back({{"name", n.name},
                     {"flavor", OrNull(n.flavor)},
                     {"gpuModel", OrNull(n.gpu_model)},
                     {"gpus", n.gpus},
                     {"unschedulable", n.unschedulable},
                     {"gpuSlots", std::move(slots)}});
  }
  return {{"items", std::move(items)}};
}

absl::StatusOr<json> CostJson(const ClusterView& v, const std::string& by) {
  const std::string key = by.empty() ? "cluster-queue" : by;
  auto it = v.cost.rows.find(key);
  if (it == v.cost.rows.end() && key != "namespace" && key != "cluster-queue") {
    std::string known;
    for (const auto& [k, _] : v.cost.rows)
      if (k.starts_with("label:")) known += (known.empty() ? "" : ", ") + k;
    return absl::InvalidArgumentError(
        fmt::format("by={}: expected namespace, cluster-queue or label:KEY with KEY one of "
                    "spec.pricing.rollupLabels{}",
                    key, known.empty() ? " (none seen yet)" : " (" + known + ")"));
  }
  json rows = json::array();
  if (it != v.cost.rows.end()) {
    for (const auto& [group, r] : it->second)
      rows.push_back({{"key", group},
                      {"gpuHours", r.gpu_hours},
                      {"allocatedDollars", v.cost.priced ? json(r.dollars) : json(nullptr)},
                      {"effectiveDollars", nullptr},
                      {"jobs", r.jobs}});
  }
  return json{{"from", TimeJson(v.cost.from)},
              {"to", TimeJson(v.cost.to)},
              {"currency", "USD"},
              {"source", "ledger"},
              {"by", key},
              {"rows", std::move(rows)},
              {"idle",
               {{"gpuHours", v.cost.idle_gpu_hours},
                {"dollars", v.cost.priced ? json(v.cost.idle_dollars) : json(nullptr)}}}};
}

json TrendsJson(const ClusterView& v) {
  json points = json::array();
  for (const TrendPoint& p : v.trends)
    points.push_back({{"time", TimeJson(p.time)},
                      {"gpuAllocation", p.gpu_allocation},
                      {"waitP95Seconds", OrNull(p.wait_p95)},
                      {"idleNodeSeconds", p.idle_node_seconds},
                      {"pendingWorkloads", p.pending_workloads}});
  return {{"interval", v.trend_interval}, {"points", std::move(points)}};
}

void AddApiRoutes(httplib::Server& server, ApiOptions options) {
  auto opts = std::make_shared<ApiOptions>(std::move(options));
  // Every handler: the latest view, or 503 until the loop has synced and published one.
  auto with_view = [opts](auto&& body) {
    return [opts, body](const httplib::Request& req, httplib::Response& res) {
      std::shared_ptr<const ClusterView> v = opts->view ? opts->view() : nullptr;
      if (!v || !v->synced) return Error(res, 503, "the controller has not synced yet");
      try {
        body(*v, req, res);
      } catch (const std::exception& e) {
        Error(res, 500, e.what());
      }
    };
  };
  using Req = httplib::Request;
  using Res = httplib::Response;
  server.Get("/api/v1/summary", with_view([](const ClusterView& v, const Req&, Res& res) {
               Reply(res, 200, SummaryJson(v));
             }));
  server.Get("/api/v1/queues", with_view([](const ClusterView& v, const Req&, Res& res) {
               Reply(res, 200, QueuesJson(v));
             }));
  server.Get("/api/v1/workloads", with_view([](const ClusterView& v, const Req& req, Res& res) {
               const std::string state = req.get_param_value("state");
               if (!state.empty() && state != "pending" && state != "admitted" &&
                   state != "waiting-for-pods")
                 return Error(
                     res, 400,
                     "state=" + state + ": expected pending, admitted or waiting-for-pods");
               Reply(res, 200, WorkloadsJson(v, req.get_param_value("namespace"), state));
             }));
  server.Get(R"(/api/v1/workloads/([^/]+)/([^/]+))",
             with_view([](const ClusterView& v, const Req& req, Res& res) {
               const ViewWorkload* w = v.Find(req.matches[1], req.matches[2]);
               if (!w)
                 return Error(
                     res, 404,
                     fmt::format("no workload {}/{}", req.matches[1].str(), req.matches[2].str()));
               Reply(res, 200, WorkloadJson(v, *w, true));
             }));
  server.Get("/api/v1/nodes", with_view([](const ClusterView& v, const Req&, Res& res) {
               Reply(res, 200, NodesJson(v));
             }));
  server.Get("/api/v1/cost", with_view([opts](const ClusterView& v, const Req& req, Res& res) {
               const std::string by = req.get_param_value("by");
               std::optional<double> from, to;
               for (const char* name : {"from", "to"}) {
                 if (!req.has_param(name)) continue;
                 std::optional<double> t = ParseDay(req.get_param_value(name));
                 if (!t)
                   return Error(res, 400,
                                fmt::format("{}={}: expected YYYY-MM-DD or "
                                            "YYYY-MM-DDTHH:MM:SSZ",
                                            name, req.get_param_value(name)));
                 (std::string(name) == "from" ? from : to) = t;
               }
               absl::StatusOr<json> out =
                   opts->cost_store ? opts->cost_store(by.empty() ? "cluster-queue" : by, from, to)
                                    : CostJson(v, by);
               if (!out.ok())
                 return Error(res, absl::IsInvalidArgument(out.status()) ? 400 : 500,
                              std::string(out.status().message()));
               Reply(res, 200, *out);
             }));
  server.Get("/api/v1/trends", with_view([](const ClusterView& v, const Req&, Res& res) {
               Reply(res, 200, TrendsJson(v));
             }));
  // Anything else under /api/: a JSON 404, not httplib's empty one.
  server.Get(R"(/api/.*)",
             [](const Req& req, Res& res) { Error(res, 404, "no such API path: " + req.path); });
}

}  // namespace tessera::k8s
