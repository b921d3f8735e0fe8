// serve's read-only JSON API (docs/observability.md, "The JSON API"): /api/v1/summary, queues,
// workloads, workloads/NS/NAME, nodes, cost and trends, served on the metrics port from the
// latest ClusterView (cluster_view.h). GET only: nothing here writes.
//
// The *Json functions turn a view into the documented JSON (tests call them directly);
// AddApiRoutes registers the handlers on MetricsServer's httplib server.
//
// Thread-safety: the functions are pure; the handlers only read the published view.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "k8s/api/cluster_view.h"
#include "nlohmann/json.hpp"

namespace httplib {
class Server;
}  // namespace httplib

namespace tessera::k8s {

// "2026-11-24T03:19:10Z" (UTC, whole seconds), or null for a negative time.
nlohmann::json TimeJson(double unix_seconds);

nlohmann::json SummaryJson(const ClusterView& v);
nlohmann::json QueuesJson(const ClusterView& v);
nlohmann::json WorkloadJson(const ClusterView& v, const ViewWorkload& w, bool explain);
// `ns` empty: every namespace; `state` empty: every state.
nlohmann::json WorkloadsJson(const ClusterView& v, const std::string& ns, const std::string& state);
nlohmann::json NodesJson(const ClusterView& v);
// `by`: "namespace", "cluster-queue" or "label:KEY" (KEY one of spec.pricing.rollupLabels);
// InvalidArgument for another.
absl::StatusOr<nlohmann::json> CostJson(const ClusterView& v, const std::string& by);
nlohmann::json TrendsJson(const ClusterView& v);

struct ApiOptions {
  // The latest view; null before the loop published one (answered 503).
  std::function<std::shared_ptr<const ClusterView>()> view;
  // The seam for the accounting store (serve --accounting-db): when set, /api/v1/cost asks it
  // with `by` and the period's bounds (Unix seconds; none: open) and answers its JSON, in the
  // shape of CostJson; unset: the cost accumulated since serve started (CostJson).
  std::function<absl::StatusOr<nlohmann::json>(const std::string& by, std::optional<double> from,
                                               std::optional<double> to)>
      cost_store;
};

// Registers GET /api/v1/... on `server`.
void AddApiRoutes(httplib::Server& server, ApiOptions options);

}  // namespace tessera::k8s
