// `tessera sim fgd`: the FGD (ATC'23) fragmentation experiment over traces x policies x seeds.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/command.h"
#include "fgd/grid.h"
#include "fgd/trace_csv.h"
#include "fmt/format.h"
#include "model/printable.h"

namespace tessera::cli {
namespace {

struct FgdArgs {
  std::string nodes;
  std::vector<std::string> pods;
  std::string policies = "Random,DotProd,GpuClustering,GpuPacking,BestFit,FGD";
  std::string seeds = "42-51";
  std::string csv;
  std::string frag_csv;
  std::string report;
  std::string expected;
  double tune = 1.3;
  int threads = 0;
  bool strict = false;
  bool quiet = false;
};

// A number flag within its range (docs/robustness.md): finite and lo <= v <= hi. The message
// says the range.
CLI::Validator Range(double lo, double hi, const std::string& range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end != nullptr && *end == '\0';
        if (number && std::isfinite(v) && v >= lo && v <= hi) return "";
        return fmt::format("\"{}\" is out of range: {}", text, range);
      },
      range);
}

int Fail(std::string_view message) {
  std::cerr << "tessera sim fgd: " << EscapeNonPrintable(message) << "\n";
  return 2;
}
int Fail(const absl::Status& status) { return Fail(std::string(status.message())); }

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::UnavailableError(fmt::format("{}: cannot write", path));
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(fmt::format("{}: write failed", path));
  return absl::OkStatus();
}

int RunFgd(const FgdArgs& args) {
  using namespace tessera::fgd;
  const auto start = std::chrono::steady_clock::now();
  ReadOptions read_options;
  read_options.strict = args.strict;
  GpuModelTable models;

  absl::StatusOr<TraceRead<TraceNode>> nodes = ReadNodesCsv(args.nodes, models, read_options);
  if (!nodes.ok()) return Fail(nodes.status());
  for (const std::string& w : nodes->warnings)
    std::cerr << "warning: " << EscapeNonPrintable(w) << " (row skipped)\n";
  if (nodes->rows.empty()) return Fail(fmt::format("{}: no nodes", args.nodes));
  const Cluster cluster = MakeCluster(nodes->rows);
  if (cluster.total_gpus == 0) return Fail(fmt::format("{}: no GPUs", args.nodes));

  std::vector<std::unique_ptr<Workload>> workloads;
  for (const std::string& path : args.pods) {
    absl::StatusOr<TraceRead<TracePod>> pods = ReadPodsCsv(path, models, read_options);
    if (!pods.ok()) return Fail(pods.status());
    for (const std::string& w : pods->warnings)
      std::cerr << "warning: " << EscapeNonPrintable(w) << " (row skipped)\n";
    if (pods->rows.empty()) return Fail(fmt::format("{}: no pods", path));
    std::string name = std::filesystem::path(path).filename().string();
    if (name.size() > 4 && name.ends_with(".csv")) name.resize(name.size() - 4);
    workloads.push_back(std::make_unique<Workload>(MakeWorkload(name, std::move(pods->rows))));
  }

  GridSpec spec;
  for (const auto& w : workloads) spec.workloads.push_back(w.get());
  std::string_view list = args.policies;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    absl::StatusOr<PolicySpec> p = ParsePolicySpec(name);
    if (!p.ok()) return Fail(fmt::format("--policies: {}", std::string(p.status().message())));
    spec.policies.push_back(*p);
  }
  if (spec.policies.empty()) return Fail("--policies: no policy");
  absl::StatusOr<std::vector<uint64_t>> seeds = ParseSeeds(args.seeds);
  if (!seeds.ok()) return Fail(seeds.status());
  spec.seeds = *seeds;
  spec.options.tune_ratio = args.tune;
  spec.threads = args.threads > 0
                     ? args.threads
                     : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  std::optional<ExpectedTable> expected;
  if (!args.expected.empty()) {
    absl::StatusOr<ExpectedTable> table = ReadExpectedCsv(args.expected);
    if (!table.ok()) return Fail(table.status());
    expected = std::move(*table);
  }

  const size_t total_runs = spec.workloads.size() * spec.policies.size() * spec.seeds.size();
  if (!args.quiet) {
    std::cerr << fmt::format("{} nodes, {} GPUs; {} runs on {} threads\n", cluster.nodes.size(),
                             cluster.total_gpus, total_runs, spec.threads);
  }
  GridProgress progress;
  if (!args.quiet && total_runs > 1) {
    progress = [](int done, int total) {
      if (done == total || done % 10 == 0) std::cerr << fmt::format("\r{}/{} runs", done, total);
      if (done == total) std::cerr << "\n";
    };
  }
  const std::vector<RunResult> runs = RunGrid(cluster, spec, progress);

  if (!args.csv.empty()) {
    if (absl::Status s = WriteText(args.csv, CurvesCsv(runs, args.tune, false)); !s.ok()) {
      return Fail(s);
    }
  }
  if (!args.frag_csv.empty()) {
    if (absl::Status s = WriteText(args.frag_csv, CurvesCsv(runs, args.tune, true)); !s.ok()) {
      return Fail(s);
    }
  }
  const std::vector<SummaryCell> summary = Summarize(runs, expected ? &*expected : nullptr);
  if (!args.report.empty()) {
    if (absl::Status s = WriteReport(args.report, runs, summary, args.tune); !s.ok()) {
      return Fail(s);
    }
  }
  std::cout << TerminalText(SummaryTable(summary));
  if (!args.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << fmt::format("{} runs in {:.1f} s\n", total_runs, seconds);
  }
  return 0;
}

}  // namespace

