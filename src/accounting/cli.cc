// `tessera report cost --db FILE --from DATE --to DATE --by GROUP [--output table|json|csv]`:
// the cost report from the accounting store (docs/accounting.md).
#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include "accounting/cost_report.h"
#include "accounting/report_format.h"
#include "accounting/store.h"
#include "cli/command.h"
#include "model/printable.h"

namespace tessera::cli {
namespace {

struct ReportFlags {
  std::string db;
  std::string from;
  std::string to;
  std::string by = "namespace";
  std::string output = "table";
};

int RunCostReport(const ReportFlags& f) {
  accounting::ReportQuery query;
  query.from = -std::numeric_limits<double>::infinity();
  query.to = std::numeric_limits<double>::infinity();
  if (auto st = accounting::ParseGroupBy(f.by, query); !st.ok()) {
    std::cerr << "tessera report cost: " << EscapeNonPrintable(std::string(st.message())) << "\n";
    return 1;
  }
  for (auto [text, flag, out] :
       {std::tuple{&f.from, "--from", &query.from}, std::tuple{&f.to, "--to", &query.to}}) {
    if (text->empty()) continue;
    auto t = accounting::ParseDate(*text);
    if (!t.ok()) {
      std::cerr << "tessera report cost: " << flag << ": "
                << EscapeNonPrintable(std::string(t.status().message())) << "\n";
      return 1;
    }
    *out = *t;
  }
  if (query.from >= query.to) {
    std::cerr << "tessera report cost: --from must be before --to (the period is [from, to))\n";
    return 1;
  }
  accounting::StoreOptions options;
  options.read_only = true;
  auto store = accounting::AccountingStore::Open(f.db, options);
  if (!store.ok()) {
    std::cerr << "tessera report cost: "
              << EscapeNonPrintable(std::string(store.status().message())) << "\n";
    return 1;
  }
  auto records = (*store)->Read(query.from, query.to);
  if (!records.ok()) {
    std::cerr << "tessera report cost: "
              << EscapeNonPrintable(std::string(records.status().message())) << "\n";
    return 1;
  }
  const accounting::CostSummary report = accounting::BuildCostReport(*records, query);
  if (f.output == "json") {
    std::cout << accounting::CostReportJson(report);
  } else if (f.output == "csv") {
    std::cout << accounting::CostReportCsv(report);
  } else {
    std::cout << TerminalText(accounting::CostReportTable(report));
  }
  return 0;
}

}  // namespace

Command AddReportCommand(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  auto* report = app.add_subcommand("report", "Reports from the accounting store");
  report->require_subcommand(1);
  auto* cost = report->add_subcommand(
      "cost",
      "GPU-hours, dollars, jobs and the five costliest jobs per group (docs/accounting.md)");
  cost->add_option("--db", flags->db, "the accounting store (--accounting-db of sim, sim replay)")
      ->required();
  cost->add_option("--from", flags->from,
                   "runs that ended at or after this date: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, "
                   "UTC (default: the first)");
  cost->add_option("--to", flags->to, "runs that ended before this date (default: the last)");
  cost->add_option("--by", flags->by, "namespace, cluster-queue, local-queue or label:KEY")
      ->capture_default_str();
  cost->add_option("--output,-o", flags->output, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  return {report, [flags] { return RunCostReport(*flags); }};
}

}  // namespace tessera::cli
