// A small CSV reader for trace files: a header line names the columns, every later line is one
// record. Fields may be quoted ("a,b" and "" for a quote); blank lines and lines starting with
// '#' are skipped. Line numbers are kept so that every message can say file:line.
//
// Thread-safety: a CsvReader belongs to one thread.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace tessera::trace {

class CsvReader {
 public:
  // Opens `path` and reads its header. Fails when the file cannot be read or has no header.
  [[nodiscard]] absl::Status Open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  // Index of column `name` (case-sensitive), or -1.
  int Column(std::string_view name) const;
  // The first of `names` that is a column, or -1.
  int Column(std::initializer_list<std::string_view> names) const;

  // Reads the next record into fields(); false at the end of the file. A record with an
  // unterminated quote is returned with error() saying so. A line longer than kMaxCsvLineBytes
  // (model/limits.h) is returned with error() "row longer than N bytes" and too_long() true,
  // and is the last: the rest of the file is not read.
  bool Next();
  bool too_long() const { return too_long_; }
  const std::vector<std::string>& fields() const { return fields_; }
  // The field at `column`, or "" when the record is shorter or column < 0.
  std::string_view Field(int column) const;
  int line() const { return line_; }
  const std::string& error() const { return error_; }
  // "path:line".
  std::string Where() const;

 private:
  bool Split(const std::string& text);

  std::string path_;
  std::ifstream in_;
  std::vector<std::string> header_;
  std::vector<std::string> fields_;
  std::string error_;
  int line_ = 0;
  bool too_long_ = false;
};

// Blanks (space, tab) trimmed from both ends.
std::string_view Trim(std::string_view s);
// Pieces of `s` between `sep`, trimmed; empty pieces are kept.
std::vector<std::string_view> SplitTrimmed(std::string_view s, char sep);

// Strict number parsing for trace fields: the whole field must be the number (surrounding blanks
// allowed); nothing is silently truncated.
std::optional<int64_t> ParseInt(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);

}  // namespace tessera::trace
