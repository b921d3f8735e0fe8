#include "trace/model_builder.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "fmt/format.h"
#include "model/limits.h"
#include "trace/csv.h"

namespace tessera::trace {

namespace {

constexpr int64_t kMiB = 1024 * 1024;

// Short enough for the string's inline buffer: the engine keeps one per workload.
std::string PriorityClassName(int64_t value) { return fmt::format("replay-p{}", value); }

// Which queue and priority entries of the trace its jobs use, and the line of the first job
// using each (for the diagnostics).
struct UsedNames {
  std::vector<bool> queue, prio;
  std::vector<int32_t> first_line_q, first_line_p;
};

// Where a trace job came from, for a diagnostic: its file and line, or "synthetic".
std::string Where(const Trace& trace, int32_t line) {
  return line > 0 ? fmt::format("{}:{}", trace.jobs_file, line) : std::string("synthetic");
}

// A model node of the trace node's shape, named `name`.
Node MakeNode(const TraceNode& tn, std::string name) {
  Node n;
  n.name = std::move(name);
  n.labels = tn.labels;
  n.labels["kubernetes.io/hostname"] = n.name;
  if (!tn.gpu_model.empty()) n.labels["nvidia.com/gpu.product"] = tn.gpu_model;
  n.gpu_model = tn.gpu_model;
  n.allocatable[kCpu] = tn.cpu_milli;
  n.allocatable[kMemory] = tn.memory_mib * kMiB;
  n.allocatable[kPods] = tn.max_pods;
  n.allocatable[kGpu] = tn.gpus;
  // Shares are booked against the node's GPUs: 1000 milli per device.
  n.allocatable[kGpuMilli] = int64_t{tn.gpus} * kMilliPerGpu;
  n.source = tn.source;
  return n;
}

// An elastic group's NodePool: all maxNodes nodes are in the model, minNodes of them up at the
// start (the autoscaler brings the others online, docs/autoscaling.md).
NodePoolSpec MakePool(const TraceNode& tn, const Model& model) {
  NodePoolSpec pool;
  pool.name = tn.name;
  pool.first_node = static_cast<NodeId>(model.nodes.size());
  pool.num_nodes = static_cast<int32_t>(tn.autoscaling->max_nodes);
  pool.autoscaling = tn.autoscaling;
  pool.price_per_node_hour = tn.price_per_node_hour;
  pool.spot = tn.spot;
  pool.source = tn.source;
  return pool;
}

// Appends the trace's nodes to the manifests' ones, an elastic group as its maxNodes nodes; a
// name declared twice, or a cluster beyond kMaxClusterGpuSlots GPUs, is an error.
absl::Status AddTraceNodes(const Trace& trace, Model& model) {
  absl::flat_hash_set<std::string> names, pools;
  for (const auto& n : model.nodes) names.insert(n.name);
  for (const auto& p : model.node_pools) pools.insert(p.name);
  int64_t slots = 0;  // GPU device slots of the cluster, within kMaxClusterGpuSlots
  for (const auto& n : model.nodes) slots += n.allocatable[kGpu];
  auto add = [&](const TraceNode& tn, std::string name) -> absl::Status {
    if (!names.insert(name).second) {
      return absl::InvalidArgumentError(
          fmt::format("{}: node {} is declared twice (in the manifests or the node lists{})",
                      tn.source, name, tn.autoscaling ? ", as a node of this group" : ""));
    }
    model.nodes.push_back(MakeNode(tn, std::move(name)));
    return absl::OkStatus();
  };
  // A row of a few bytes stands for up to maxNodes nodes: bounded in all, before any is made,
  // so that a file of such rows cannot take unbounded memory.
  int64_t group_nodes = 0;
  for (const auto& tn : trace.nodes)
    if (tn.autoscaling && (group_nodes += tn.autoscaling->max_nodes) > kMaxNodePoolSize)
      return absl::InvalidArgumentError(
          fmt::format("{}: node group {} brings the node groups to {} nodes; at most {} in all",
                      tn.source, tn.name, group_nodes, kMaxNodePoolSize));
  for (const auto& tn : trace.nodes) {
    const int64_t count = tn.autoscaling ? tn.autoscaling->max_nodes : 1;
    slots += count * tn.gpus;
    if (slots > kMaxClusterGpuSlots)
      return absl::InvalidArgumentError(fmt::format(
          "{}: node {} brings the cluster to {} GPUs; at most {} GPU device slots are supported",
          tn.source, tn.name, slots, kMaxClusterGpuSlots));
    if (!tn.autoscaling) {
      if (absl::Status st = add(tn, tn.name); !st.ok()) return st;
      continue;
    }
    if (!pools.insert(tn.name).second)
      return absl::InvalidArgumentError(
          fmt::format("{}: node group {} is also a NodePool of the manifests", tn.source, tn.name));
    const auto pool_index = static_cast<int32_t>(model.node_pools.size());
    model.node_pools.push_back(MakePool(tn, model));
    model.nodes.reserve(model.nodes.size() + static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      if (absl::Status st = add(tn, fmt::format("{}-{}", tn.name, i)); !st.ok()) return st;
      model.nodes.back().pool = pool_index;
      model.nodes.back().provisioned = i < tn.autoscaling->min_nodes;
    }
  }
  return absl::OkStatus();
}

// Marks the queues and priorities the trace's jobs use: only those must resolve.
UsedNames FindUsedNames(const Trace& trace, const JobSource& jobs) {
  UsedNames used;
  used.queue.assign(trace.queues.size(), false);
  used.prio.assign(trace.priorities.size(), false);
  used.first_line_q.assign(trace.queues.size(), 0);
  used.first_line_p.assign(trace.priorities.size(), 0);
  jobs.ForEach([&](const TraceJob& j, int64_t) {
    if (!used.queue[j.queue]) used.first_line_q[j.queue] = j.line;
    if (!used.prio[j.priority]) used.first_line_p[j.priority] = j.line;
    used.queue[j.queue] = true;
    used.prio[j.priority] = true;
  });
  return used;
}

// The manifests' queues: a name is a LocalQueue of the job's namespace or a ClusterQueue; jobs
// without a queue go to the only ClusterQueue, or run unqueued when there are several.
absl::Status ResolveManifestQueues(const Trace& trace, const UsedNames& used, const Model& model,
                                   std::vector<std::string>& queue_names,
                                   std::vector<std::string>& notes) {
  for (size_t q = 0; q < trace.queues.size(); ++q) {
    if (!used.queue[q]) continue;
    const std::string& name = trace.queues[q];
    if (name.empty()) {
      if (model.cluster_queues.size() == 1) {
        queue_names[q] = model.cluster_queues[0].name;
      } else {
        notes.push_back(
            fmt::format("jobs without a queue (first at {}) run unqueued: the manifests declare {} "
                        "ClusterQueues",
                        Where(trace, used.first_line_q[q]), model.cluster_queues.size()));
      }
      continue;
    }
    bool found = false;
    for (const auto& lq : model.local_queues) found = found || lq.name == name;
    for (const auto& cq : model.cluster_queues) found = found || cq.name == name;
    if (!found) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: queue \"{}\" is neither a LocalQueue nor a ClusterQueue of the manifests",
          Where(trace, used.first_line_q[q]), name));
    }
    queue_names[q] = name;
  }
  return absl::OkStatus();
}

