// libFuzzer entry for the manifest loader: any bytes in, no crash, no hang, no exception out.
// Built only with clang (see src/CMakeLists.txt). Seed it with tests/manifests/:
//   ./build/src/loader_fuzz -max_len=8192 tests/manifests/
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::LoadResult result;
  tessera::LoadManifestText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                            result);
  (void)tessera::CheckReferences(result.model);
  for (const auto& d : result.diagnostics) (void)d.ToString();
  return 0;
}
