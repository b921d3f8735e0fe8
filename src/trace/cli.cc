// Placeholder registration: the module's command is being written.
#include <iostream>

#include "cli/command.h"

namespace tessera::cli {

Command AddReplayCommand(CLI::App& sim) {
  Command c;
  c.app = sim.add_subcommand("replay", "Replay a cluster trace through the engine (not built yet)");
  c.run = [] {
    std::cerr << "tessera: 'replay' is not built yet\n";
    return 2;
  };
  return c;
}

}  // namespace tessera::cli
