// Placeholder registration: the module's command is being written.
#include <iostream>

#include "cli/command.h"

namespace tessera::cli {

Command AddFgdCommand(CLI::App& sim) {
  Command c;
  c.app = sim.add_subcommand("fgd", "FGD (ATC'23) fragmentation experiment (not built yet)");
  c.run = [] {
    std::cerr << "tessera: 'fgd' is not built yet\n";
    return 2;
  };
  return c;
}

}  // namespace tessera::cli
