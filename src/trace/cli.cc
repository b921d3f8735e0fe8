// `tessera sim replay`: replays a cluster trace (openb or generic CSV, or a synthetic one) through
// the scheduling engine and prints a summary table; --report DIR writes JSON, CSV and HTML.
// docs/trace-replay.md is the manual.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/store.h"
#include "cli/command.h"
#include "config/diagnostic_output.h"
#include "config/loader.h"
#include "fmt/format.h"
#include "model/printable.h"
#include "sim/gpu_failures.h"
#include "trace/cli_flags.h"
#include "trace/estimates.h"
#include "trace/job_source.h"
#include "trace/model_builder.h"
#include "trace/readers.h"
#include "trace/replay.h"
#include "trace/report.h"
#include "trace/synthetic.h"
#include "trace/writers.h"

namespace tessera::cli {

double PeakRssMiB() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

namespace {
// The synthetic generator's options from the flags.
trace::SyntheticOptions SyntheticOptionsOf(const ReplayFlags& f) {
  trace::SyntheticOptions so;
  so.jobs = f.synthetic_jobs;
  so.nodes = f.synthetic_nodes;
  so.seed = f.seed;
  so.queues = f.synthetic_queues;
  so.load = f.synthetic_load;
  so.mix = f.synthetic_mix == "gangs" ? trace::SyntheticMix::kGangs : trace::SyntheticMix::kMixed;
  return so;
}
}  // namespace

// The trace: synthetic, or read from --nodes and --jobs (broken rows said on stderr), cut to
// --limit, with --ignore-times applied. False (said) when it cannot be read.
bool ReadTrace(const ReplayFlags& f, trace::Trace& tr, trace::ReadLog& log) {
  using trace::BadRows;
  const BadRows bad = f.bad_rows == "fail" ? BadRows::kFail : BadRows::kSkip;
  if (f.synthetic_jobs > 0) {
    tr = trace::GenerateSynthetic(SyntheticOptionsOf(f));
  } else {
    for (const auto& n : f.nodes) {
      if (auto s = trace::ReadNodes(n, bad, tr, log); !s.ok()) {
        std::cerr << EscapeNonPrintable(std::string(s.message())) << "\n";
        return false;
      }
    }
    if (!f.jobs.empty()) {
      if (auto s = trace::ReadJobs(f.jobs, bad, tr, log); !s.ok()) {
        std::cerr << EscapeNonPrintable(std::string(s.message())) << "\n";
        return false;
      }
    }
  }
  // Rows quote the file as written; a terminal must not interpret what they hold.
  for (const auto& w : log.warnings) std::cerr << EscapeNonPrintable(w) << "\n";
  if (log.warning_count > static_cast<int64_t>(log.warnings.size()))
    std::cerr << fmt::format("... and {} more warnings\n",
                             log.warning_count - static_cast<int64_t>(log.warnings.size()));
  if (log.skipped_rows > 0)
    std::cerr << fmt::format("{} broken rows skipped (--bad-rows fail stops at the first)\n",
                             log.skipped_rows);
  if (f.limit >= 0 && static_cast<int64_t>(tr.jobs.size()) > f.limit)
    tr.jobs.resize(static_cast<size_t>(f.limit));
  if (f.ignore_times) {
    // The FGD experiments' arrival process: one job a second in file order, none leaving.
    for (size_t i = 0; i < tr.jobs.size(); ++i) {
      tr.jobs[i].arrival = static_cast<double>(i);
      tr.jobs[i].duration = -1;
    }
  }

  return true;
}

namespace {
// As ReadTrace, and the jobs as a stream for the replay. A synthetic trace to replay (not to
// write) is made job by job as the replay reaches each (trace/job_source.h): `tr` then holds
// the cluster only, and --limit and --ignore-times apply to the stream.
bool ReadTraceJobs(const ReplayFlags& f, trace::Trace& tr, trace::ReadLog& log,
                   std::unique_ptr<trace::JobSource>& jobs) {
  if (f.synthetic_jobs > 0 && f.write_trace.empty()) {
    trace::SyntheticGenerator cluster(SyntheticOptionsOf(f), tr);
    jobs = std::make_unique<trace::SyntheticJobs>(SyntheticOptionsOf(f), f.limit, f.ignore_times);
    return true;
  }
  if (!ReadTrace(f, tr, log)) return false;
  jobs = std::make_unique<trace::TraceJobs>(tr);
  return true;
}
}  // namespace

// The model builder's options from the flags. False (said) when --estimates is bad.
bool BuildOptionsOf(const ReplayFlags& f, trace::BuildOptions& bo) {
  bo.unqueued = f.unqueued;
  bo.preemption = !f.no_preemption;
  if (f.placement == "binpack") bo.placement = PlacementPolicy::kBinpack;
  if (f.placement == "spread") bo.placement = PlacementPolicy::kSpread;
  if (f.fair_sharing) bo.fair_sharing = true;
  if (!f.backfill.empty()) bo.backfill = f.backfill == "on";
  if (f.strategy == "StrictFIFO") bo.strategy = QueueingStrategy::kStrictFIFO;
  if (f.strategy == "BestEffortFIFO") bo.strategy = QueueingStrategy::kBestEffortFIFO;
  auto estimates = trace::ParseEstimates(f.estimates);
  if (!estimates.ok()) {  // the flag's check has said so already; kept for callers without it
    std::cerr << "tessera sim replay: --estimates: "
              << EscapeNonPrintable(std::string(estimates.status().message())) << "\n";
    return false;
  }
  bo.estimates = *estimates;
  bo.estimates.seed = f.seed;
  bo.grace_period = f.grace_period;
  bo.checkpoint_interval = f.checkpoint_interval;
  return true;
}

namespace {

// --write-trace DIR: the trace as read (after --limit and --ignore-times) to DIR/nodes.csv and
// DIR/jobs.csv in the generic format, and no replay.
int WriteTraceOnly(const ReplayFlags& f, const trace::Trace& tr) {
  if (auto s = trace::WriteTrace(tr, f.write_trace); !s.ok()) {
    std::cerr << "tessera sim replay: --write-trace: "
              << EscapeNonPrintable(std::string(s.message())) << "\n";
    return 1;
  }
  std::cout << fmt::format("trace written: {}/nodes.csv ({} nodes), {}/jobs.csv ({} jobs)\n",
                           f.write_trace, tr.nodes.size(), f.write_trace, tr.jobs.size());
  if (!f.manifests.empty())
    std::cout << "(the --manifests are not part of it: give them again to replay it)\n";
  if (!trace::QueueOrderKept(tr))
    std::cout << "note: the queues first appear in jobs.csv in another order than the trace's: "
                 "replayed without --manifests, the default ClusterQueues are made in that "
                 "order (the queue table's, ties between queues, the share that takes the "
                 "remainder), so the replay may differ; give the queues in --manifests to fix "
                 "it\n";
  return 0;
}

// The identity of this replay in the accounting store (docs/accounting.md, "Runs"): the content
// of its input files and every flag that changes its results (a flag added to ReplayFlags that
// does belongs here). Running it again replaces its records instead of adding a second copy.
std::string ReplayRunId(const ReplayFlags& f) {
  accounting::RunId id;
  for (const auto& n : f.nodes) (void)id.AddFile(n);
  id.Add("--jobs");
  if (!f.jobs.empty()) (void)id.AddFile(f.jobs);
  for (const auto& m : f.manifests) (void)id.AddFile(m);
  id.Add(fmt::format(
      "synthetic={},{},{},{},{} seed={} bad-rows={} placement={} fair-sharing={} backfill={} "
      "strategy={} estimates={} grace={} checkpoint={} unqueued={} no-preemption={} cycle={} "
      "until={} scale-up={} limit={} ignore-times={} gpu-failures={} gpu-repair={}",
      f.synthetic_jobs, f.synthetic_nodes, f.synthetic_queues, f.synthetic_load, f.synthetic_mix,
      f.seed, f.bad_rows, f.placement, f.fair_sharing, f.backfill, f.strategy, f.estimates,
      f.grace_period, f.checkpoint_interval, f.unqueued, f.no_preemption, f.cycle_interval, f.until,
      f.scale_up, f.limit, f.ignore_times, f.gpu_mtbf, f.gpu_repair));
  return id.Id("sim replay");
}

int RunReplayCommand(const ReplayFlags& f) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (f.synthetic_jobs > 0 && (!f.nodes.empty() || !f.jobs.empty())) {
    std::cerr << "tessera sim replay: --synthetic-jobs makes its own nodes and jobs; leave out "
                 "--nodes and --jobs\n";
    return 1;
  }
  if (f.synthetic_jobs <= 0 && f.jobs.empty() && f.manifests.empty()) {
    std::cerr << "tessera sim replay: nothing to replay: give --jobs (with --nodes), "
                 "--manifests, or --synthetic-jobs\n";
    return 1;
  }
  // The accounting store opens first: a file that cannot be written fails now, not after the
  // replay (docs/accounting.md).
  std::unique_ptr<accounting::AccountingStore> store;
  std::optional<accounting::StoreWriter> records;
  if (!f.accounting_db.empty()) {
    auto opened = accounting::AccountingStore::Open(f.accounting_db);
    if (!opened.ok()) {
      std::cerr << "tessera sim replay: "
                << EscapeNonPrintable(std::string(opened.status().message())) << "\n";
      return 1;
    }
    store = std::move(*opened);
    records.emplace(*store, /*batch_size=*/512, ReplayRunId(f));
  }

