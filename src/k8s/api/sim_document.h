// `tessera get --from FILE` and `tessera explain --from FILE`: serve's API documents
// (api_routes.h: /api/v1/queues, /api/v1/workloads, /api/v1/nodes, one workload) built from a
// simulation's JSON (`tessera sim -o json`, sim/sim_json.h), so that the same tables show a
// simulation's end state. Simulated times are written "t=5400s" (the engine's notation in its
// reasons); get_format.h reads them, relative to the run's end.
//
// A file that is not such a document (too large, too deep, not JSON, a field missing or of the
// wrong type) is an InvalidArgument error naming the file and the field, never a crash.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

inline constexpr int64_t kMaxSimDocumentBytes = int64_t{1} << 30;  // 1 GiB
inline constexpr int kMaxSimDocumentDepth = 64;

struct SimDocument {
  std::string file;
  nlohmann::json doc;
  double end = 0;  // summary.endTime: "now" for ages and expected starts
};

absl::StatusOr<SimDocument> LoadSimDocument(const std::string& file);

// The documents of serve's API; `ns` empty: every namespace.
absl::StatusOr<nlohmann::json> SimWorkloads(const SimDocument& d, const std::string& ns);
absl::StatusOr<nlohmann::json> SimQueues(const SimDocument& d);
absl::StatusOr<nlohmann::json> SimNodes(const SimDocument& d);
// One workload (NotFound when the document has none of that key).
absl::StatusOr<nlohmann::json> SimWorkload(const SimDocument& d, const std::string& ns,
                                           const std::string& name);

// "t=5400s" for simulated second 5400.
std::string SimTime(double seconds);

}  // namespace tessera::k8s
