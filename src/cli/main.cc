// tessera: the command line. Thin: parses flags, calls the loader, engine and simulator.
//
//   tessera validate FILE...                 check manifests, print diagnostics
//   tessera sim [FILE...] [--output table|json]   simulate a scenario (default: the embedded
//                                            quickstart, examples/quickstart.yaml)
//   tessera sim fgd ...                      the FGD fragmentation experiment (src/fgd)
//   tessera sim replay ...                   replay a cluster trace (src/trace)
//   tessera serve ...                        schedule a Kubernetes cluster (src/k8s)
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/command.h"
#include "cli/embedded_quickstart.h"
#include "config/loader.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

// Prints diagnostics: errors and warnings on stderr, notices too unless quiet.
void PrintDiagnostics(const std::vector<Diagnostic>& diags, bool notices) {
  for (const auto& d : diags) {
    if (d.severity == Diagnostic::Severity::kNotice && !notices) continue;
    std::cerr << d.ToString() << "\n";
  }
}

int Validate(const std::vector<std::string>& files) {
  LoadResult r = LoadManifestFiles(files);
  auto refs = CheckReferences(r.model);
  r.diagnostics.insert(r.diagnostics.end(), refs.begin(), refs.end());
  PrintDiagnostics(r.diagnostics, true);
  const Model& m = r.model;
  std::cout << fmt::format(
      "{}: {} nodes, {} flavors, {} cluster queues, {} cohorts, {} local queues, {} priority "
      "classes, {} workloads; {} errors, {} warnings, {} notices\n",
      r.ok() ? "ok" : "invalid", m.nodes.size(), m.flavors.size(), m.cluster_queues.size(),
      m.cohorts.size(), m.local_queues.size(),
      m.priority_classes.size() + m.workload_priority_classes.size(), m.workloads.size(),
      r.count(Diagnostic::Severity::kError), r.count(Diagnostic::Severity::kWarning),
      r.count(Diagnostic::Severity::kNotice));
  return r.ok() ? 0 : 1;
}

int Sim(const std::vector<std::string>& files, const std::string& output, bool verify,
        double until) {
  LoadResult r;
  if (files.empty()) {
    LoadManifestText(kEmbeddedQuickstart, "examples/quickstart.yaml (embedded)", r);
  } else {
    r = LoadManifestFiles(files);
  }
  // What no split of the manifests can fix (a cohort cycle, two default PriorityClasses) is an
  // error here too; names that point at nothing stay validate's warnings.
  for (Diagnostic& d : CheckReferences(r.model))
    if (d.severity == Diagnostic::Severity::kError) r.diagnostics.push_back(std::move(d));
  PrintDiagnostics(r.diagnostics, false);
  if (!r.ok()) {
    std::cerr << "tessera sim: the input has errors; nothing was simulated\n";
    return 1;
  }
  SimOptions options;
  options.verify = verify;
  if (until >= 0) options.until = until;
  auto sim = Simulator::Create(std::move(r.model), options);
  if (!sim.ok()) {
    std::cerr << "tessera sim: " << sim.status().message() << "\n";
    return 1;
  }
  if (auto st = (*sim)->Run(); !st.ok()) {
    std::cerr << "tessera sim: " << st.message() << "\n";
    return 2;
  }
  std::cout << (output == "json" ? (*sim)->ToJson() : (*sim)->ToTable());
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

  std::vector<std::string> sim_files;
  std::string output = "table";
  bool no_verify = false;
  auto* sim = app.add_subcommand(
      "sim", "Simulate a scenario over virtual time (default: the embedded quickstart)");
  sim->add_option("files", sim_files, "YAML manifest files: cluster, queues and workloads");
  sim->add_option("--output,-o", output, "table or json")->check(CLI::IsMember({"table", "json"}));
  sim->add_flag("--no-verify", no_verify, "skip the invariant check after every cycle");
  double until = -1;
  sim->add_option("--until", until,
                  "stop the simulation at this time (seconds); pending workloads then show "
                  "their expected start")
      ->check(CLI::Range(0.0, 1e12));

  const tessera::cli::Command module_commands[] = {
      tessera::cli::AddFgdCommand(*sim),
      tessera::cli::AddReplayCommand(*sim),
      tessera::cli::AddServeCommand(app),
  };

  CLI11_PARSE(app, argc, argv);
  for (const auto& c : module_commands) {
    if (c.app->parsed()) return c.run();
  }
  if (validate->parsed()) return tessera::Validate(validate_files);
  if (sim->parsed()) return tessera::Sim(sim_files, output, !no_verify, until);
  return 1;
}