// Default queues: one per name the trace uses, an equal share of the cluster each (the first
// takes the remainder), all in cohort "replay" when there are several.
void AddDefaultQueues(const Trace& trace, const UsedNames& used, const BuildOptions& options,
                      Model& model, std::vector<std::string>& queue_names,
                      std::vector<std::string>& notes) {
  std::vector<int32_t> qs;
  for (size_t q = 0; q < trace.queues.size(); ++q)
    if (used.queue[q]) qs.push_back(static_cast<int32_t>(q));
  if (qs.empty()) qs.push_back(0);
  Resources total;
  for (const auto& n : model.nodes) total += n.allocatable;
  ResourceFlavor flavor;
  flavor.name = "default";
  flavor.source = "replay default";
  model.flavors.push_back(flavor);
  const int64_t n = static_cast<int64_t>(qs.size());
  for (size_t i = 0; i < qs.size(); ++i) {
    ClusterQueue cq;
    cq.name = trace.queues[qs[i]].empty() ? "default" : trace.queues[qs[i]];
    if (n > 1) cq.cohort = "replay";
    cq.namespace_selector.present = true;  // every namespace
    ResourceGroup g;
    g.covered = {kCpu, kMemory, kGpu};
    FlavorQuotas fq;
    fq.flavor = "default";
    for (ResourceId r : g.covered) {
      ResourceQuota rq;
      rq.resource = r;
      rq.nominal = total[r] / n + (i == 0 ? total[r] % n : 0);
      fq.resources.push_back(rq);
    }
    g.flavors.push_back(fq);
    cq.resource_groups.push_back(g);
    if (options.preemption) {
      cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
      if (n > 1) cq.preemption.reclaim_within_cohort = ReclaimPolicy::kAny;
    }
    cq.source = "replay default";
    queue_names[qs[i]] = cq.name;
    model.cluster_queues.push_back(std::move(cq));
  }
  notes.push_back(fmt::format(
      "{} default ClusterQueue(s), each with nominal quota 1/{} of the cluster's cpu, memory "
      "and GPUs{}{}",
      n, n, n > 1 ? ", in cohort \"replay\"" : "",
      options.preemption ? (n > 1 ? "; preemption LowerPriority, reclaimWithinCohort Any"
                                  : "; preemption LowerPriority")
                         : "; no preemption"));
}

