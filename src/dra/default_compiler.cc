// The selector compiler DRA uses: dra/cel's evaluator of the CEL subset DRA allows
// (docs/dra-cel.md).
#include "dra/cel/selector.h"
#include "dra/filters.h"

namespace tessera::dra {

SelectorCompiler DefaultSelectorCompiler() {
  return [](std::string_view expression) -> absl::StatusOr<CompiledSelector> {
    auto selector = cel::Selector::Compile(expression);
    if (!selector.ok()) return selector.status();
    return CompiledSelector([s = *std::move(selector)](const Device& d) { return s.Evaluate(d); });
  };
}

}  // namespace tessera::dra
