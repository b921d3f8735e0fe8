// tessera: the command line. Thin: parses flags, calls the loader, engine and simulator.
//
//   tessera validate FILE... [--strict]      check manifests, print diagnostics
//   tessera sim [FILE...] [--output table|json]   simulate a scenario (default: the embedded
//                                            quickstart, examples/quickstart.yaml)
//   tessera sim fgd ...                      the FGD fragmentation experiment (src/fgd)
//   tessera sim replay ...                   replay a cluster trace (src/trace)
//   tessera serve ...                        schedule a Kubernetes cluster (src/k8s)
//   tessera convert FILE...                  KAI and Volcano Queues as Kueue's (cli/convert.cc)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "accounting/sim_records.h"
#include "accounting/store.h"
#include "cli/command.h"
#include "cli/embedded_quickstart.h"
#include "cli/flag_range.h"
#include "config/diagnostic_output.h"
#include "config/loader.h"
#include "engine/time/span.h"
#include "fmt/format.h"
#include "model/json_text.h"
#include "model/printable.h"
#include "nlohmann/json.hpp"
#include "sim/gpu_failures.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

// The number of objects the loader read into `m` (every kind it keeps).
size_t ObjectCount(const Model& m) {
  return m.nodes.size() + m.flavors.size() + m.cluster_queues.size() + m.cohorts.size() +
         m.local_queues.size() + m.priority_classes.size() + m.workload_priority_classes.size() +
         m.workloads.size();
}

int Validate(const std::vector<std::string>& files, bool strict) {
  LoadResult r = LoadManifestFiles(files);
  if (r.ok() && ObjectCount(r.model) == 0) {
    // As kubectl apply says "no objects passed to apply": an empty file is a mistake, not "ok".
    PrintDiagnostics(r.diagnostics, true, std::cerr);
    std::cerr << "tessera validate: no objects in the input (empty files, or only comments and "
                 "kinds Tessera does not read)\n";
    return 1;
  }
  auto refs = CheckReferences(r.model);
  r.diagnostics.insert(r.diagnostics.end(), refs.begin(), refs.end());
  PrintDiagnostics(r.diagnostics, true, std::cerr);
  const Model& m = r.model;
  std::cout << fmt::format(
      "{}: {} nodes, {} flavors, {} cluster queues, {} cohorts, {} local queues, {} priority "
      "classes, {} workloads; {} errors, {} warnings, {} notices\n",
      r.ok() ? "ok" : "invalid", m.nodes.size(), m.flavors.size(), m.cluster_queues.size(),
      m.cohorts.size(), m.local_queues.size(),
      m.priority_classes.size() + m.workload_priority_classes.size(), m.workloads.size(),
      r.count(Diagnostic::Severity::kError), r.count(Diagnostic::Severity::kWarning),
      r.count(Diagnostic::Severity::kNotice));
  if (!r.ok()) return 1;
  // --strict: nothing may pass by unread, and no warning may stand (a CI gate).
  const int warnings = r.count(Diagnostic::Severity::kWarning);
  if (strict && (warnings > 0 || r.skipped_objects > 0)) {
    std::cerr << fmt::format(
        "tessera validate: --strict: failed: {} warning{}, {} object{} skipped\n", warnings,
        warnings == 1 ? "" : "s", r.skipped_objects, r.skipped_objects == 1 ? "" : "s");
    return 1;
  }
  return 0;
}

// What `tessera sim` checks of the engine's invariants: after every cycle (--verify, slow on
// large scenarios), once at the end (the default), or not at all (--no-verify).
enum class Verify { kEveryCycle, kAtEnd, kNone };

// Progress on stderr for runs that take a while: nothing for the first 2 s, then a line about
// every second (rewritten in place on a terminal).
std::function<void(const SimProgress&)> ProgressPrinter() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last = start;
  const bool tty = isatty(fileno(stderr));
  return [start, last, tty](const SimProgress& p) mutable {
    const auto now = Clock::now();
    if (now - start < std::chrono::seconds(2) || now - last < std::chrono::seconds(1)) return;
    last = now;
    std::cerr << fmt::format(
                     "{}tessera sim: t={} simulated, {} of {} workloads arrived, {} "
                     "cycles, {:.0f}s so far{}",
                     tty ? "\r" : "", FormatSpan(p.now), p.arrived, p.workloads, p.cycles,
                     std::chrono::duration<double>(now - start).count(), tty ? "" : "\n")
              << std::flush;
  };
}

