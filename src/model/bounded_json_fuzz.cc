// libFuzzer entry for ParseJsonBounded (model/bounded_json.h), the one parse of JSON from outside
// the process (watch events, list answers, serve's API answers, the accounting store's labels):
// any bytes give a value or an error, and a value, printed, copied and compared, never recurses
// past the stack (a document nested 300,000 deep crashed serve). Built with TESSERA_FUZZ (clang);
// scripts/fuzz.sh runs it on tests/fuzz/json/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/bounded_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A small limit too, so that inputs of the fuzzer's length reach the refusal.
  for (int depth : {tessera::kMaxJsonDepth, 4}) {
    auto parsed = tessera::ParseJsonBounded(text, "fuzz", depth);
    if (!parsed.ok()) continue;
    const nlohmann::json copy = *parsed;
    if (copy != *parsed) __builtin_trap();
    (void)copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
