// The replay loop. Per instant (the same order as the scenario simulator, sim/simulator.cc):
//   1. integrate the metrics' current values up to the instant;
//   2. finish the jobs whose run ends by then (capacity frees before anything arrives);
//   3. submit the jobs that arrive by then;
//   4. run engine cycles until one decides nothing, booking every decision in the ledger.
#include "trace/replay.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "engine/scheduler.h"
#include "fmt/format.h"
#include "trace/ledger.h"

namespace tessera::trace {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMiB = 1024 * 1024;

struct HeldPod {
  NodeId node;
  int32_t pod_set;
  int32_t share_gpu;
  std::vector<int32_t> gpus;
};

int DelayBin(double wait) {
  for (int b = 0; b < static_cast<int>(kDelayBinEdges.size()); ++b)
    if (wait <= kDelayBinEdges[static_cast<size_t>(b)]) return b;
  return kDelayBins - 1;
}

// The typical pods of the FGD measure: every pod of the trace and of the manifests' workloads.
absl::StatusOr<std::vector<fgd::TypicalPod>> TypicalPods(const Trace& trace, const Model& model,
                                                         ResourceId milli,
                                                         fgd::GpuModelTable& models) {
  std::vector<fgd::ModelMask> set_mask(trace.gpu_model_sets.size());
  std::vector<std::string> set_spec(trace.gpu_model_sets.size());
  for (size_t i = 0; i < set_mask.size(); ++i) {
    set_spec[i] = absl::StrJoin(trace.gpu_model_sets[i], "|");
    auto m = models.MaskOfSpec(set_spec[i]);
    if (!m.ok()) return m.status();
    set_mask[i] = *m;
  }
  std::vector<fgd::PodShape> shapes;
  shapes.reserve(trace.jobs.size());
  for (const auto& j : trace.jobs) {
    fgd::PodShape s;
    s.cpu_milli = j.cpu_milli;
    s.mem_mib = j.memory_mib;
    s.num_gpu = j.gpu_milli > 0 ? 1 : j.gpus;
    s.gpu_milli = j.gpu_milli > 0 ? j.gpu_milli : (j.gpus > 0 ? 1000 : 0);
    if (j.gpu_models >= 0) {
      s.models = set_mask[static_cast<size_t>(j.gpu_models)];
      s.model_spec = set_spec[static_cast<size_t>(j.gpu_models)];
    }
    for (int32_t p = 0; p < j.pods; ++p) shapes.push_back(s);
  }
  for (const auto& w : model.workloads) {
    for (const auto& ps : w.pod_sets) {
      fgd::PodShape s;
      s.cpu_milli = ps.requests[kCpu];
      s.mem_mib = ps.requests[kMemory] / kMiB;
      int64_t share = milli >= 0 ? ps.requests[milli] : 0;
      s.num_gpu = share > 0 ? 1 : static_cast<int32_t>(ps.requests[kGpu]);
      s.gpu_milli = share > 0 ? static_cast<int32_t>(share) : (ps.requests[kGpu] > 0 ? 1000 : 0);
      if (auto it = ps.node_selector.find("nvidia.com/gpu.product"); it != ps.node_selector.end()) {
        auto m = models.MaskOfSpec(it->second);
        if (!m.ok()) return m.status();
        s.models = *m;
        s.model_spec = it->second;
      }
      for (int32_t p = 0; p < ps.count; ++p) shapes.push_back(s);
    }
  }
  return fgd::BuildTypicalPods(shapes);
}

}  // namespace

