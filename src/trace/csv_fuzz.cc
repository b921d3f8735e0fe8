// libFuzzer entry for the trace readers of `sim replay`: any bytes as a nodes file and as a jobs
// file give rows or "file:line" errors; never a crash, a hang or an allocation the bytes do not
// justify. The readers take paths, so the input goes through a file of this process's own.
// Built with TESSERA_FUZZ (clang); scripts/fuzz.sh runs it on tests/fuzz/csv/.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "trace/readers.h"

namespace {

const std::string& InputPath() {
  static const std::string path = "/tmp/tessera-csv-fuzz-" + std::to_string(getpid()) + ".csv";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = InputPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  for (auto bad : {tessera::trace::BadRows::kSkip, tessera::trace::BadRows::kFail}) {
    tessera::trace::Trace trace;
    tessera::trace::ReadLog log;
    (void)tessera::trace::ReadNodes(path, bad, trace, log);
    (void)tessera::trace::ReadJobs(path, bad, trace, log);
  }
  return 0;
}
