#include "k8s/api/api_cost.h"

#include <limits>

#include "accounting/cost_report.h"

namespace tessera::k8s {

absl::StatusOr<nlohmann::json> CostFromRecordsJson(
    const std::vector<accounting::RunRecord>& records, const std::string& by,
    std::optional<double> from, std::optional<double> to) {
  using nlohmann::json;
  accounting::ReportQuery q;
  if (absl::Status s = accounting::ParseGroupBy(by, q); !s.ok()) return s;
  q.from = from.value_or(-std::numeric_limits<double>::infinity());
  q.to = to.value_or(std::numeric_limits<double>::infinity());
  const accounting::CostSummary sum = accounting::BuildCostReport(records, q);
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array();
  for (const accounting::GroupCost& g : sum.groups)
    rows.push_back({{"key", g.group},
                    {"gpuHours", g.gpu_hours},
                    {"allocatedDollars", opt(g.dollars)},
                    {"effectiveDollars", opt(g.effective_dollars)},
                    {"jobs", g.jobs}});
  return json{{"from", from ? json(accounting::FormatDate(*from)) : json(nullptr)},
              {"to", to ? json(accounting::FormatDate(*to)) : json(nullptr)},
              {"currency", "USD"},
              {"source", "accounting"},
              {"by", by},
              {"rows", std::move(rows)},
              {"idle", {{"gpuHours", nullptr}, {"dollars", nullptr}}}};
}

}  // namespace tessera::k8s