  // Manifests: queues, flavors, priority classes, SchedulerConfig, maybe nodes and workloads.
  LoadResult manifests;
  if (!f.manifests.empty()) {
    manifests = LoadManifestFiles(f.manifests);
    if (f.gpu_mtbf > 0)
      for (std::string& m : UnsimulatedFailurePolicies(manifests.model))
        manifests.diagnostics.push_back({Diagnostic::Severity::kWarning, "", 0, "", std::move(m)});
    // Every diagnostic, as `tessera validate` prints it (notices unless --quiet).
    PrintDiagnostics(manifests.diagnostics, !f.quiet, std::cerr);
    if (!manifests.ok()) {
      std::cerr << "tessera sim replay: the manifests have errors; nothing was replayed\n";
      return 1;
    }
  }

  trace::Trace tr;
  trace::ReadLog log;
  std::unique_ptr<trace::JobSource> jobs;
  if (!ReadTraceJobs(f, tr, log, jobs)) return 1;
  if (!f.write_trace.empty()) return WriteTraceOnly(f, tr);
  trace::BuildOptions bo;
  if (!BuildOptionsOf(f, bo)) return 1;
  std::vector<std::string> notes;
  Model model = std::move(manifests.model);
  auto conv = trace::BuildModel(tr, *jobs, bo, model, notes);
  if (!conv.ok()) {
    std::cerr << EscapeNonPrintable(std::string(conv.status().message())) << "\n";
    return 1;
  }
  if (model.nodes.empty()) {
    std::cerr << "tessera sim replay: no nodes: give --nodes or Nodes in --manifests\n";
    return 1;
  }
  const double load_s = elapsed();