// Priority names a trace may use without manifests that define them (the shipped example's
// `high` and `low` among them, with the values its queues.yaml gives them): a PriorityClass of
// the value is made, as for a number. A PriorityClass or WorkloadPriorityClass of the manifests
// of the same name wins.
struct BuiltinPriority {
  const char* name;
  int32_t value;
};
constexpr BuiltinPriority kBuiltinPriorities[] = {{"low", 10}, {"medium", 100}, {"high", 1000}};

// Priorities: a number becomes a PriorityClass of that value (added unless the model has it); a
// name must be a PriorityClass or WorkloadPriorityClass of the manifests, or a built-in name.
absl::Status ResolvePriorities(const Trace& trace, const UsedNames& used, Model& model,
                               std::vector<std::string>& priority_names,
                               std::vector<bool>& workload_priority,
                               std::vector<std::string>& notes) {
  std::string builtins_used;
  for (size_t p = 0; p < trace.priorities.size(); ++p) {
    if (!used.prio[p] || trace.priorities[p].empty()) continue;
    const std::string& text = trace.priorities[p];
    if (auto v = ParseInt(text)) {
      if (*v < -2000000000 || *v > 1000000000) {
        return absl::InvalidArgumentError(
            fmt::format("{}: priority {} is outside a PriorityClass's range",
                        Where(trace, used.first_line_p[p]), *v));
      }
      std::string name = PriorityClassName(*v);
      bool exists = false;
      for (const auto& pc : model.priority_classes) exists = exists || pc.name == name;
      if (!exists) {
        PriorityClass pc;
        pc.name = name;
        pc.value = static_cast<int32_t>(*v);
        pc.source = "replay default";
        model.priority_classes.push_back(pc);
      }
      priority_names[p] = name;
      continue;
    }
    bool found = false;
    for (const auto& pc : model.priority_classes) found = found || pc.name == text;
    for (const auto& wpc : model.workload_priority_classes) {
      if (wpc.name == text && !found) {
        found = true;
        workload_priority[p] = true;
      }
    }
    const BuiltinPriority* builtin = nullptr;
    for (const BuiltinPriority& b : kBuiltinPriorities)
      if (text == b.name) builtin = &b;
    if (!found && builtin != nullptr) {
      PriorityClass pc;
      pc.name = builtin->name;
      pc.value = builtin->value;
      pc.source = "replay built-in";
      model.priority_classes.push_back(pc);
      builtins_used += fmt::format("{}{} {}", builtins_used.empty() ? "" : ", ", pc.name, pc.value);
      found = true;
    }
    if (!found) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: priority \"{}\" is neither a number, a PriorityClass of the manifests, nor a "
          "built-in name (low 10, medium 100, high 1000)",
          Where(trace, used.first_line_p[p]), text));
    }
    priority_names[p] = text;
  }
  if (!builtins_used.empty())
    notes.push_back(fmt::format(
        "built-in priorities {} (no PriorityClass of the manifests has these names)",
        builtins_used));
  return absl::OkStatus();
}

// The overrides of issue 14's comparisons: the queueing strategy of every ClusterQueue, backfill
// on or off, and the runtime estimates of trace jobs; each given one is named in a note, so that
// a report says what it compares.
void ApplyTimeOptions(const BuildOptions& options, Model& model, std::vector<std::string>& notes) {
  if (options.strategy) {
    for (auto& cq : model.cluster_queues) cq.strategy = *options.strategy;
    const char* name =
        *options.strategy == QueueingStrategy::kStrictFIFO ? "StrictFIFO" : "BestEffortFIFO";
    notes.push_back(
        model.cluster_queues.empty()
            ? fmt::format("--strategy {}: there is no ClusterQueue to apply it to", name)
            : fmt::format("queueing strategy {} on every ClusterQueue (--strategy)", name));
  }
  if (options.backfill) {
    model.config.backfill.enable = *options.backfill;
    notes.push_back(
        fmt::format("reservations and backfill {} (--backfill)", *options.backfill ? "on" : "off"));
  }
  if (options.estimates.kind != EstimateOptions::Kind::kNone) {
    notes.push_back(fmt::format(
        "runtime estimates of trace jobs: {} (--estimates{}); jobs without a duration get none",
        FormatEstimates(options.estimates),
        options.estimates.kind == EstimateOptions::Kind::kRandom
            ? fmt::format(", log-uniform, seed {}", options.estimates.seed)
            : std::string()));
  }
}

}  // namespace

