// Typed, path-aware access to one parsed YAML document, for the manifest loader.
//
// Every accessor checks the node's type before touching it (yaml-cpp throws on a subscript of a
// scalar, on a failed conversion), reports a Diagnostic with file, 1-based line and field path
// when the value is wrong, and returns std::nullopt / false so that callers simply stop. A
// DocContext counts visited elements so that alias-heavy input ("billion laughs") cannot make
// the loader walk an exponential tree.
//
// Internal to src/config. Thread-safety: a DocContext belongs to one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "model/labels.h"
#include "model/resources.h"
#include "yaml-cpp/yaml.h"

namespace tessera::config_internal {

// "spec" + "count" -> "spec.count"; keys with dots or slashes are bracketed and quoted:
// "metadata.annotations" + "tessera.dev/arrival" -> `metadata.annotations["tessera.dev/arrival"]`.
std::string JoinPath(std::string_view base, std::string_view key);
// "spec.tasks" + 2 -> "spec.tasks[2]".
std::string IndexPath(std::string_view base, size_t index);

// Diagnostics and bookkeeping for one document (or one item of a v1 List).
class DocContext {
 public:
  // `line_offset` is added to yaml-cpp's 0-based marks to give 1-based lines in the file; lines
  // are clamped to `last_line` (yaml-cpp places a null at the end of input one line too far).
  DocContext(std::string_view file, int line_offset, std::vector<Diagnostic>* out,
             int last_line = std::numeric_limits<int>::max());

  // 1-based line of `node` in the file, or `fallback` when the node has no position (missing).
  int Line(const YAML::Node& node, int fallback = 0) const;
  // "file:line" of `node`.
  std::string Source(const YAML::Node& node) const;
  const std::string& file() const { return file_; }
  int line_offset() const { return line_offset_; }
  int last_line() const { return last_line_; }

  void Report(Diagnostic::Severity s, int line, std::string path, std::string message);
  void Error(const YAML::Node& at, std::string path, std::string message);
  void Warning(const YAML::Node& at, std::string path, std::string message);
  void Notice(const YAML::Node& at, std::string path, std::string message);

  bool failed() const { return failed_; }

  // Counts one visited element; false (and one error) once the document's budget is spent.
  bool Visit(const YAML::Node& at);

 private:
  std::string file_;
  int line_offset_;
  int last_line_;
  std::vector<Diagnostic>* out_;
  bool failed_ = false;
  int reported_ = 0;
  int64_t budget_;
};

// Names a node's type for messages: "a map", "a list", "a string", "null".
const char* TypeName(const YAML::Node& node);

// The child `key` of `map`, or an undefined node when `map` is not a map or has no such key.
// Never throws.
YAML::Node Child(const YAML::Node& map, std::string_view key);
// True when `node` is absent or null.
bool IsNullish(const YAML::Node& node);

// Typed getters: the child `key` of `parent` (path `path` is the child's own path). An absent or
// null child gives std::nullopt without a diagnostic; a present child of the wrong type gives an
// error and std::nullopt. Use ctx.failed() to tell the two apart where it matters.
std::optional<std::string> GetString(DocContext& ctx, const YAML::Node& parent,
                                     std::string_view key, const std::string& path);
std::optional<int64_t> GetInt(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                              const std::string& path, int64_t min, int64_t max);
std::optional<bool> GetBool(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                            const std::string& path);
// Like GetString but a missing value is an error ("required field").
std::optional<std::string> RequireString(DocContext& ctx, const YAML::Node& parent,
                                         std::string_view key, const std::string& path);

// Converts a scalar node to a value; errors name `path`.
std::optional<std::string> ScalarString(DocContext& ctx, const YAML::Node& node,
                                        const std::string& path);
std::optional<int64_t> ScalarInt(DocContext& ctx, const YAML::Node& node, const std::string& path,
                                 int64_t min, int64_t max);
// Parses a non-negative Kubernetes quantity of resource `r` (cpu in millicores).
std::optional<int64_t> ScalarQuantity(DocContext& ctx, const YAML::Node& node,
                                      const std::string& path, ResourceId r);
// Parses a non-negative number from text (annotations such as tessera.dev/arrival).
std::optional<double> ParseNonNegativeNumber(std::string_view text);

// Checks that `node` (the child at `path`) is a map / list; absent or null are fine (false, no
// error). Returns true when it is present and of the right type.
bool ExpectMap(DocContext& ctx, const YAML::Node& node, const std::string& path);
bool ExpectSeq(DocContext& ctx, const YAML::Node& node, const std::string& path);

// Iterates a map with string keys; `fn(key, value, child_path)`. A non-scalar key is an error.
// Stops early when `fn` returns false or the context's budget is spent.
void ForEachMap(
    DocContext& ctx, const YAML::Node& map, const std::string& path,
    const std::function<bool(const std::string&, const YAML::Node&, const std::string&)>& fn);
// Iterates a list; `fn(index, value, child_path)`.
void ForEachSeq(DocContext& ctx, const YAML::Node& seq, const std::string& path,
                const std::function<bool(size_t, const YAML::Node&, const std::string&)>& fn);

// Reads a list of strings (`coveredResources`, `values`).
std::optional<std::vector<std::string>> GetStringList(DocContext& ctx, const YAML::Node& parent,
                                                      std::string_view key,
                                                      const std::string& path);

// Maps an enum spelled as in Kubernetes; an unknown value is an error listing the allowed ones.
template <typename E>
std::optional<E> ParseEnum(DocContext& ctx, const YAML::Node& node, const std::string& path,
                           std::initializer_list<std::pair<std::string_view, E>> values) {
  auto text = ScalarString(ctx, node, path);
  if (!text) return std::nullopt;
  std::string allowed;
  for (const auto& [name, value] : values) {
    if (name == *text) return value;
    if (!allowed.empty()) allowed += ", ";
    allowed += name;
  }
  ctx.Error(node, path, "unknown value \"" + *text + "\"; allowed: " + allowed);
  return std::nullopt;
}

// Kubernetes building blocks. Each returns false after reporting an error.
bool ReadLabels(DocContext& ctx, const YAML::Node& node, const std::string& path, Labels& out);
bool ReadTaints(DocContext& ctx, const YAML::Node& node, const std::string& path,
                std::vector<Taint>& out);
bool ReadTolerations(DocContext& ctx, const YAML::Node& node, const std::string& path,
                     std::vector<Toleration>& out);
// matchExpressions; `allow_gt_lt` for node selector terms (Gt/Lt), not for label selectors.
bool ReadRequirements(DocContext& ctx, const YAML::Node& node, const std::string& path,
                      bool allow_gt_lt, std::vector<SelectorRequirement>& out);
// metav1.LabelSelector; an absent node leaves `out.present` false.
bool ReadLabelSelector(DocContext& ctx, const YAML::Node& node, const std::string& path,
                       LabelSelector& out);
// A resource map ("cpu: 4, memory: 16Gi, nvidia.com/gpu: 8"); interns names. Also returns which
// resources were named, so that callers can tell "absent" from "0".
bool ReadResourceMap(DocContext& ctx, const YAML::Node& node, const std::string& path,
                     Resources& out, std::vector<ResourceId>* named = nullptr);
// Interns `name`, reporting an error at `path` when the registry is full.
std::optional<ResourceId> InternResource(DocContext& ctx, const YAML::Node& at,
                                         const std::string& path, std::string_view name);

// Edit distance with transpositions (optimal string alignment), case-insensitive.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace tessera::config_internal