  trace::ReplayOptions ro;
  ro.cycle_interval = f.cycle_interval;
  if (f.until >= 0) ro.until = f.until;
  if (f.report_at >= 0) ro.snapshot_at = f.report_at;
  ro.snapshot_at_peak = f.report_at < 0 && !f.report.empty();
  ro.snapshot_workloads = f.report_workloads;
  ro.verify = f.verify;
  if (f.scale_up == "gang-aware") ro.scale_up = ScaleUpMode::kGangAware;
  if (f.scale_up == "pod-by-pod") ro.scale_up = ScaleUpMode::kPodByPod;
  if (records) ro.accounting = &*records;
  ro.gpu_failures = {f.gpu_mtbf, f.gpu_repair, f.seed};
  auto result = trace::RunReplay(std::move(model), tr, *jobs, *conv, ro);
  if (!result.ok()) {
    std::cerr << "tessera sim replay: "
              << EscapeNonPrintable(std::string(result.status().message())) << "\n";
    return 2;
  }
  result->notes.insert(result->notes.begin(), notes.begin(), notes.end());
  result->diagnostics = std::move(manifests.diagnostics);
  if (log.skipped_rows > 0)
    result->notes.push_back(
        fmt::format("{} broken rows of the input were skipped", log.skipped_rows));
  const double replay_s = elapsed() - load_s;
  std::cout << TerminalText(trace::SummaryTable(*result));
  if (records) {
    if (auto s = records->Finish(); !s.ok()) {
      std::cerr << "tessera sim replay: " << EscapeNonPrintable(std::string(s.message())) << "\n";
      return 1;
    }
    std::cerr << fmt::format("{} run records written to {}", records->written(), f.accounting_db);
    if (records->replaced() > 0)
      std::cerr << fmt::format(
          " (replacing the {} of an earlier run of the same trace and "
          "flags)",
          records->replaced());
    std::cerr << "\n";
  }
  if (!f.report.empty()) {
    std::string title =
        f.synthetic_jobs > 0
            ? fmt::format("Tessera replay: synthetic, {} jobs, {} nodes, seed {}", f.synthetic_jobs,
                          f.synthetic_nodes, f.seed)
            : fmt::format("Tessera replay: {}", f.jobs.empty() ? "manifests" : f.jobs);
    if (auto s = trace::WriteReport(*result, f.report, title); !s.ok()) {
      std::cerr << "tessera sim replay: " << EscapeNonPrintable(std::string(s.message())) << "\n";
      return 1;
    }
    std::cout << fmt::format("report: {}/index.html (and report.json, *.csv)\n", f.report);
  }
  // Timing and memory go to stderr: stdout stays byte-identical between runs.
  std::cout << std::flush;
  std::cerr << fmt::format(
      "input {:.2f}s, replay {:.2f}s, total {:.2f}s wall; peak RSS {:.0f} MiB\n", load_s, replay_s,
      elapsed(), PeakRssMiB());
  return 0;
}

}  // namespace