double NominalGpus(const ClusterQueue& cq) {
  double gpus = 0;
  for (const auto& g : cq.resource_groups)
    for (const auto& f : g.flavors)
      for (const auto& r : f.resources) {
        if (r.resource == kGpu) gpus += static_cast<double>(r.nominal);
        if (r.resource == kGpuMilli) gpus += static_cast<double>(r.nominal) / 1000.0;
      }
  return gpus;
}

absl::StatusOr<JobConverter> BuildModel(const Trace& trace, const BuildOptions& options,
                                        Model& model, std::vector<std::string>& notes) {
  return BuildModel(trace, TraceJobs(trace), options, model, notes);
}

absl::StatusOr<JobConverter> BuildModel(const Trace& trace, const JobSource& jobs,
                                        const BuildOptions& options, Model& model,
                                        std::vector<std::string>& notes) {
  JobConverter conv;
  conv.trace_ = &trace;
  if (absl::Status st = AddTraceNodes(trace, model); !st.ok()) return st;
  const UsedNames used = FindUsedNames(trace, jobs);

  conv.queue_names_.assign(trace.queues.size(), "");
  if (options.unqueued) {
    notes.push_back("no queues: jobs are placed without quota (--unqueued)");
  } else if (!model.cluster_queues.empty()) {
    if (absl::Status st = ResolveManifestQueues(trace, used, model, conv.queue_names_, notes);
        !st.ok())
      return st;
  } else {
    AddDefaultQueues(trace, used, options, model, conv.queue_names_, notes);
  }

  conv.priority_names_.assign(trace.priorities.size(), "");
  conv.workload_priority_.assign(trace.priorities.size(), false);
  if (absl::Status st = ResolvePriorities(trace, used, model, conv.priority_names_,
                                          conv.workload_priority_, notes);
      !st.ok())
    return st;

  if (options.placement) model.config.placement = *options.placement;
  if (options.fair_sharing) model.config.fair_sharing = *options.fair_sharing;
  ApplyTimeOptions(options, model, notes);
  conv.estimates_ = options.estimates;
  conv.grace_period_ = options.grace_period;
  conv.checkpoint_interval_ = options.checkpoint_interval;
  if (options.checkpoint_interval > 0)
    notes.push_back(fmt::format(
        "trace jobs checkpoint every {:g}s (--checkpoint-interval): a preempted or interrupted "
        "job resumes from its last checkpoint",
        options.checkpoint_interval));
  return conv;
}

Workload JobConverter::Make(const TraceJob& job, int64_t index) const {
  Workload w;
  w.ns = trace_->namespaces[job.ns];
  w.name = job.name.empty() ? fmt::format("job-{}", index) : job.name;
  w.kind = "TraceJob";
  w.queue_name = queue_names_[job.queue];
  if (workload_priority_[job.priority]) {
    w.workload_priority_class = priority_names_[job.priority];
  } else {
    w.priority_class = priority_names_[job.priority];
  }
  PodSet ps;
  ps.name = "main";
  ps.count = job.pods;
  ps.requests[kCpu] = job.cpu_milli;
  ps.requests[kMemory] = job.memory_mib * kMiB;
  ps.requests[kPods] = 1;
  ps.termination_grace = grace_period_;
  if (job.gpu_milli > 0) {
    ps.requests[kGpuMilli] = job.gpu_milli;
  } else {
    ps.requests[kGpu] = job.gpus;
  }
  if (job.gpu_models >= 0) {
    const auto& models = trace_->gpu_model_sets[job.gpu_models];
    if (models.size() == 1) {
      ps.node_selector["nvidia.com/gpu.product"] = models[0];
    } else {
      NodeSelectorTerm term;
      term.match_expressions.push_back({"nvidia.com/gpu.product", SelectorOp::kIn, models});
      ps.affinity.required_terms.push_back(std::move(term));
    }
  }
  w.pod_sets.push_back(std::move(ps));
  if (job.duration >= 0) w.runtime = job.duration;
  w.runtime_estimate = RuntimeEstimate(estimates_, job.duration, index);
  if (job.max_wait >= 0) w.max_wait = job.max_wait;
  if (checkpoint_interval_ > 0) w.checkpoint_interval = checkpoint_interval_;
  w.arrival = job.arrival;
  if (job.line > 0) w.source = fmt::format("{}:{}", trace_->jobs_file, job.line);
  return w;
}

}  // namespace tessera::trace
