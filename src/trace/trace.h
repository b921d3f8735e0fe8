// A cluster trace in memory: nodes, and jobs that arrive, run for a while and leave. The job
// record is compact (about 100 bytes) because a trace read from files is held whole, a million
// jobs of it (a synthetic trace is replayed as a stream instead, trace/job_source.h).
//
// Readers for the openb (Alibaba cluster-trace-gpu-v2023) and the generic CSV formats fill
// these (trace/readers.h); docs/trace-replay.md describes both formats.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/labels.h"
#include "model/node_pool.h"

namespace tessera::trace {

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  int32_t max_pods = 110;  // the kubelet default when the trace does not say
  std::string gpu_model;   // becomes label nvidia.com/gpu.product
  Labels labels;
  std::string source;  // "file:line"
  // An elastic node group (docs/trace-replay.md, "Elastic node groups"): the row stands for
  // nodes `<name>-0` .. `<name>-<maxNodes - 1>` of its shape, an elastic NodePool named `name`
  // of which minNodes are up at the start. Price and spot apply to the group only.
  std::optional<NodePoolAutoscaling> autoscaling;
  std::optional<double> price_per_node_hour;
  std::optional<NodePoolSpot> spot;
};

// One job: `pods` identical pods admitted together (a gang).
struct TraceJob {
  double arrival = 0;    // seconds
  double duration = -1;  // seconds once admitted; < 0: runs until the replay ends
  int32_t pods = 1;
  int32_t gpus = 0;         // whole GPUs per pod
  int32_t gpu_milli = 0;    // a share of one GPU per pod (1..999); 0 when not fractional
  int64_t cpu_milli = 0;    // per pod
  int64_t memory_mib = 0;   // per pod
  int32_t queue = 0;        // index in Trace::queues
  int32_t priority = 0;     // index in Trace::priorities
  int32_t gpu_models = -1;  // index in Trace::gpu_model_sets; -1: any GPU model
  int32_t ns = 0;           // index in Trace::namespaces
  double max_wait = -1;     // seconds: the job's wait limit (tessera.dev/max-wait); < 0: none
  int32_t line = 0;         // line in the jobs file (0: generated)
  std::string name;         // empty: "job-<index>"

  // GPU demand of one pod in thousandths of a GPU.
  int64_t PodGpuMilli() const { return gpu_milli > 0 ? gpu_milli : int64_t{gpus} * 1000; }
};

struct Trace {
  std::vector<TraceNode> nodes;
  std::vector<TraceJob> jobs;
  // Interned strings the jobs refer to by index. queues[0] is "" (no queue named: the default
  // queue); priorities[0] is "" (no priority: the default); namespaces[0] is "default".
  std::vector<std::string> queues = {""};
  std::vector<std::string> priorities = {""};
  std::vector<std::string> namespaces = {"default"};
  std::vector<std::vector<std::string>> gpu_model_sets;
  std::string jobs_file;  // for messages
};

}  // namespace tessera::trace
