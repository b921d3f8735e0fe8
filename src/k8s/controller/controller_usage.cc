// What the admitted workloads use (controller_impl.h says how the loop's pieces fit): GPU
// utilization from dcgm-exporter joined to them, the underused ones said as gauges and Events,
// and tessera serve's accounting records (docs/observability.md, docs/accounting.md).
#include <chrono>
#include <cmath>
#include <set>

#include "accounting/recorder.h"
#include "cost/ledger.h"
#include "fmt/format.h"
#include "k8s/controller/controller_impl.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

std::string Percent(double v) { return fmt::format("{:.0f}%", 100 * v); }

std::string Span(double seconds) {
  if (seconds >= 3600 && std::fmod(seconds, 3600) == 0)
    return fmt::format("{:.0f}h", seconds / 3600);
  if (seconds >= 60 && std::fmod(seconds, 60) == 0) return fmt::format("{:.0f}m", seconds / 60);
  return fmt::format("{:g}s", seconds);
}

}  // namespace

std::vector<HeldGpus> Controller::Impl::HeldNow(
    std::unordered_map<std::string, WorkloadId>* ids) const {
  const Model& m = engine->model();
  std::vector<HeldGpus> held;
  for (const auto& [key, g] : groups) {
    if (g.foreign || g.state != Group::State::kInEngine || g.id < 0 || !g.admitted) continue;
    const WorkloadStatus& st = engine->status(g.id);
    if (st.state != WorkloadState::kAdmitted) continue;
    const Workload& w = m.workloads[g.id];
    HeldGpus h;
    h.key = g.key;
    h.ns = g.ns;
    h.name = g.name;
    if (st.cluster_queue >= 0) h.cluster_queue = m.cluster_queues[st.cluster_queue].name;
    for (const PodPlacement& p : st.pods) {
      if (p.node < 0 || static_cast<size_t>(p.node) >= m.nodes.size()) continue;
      if (p.pod_set < 0 || static_cast<size_t>(p.pod_set) >= w.pod_sets.size()) continue;
      h.gpus += cost::HeldGpus(w.pod_sets[p.pod_set].requests, m.nodes[p.node]);
    }
    for (const std::string& pk : g.pods) {
      auto it = pods.find(pk);
      if (it == pods.end()) continue;
      HeldGpus::Pod pod;
      pod.name = it->second.name;
      if (it->second.Bound()) {
        pod.node = it->second.node_name;
        pod.gpu_indices = it->second.gpu_indices;
      } else if (auto a = assumed.find(pk); a != assumed.end()) {
        pod.node = a->second.node;
        pod.gpu_indices = a->second.gpus;
      }
      h.pods.push_back(std::move(pod));
    }
    if (ids) (*ids)[g.key] = g.id;
    held.push_back(std::move(h));
  }
  return held;
}

std::unordered_map<WorkloadId, double> Controller::Impl::TrackUsage() {
  std::unordered_map<WorkloadId, double> out;
  if (!options.dcgm && !accounting) return out;
  std::unordered_map<std::string, WorkloadId> ids;
  const std::vector<HeldGpus> held = HeldNow(&ids);
  const std::vector<std::string> became = utilization.Update(
      options.dcgm ? options.dcgm->Readings() : std::vector<GpuReading>{}, held, Now());
  const std::map<std::string, WorkloadUsage> usage = utilization.workloads();
  // Team-level gauges only: the workloads themselves are in the Events and the JSON API.
  std::map<LabelValues, double> underused, underused_gpus;
  for (const auto& [key, u] : usage) {
    if (u.utilization) out[ids[key]] = *u.utilization;
    if (!u.underused) continue;
    ++underused[{u.cluster_queue, u.ns}];
    underused_gpus[{u.cluster_queue, u.ns}] += u.gpus;
  }
  metrics->SetGauges("tessera_underused_workloads", std::move(underused));
  metrics->SetGauges("tessera_underused_gpus", std::move(underused_gpus));
  for (const std::string& key : became) SayUnderused(key, usage.at(key));
  if (accounting && !need_rebuild) RecordAccounting(held, usage);
  return out;
}

void Controller::Impl::SayUnderused(const std::string& key, const WorkloadUsage& u) {
  auto git = groups.find(key);
  if (git == groups.end()) return;
  const Group& g = git->second;
  const std::string message = fmt::format(
      "GPU utilization {} on {} of its {:g} GPUs, below {} for at least {} (dcgm-exporter); "
      "it holds GPUs it barely uses",
      Percent(u.utilization.value_or(0)), u.measured_gpus, u.gpus,
      Percent(utilization.options().threshold), Span(utilization.options().for_s));
  spdlog::info("tessera: {}/{} is underused: {}", g.ns, g.name, message);
  // On the object that makes the workload (a Job, a PodGroup), else on its first pod.
  const GangSources& src = cache.gang_sources();
  const std::string nskey = g.ns + "/" + g.name;
  ObjectRef ref;
  ref.ns = g.ns;
  ref.name = g.name;
  if (auto j = src.jobs.find(nskey); g.kind == "Job" && j != src.jobs.end()) {
    ref.api_version = "batch/v1";
    ref.kind = "Job";
    ref.uid = j->second.uid;
  } else if (auto pg = src.podgroups.find(nskey);
             g.kind == "PodGroup" && pg != src.podgroups.end()) {
    ref.api_version = "scheduling.x-k8s.io/v1alpha1";
    ref.kind = "PodGroup";
    ref.uid = pg->second.uid;
  } else {
    if (g.pods.empty()) return;
    auto p = pods.find(*g.pods.begin());
    if (p != pods.end()) status_writer->Event(p->second, "Warning", "Underused", message);
    return;
  }
  status_writer->Event(ref, "Warning", "Underused", message);
}

