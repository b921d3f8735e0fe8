// The dashboard of `tessera serve` and `tessera sim replay --report` (docs/observability.md,
// "Dashboard"): one page whose HTML, CSS and JS (src/ui/web/) are compiled into the binary, so
// that it needs no CDN, no network and no files at run time. The page reads serve's read-only
// JSON API (/api/v1/..., documented in docs/observability.md) and draws queues, workloads, the GPU
// map, cost and trends; or, in a report, a snapshot of those documents embedded in the page.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::ui {

// The page with its CSS and JS inline. `snapshot_json` empty: the live page, which polls the API
// every few seconds. Otherwise a JSON object whose members are the API's documents by endpoint
// (summary, queues, workloads, nodes, cost, trends; absent ones show "not in this report"): the
// page shows them and does not poll. The snapshot is embedded so that no content can end its
// <script> element.
std::string DashboardPage(std::string_view snapshot_json = {});

// What the metrics port answers for a path of the UI, or nullopt when the path is not the UI's:
// "/ui/" and "/ui/index.html" the live page; "/" and "/ui" a redirect to "/ui/".
struct UiResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::string location;  // for a redirect
};
std::optional<UiResponse> ServeUi(std::string_view path);

}  // namespace tessera::ui
