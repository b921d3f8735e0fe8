// Reading input files without letting their size decide how much memory is taken: a whole file
// up to a limit (manifests, kubeconfig), or one line at a time up to a limit (CSV traces).
// `/dev/zero`, a pipe that never ends or a file without newlines is refused at the limit
// instead of being read until the process dies. The limits live in model/limits.h.
//
// Header-only, so that leaf libraries (src/fgd) use it without linking tessera_model.
// Thread-safety: pure functions; a stream belongs to one thread.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace tessera {

// The whole of `path` when it holds at most `max_bytes`. A regular file's size is checked before
// anything is read; anything else (a pipe, a device such as /dev/zero) is read up to one byte
// past the limit. `what` names the limit in the message: "PATH: larger than N bytes, the limit
// for WHAT". NotFound when the file cannot be opened, OutOfRange beyond the limit.
[[nodiscard]] inline absl::StatusOr<std::string> ReadFileBounded(const std::string& path,
                                                                 int64_t max_bytes,
                                                                 std::string_view what) {
  auto too_large = [&] {
    return absl::OutOfRangeError(
        fmt::format("{}: larger than {} bytes, the limit for {}", path, max_bytes, what));
  };
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(fmt::format("{}: cannot read file: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > max_bytes)
    return too_large();
  // Blocks of 1 MiB, joined once the end is reached: refusing /dev/zero at the limit takes the
  // limit in memory, not a string doubled past it.
  std::vector<std::string> blocks;
  int64_t total = 0;
  constexpr size_t kBlock = size_t{1} << 20;
  while (in) {
    std::string& block = blocks.emplace_back(kBlock, '\0');
    in.read(block.data(), static_cast<std::streamsize>(kBlock));
    block.resize(static_cast<size_t>(in.gcount()));
    total += static_cast<int64_t>(block.size());
    if (total > max_bytes) return too_large();
  }
  if (in.bad()) return absl::DataLossError(fmt::format("{}: read error", path));
  if (blocks.size() == 1) return std::move(blocks[0]);
  std::string out;
  out.reserve(static_cast<size_t>(total));
  for (std::string& b : blocks) {
    out += b;
    std::string().swap(b);
  }
  return out;
}

enum class LineRead {
  kLine,     // `line` holds the next line, without its '\n'
  kEnd,      // no more input
  kTooLong,  // the line has more than max_bytes bytes; `line` holds the first max_bytes
};

// Reads the next line of `in` into `line`, never holding more than `max_bytes` of it. After
// kTooLong the stream is positioned inside the long line; callers stop reading.
inline LineRead ReadLineBounded(std::istream& in, std::string& line, size_t max_bytes) {
  line.clear();
  std::streambuf* sb = in.rdbuf();
  if (sb == nullptr || !in.good()) return LineRead::kEnd;
  bool any = false;
  for (;;) {
    const int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return any ? LineRead::kLine : LineRead::kEnd;
    }
    any = true;
    if (c == '\n') return LineRead::kLine;
    if (line.size() >= max_bytes) return LineRead::kTooLong;
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace tessera