double Controller::Impl::WallTime(double engine_time) const {
  return std::chrono::duration<double>(wall_start.time_since_epoch()).count() + engine_time;
}

accounting::LiveRun Controller::Impl::LiveRunOf(const Group& g) const {
  const Model& m = engine->model();
  const WorkloadStatus& st = engine->status(g.id);
  const Workload& w = m.workloads[g.id];
  accounting::LiveRun run;
  run.record = accounting::DescribeRun(m, g.id, st.cluster_queue, st.flavors);
  run.record.run_key = g.key;
  run.record.pods = static_cast<int32_t>(st.pods.size());
  std::set<std::string> models;
  for (const PodPlacement& p : st.pods) {
    if (p.node < 0 || static_cast<size_t>(p.node) >= m.nodes.size()) continue;
    if (p.pod_set >= 0 && static_cast<size_t>(p.pod_set) < w.pod_sets.size())
      run.record.gpus += cost::HeldGpus(w.pod_sets[p.pod_set].requests, m.nodes[p.node]);
    if (!m.nodes[p.node].gpu_model.empty() && !p.gpus.empty())
      models.insert(m.nodes[p.node].gpu_model);
  }
  for (const std::string& s : models)
    run.record.gpu_model += (run.record.gpu_model.empty() ? "" : ",") + s;
  run.record.submit = WallTime(std::max(0.0, g.submitted));
  run.start = WallTime(g.admitted_at >= 0 ? g.admitted_at : Now());
  if (m.config.pricing.present) {
    cost::CostLedger ledger(m, /*by_workload=*/false);
    ledger.Hold(g.id, st.cluster_queue, st.flavors, st.pods, 0);
    if (auto line = ledger.OpenRun(g.id, 3600)) run.dollars_per_hour = line->allocated_dollars();
  }
  return run;
}

void Controller::Impl::RememberRun(const Group& g) {
  if (!accounting || g.id < 0 || !g.admitted) return;
  if (engine->status(g.id).state != WorkloadState::kAdmitted) return;
  run_snapshots[g.key] = LiveRunOf(g);
}

void Controller::Impl::EndRun(const Group& g, accounting::RunEnd how, std::string reason) {
  if (!accounting) return;
  // By the time a decision is carried out the engine may have let the victim go already (it
  // waits again, holding nothing): what it held is the snapshot taken at its admission or at
  // the last status period.
  RememberRun(g);
  auto snap = run_snapshots.find(g.key);
  if (snap == run_snapshots.end()) return;  // never admitted: no run to end
  accounting::LiveRecorder::Ending& e = ended_runs[g.key];
  e.how = how;
  e.reason = std::move(reason);
  e.at = WallTime(Now());
  e.run = std::move(snap->second);
  run_snapshots.erase(snap);
}

void Controller::Impl::CheckpointAccountingAtStop() {
  // Not while the engine is stale (a rebuild pending): the next leader's first period then
  // charges from the last checkpoint, as after a crash.
  if (!accounting || !active || !engine || need_rebuild) return;
  accounting->CheckpointNext();
  RecordAccounting(HeldNow(nullptr), utilization.workloads());
}

void Controller::Impl::RecordAccounting(const std::vector<HeldGpus>& held,
                                        const std::map<std::string, WorkloadUsage>& usage) {
  auto say = [this](const absl::Status& st) {
    const std::string error = st.ok() ? "" : std::string(st.message());
    if (error != accounting_error && !error.empty())
      spdlog::warn("tessera: accounting store: {}; records are kept and written later", error);
    if (error.empty() && !accounting_error.empty())
      spdlog::info("tessera: accounting store: writing again");
    accounting_error = error;
  };
  if (accounting_resume) {
    absl::Status st = accounting->Resume();
    say(st);
    if (!st.ok()) return;  // tried again next period: writing before reading could count twice
    accounting_resume = false;
  }
  std::vector<accounting::LiveRun> runs;
  for (const HeldGpus& h : held) {
    accounting::LiveRun run = LiveRunOf(groups.at(h.key));
    run_snapshots[h.key] = run;
    if (auto u = usage.find(h.key); u != usage.end()) run.utilization = u->second.utilization;
    runs.push_back(std::move(run));
  }
  say(accounting->Observe(runs, WallTime(Now()), ended_runs));
  ended_runs.clear();
  for (const accounting::LiveRecorder::PriceGap& gap : accounting->TakePriceGaps()) {
    if (gap.backfilled) {
      spdlog::warn(
          "tessera: accounting: run {}: {:.6g} GPU-hours it held before it had a price "
          "are charged at its first price",
          gap.run_key, gap.gpu_hours);
    } else {
      spdlog::warn(
          "tessera: accounting: run {}: {:.6g} GPU-hours held without a price (no "
          "spec.pricing applies) are charged at its last price, as is the rest of the run "
          "while none applies",
          gap.run_key, gap.gpu_hours);
    }
  }
}

}  // namespace tessera::k8s