void AddTraceFlags(CLI::App& app_ref, ReplayFlags& flags_ref) {
  CLI::App* app = &app_ref;
  ReplayFlags* flags = &flags_ref;
  app->add_option("--nodes", flags->nodes, "node list CSV (openb or generic); repeatable");
  app->add_option("--jobs", flags->jobs, "job list CSV (openb pod list or generic jobs)");
  app->add_option("--manifests", flags->manifests,
                  "YAML manifests: ClusterQueues, LocalQueues, flavors, priority classes, "
                  "SchedulerConfig, nodes, workloads");
  app->add_option("--synthetic-jobs", flags->synthetic_jobs, "generate this many jobs")
      ->check(Range(1, 1e7, true, "0 to 10000000 jobs"));
  app->add_option("--synthetic-nodes", flags->synthetic_nodes, "generated nodes (default 1000)")
      ->check(Range(1, 500'000, false, "1 to 500000 nodes"));
  app->add_option("--synthetic-queues", flags->synthetic_queues,
                  "generated ClusterQueues (default 8)")
      ->check(Range(1, 1000, false, "1 to 1000 queues"));
  app->add_option("--synthetic-load", flags->synthetic_load,
                  "offered GPU demand / capacity (default 0.9)")
      ->check(Range(0.001, 100, false, "a finite number from 0.001 to 100"));
  app->add_option("--synthetic-mix", flags->synthetic_mix,
                  "mixed (default: CPU, shares, 1-8 GPU pods, a few gangs) or gangs (1-64 GPU "
                  "jobs on 8-GPU nodes, heavy-tailed durations)")
      ->check(CLI::IsMember({"mixed", "gangs"}));
  app->add_option("--seed", flags->seed,
                  "seed of the synthetic generator and of --estimates random (default 1)");
  app->add_option("--bad-rows", flags->bad_rows, "skip (default: warn and go on) or fail")
      ->check(CLI::IsMember({"skip", "fail"}));
  app->add_option("--placement", flags->placement, "override the SchedulerConfig: binpack|spread")
      ->check(CLI::IsMember({"binpack", "spread"}));
  app->add_flag("--fair-sharing", flags->fair_sharing, "enable fair sharing");
  app->add_option("--backfill", flags->backfill,
                  "override the SchedulerConfig: reservations and backfill on|off")
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option("--strategy", flags->strategy,
                  "queueing strategy of every ClusterQueue: StrictFIFO|BestEffortFIFO (default: "
                  "as the manifests say)")
      ->check(CLI::IsMember({"StrictFIFO", "BestEffortFIFO"}));
  app->add_option("--estimates", flags->estimates,
                  "runtime estimates of trace jobs: none (default), exact, x<F> (duration x F), "
                  "random:<LO>-<HI> (x a log-uniform factor per job, from --seed)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            auto e = trace::ParseEstimates(text);
            return e.ok() ? "" : std::string(e.status().message());
          },
          "MODE"));
  app->add_flag("--quiet,-q", flags->quiet,
                "leave out the --manifests' notices (skipped harmless kinds, ignored fields); "
                "errors and warnings are always printed");
  app->add_flag("--unqueued", flags->unqueued, "no queues and no quota: placement only");
  app->add_flag("--no-preemption", flags->no_preemption,
                "default queues without preemption policies");
  app->add_option("--grace-period", flags->grace_period,
                  "seconds a preempted trace job keeps its GPUs before it is gone (its "
                  "terminationGracePeriodSeconds; default 0: at once, as in the replays before "
                  "grace periods; Kubernetes' default is 30); workloads of --manifests keep "
                  "their own")
      ->check(Range(0, 1e7, true, "a number of seconds from 0 to 1e7"));
  app->add_option("--checkpoint-interval", flags->checkpoint_interval,
                  "seconds between a trace job's checkpoints: a preempted (or, on a spot node, "
                  "interrupted) job resumes from its last one (default 0: none, it runs its "
                  "whole duration again); workloads of --manifests keep their own")
      ->check(Range(0, 1e7, true, "a number of seconds from 0 to 1e7"));
  app->add_option("--gpu-failures", flags->gpu_mtbf,
                  "GPUs fail: the mean time between failures of one GPU (e.g. 50000h), from "
                  "--seed; a failure evicts the jobs on the GPU, each whole (docs/gpu-failures.md)")
      ->transform(PositiveDuration());
  app->add_option("--gpu-repair", flags->gpu_repair,
                  "how long a failed GPU stays out (default 24h)")
      ->transform(PositiveDuration());
  app->add_option("--limit", flags->limit, "replay only the first N jobs of the file")
      ->check(Range(0, 9e18, true, "a whole number of jobs, 0 or more"));
}

