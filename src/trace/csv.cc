#include "trace/csv.h"

#include <charconv>
#include <cmath>

#include "fmt/format.h"
#include "model/bounded_read.h"
#include "model/limits.h"

namespace tessera::trace {

absl::Status CsvReader::Open(const std::string& path) {
  path_ = path;
  in_.open(path, std::ios::binary);
  if (!in_) return absl::NotFoundError(fmt::format("{}: cannot be read", path));
  while (Next()) {
    if (!error_.empty()) return absl::InvalidArgumentError(Where() + ": " + error_);
    header_ = fields_;
    for (auto& h : header_) h = std::string(Trim(h));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      fmt::format("{}: empty file, a header line was expected", path));
}

int CsvReader::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return static_cast<int>(i);
  return -1;
}

int CsvReader::Column(std::initializer_list<std::string_view> names) const {
  for (auto n : names)
    if (int c = Column(n); c >= 0) return c;
  return -1;
}

bool CsvReader::Next() {
  std::string text;
  for (;;) {
    const LineRead read = ReadLineBounded(in_, text, kMaxCsvLineBytes);
    if (read == LineRead::kEnd || too_long_) return false;
    ++line_;
    if (read == LineRead::kTooLong) {
      // The rest of the line cannot be skipped safely (it may never end): the read stops here.
      too_long_ = true;
      fields_.clear();
      error_ = fmt::format("row longer than {} bytes", kMaxCsvLineBytes);
      return true;
    }
    if (!text.empty() && text.back() == '\r') text.pop_back();
    std::string_view t = Trim(text);
    if (t.empty() || t.front() == '#') continue;
    error_.clear();
    Split(text);
    return true;
  }
}

bool CsvReader::Split(const std::string& text) {
  fields_.clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields_.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  fields_.push_back(std::move(cur));
  if (quoted) {
    error_ = "unterminated quoted field";
    return false;
  }
  return true;
}

std::string_view CsvReader::Field(int column) const {
  if (column < 0 || column >= static_cast<int>(fields_.size())) return {};
  return Trim(fields_[column]);
}

std::string CsvReader::Where() const { return fmt::format("{}:{}", path_, line_); }

std::string_view Trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitTrimmed(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t p = s.find(sep);
    out.push_back(Trim(s.substr(0, p)));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    // Integers written as "12.0" (pandas does that) are accepted when exact.
    auto d = ParseDouble(s);
    if (!d || *d != std::floor(*d) || std::fabs(*d) > 9e15) return std::nullopt;
    return static_cast<int64_t>(*d);
  }
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace tessera::trace
