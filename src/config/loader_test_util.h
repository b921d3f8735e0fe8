// Helpers shared by the loader's tests: load inline YAML, find diagnostics, locate test inputs.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "config/loader.h"
#include "gtest/gtest.h"

namespace tessera::testing {

inline LoadResult Load(std::string_view text, std::string_view file = "t.yaml") {
  LoadResult r;
  LoadManifestText(text, file, r);
  return r;
}

// The first diagnostic of severity `s` whose ToString() contains `needle`, or nullptr.
inline const Diagnostic* Find(const LoadResult& r, Diagnostic::Severity s,
                              std::string_view needle) {
  for (const auto& d : r.diagnostics)
    if (d.severity == s && d.ToString().find(needle) != std::string::npos) return &d;
  return nullptr;
}

inline std::string AllDiagnostics(const LoadResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.ToString() + "\n";
  return out;
}

// The repository root, from ctest's TESSERA_SOURCE_DIR (or the working directory).
inline std::string SourceDir() {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  return dir ? dir : ".";
}

// Resource names the tests use, interned before any test runs: the robustness test fills the
// process-wide registry with mutated names, and must not starve tests that run after it.
inline const bool kTestResourcesInterned = [] {
  for (const char* name : {"rdma/ib", "example.com/fpga", "nvidia.com/mig-1g.10gb"})
    (void)ResourceRegistry::Global().Intern(name);
  return true;
}();

}  // namespace tessera::testing