// The identity of this simulation in the accounting store (docs/accounting.md, "Runs"): the
// content of its manifests and the flags that change its results. Running it again replaces its
// records instead of adding a second copy of them.
std::string SimRunId(const std::vector<std::string>& files, double until,
                     const std::string& scale_up, const GpuFailureOptions& failures) {
  accounting::RunId id;
  if (files.empty()) id.Add(kEmbeddedQuickstart);
  for (const std::string& f : files) (void)id.AddFile(f);  // it was read a moment ago
  id.Add(fmt::format("--until={}", until));
  id.Add("--scale-up=" + scale_up);
  if (failures.enabled())
    id.Add(fmt::format("--gpu-failures={} --gpu-repair={}", failures.mtbf_seconds,
                       failures.repair_seconds));
  return id.Id("sim");
}

int Sim(const std::vector<std::string>& files, const std::string& output, Verify verify,
        double until, const std::string& accounting_db, const std::string& scale_up, bool quiet,
        GpuFailureOptions failures) {
  LoadResult r;
  if (files.empty()) {
    LoadManifestText(kEmbeddedQuickstart, "examples/quickstart.yaml (embedded)", r);
  } else {
    r = LoadManifestFiles(files);
  }
  // The same diagnostics as validate: the references' too (a cohort cycle, two default
  // PriorityClasses are errors; names that point at nothing, warnings), since a simulation has
  // all of its input on the command line.
  auto refs = CheckReferences(r.model);
  r.diagnostics.insert(r.diagnostics.end(), refs.begin(), refs.end());
  if (failures.enabled())
    for (std::string& m : UnsimulatedFailurePolicies(r.model))
      r.diagnostics.push_back({Diagnostic::Severity::kWarning, "", 0, "", std::move(m)});
  // Every one is printed (notices unless --quiet): nothing is skipped silently.
  PrintDiagnostics(r.diagnostics, !quiet, std::cerr);
  if (!r.ok()) {
    std::cerr << "tessera sim: the input has errors; nothing was simulated\n";
    return 1;
  }
  if (ObjectCount(r.model) == 0) {
    std::cerr << "tessera sim: no objects in the input; nothing to simulate\n";
    return 1;
  }
  // Said, not silently simulated: a scenario without workloads or without nodes is most likely
  // a file missing from the command line.
  if (r.model.workloads.empty())
    std::cerr << "tessera sim: warning: the input has no workloads; nothing will be scheduled\n";
  if (r.model.nodes.empty() && !r.model.workloads.empty())
    std::cerr << "tessera sim: warning: the input has no nodes; every workload will wait\n";
  SimOptions options;
  options.verify = verify == Verify::kEveryCycle;
  options.progress = ProgressPrinter();
  if (until >= 0) options.until = until;
  if (scale_up == "gang-aware") options.scale_up = ScaleUpMode::kGangAware;
  if (scale_up == "pod-by-pod") options.scale_up = ScaleUpMode::kPodByPod;
  failures.seed = r.model.config.autoscaler.seed;
  options.gpu_failures = failures;
  auto sim = Simulator::Create(std::move(r.model), options);
  if (!sim.ok()) {
    std::cerr << "tessera sim: " << sim.status().message() << "\n";
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  absl::Status st = (*sim)->Run();
  if (std::chrono::steady_clock::now() - started > std::chrono::seconds(2) &&
      isatty(fileno(stderr)))
    std::cerr << "\n";  // ends the progress line
  if (st.ok() && verify == Verify::kAtEnd) {
    st = (*sim)->scheduler().Verify();
    if (!st.ok())
      st = absl::InternalError(
          fmt::format("invariant broken at the end of the run: {}", std::string(st.message())));
  }
  if (!st.ok()) {
    std::cerr << "tessera sim: " << EscapeNonPrintable(std::string(st.message())) << "\n";
    return 2;
  }
  if (output == "json") {
    nlohmann::json doc = (*sim)->JsonDocument();
    doc["diagnostics"] = DiagnosticsJson(r.diagnostics);
    std::cout << DumpJson(doc, 2) << "\n";
  } else {
    std::cout << TerminalText((*sim)->ToTable());
  }
  if (!accounting_db.empty()) {
    int64_t written = 0, replaced = 0;
    const std::string run_id = SimRunId(files, until, scale_up, failures);
    if (auto st =
            accounting::WriteSimulationRecords(**sim, accounting_db, &written, run_id, &replaced);
        !st.ok()) {
      std::cerr << "tessera sim: " << EscapeNonPrintable(std::string(st.message())) << "\n";
      return 1;
    }
    std::cerr << fmt::format("{} run records written to {}", written, accounting_db);
    if (replaced > 0)
      std::cerr << fmt::format(
          " (replacing the {} of an earlier run of the same scenario and "
          "flags, run {})",
          replaced, run_id);
    std::cerr << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU-aware batch scheduler for Kubernetes"};
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  app.require_subcommand(1);

  std::vector<std::string> validate_files;
  auto* validate = app.add_subcommand("validate", "Check manifests and print every problem");
  validate->add_option("files", validate_files, "YAML manifest files")->required();
  bool strict = false;
  validate->add_flag("--strict", strict,
                     "exit 1 also when an object was skipped (a kind Tessera does not read) or "
                     "any warning was given");

  std::vector<std::string> sim_files;
  std::string output = "table";
  bool no_verify = false, verify_every_cycle = false;
  auto* sim = app.add_subcommand(
      "sim", "Simulate a scenario over virtual time (default: the embedded quickstart)");
  sim->add_option("files", sim_files, "YAML manifest files: cluster, queues and workloads");
  sim->add_option("--output,-o", output, "table or json")->check(CLI::IsMember({"table", "json"}));
  sim->add_flag("--verify", verify_every_cycle,
                "check the engine's invariants after every cycle (slow on large scenarios; by "
                "default they are checked once, at the end)");
  sim->add_flag("--no-verify", no_verify, "do not check the engine's invariants at all");
  bool quiet = false;
  sim->add_flag("--quiet,-q", quiet,
                "leave out the loader's notices (skipped harmless kinds, ignored fields); errors "
                "and warnings are always printed");
  std::string accounting_db;
  sim->add_option("--accounting-db", accounting_db,
                  "append a record per workload run to this SQLite accounting store "
                  "(docs/accounting.md)");
  double until = -1;
  sim->add_option("--until", until,
                  "stop the simulation at this time (seconds); pending workloads then show "
                  "their expected start")
      ->check(tessera::cli::Range(0, 1e12, true, "a finite number of seconds from 0 to 1e12"));
  std::string scale_up;
  sim->add_option("--scale-up", scale_up,
                  "how elastic NodePools grow: gang-aware (a gang's nodes only when all of it "
                  "then fits) or pod-by-pod (like today's autoscalers); default: SchedulerConfig "
                  "spec.autoscaler.scaleUp (docs/autoscaling.md)")
      ->check(CLI::IsMember({"gang-aware", "pod-by-pod"}));
  tessera::GpuFailureOptions failures;
  sim->add_option("--gpu-failures", failures.mtbf_seconds,
                  "GPUs fail: the mean time between failures of one GPU (e.g. 50000h), drawn "
                  "from SchedulerConfig spec.autoscaler.seed; a failure evicts the workloads on "
                  "the GPU, each whole, from their last checkpoint (docs/gpu-failures.md)")
      ->transform(tessera::cli::PositiveDuration());
  sim->add_option("--gpu-repair", failures.repair_seconds,
                  "how long a failed GPU stays out (default 24h)")
      ->transform(tessera::cli::PositiveDuration());

  const tessera::cli::Command module_commands[] = {
      tessera::cli::AddFgdCommand(*sim),   tessera::cli::AddReplayCommand(*sim),
      tessera::cli::AddPlanCommand(*sim),  tessera::cli::AddServeCommand(app),
      tessera::cli::AddGetCommand(app),    tessera::cli::AddExplainCommand(app),
      tessera::cli::AddReportCommand(app), tessera::cli::AddConvertCommand(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's message as it prints it; --help and --version exit 0, every usage error (an
    // unknown flag, a value out of range or not a member, a missing argument) exits 2 as the
    // rest of the CLI does, instead of CLI11's own 105-109 (docs/robustness.md, "Exit codes").
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const auto& c : module_commands) {
    if (c.app->parsed()) return c.run();
  }
  if (validate->parsed()) return tessera::Validate(validate_files, strict);
  if (sim->parsed()) {
    using tessera::Verify;
    const Verify v = verify_every_cycle ? Verify::kEveryCycle
                     : no_verify        ? Verify::kNone
                                        : Verify::kAtEnd;
    return tessera::Sim(sim_files, output, v, until, accounting_db, scale_up, quiet, failures);
  }
  return 1;
}
