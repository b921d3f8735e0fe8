// The device filters of DRA: a device class's selectors and a request's, compiled once, and
// their verdict on each device cached, so that a CEL selector is evaluated once per device and
// slice generation (the devices are fixed for the life of a FilterBank), not per attempt.
//
// Thread-safety: not thread-safe (the cache fills lazily).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "dra/allocator.h"
#include "dra/model.h"

namespace tessera::dra {

// A compiled selector: whether a device passes, or the CEL runtime error.
using CompiledSelector = std::function<absl::StatusOr<bool>(const Device&)>;
// Compiles one expression; the error says what is wrong and where in the expression.
using SelectorCompiler = std::function<absl::StatusOr<CompiledSelector>(std::string_view)>;

// The compiler of the CEL subset DRA uses (dra/cel).
SelectorCompiler DefaultSelectorCompiler();

class FilterBank {
 public:
  // `devices[i]` is device i (global index); they must outlive the bank.
  FilterBank(const DraModel& model, std::vector<const Device*> devices,
             SelectorCompiler compiler = DefaultSelectorCompiler());

  // The filter of requests of `device_class` with `selectors` (registered once; the same class
  // and expressions give the same id). A class that does not exist, or a selector that does not
  // compile, makes a filter that matches nothing, with error() saying why.
  int32_t Register(const std::string& device_class, const std::vector<CelSelector>& selectors);
  Match Matches(int32_t filter, int32_t device);
  // Why the filter cannot match (a missing class, a compile error), or "".
  const std::string& error(int32_t filter) const { return filters_[filter].error; }
  // The CEL runtime error of the last kError verdict on (filter, device), for reasons.
  std::string RuntimeError(int32_t filter, int32_t device) const;
  int32_t num_devices() const { return static_cast<int32_t>(devices_.size()); }

 private:
  struct Filter {
    std::vector<const CompiledSelector*> selectors;  // the class's, then the request's
    std::string error;
    std::vector<Match> cache;  // per device; filled lazily
    std::vector<bool> known;
  };
  const CompiledSelector* Compile(const CelSelector& s, std::string& error);

  const DraModel& model_;
  std::vector<const Device*> devices_;
  SelectorCompiler compiler_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  std::vector<Filter> filters_;
  // Compiled expressions by text (a class's selectors are shared by all its filters).
  absl::flat_hash_map<std::string, std::unique_ptr<CompiledSelector>> compiled_;
  absl::flat_hash_map<std::string, std::string> compile_errors_;
};

}  // namespace tessera::dra
