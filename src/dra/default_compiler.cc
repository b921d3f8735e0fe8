// The selector compiler DRA uses: dra/cel's evaluator of the CEL subset DRA allows.
#include "dra/filters.h"

namespace tessera::dra {

SelectorCompiler DefaultSelectorCompiler() {
  return [](std::string_view) -> absl::StatusOr<CompiledSelector> {
    return absl::UnimplementedError(
        "CEL selectors are not evaluated by this build (a device class or request with a "
        "selector matches no device)");
  };
}

}  // namespace tessera::dra
