// Placeholder registration: the module's command is being written.
#include <iostream>

#include "cli/command.h"

namespace tessera::cli {

Command AddServeCommand(CLI::App& app) {
  Command c;
  c.app = app.add_subcommand("serve", "Schedule a Kubernetes cluster's pods through its API server (not built yet)");
  c.run = [] {
    std::cerr << "tessera: 'serve' is not built yet\n";
    return 2;
  };
  return c;
}

}  // namespace tessera::cli
