// Helpers shared by the trace tests: where the shipped inputs are.
#pragma once

#include <cstdlib>
#include <string>

namespace tessera::trace::testing {

inline std::string SourceDir() {
  const char* d = std::getenv("TESSERA_SOURCE_DIR");
  return d ? d : ".";
}

inline std::string DataFile(const std::string& name) {
  return SourceDir() + "/tests/data/trace/" + name;
}

}  // namespace tessera::trace::testing