Command AddFgdCommand(CLI::App& sim) {
  auto args = std::make_shared<FgdArgs>();
  Command c;
  c.app = sim.add_subcommand(
      "fgd", "The FGD (ATC'23) fragmentation experiment: traces x policies x seeds");
  c.app->add_option("--nodes", args->nodes, "Node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
      ->required();
  c.app->add_option("--pods", args->pods, "Pod list CSV(s); one workload each")
      ->required()
      ->expected(1, -1);
  c.app
      ->add_option("--policies", args->policies,
                   "Comma-separated: Random,DotProd,GpuClustering,GpuPacking,BestFit,FGD,"
                   "TesseraFGD,TesseraPlan,TesseraLookahead (or TesseraLookahead-KxW: K "
                   "candidates, a window of W pods; TesseraPlan-bfd|noshares|nogangs|"
                   "nobalance|nomodels|hNN|pNN|wN: TesseraPlan with a part changed, see "
                   "docs/fgd.md)")
      ->capture_default_str();
  c.app->add_option("--seeds", args->seeds, "Seeds: 42-51 or 1,2,5-7")->capture_default_str();
  c.app->add_option("--csv", args->csv, "Write GPU allocation % per arrived load (0..130)");
  c.app->add_option("--frag-csv", args->frag_csv, "Write fragmented GPU % per arrived load");
  c.app->add_option("--report", args->report, "Write JSON, CSV and an HTML page into DIR");
  c.app->add_option("--expected", args->expected,
                    "The authors' analysis_allo_discrete.csv, to show their values alongside");
  c.app->add_option("--tune", args->tune, "Total GPU request as a multiple of the cluster's GPUs")
      ->capture_default_str()
      ->check(Range(0, 100, "a finite number from 0 (no tuning) to 100"));
  c.app->add_option("--threads", args->threads, "Worker threads (default: all cores)")
      ->check(Range(0, 1024, "0 (all cores) to 1024 threads"));
  c.app->add_flag("--strict", args->strict, "A broken CSV row is fatal instead of skipped");
  c.app->add_flag("--quiet", args->quiet, "No progress on stderr");
  c.run = [args] { return RunFgd(*args); };
  return c;
}

}  // namespace tessera::cli
