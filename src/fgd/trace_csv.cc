#include "fgd/trace_csv.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "model/bounded_read.h"
#include "model/limits.h"

namespace tessera::fgd {
namespace {

std::vector<std::string_view> SplitRow(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t comma = line.find(',');
    out.push_back(line.substr(0, comma));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
    // Some exports write integers as floats ("1000.0").
    double d = 0;
    const auto [p2, e2] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (e2 != std::errc() || p2 != s.data() + s.size() || s.empty() ||
        d != static_cast<int64_t>(d)) {
      return std::nullopt;
    }
    return static_cast<int64_t>(d);
  }
  return v;
}

// Reads `path` line by line; `row` turns one split data row into a T or an error message.
template <typename T, typename RowFn>
absl::StatusOr<TraceRead<T>> ReadCsv(const std::string& path,
                                     const std::vector<std::string_view>& required,
                                     const ReadOptions& options, RowFn row) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  std::string line;
  int line_no = 1;
  // A line beyond the limit (a file without newlines, /dev/zero) ends the read: its rest may
  // never end, so it cannot be skipped like a bad row.
  auto next_line = [&]() -> absl::StatusOr<bool> {
    switch (ReadLineBounded(in, line, kMaxCsvLineBytes)) {
      case LineRead::kLine:
        return true;
      case LineRead::kEnd:
        return false;
      case LineRead::kTooLong:
        break;
    }
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: row longer than {} bytes", path, line_no, kMaxCsvLineBytes));
  };
  absl::StatusOr<bool> got = next_line();
  if (!got.ok()) return got.status();
  if (!*got) return absl::InvalidArgumentError(fmt::format("{}:1: empty file", path));
  std::vector<int> column(required.size(), -1);
  {
    const std::vector<std::string_view> header = SplitRow(Trim(line));
    for (size_t r = 0; r < required.size(); ++r) {
      for (size_t c = 0; c < header.size(); ++c) {
        if (Trim(header[c]) == required[r]) column[r] = static_cast<int>(c);
      }
    }
  }
  TraceRead<T> out;
  for (;;) {
    ++line_no;
    got = next_line();
    if (!got.ok()) return got.status();
    if (!*got) break;
    const std::string_view trimmed = Trim(line);
    if (trimmed.empty()) continue;
    const std::vector<std::string_view> cells = SplitRow(trimmed);
    std::string error;
    std::optional<T> value = row(cells, column, error);
    if (value.has_value()) {
      out.rows.push_back(std::move(*value));
      continue;
    }
    std::string message = fmt::format("{}:{}: {}", path, line_no, error);
    if (options.strict) return absl::InvalidArgumentError(message);
    out.warnings.push_back(std::move(message));
  }
  return out;
}

// The cell of required column `r`, or nullopt (with `error` set) when the row lacks it.
std::optional<std::string_view> Cell(const std::vector<std::string_view>& cells,
                                     const std::vector<int>& column, size_t r,
                                     std::string_view name, std::string& error) {
  if (column[r] < 0 || static_cast<size_t>(column[r]) >= cells.size()) {
    error = fmt::format("missing column '{}'", name);
    return std::nullopt;
  }
  return Trim(cells[static_cast<size_t>(column[r])]);
}

std::optional<int64_t> IntCell(const std::vector<std::string_view>& cells,
                               const std::vector<int>& column, size_t r, std::string_view name,
                               int64_t min, int64_t max, std::string& error) {
  std::optional<std::string_view> cell = Cell(cells, column, r, name, error);
  if (!cell) return std::nullopt;
  std::optional<int64_t> v = ParseInt(*cell);
  if (!v || *v < min || *v > max) {
    error = fmt::format("{} '{}' is not an integer in [{}, {}]", name, *cell, min, max);
    return std::nullopt;
  }
  return v;
}

constexpr int64_t kMaxCpuMilli = int64_t{1} << 40;

}  // namespace

