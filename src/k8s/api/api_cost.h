// /api/v1/cost from serve's accounting store (serve --accounting-db; docs/accounting.md): the
// runs that ended in the period, grouped as `tessera report cost` groups them, in the API's shape
// (api_routes.h CostJson). The store keeps runs, not idle capacity: `idle` is null here.
//
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accounting/record.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// `records`: the store's runs that ended in [from, to) (Unix seconds; none: open). `by`:
// namespace, cluster-queue, local-queue or label:KEY; InvalidArgument otherwise.
absl::StatusOr<nlohmann::json> CostFromRecordsJson(
    const std::vector<accounting::RunRecord>& records, const std::string& by,
    std::optional<double> from, std::optional<double> to);

}  // namespace tessera::k8s
