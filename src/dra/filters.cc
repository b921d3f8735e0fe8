#include "dra/filters.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tessera::dra {

FilterBank::FilterBank(const DraModel& model, std::vector<const Device*> devices,
                       SelectorCompiler compiler)
    : model_(model), devices_(std::move(devices)), compiler_(std::move(compiler)) {}

const CompiledSelector* FilterBank::Compile(const CelSelector& s, std::string& error) {
  if (auto it = compiled_.find(s.expression); it != compiled_.end()) return it->second.get();
  if (auto it = compile_errors_.find(s.expression); it != compile_errors_.end()) {
    error = it->second;
    return nullptr;
  }
  absl::StatusOr<CompiledSelector> c = compiler_(s.expression);
  if (!c.ok()) {
    error = absl::StrCat("selector at ", s.source, " (", s.path, "): ", c.status().message());
    compile_errors_.emplace(s.expression, error);
    return nullptr;
  }
  auto owned = std::make_unique<CompiledSelector>(*std::move(c));
  const CompiledSelector* p = owned.get();
  compiled_.emplace(s.expression, std::move(owned));
  return p;
}

int32_t FilterBank::Register(const std::string& device_class,
                             const std::vector<CelSelector>& selectors) {
  std::string key = device_class;
  for (const CelSelector& s : selectors) absl::StrAppend(&key, "\n", s.expression);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  Filter f;
  auto cls = model_.classes.find(device_class);
  if (cls == model_.classes.end()) {
    f.error = absl::StrCat("DeviceClass ", device_class, " does not exist");
  } else {
    for (const auto* list : {&cls->second.selectors, &selectors})
      for (const CelSelector& s : *list) {
        if (!f.error.empty()) break;
        if (const CompiledSelector* c = Compile(s, f.error)) f.selectors.push_back(c);
      }
  }
  f.cache.assign(devices_.size(), Match::kNo);
  f.known.assign(devices_.size(), false);
  const int32_t id = static_cast<int32_t>(filters_.size());
  filters_.push_back(std::move(f));
  ids_.emplace(std::move(key), id);
  return id;
}

Match FilterBank::Matches(int32_t filter, int32_t device) {
  Filter& f = filters_[filter];
  if (!f.error.empty()) return Match::kNo;
  if (f.known[device]) return f.cache[device];
  Match m = Match::kYes;
  for (const CompiledSelector* s : f.selectors) {
    absl::StatusOr<bool> r = (*s)(*devices_[device]);
    if (!r.ok()) {
      m = Match::kError;
      break;
    }
    if (!*r) {
      m = Match::kNo;
      break;
    }
  }
  f.cache[device] = m;
  f.known[device] = true;
  return m;
}

std::string FilterBank::RuntimeError(int32_t filter, int32_t device) const {
  for (const CompiledSelector* s : filters_[filter].selectors) {
    absl::StatusOr<bool> r = (*s)(*devices_[device]);
    if (!r.ok()) return std::string(r.status().message());
  }
  return "";
}

}  // namespace tessera::dra
