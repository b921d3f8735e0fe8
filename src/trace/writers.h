// Writers of a Trace as the generic CSV formats that trace/readers.h reads back
// (docs/trace-replay.md, "Writing a trace out"): `tessera sim replay --write-trace DIR` writes the
// trace it would replay (a synthetic one, or an openb one converted) so that it can be edited,
// e.g. given a per-job max_wait column, and replayed with --nodes and --jobs.
//
// Reading the files back gives the same trace: every field that the readers fill, except where a
// record comes from (TraceJob::line, TraceNode::source), which then names the written file, and
// the order of the interned tables (Trace::queues and the others), which the reader makes in the
// order of first use. With default queues that order is the ClusterQueues' order (the queue
// table's, ties between queues, which one takes the remainder of the cluster's share):
// QueueOrderKept says whether it survives.
// Text that the CSV reader cannot give back (a line break, blanks at either end, a label key or
// value with ';' or a label key with '=', a GPU model with '|') is an error naming the node or
// job, and nothing is written.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "trace/trace.h"

namespace tessera::trace {

// Writes `trace.nodes` to `path` (columns name, cpu_milli, memory_mib, gpus, gpu_model, max_pods,
// labels, and an elastic group's columns when any node is one).
[[nodiscard]] absl::Status WriteNodes(const Trace& trace, const std::string& path);

// Writes `trace.jobs` to `path` (columns arrival, name, duration, pods, gpus, gpu_milli,
// cpu_milli, memory_mib, gpu_model, queue, namespace, priority, max_wait).
[[nodiscard]] absl::Status WriteJobs(const Trace& trace, const std::string& path);

// Whether the queues the jobs use first appear in jobs.csv in the order of Trace::queues, so
// that reading the written files back makes the default ClusterQueues in the same order. The
// synthetic generator's team-0, team-1, ... do not when there are several.
bool QueueOrderKept(const Trace& trace);

// Creates `dir` if needed and writes dir/nodes.csv and dir/jobs.csv.
[[nodiscard]] absl::Status WriteTrace(const Trace& trace, const std::string& dir);

}  // namespace tessera::trace
