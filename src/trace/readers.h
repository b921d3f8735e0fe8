// Readers of trace CSV files into a Trace.
//
// Nodes: the openb node list (`sn,cpu_milli,memory_mib,gpu,model`) or the generic node format
// (`name,cpu_milli,memory_mib,gpus,gpu_model[,max_pods][,labels]`, and an elastic group's
// `min_nodes,max_nodes,...` columns); the columns are found by
// name, so both are one reader. Jobs: the openb pod list (recognised by its `num_gpu` column,
// with or without the time columns) or the generic job format (recognised by `arrival`).
// docs/trace-replay.md defines every column.
//
// A broken row is reported as "file:line: message"; with BadRows::kSkip it is left out and the
// read goes on, with BadRows::kFail the read stops with that message as the error.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "trace/trace.h"

namespace tessera::trace {

enum class BadRows { kSkip, kFail };

struct ReadLog {
  std::vector<std::string> warnings;  // "file:line: message", the first kMaxWarnings of them
  int64_t skipped_rows = 0;
  int64_t warning_count = 0;
  static constexpr int kMaxWarnings = 50;

  void Warn(std::string message);
};

// Appends the nodes of `path` to trace.nodes.
[[nodiscard]] absl::Status ReadNodes(const std::string& path, BadRows bad_rows, Trace& trace,
                                     ReadLog& log);
// Appends the jobs of `path` to trace.jobs.
[[nodiscard]] absl::Status ReadJobs(const std::string& path, BadRows bad_rows, Trace& trace,
                                    ReadLog& log);

// The priority an openb `qos` value maps to, as the text of a PriorityClass value; false for a
// value that is not an openb QoS class. docs/trace-replay.md gives the table.
bool OpenbQosPriority(std::string_view qos, std::string_view& priority);

}  // namespace tessera::trace
