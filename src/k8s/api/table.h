// A kubectl-style table: a header row in capitals and columns padded to their widest cell,
// three spaces apart, no borders. `tessera get` prints its lists with it.
//
// Thread-safety: none needed; a value type.
#pragma once

#include <string>
#include <vector>

namespace tessera::k8s {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // A row with fewer cells than the header is padded with empty ones; extra cells are dropped.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  // The text, one line per row (header first), each ending in '\n'; trailing spaces trimmed.
  // Control characters in cells (a newline in a reason) are shown as spaces.
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tessera::k8s