absl::StatusOr<TraceRead<TraceNode>> ReadNodesCsv(const std::string& path, GpuModelTable& models,
                                                  const ReadOptions& options) {
  static const std::vector<std::string_view> kColumns = {"sn", "cpu_milli", "memory_mib", "gpu",
                                                         "model"};
  return ReadCsv<TraceNode>(
      path, kColumns, options,
      [&](const std::vector<std::string_view>& cells, const std::vector<int>& column,
          std::string& error) -> std::optional<TraceNode> {
        TraceNode n;
        std::optional<std::string_view> name = Cell(cells, column, 0, "sn", error);
        if (!name) return std::nullopt;
        n.name = std::string(*name);
        std::optional<int64_t> cpu = IntCell(cells, column, 1, "cpu_milli", 0, kMaxCpuMilli, error);
        if (!cpu) return std::nullopt;
        std::optional<int64_t> mem =
            IntCell(cells, column, 2, "memory_mib", 0, kMaxCpuMilli, error);
        if (!mem) return std::nullopt;
        std::optional<int64_t> gpus = IntCell(cells, column, 3, "gpu", 0, kMaxGpusPerNode, error);
        if (!gpus) return std::nullopt;
        n.cpu_milli = *cpu;
        n.memory_mib = *mem;
        n.num_gpus = static_cast<int32_t>(*gpus);
        std::optional<std::string_view> model = Cell(cells, column, 4, "model", error);
        if (!model) return std::nullopt;
        if (n.num_gpus > 0) {
          if (model->empty()) {
            error = "a node with GPUs needs a model";
            return std::nullopt;
          }
          absl::StatusOr<int32_t> id = models.Intern(*model);
          if (!id.ok()) {
            error = std::string(id.status().message());
            return std::nullopt;
          }
          n.gpu_model = *id;
        }
        return n;
      });
}

absl::StatusOr<TraceRead<TracePod>> ReadPodsCsv(const std::string& path, GpuModelTable& models,
                                                const ReadOptions& options) {
  static const std::vector<std::string_view> kColumns = {"name",    "cpu_milli", "memory_mib",
                                                         "num_gpu", "gpu_milli", "gpu_spec"};
  return ReadCsv<TracePod>(
      path, kColumns, options,
      [&](const std::vector<std::string_view>& cells, const std::vector<int>& column,
          std::string& error) -> std::optional<TracePod> {
        TracePod p;
        std::optional<std::string_view> name = Cell(cells, column, 0, "name", error);
        if (!name) return std::nullopt;
        p.name = std::string(*name);
        std::optional<int64_t> cpu = IntCell(cells, column, 1, "cpu_milli", 0, kMaxCpuMilli, error);
        if (!cpu) return std::nullopt;
        std::optional<int64_t> mem =
            IntCell(cells, column, 2, "memory_mib", 0, kMaxCpuMilli, error);
        if (!mem) return std::nullopt;
        std::optional<int64_t> num_gpu =
            IntCell(cells, column, 3, "num_gpu", 0, kMaxGpusPerNode, error);
        if (!num_gpu) return std::nullopt;
        std::optional<int64_t> milli =
            IntCell(cells, column, 4, "gpu_milli", 0, int64_t{1} << 30, error);
        if (!milli) return std::nullopt;
        p.shape.cpu_milli = *cpu;
        p.shape.mem_mib = *mem;
        p.shape.num_gpu = static_cast<int32_t>(*num_gpu);
        p.shape.gpu_milli = p.shape.num_gpu == 0
                                ? 0
                                : static_cast<int32_t>(std::min<int64_t>(*milli, kMilliPerGpu));
        if (p.shape.num_gpu > 1 && p.shape.gpu_milli < kMilliPerGpu) {
          error = fmt::format("a {}-GPU pod must take whole GPUs (gpu_milli {})", *num_gpu, *milli);
          return std::nullopt;
        }
        // gpu_spec is optional (the multigpu traces have no such column).
        if (column[5] >= 0 && static_cast<size_t>(column[5]) < cells.size() &&
            p.shape.num_gpu > 0) {
          const std::string_view spec = Trim(cells[static_cast<size_t>(column[5])]);
          absl::StatusOr<ModelMask> mask = models.MaskOfSpec(spec);
          if (!mask.ok()) {
            error = std::string(mask.status().message());
            return std::nullopt;
          }
          p.shape.models = *mask;
          // The simulator keys shapes by the '|'-joined non-empty names.
          std::string joined;
          size_t start = 0;
          while (start <= spec.size()) {
            size_t bar = spec.find('|', start);
            if (bar == std::string_view::npos) bar = spec.size();
            if (bar > start) {
              if (!joined.empty()) joined += '|';
              joined += spec.substr(start, bar - start);
            }
            start = bar + 1;
          }
          p.shape.model_spec = std::move(joined);
        }
        return p;
      });
}

}  // namespace tessera::fgd