Command AddReplayCommand(CLI::App& sim) {
  auto flags = std::make_shared<ReplayFlags>();
  Command c;
  CLI::App* app = sim.add_subcommand(
      "replay", "Replay a cluster trace (openb or generic CSV, or synthetic) through the engine");
  AddTraceFlags(*app, *flags);
  app->add_option("--report", flags->report,
                  "write report.json, CSV files, index.html and dashboard.html here");
  app->add_option("--report-at", flags->report_at,
                  "dashboard.html's workloads and GPU map show the cluster at this time "
                  "(seconds; default: the first instant of the peak GPU allocation)")
      ->check(Range(0, 1e15, true, "a finite number of seconds from 0 to 1e15"));
  app->add_option("--report-workloads", flags->report_workloads,
                  "dashboard.html lists at most this many workloads (running first, then the "
                  "oldest pending; default 1000)")
      ->check(Range(0, 1e6, true, "a whole number of workloads from 0 to 1000000"));
  app->add_option("--cycle-interval", flags->cycle_interval,
                  "seconds between scheduling cycles (default 0: at every event)")
      ->check(Range(0.001, 1e9, true,
                    "0 (a cycle at every event) or a finite number of seconds from 0.001 to 1e9"));
  app->add_option("--until", flags->until, "stop at this time (seconds)")
      ->check(Range(0, 1e15, true, "a finite number of seconds from 0 to 1e15"));
  app->add_flag("--ignore-times", flags->ignore_times,
                "job k arrives at k seconds and never leaves (the FGD experiments' process)");
  app->add_flag("--verify", flags->verify, "check the engine's invariants after every cycle");
  app->add_option(
         "--scale-up", flags->scale_up,
         "how elastic NodePools (--manifests) and node groups (--nodes) grow: gang-aware or "
         "pod-by-pod "
         "(docs/autoscaling.md); default: SchedulerConfig spec.autoscaler.scaleUp")
      ->check(CLI::IsMember({"gang-aware", "pod-by-pod"}));
  app->add_option("--write-trace", flags->write_trace,
                  "write the trace (nodes.csv and jobs.csv, the generic format) to this "
                  "directory instead of replaying it: a synthetic trace, or a converted one, to "
                  "edit and replay with --nodes and --jobs");
  app->add_option("--accounting-db", flags->accounting_db,
                  "append a record per workload run to this SQLite accounting store "
                  "(docs/accounting.md)");
  c.app = app;
  c.run = [flags] { return RunReplayCommand(*flags); };
  return c;
}

}  // namespace tessera::cli
