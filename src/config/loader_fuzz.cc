// libFuzzer entry for the manifest loader: any bytes in, no crash, no hang, no exception out,
// no raw escape in a diagnostic.
// Built with TESSERA_FUZZ (clang); scripts/fuzz.sh runs it on tests/fuzz/loader/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::LoadResult result;
  tessera::LoadManifestText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                            result);
  (void)tessera::CheckReferences(result.model);
  // A diagnostic quotes the input escaped: no raw ESC byte reaches the terminal (issue 31).
  for (const auto& d : result.diagnostics) {
    if (d.ToString().find('\x1b') != std::string::npos) __builtin_trap();
  }
  return 0;
}
