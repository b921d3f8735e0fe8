// `tessera sim plan`: the capacity calculator (trace/plan.h) on the command line. The trace comes
// from the same flags as `tessera sim replay` (trace/cli_flags.h); the cluster from --pool.
// docs/autoscaling.md ("Capacity calculator") is the manual.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/command.h"
#include "config/diagnostic_output.h"
#include "config/loader.h"
#include "fmt/format.h"
#include "model/printable.h"
#include "sim/gpu_failures.h"
#include "trace/cli_flags.h"
#include "trace/plan.h"

namespace tessera::cli {
namespace {

struct PlanFlags {
  ReplayFlags trace;
  std::vector<std::string> pools;
  std::vector<std::string> targets;
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;
  int32_t points = 20;
  int32_t threads = 0;       // 0: hardware_concurrency
  int64_t screen_jobs = -1;  // -1: PlanOptions' default
  std::string output = "table";
  std::string report;
};

constexpr const char* kCmd = "tessera sim plan: ";

// Input checks that need no replay: which inputs, pools and targets. False (said) when bad.
bool ParseInputs(const PlanFlags& f, trace::PlanOptions& o) {
  const ReplayFlags& t = f.trace;
  if (!t.nodes.empty()) {
    std::cerr << kCmd << "--nodes is not read: the cluster is made of --pool nodes only\n";
    return false;
  }
  if (t.synthetic_jobs > 0 && !t.jobs.empty()) {
    std::cerr << kCmd << "--synthetic-jobs makes its own jobs; leave out --jobs\n";
    return false;
  }
  if (t.synthetic_jobs <= 0 && t.jobs.empty() && t.manifests.empty()) {
    std::cerr << kCmd
              << "nothing to plan for: give --jobs, --manifests with workloads, or "
                 "--synthetic-jobs\n";
    return false;
  }
  if (f.pools.empty() || f.targets.empty()) {
    std::cerr << kCmd << "give at least one --pool (a node shape) and one --target\n";
    return false;
  }
  for (const auto& text : f.pools) {
    auto p = trace::ParsePool(text);
    if (!p.ok()) {
      std::cerr << kCmd << EscapeNonPrintable(std::string(p.status().message())) << "\n";
      return false;
    }
    for (const auto& q : o.pools)
      if (q.name == p->name) {
        std::cerr << kCmd
                  << fmt::format("--pool \"{}\": the name {} is given twice\n",
                                 EscapeNonPrintable(text), q.name);
        return false;
      }
    o.pools.push_back(*p);
  }
  for (const auto& text : f.targets) {
    auto t = trace::ParseTarget(text);
    if (!t.ok()) {
      std::cerr << kCmd << EscapeNonPrintable(std::string(t.status().message())) << "\n";
      return false;
    }
    o.targets.push_back(*t);
  }
  if (f.min_nodes > 0 && f.max_nodes > 0 && f.min_nodes > f.max_nodes) {
    std::cerr << kCmd
              << fmt::format("--min-nodes {} is above --max-nodes {}\n", f.min_nodes, f.max_nodes);
    return false;
  }
  o.min_nodes = f.min_nodes;
  o.max_nodes = f.max_nodes;
  o.curve_points = f.points;
  o.screen_jobs = f.screen_jobs;
  // Bounded by the machine: more replays at once than cores only add threads and memory (a
  // thread per replay of -j 200 ended in std::system_error, EAGAIN).
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  o.threads = f.threads > 0 ? std::min(f.threads, cores) : cores;
  if (f.threads > cores)
    std::cerr << kCmd
              << fmt::format("-j {} lowered to {}, the cores of this machine\n", f.threads, cores);
  return true;
}

// The manifests' queues, flavors, priority classes, SchedulerConfig and workloads. False (said)
// when they have errors or declare nodes: the plan makes the cluster.
bool LoadBase(const PlanFlags& f, Model& base) {
  if (f.trace.manifests.empty()) return true;
  LoadResult manifests = LoadManifestFiles(f.trace.manifests);
  if (f.trace.gpu_mtbf > 0)
    for (std::string& m : UnsimulatedFailurePolicies(manifests.model))
      manifests.diagnostics.push_back({Diagnostic::Severity::kWarning, "", 0, "", std::move(m)});
  PrintDiagnostics(manifests.diagnostics, !f.trace.quiet, std::cerr);  // as validate does
  if (!manifests.ok()) {
    std::cerr << kCmd << "the manifests have errors; nothing was planned\n";
    return false;
  }
  if (!manifests.model.nodes.empty() || !manifests.model.node_pools.empty()) {
    std::cerr << kCmd
              << fmt::format(
                     "the manifests declare {} Nodes and {} NodePools: sim plan makes "
                     "the cluster from --pool only; leave them out\n",
                     manifests.model.nodes.size(), manifests.model.node_pools.size());
    return false;
  }
  base = std::move(manifests.model);
  return true;
}

// `seed_given`: --seed was on the command line; it then also seeds the spot interruptions
// (else the manifests' SchedulerConfig spec.autoscaler.seed, 1 by default).
int RunPlanCommand(const PlanFlags& f, bool seed_given) {
  const auto t0 = std::chrono::steady_clock::now();
  trace::PlanOptions o;
  if (!ParseInputs(f, o)) return 1;
  Model base;
  if (!LoadBase(f, base)) return 1;
  if (seed_given) base.config.autoscaler.seed = f.trace.seed;
  trace::Trace tr;
  trace::ReadLog log;
  if (!ReadTrace(f.trace, tr, log)) return 1;
  tr.nodes.clear();  // a synthetic trace's nodes only set its arrival rate
  if (!BuildOptionsOf(f.trace, o.build)) return 1;
  o.replay.gpu_failures = {f.trace.gpu_mtbf, f.trace.gpu_repair, f.trace.seed};
  if (tr.jobs.empty() && base.workloads.empty()) {
    std::cerr << kCmd << "the trace has no jobs\n";
    return 1;
  }
  auto result = trace::RunPlan(tr, base, o);
  if (!result.ok()) {
    std::cerr << kCmd << EscapeNonPrintable(std::string(result.status().message())) << "\n";
    return result.status().code() == absl::StatusCode::kInvalidArgument ? 1 : 2;
  }
  if (log.skipped_rows > 0)
    result->notes.push_back(
        fmt::format("{} broken rows of the input were skipped", log.skipped_rows));
  if (f.output == "json")
    std::cout << trace::PlanJson(*result);
  else if (f.output == "csv")
    std::cout << trace::PlanCsv(*result);
  else
    std::cout << TerminalText(trace::PlanTable(*result));
  if (!f.report.empty()) {
    const std::string title =
        f.trace.synthetic_jobs > 0
            ? fmt::format("Tessera capacity plan: synthetic, {} jobs, seed {}",
                          f.trace.synthetic_jobs, f.trace.seed)
            : fmt::format("Tessera capacity plan: {}",
                          f.trace.jobs.empty() ? "manifests" : f.trace.jobs);
    if (auto s = trace::WritePlanReport(*result, f.report, title); !s.ok()) {
      std::cerr << kCmd << s.message() << "\n";
      return 1;
    }
    std::cerr << fmt::format("report: {}/index.html (and plan.json, plan.csv)\n", f.report);
  }
  std::cout << std::flush;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << fmt::format("{} replays on {} threads, {:.2f}s wall; peak RSS {:.0f} MiB\n",
                           result->replays, o.threads, wall, PeakRssMiB());
  return result->best ? 0 : 3;
}

}  // namespace

Command AddPlanCommand(CLI::App& sim) {
  auto flags = std::make_shared<PlanFlags>();
  Command c;
  CLI::App* app = sim.add_subcommand(
      "plan",
      "Capacity calculator: the smallest cluster of a node shape that meets targets on a "
      "trace (docs/autoscaling.md)");
  AddTraceFlags(*app, flags->trace);
  app->add_option("--pool", flags->pools,
                  "a candidate node shape, NAME:gpus=G,cpu=CORES,memory=M[,model=X][,pods=N]"
                  "[,price=$/node-hour][,spot=DISCOUNT][,interruptions=PER-NODE-HOUR (spot: "
                  "0.01)][,notice=DURATION (2m)][,replace=DURATION (5m)][,nodes=N (fixed, not "
                  "sized)]; repeatable");
  app->add_option("--target", flags->targets,
                  "wait-p50|wait-p95|wait-p99|wait-mean|wait-max=DURATION (e.g. 30m) or "
                  "utilization=FRACTION (at most that busy); repeatable, all must hold");
  app->add_option("--min-nodes", flags->min_nodes,
                  "smallest size tried (default: the fewest nodes that hold the largest job)")
      ->check(Range(1, 500'000, false, "1 to 500000 nodes"));
  app->add_option("--max-nodes", flags->max_nodes,
                  "largest size tried (default: twice the nodes of the peak offered demand, at "
                  "most 20000)")
      ->check(Range(1, 500'000, false, "1 to 500000 nodes"));
  app->add_option("--points", flags->points, "sizes on the curve, min and max included (20)")
      ->check(Range(2, 1000, false, "2 to 1000 sizes"));
  app->add_option("--screen-jobs", flags->screen_jobs,
                  "replay each size on the trace's first N jobs first; a size that misses the "
                  "targets there is not replayed in full (default: a tenth of the trace, at "
                  "least 10000, none under 20000 jobs; 0: off)")
      ->check(Range(1, 1e12, true, "0, or 1 to 1000000000000 jobs"));
  app->add_option("-j,--jobs-parallel", flags->threads,
                  "replays at once (default: the number of cores)")
      ->check(Range(1, 1024, false, "1 to 1024 threads"));
  app->add_option("--output", flags->output, "table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  app->add_option("--report", flags->report, "write plan.json, plan.csv and index.html here");
  c.app = app;
  c.run = [flags, app] { return RunPlanCommand(*flags, app->count("--seed") > 0); };
  return c;
}

}  // namespace tessera::cli
