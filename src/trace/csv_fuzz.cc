// libFuzzer entry for the trace readers of `sim replay`: any bytes as a nodes file and as a jobs
// file give rows or "file:line" errors; never a crash, a hang or an allocation the bytes do not
// justify. The readers take paths, so the input goes through a file of this process's own.
// The text fields read (names, queues, namespaces) then go through the outputs' helpers: into
// JSON (DumpJson: never throws on bytes that are not UTF-8) and to a terminal (TerminalText: no
// raw ESC byte comes out), as the replay's reports and summary write them (issue 31).
// Built with TESSERA_FUZZ (clang); scripts/fuzz.sh runs it on tests/fuzz/csv/.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "model/json_text.h"
#include "model/printable.h"
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
    nlohmann::json fields = nlohmann::json::array();
    std::string text;
    for (const auto& job : trace.jobs) fields.push_back(job.name);
    for (const auto* names : {&trace.queues, &trace.namespaces, &trace.priorities}) {
      for (const auto& n : *names) fields.push_back(n);
    }
    for (const auto& node : trace.nodes) fields.push_back(node.name);
    for (const auto& f : fields) text += f.get<std::string>() + "\n";
    for (const auto& w : log.warnings) text += w + "\n";
    (void)tessera::DumpJson(fields);
    if (tessera::TerminalText(text).find('\x1b') != std::string::npos) __builtin_trap();
  }
  return 0;
}
