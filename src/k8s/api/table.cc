#include "k8s/api/table.h"

#include <algorithm>

namespace tessera::k8s {
namespace {

// Display width: UTF-8 continuation bytes take no column.
size_t Width(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string Clean(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

}  // namespace

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  for (std::string& c : cells) c = Clean(std::move(c));
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], Width(row[i]));
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t i = 0; i < row.size(); ++i) {
      l += row[i];
      if (i + 1 < row.size()) l += std::string(width[i] - Width(row[i]) + 3, ' ');
    }
    l.erase(l.find_last_not_of(' ') + 1);
    out += l + "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
  return out;
}

}  // namespace tessera::k8s
