// kubectl's habits for `tessera get`: a label selector (-l), YAML output (-o yaml) and the
// LocalQueues table (`get lq`, from the workloads' LocalQueues).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

// kubectl's equality-based selector: terms joined by commas, each `key=value`, `key==value`,
// `key!=value`, `key` (present) or `!key` (absent). Set-based terms (`in`, `notin`) are refused.
struct SelectorTerm {
  enum class Op { kEq, kNe, kExists, kAbsent } op = Op::kEq;
  std::string key, value;
};
using Selector = std::vector<SelectorTerm>;

absl::StatusOr<Selector> ParseSelector(const std::string& text);
// `labels`: a JSON object of strings (missing or null: no labels).
bool Matches(const Selector& s, const nlohmann::json& labels);

// Block-style YAML of a JSON value (strings double-quoted, as JSON writes them).
std::string ToYaml(const nlohmann::json& j);

// NAMESPACE NAME CLUSTERQUEUE PENDING ADMITTED, one row per LocalQueue named by a workload of
// serve's /api/v1/workloads document.
absl::StatusOr<std::string> FormatLocalQueues(const nlohmann::json& workloads,
                                              bool with_namespace);

}  // namespace tessera::k8s
