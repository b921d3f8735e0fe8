// Checks of a manifest document that need yaml-cpp's parser events rather than its tree, run on
// the text before the tree is built.
//
// - Duplicate keys. yaml-cpp keeps both entries of `replicas: 2` ... `replicas: 8`, and a lookup
//   finds the first, so the second would be dropped without a word; kubectl's strict decoding
//   refuses duplicate keys, and so does the loader, naming the key and both lines.
// - What YAML aliases add once expanded. yaml-cpp shares an aliased node, but the readers copy
//   what they read (labels, tolerations, pod sets), so `[*a, *a, ...]` over anchors of anchors
//   ("billion laughs") turns kilobytes of text into gigabytes of Model. Every alias is charged
//   the nodes and scalar bytes of the node it names (aliases inside it expanded too); over one
//   file the charges may reach kMaxYamlAliasNodesPerFile nodes and kMaxYamlAliasBytesPerFile
//   bytes (model/limits.h). A document whose alias goes beyond either is refused at that alias.
//
// Internal to src/config. Thread-safety: an EventChecks belongs to one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::config_internal {

// One file's checks; the alias budget spans its documents.
class EventChecks {
 public:
  struct Problem {
    int line = 0;      // 0-based, in the document's text
    std::string path;  // field path ("spec.replicas"); empty for the alias budget
    std::string message;
  };

  // Checks one YAML document. Problems are empty when it may be loaded. `line_offset` is added
  // to 0-based lines to give the 1-based lines that messages name. A syntax error stops the
  // checks quietly: the real parse reports it. A refused document takes nothing from the budget.
  std::vector<Problem> Check(std::string_view text, int line_offset);

  // Nodes and bytes that aliases have added so far in this file.
  int64_t alias_nodes() const { return alias_nodes_; }
  int64_t alias_bytes() const { return alias_bytes_; }

 private:
  int64_t alias_nodes_ = 0;
  int64_t alias_bytes_ = 0;
};

}  // namespace tessera::config_internal
