// What `tessera get queues|workloads|nodes` and `tessera explain` print, from the JSON of serve's
// API (api_routes.h): kubectl-style tables (after `kueuectl list` and `squeue --start`) and the
// explanation of one workload.
//
// An answer of another shape than documented (a field missing or of the wrong type) is an
// InvalidArgument error naming the field's path, never a crash.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// `now`: Unix seconds, for "in 5m" and ages.
absl::StatusOr<std::string> FormatQueues(const nlohmann::json& queues);
// `with_namespace`: a NAMESPACE column (kubectl's -A); else the namespace is that of the list.
// `wide` (-o wide): the whole reason and the pods' nodes.
absl::StatusOr<std::string> FormatWorkloads(const nlohmann::json& workloads, bool with_namespace,
                                            double now, bool wide = false);
absl::StatusOr<std::string> FormatNodes(const nlohmann::json& nodes);
absl::StatusOr<std::string> FormatExplain(const nlohmann::json& workload, double now);

// "2026-11-24T03:19:10Z" -> Unix seconds; -1 when it is not one.
double ParseRfc3339(const std::string& text);
// ParseRfc3339, or a simulation's "t=5400s" -> 5400 (k8s/api/sim_document.h).
double ParseTime(const std::string& text);

}  // namespace tessera::k8s
