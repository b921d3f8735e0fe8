// Subcommands that live with their module register themselves through these functions, so that
// main.cc stays a thin dispatcher. Each returns the CLI11 subcommand it added and the function to
// run when that subcommand was parsed.
#pragma once

#include <functional>

#include "CLI/CLI.hpp"

namespace tessera::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// `tessera sim fgd ...`: the FGD (ATC'23) fragmentation experiment (src/fgd/cli.cc).
Command AddFgdCommand(CLI::App& sim);
// `tessera sim replay ...`: time replay of a cluster trace through the engine (src/trace/cli.cc).
Command AddReplayCommand(CLI::App& sim);
// `tessera sim plan ...`: the capacity calculator over a trace (src/trace/plan_cli.cc).
Command AddPlanCommand(CLI::App& sim);
// `tessera serve ...`: schedule a real cluster's pods through the API server (src/k8s/cli.cc).
Command AddServeCommand(CLI::App& app);
// `tessera get queues|workloads|nodes`, `tessera explain NS/NAME`: a running serve's JSON API
// (src/k8s/api/get_cli.cc).
Command AddGetCommand(CLI::App& app);
Command AddExplainCommand(CLI::App& app);
// `tessera report cost ...`: the cost report from the accounting store (src/accounting/cli.cc).
Command AddReportCommand(CLI::App& app);
// `tessera convert FILE...`: KAI and Volcano Queues as Kueue's queue kinds (src/cli/convert.cc).
Command AddConvertCommand(CLI::App& app);

}  // namespace tessera::cli
