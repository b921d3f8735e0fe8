// The API groups and kinds the manifest loader knows: for each kind, its reader, or none for a
// well-known kind Tessera skips with a notice. The job kinds join them from
// config/kinds/registry.h in the loader.
//
// Internal to src/config. Thread-safety: BaseGroups returns a new table each call.
#pragma once

#include <string_view>
#include <vector>

#include "config/kinds.h"

namespace tessera::config_internal {

using Reader = void (*)(DocContext&, const ObjectMeta&, Staged&);

struct KindSpec {
  std::string_view kind;
  Reader reader;  // nullptr: a well-known kind Tessera skips with a notice
  bool namespaced;
  std::vector<std::string_view> versions = {};  // empty: the group's
};

struct GroupSpec {
  std::string_view group;
  std::vector<std::string_view> versions;  // the first is the one a reader is written for
  std::vector<KindSpec> kinds;
};

// The groups of the cluster and queue kinds, and the well-known kinds Tessera skips.
std::vector<GroupSpec>* BaseGroups();

}  // namespace tessera::config_internal