absl::StatusOr<ReplayResult> RunReplay(Model model, const Trace& trace,
                                       const JobConverter& converter,
                                       const ReplayOptions& options) {
  ReplayResult res;
  const ResourceId milli = kGpuMilli;
  fgd::GpuModelTable models;
  auto typical = TypicalPods(trace, model, milli, models);
  if (!typical.ok()) return typical.status();
  res.typical = *typical;
  std::vector<int32_t> node_models(model.nodes.size(), fgd::kNoGpuModel);
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const Node& node = model.nodes[n];
    if (node.gpu_count() == 0 || node.gpu_model.empty()) continue;
    auto id = models.Intern(node.gpu_model);
    if (!id.ok()) return id.status();
    node_models[n] = *id;
  }

  auto created = Scheduler::Create(std::move(model));
  if (!created.ok()) return created.status();
  Scheduler& s = **created;
  const Model& m = s.model();
  ClusterLedger ledger(m.nodes, node_models, res.typical, milli);
  res.nodes = static_cast<int64_t>(m.nodes.size());
  res.gpus_total = ledger.total_gpu_milli() / 1000;

  // Queues: ClusterQueues, then "(none)".
  const int ncq = static_cast<int>(m.cluster_queues.size());
  res.queues.resize(static_cast<size_t>(ncq) + 1);
  for (int q = 0; q < ncq; ++q) {
    res.queues[static_cast<size_t>(q)].name = m.cluster_queues[static_cast<size_t>(q)].name;
    res.queues[static_cast<size_t>(q)].quota_gpus =
        NominalGpus(m.cluster_queues[static_cast<size_t>(q)]);
  }
  res.queues[static_cast<size_t>(ncq)].name = "(none)";
  std::vector<std::vector<double>> waits(res.queues.size()), jcts(res.queues.size());
  std::vector<int64_t> queue_milli(res.queues.size(), 0);
  auto qi = [&](WorkloadId id) {
    int32_t cq = s.status(id).cluster_queue;
    return static_cast<size_t>(cq < 0 ? ncq : cq);
  };

  // Arrival order: the manifests' workloads (already in the engine as ids 0..k-1), then the
  // trace's jobs, each sorted by time; equal times keep file order, manifests first.
  const WorkloadId k = s.num_workloads();
  std::vector<WorkloadId> manifest_order(static_cast<size_t>(k));
  for (WorkloadId i = 0; i < k; ++i) manifest_order[static_cast<size_t>(i)] = i;
  auto manifest_arrival = [&](WorkloadId id) {
    return std::max(0.0, m.workloads[static_cast<size_t>(id)].arrival);
  };
  std::stable_sort(manifest_order.begin(), manifest_order.end(), [&](WorkloadId a, WorkloadId b) {
    return manifest_arrival(a) < manifest_arrival(b);
  });
  std::vector<int32_t> trace_order(trace.jobs.size());
  for (size_t i = 0; i < trace_order.size(); ++i) trace_order[i] = static_cast<int32_t>(i);
  std::stable_sort(trace_order.begin(), trace_order.end(), [&](int32_t a, int32_t b) {
    return trace.jobs[static_cast<size_t>(a)].arrival < trace.jobs[static_cast<size_t>(b)].arrival;
  });
  size_t mi = 0, ti = 0;
  auto next_manifest = [&] {
    return mi < manifest_order.size() ? manifest_arrival(manifest_order[mi]) : kInf;
  };
  auto next_trace = [&] {
    return ti < trace_order.size() ? trace.jobs[static_cast<size_t>(trace_order[ti])].arrival
                                   : kInf;
  };
  res.jobs = static_cast<int64_t>(k) + static_cast<int64_t>(trace.jobs.size());
  res.start = std::min(next_manifest(), next_trace());
  if (res.start == kInf) res.start = 0;
  double last_arrival = 0;
  if (!trace_order.empty())
    last_arrival = trace.jobs[static_cast<size_t>(trace_order.back())].arrival;
  if (!manifest_order.empty())
    last_arrival = std::max(last_arrival, manifest_arrival(manifest_order.back()));

  // Metrics: one series channel per quantity, then one per queue.
  res.channels = {"gpu_allocation_pct", "fragmentation_pct", "pending_jobs", "running_jobs"};
  for (const auto& q : res.queues) res.channels.push_back("gpus_used:" + q.name);
  const double span_guess = std::max(1.0, last_arrival - res.start);
  res.series = TimeSeries(res.start, static_cast<int>(res.channels.size()), options.max_buckets,
                          std::max(1.0, std::ceil(span_guess / options.max_buckets)));
  std::vector<double> values(res.channels.size(), 0);
  int64_t pending = 0, running = 0;
  double last = res.start, alloc_area = 0, frag_area = 0;
  const double total_milli = static_cast<double>(std::max<int64_t>(1, ledger.total_gpu_milli()));
  auto advance = [&](double now) {
    if (now <= last) return;
    const double dt = now - last;
    values[0] = 100.0 * static_cast<double>(ledger.allocated_gpu_milli()) / total_milli;
    values[1] = 100.0 * ledger.fragmented_gpu_milli() / total_milli;
    values[2] = static_cast<double>(pending);
    values[3] = static_cast<double>(running);
    for (size_t q = 0; q < queue_milli.size(); ++q) {
      values[4 + q] = static_cast<double>(queue_milli[q]) / 1000.0;
      res.queues[q].gpu_hours += values[4 + q] * dt / 3600.0;
    }
    alloc_area += values[0] * dt;
    frag_area += values[1] * dt;
    res.series.Integrate(last, now, values);
    last = now;
  };
  auto note_peaks = [&] {
    res.peak_allocation_pct =
        std::max(res.peak_allocation_pct,
                 100.0 * static_cast<double>(ledger.allocated_gpu_milli()) / total_milli);
    for (size_t q = 0; q < queue_milli.size(); ++q)
      res.queues[q].peak_gpus =
          std::max(res.queues[q].peak_gpus, static_cast<double>(queue_milli[q]) / 1000.0);
  };

  // Per workload: first and latest admission; pods held while running.
  std::vector<double> first_admit, admit_at;
  first_admit.reserve(static_cast<size_t>(res.jobs));
  admit_at.reserve(static_cast<size_t>(res.jobs));
  first_admit.assign(static_cast<size_t>(k), -1);
  admit_at.assign(static_cast<size_t>(k), -1);
  absl::flat_hash_map<WorkloadId, std::vector<HeldPod>> held;
  auto book = [&](WorkloadId id, const std::vector<PodPlacement>& pods) {
    const Workload& w = m.workloads[static_cast<size_t>(id)];
    auto& h = held[id];
    int64_t gpu_milli = 0;
    for (const auto& p : pods) {
      const Resources& req = w.pod_sets[static_cast<size_t>(p.pod_set)].requests;
      const bool share = milli >= 0 && req[milli] > 0 && req[kGpu] == 0;
      int32_t hint = share && p.gpus.size() == 1 ? p.gpus[0] : -1;
      HeldPod hp{p.node, p.pod_set, -1, share ? std::vector<int32_t>{} : p.gpus};
      hp.share_gpu = ledger.Take(p.node, req, hp.gpus, hint);
      gpu_milli += int64_t{req[kGpu]} * 1000 + (share ? req[milli] : 0);
      h.push_back(std::move(hp));
    }
    queue_milli[qi(id)] += gpu_milli;
  };
  // Releases a workload's pods; returns the GPU milli it held.
  auto release = [&](WorkloadId id) -> int64_t {
    auto it = held.find(id);
    if (it == held.end()) return 0;
    const Workload& w = m.workloads[static_cast<size_t>(id)];
    int64_t gpu_milli = 0;
    for (const auto& hp : it->second) {
      const Resources& req = w.pod_sets[static_cast<size_t>(hp.pod_set)].requests;
      ledger.Give(hp.node, req, hp.gpus, hp.share_gpu);
      gpu_milli += int64_t{req[kGpu]} * 1000 + (hp.share_gpu >= 0 ? req[milli] : 0);
    }
    held.erase(it);
    queue_milli[qi(id)] -= gpu_milli;
    return gpu_milli;
  };

  // Finish events: (time, workload, its preemption count when admitted). A preemption makes the
  // pending finish stale; the re-admission schedules a new one (the job runs its whole duration
  // again, as in `tessera sim`).
  using Finish = std::tuple<double, WorkloadId, int32_t>;
  std::priority_queue<Finish, std::vector<Finish>, std::greater<Finish>> finishes;
  std::vector<Decision> preempts, others;
  bool stopped = false;
  // Manifest workloads with pods beyond minCount can be scaled up by any cycle.
  bool partial_gangs = false;
  for (WorkloadId id = 0; id < k; ++id) {
    const Workload& w = m.workloads[static_cast<size_t>(id)];
    partial_gangs = partial_gangs || w.MinPods() < w.TotalPods();
  }

  while (true) {
    double t = std::min(
        {next_manifest(), next_trace(), finishes.empty() ? kInf : std::get<0>(finishes.top())});
    if (t == kInf) break;
    double now = t;
    if (options.cycle_interval > 0)
      now = std::ceil(t / options.cycle_interval) * options.cycle_interval;
    if (now > options.until) {
      stopped = true;
      break;
    }
    advance(now);
    // 2. Departures.
    while (!finishes.empty() && std::get<0>(finishes.top()) <= now) {
      auto [when, id, gen] = finishes.top();
      finishes.pop();
      const WorkloadStatus& st = s.status(id);
      if (st.state != WorkloadState::kAdmitted || st.preemptions != gen) continue;
      release(id);
      s.Finish(id, when);
      auto q = qi(id);
      ++res.queues[q].finished;
      jcts[q].push_back(when - st.created);
      --running;
    }
    // 3. Arrivals.
    while (true) {
      double tm = next_manifest(), tt = next_trace();
      if (std::min(tm, tt) > now) break;
      WorkloadId id;
      double at;
      if (tm <= tt) {
        id = manifest_order[mi++];
        at = tm;
      } else {
        int32_t j = trace_order[ti++];
        id = s.AddWorkload(converter.Make(trace.jobs[static_cast<size_t>(j)], j));
        first_admit.push_back(-1);
        admit_at.push_back(-1);
        at = tt;
      }
      s.Submit(id, at);
      ++res.queues[qi(id)].jobs;
      ++pending;
    }
    // 4. Cycles until nothing changes at this instant. With nothing pending and no gang waiting
    // for more pods a cycle cannot decide anything, so none is run.
    for (int cycle = 0; pending > 0 || partial_gangs; ++cycle) {
      if (cycle >= options.max_cycles_per_instant) {
        return absl::InternalError(
            fmt::format("scheduling did not settle after {} cycles at t={}", cycle, now));
      }
      auto decisions = s.RunCycle(now);
      ++res.cycles;
      if (options.verify) {
        if (auto st = s.Verify(); !st.ok()) {
          return absl::InternalError(
              fmt::format("invariant broken at t={}: {}", now, std::string(st.message())));
        }
      }
      if (decisions.empty()) break;
      // Evictions first, so that the ledger never books a preemptor onto its victims' devices.
      preempts.clear();
      others.clear();
      for (auto& d : decisions)
        (d.type == Decision::Type::kPreempt ? preempts : others).push_back(std::move(d));
      for (const auto& d : preempts) {
        WorkloadId id = d.workload;
        auto q = qi(id);
        int64_t gpu_milli = release(id);
        double lost = static_cast<double>(gpu_milli) / 1000.0 *
                      (now - admit_at[static_cast<size_t>(id)]) / 3600.0;
        res.queues[q].gpu_hours_lost += lost;
        ++res.queues[q].preempted;
        ++res.preemptions;
        --running;
        ++pending;
      }
      for (const auto& d : others) {
        WorkloadId id = d.workload;
        auto q = qi(id);
        switch (d.type) {
          case Decision::Type::kAdmit: {
            const WorkloadStatus& st = s.status(id);
            if (first_admit[static_cast<size_t>(id)] < 0) {
              first_admit[static_cast<size_t>(id)] = now;
              ++res.queues[q].admitted;
              double wait = now - st.created;
              waits[q].push_back(wait);
              ++res.queues[q].wait_histogram[static_cast<size_t>(DelayBin(wait))];
            }
            admit_at[static_cast<size_t>(id)] = now;
            book(id, d.pods);
            const auto& rt = m.workloads[static_cast<size_t>(id)].runtime;
            if (rt) finishes.emplace(now + *rt, id, st.preemptions);
            ++running;
            --pending;
            break;
          }
          case Decision::Type::kScaleUp:
            book(id, d.pods);
            break;
          case Decision::Type::kReject:
            ++res.queues[q].rejected;
            --pending;
            break;
          case Decision::Type::kPreempt:
            break;
        }
      }
      note_peaks();
    }
  }
  res.end = stopped ? options.until : last;
  advance(res.end);

  // Totals.
  const double span = res.end - res.start;
  for (WorkloadId id = 0; id < s.num_workloads(); ++id) {
    auto state = s.status(id).state;
    if (state == WorkloadState::kPending) ++res.queues[qi(id)].pending_at_end;
    if (state == WorkloadState::kAdmitted) ++res.queues[qi(id)].running_at_end;
  }
  std::vector<double> all_waits, all_jcts, fairness;
  QueueResult& all = res.all;
  all.name = "(all)";
  for (size_t q = 0; q < res.queues.size(); ++q) {
    QueueResult& r = res.queues[q];
    all_waits.insert(all_waits.end(), waits[q].begin(), waits[q].end());
    all_jcts.insert(all_jcts.end(), jcts[q].begin(), jcts[q].end());
    r.wait = Summarize(waits[q]);
    r.jct = Summarize(jcts[q]);
    r.mean_gpus =
        span > 0 ? r.gpu_hours * 3600.0 / span : static_cast<double>(queue_milli[q]) / 1000.0;
    all.quota_gpus += r.quota_gpus;
    all.jobs += r.jobs;
    all.admitted += r.admitted;
    all.finished += r.finished;
    all.rejected += r.rejected;
    all.pending_at_end += r.pending_at_end;
    all.running_at_end += r.running_at_end;
    all.preempted += r.preempted;
    all.gpu_hours += r.gpu_hours;
    all.gpu_hours_lost += r.gpu_hours_lost;
    all.mean_gpus += r.mean_gpus;
    for (int b = 0; b < kDelayBins; ++b) all.wait_histogram[b] += r.wait_histogram[b];
    if (r.quota_gpus > 0) fairness.push_back(r.mean_gpus / r.quota_gpus);
  }
  all.wait = Summarize(all_waits);
  all.jct = Summarize(all_jcts);
  all.peak_gpus = res.peak_allocation_pct * static_cast<double>(res.gpus_total) / 100.0;
  res.gpu_hours_lost = all.gpu_hours_lost;
  // "(none)" is listed only when some job had no ClusterQueue.
  if (res.queues.back().jobs == 0) {
    res.queues.pop_back();
    res.channels.pop_back();
  }
  res.jain_index = JainIndex(fairness);
  res.mean_allocation_pct = span > 0 ? alloc_area / span : values[0];
  res.mean_fragmentation_pct = span > 0 ? frag_area / span : values[1];
  res.final_allocation_pct =
      100.0 * static_cast<double>(ledger.allocated_gpu_milli()) / total_milli;
  res.final_fragmentation_pct = 100.0 * ledger.RecomputeFragmentation() / total_milli;
  res.overbooked_shares = ledger.overbooked_shares();
  if (res.overbooked_shares > 0) {
    res.notes.push_back(fmt::format(
        "{} GPU shares were placed on a device without room for them (the engine does not book "
        "tessera.dev/gpu-milli per device yet); allocation counts each device at most once",
        res.overbooked_shares));
  }
  if (ledger.nodes_over_gpu_limit() > 0) {
    res.notes.push_back(
        fmt::format("{} nodes have more than {} GPUs; fragmentation looks at their first {} only",
                    ledger.nodes_over_gpu_limit(), fgd::kMaxGpusPerNode, fgd::kMaxGpusPerNode));
  }
  return res;
}

}  // namespace tessera::trace
