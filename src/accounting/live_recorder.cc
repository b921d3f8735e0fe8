#include "accounting/live_recorder.h"

#include <algorithm>
#include <set>

namespace tessera::accounting {

absl::Status LiveRecorder::Resume() {
  open_.clear();
  resumed_.clear();
  last_checkpoint_ = -1;
  absl::StatusOr<std::vector<RunRecord>> rows = store_->ReadOpen("serve");
  if (!rows.ok()) return rows.status();
  resumed_ = std::move(*rows);
  resuming_ = true;
  return absl::OkStatus();
}

void LiveRecorder::Charge(Open& o, const LiveRun& run, double now) {
  const double dt = std::max(0.0, now - o.last);
  const double hours = run.record.gpus * dt / 3600;
  RunRecord& r = o.record;
  r.gpu_hours += hours;
  // Every GPU-hour of a run that has a price is charged at one: at its price now, else at its
  // last one; those before its first price are charged at that once it comes (PriceGap).
  std::optional<double> dollars;
  if (run.dollars_per_hour) {
    dollars = *run.dollars_per_hour * dt / 3600;
    if (run.record.gpus > 0) {
      const double rate = *run.dollars_per_hour / run.record.gpus;
      if (o.owed_hours > 0) {
        r.allocated_dollars = r.allocated_dollars.value_or(0) + o.owed_hours * rate;
        if (o.owed_util_hours > 0)
          r.effective_dollars = r.effective_dollars.value_or(0) + o.owed_util_hours * rate;
        SayGap(o, o.owed_hours, /*backfilled=*/true);
        o.owed_hours = o.owed_util_hours = 0;
      }
      o.rate = rate;
    }
  } else if (hours > 0 && o.rate) {
    dollars = *o.rate * hours;
    SayGap(o, hours, /*backfilled=*/false);
  } else if (hours > 0) {
    o.owed_hours += hours;
    if (run.utilization) o.owed_util_hours += *run.utilization * hours;
  }
  if (dollars) {
    r.allocated_dollars = r.allocated_dollars.value_or(0) + *dollars;
    if (run.utilization)
      r.effective_dollars = r.effective_dollars.value_or(0) + *dollars * *run.utilization;
  }
  if (run.utilization && hours > 0) {
    o.measured_hours += hours;
    o.util_weighted += *run.utilization * hours;
    r.utilization = o.util_weighted / o.measured_hours;
  }
  r.pods = std::max(r.pods, run.record.pods);
  r.gpus = std::max(r.gpus, run.record.gpus);
  if (!run.record.gpu_model.empty()) r.gpu_model = run.record.gpu_model;
  if (!run.record.flavors.empty()) r.flavors = run.record.flavors;
  r.end = std::max(r.end, now);
  o.last = now;
  o.held = run;
  o.held.utilization.reset();
}

void LiveRecorder::SayGap(Open& o, double gpu_hours, bool backfilled) {
  if (o.gap_said) return;
  o.gap_said = true;
  gaps_.push_back({o.record.run_key, gpu_hours, backfilled});
}

std::vector<LiveRecorder::PriceGap> LiveRecorder::TakePriceGaps() {
  std::vector<PriceGap> out = std::move(gaps_);
  gaps_.clear();
  return out;
}

LiveRecorder::Open LiveRecorder::Begin(const LiveRun& run, double now) {
  Open o;
  o.record = run.record;
  o.record.source = "serve";
  o.record.start = run.start;
  o.record.end = run.start;
  o.record.how = RunEnd::kRunning;
  o.record.gpu_hours = 0;
  o.record.attempt = 1 + runs_[run.record.run_key];
  o.record.preemptions = preemptions_[run.record.run_key];
  o.last = std::min(run.start, now);
  o.held = run;
  o.held.utilization.reset();
  return o;
}

void LiveRecorder::Close(std::map<std::string, Open>::iterator it, const Ending* ending, double now,
                         std::vector<RunRecord>& batch) {
  Charge(it->second, it->second.held, now);
  RunRecord r = std::move(it->second.record);
  r.how = RunEnd::kFinished;
  if (ending && ending->how != RunEnd::kRunning) {
    r.how = ending->how;
    r.reason = ending->reason;
    if (r.how == RunEnd::kPreempted) {
      ++r.preemptions;
      ++preemptions_[it->first];
    }
  }
  batch.push_back(std::move(r));
  ++closed_;
  ++runs_[it->first];
  open_.erase(it);
}

absl::Status LiveRecorder::Observe(const std::vector<LiveRun>& running, double now,
                                   const Endings& ended) {
  std::vector<RunRecord> batch = std::move(unwritten_);
  unwritten_.clear();
  std::vector<std::string> batch_keys(batch.size());  // run_key of open rows in `batch`
  std::map<std::string, const LiveRun*> seen;
  for (const LiveRun& run : running) seen[run.record.run_key] = &run;

  if (resuming_) {
    // The runs left open by the last leader: carried on, or ended while no leader ran.
    resuming_ = false;
    for (RunRecord& row : resumed_) {
      if (seen.count(row.run_key) && !open_.count(row.run_key)) {
        Open o;
        o.last = row.end;
        if (row.utilization) {
          o.measured_hours = row.gpu_hours;
          o.util_weighted = *row.utilization * row.gpu_hours;
        }
        // Its price per GPU-hour so far; none yet: its GPU-hours are charged at its first.
        if (row.allocated_dollars && row.gpu_hours > 0) {
          o.rate = *row.allocated_dollars / row.gpu_hours;
        } else if (!row.allocated_dollars) {
          o.owed_hours = row.gpu_hours;
          o.owed_util_hours = o.util_weighted;
        }
        o.record = std::move(row);
        LiveRun gap = *seen[o.record.run_key];
        gap.utilization.reset();  // nobody measured the time it ran without a leader
        Charge(o, gap, now);
        open_.emplace(o.record.run_key, std::move(o));
        continue;
      }
      row.how = RunEnd::kFinished;
      batch.push_back(std::move(row));
      batch_keys.emplace_back();
      ++closed_;
    }
    resumed_.clear();
  }

  // Ended: gone from `running`, or said to have ended (and perhaps running again since).
  std::set<std::string> closed_now;
  for (auto it = open_.begin(); it != open_.end();) {
    auto e = ended.find(it->first);
    if (seen.count(it->first) && e == ended.end()) {
      ++it;
      continue;
    }
    const Ending* ending = e == ended.end() ? nullptr : &e->second;
    if (ending && ending->run) it->second.held = *ending->run;
    const double at = ending && ending->at >= 0 ? std::min(ending->at, now) : now;
    closed_now.insert(it->first);
    Close(it++, ending, at, batch);
    batch_keys.emplace_back();
  }
  // Runs that began and ended between two Observes: recorded from what the caller saw.
  for (const auto& [key, ending] : ended) {
    if (!ending.run || ending.run->record.run_key != key || open_.count(key)) continue;
    if (closed_now.count(key)) continue;
    if (seen.count(key) && seen[key]->start <= ending.run->start) continue;  // the same run
    const double at = ending.at >= 0 ? std::min(ending.at, now) : now;
    auto it = open_.emplace(key, Begin(*ending.run, at)).first;
    Close(it, &ending, at, batch);
    batch_keys.emplace_back();
  }

  // Running: new runs start, the others grow.
  const bool checkpoint = last_checkpoint_ < 0 || now - last_checkpoint_ >= checkpoint_s_;
  for (const LiveRun& run : running) {
    auto it = open_.find(run.record.run_key);
    bool fresh = false;
    if (it == open_.end()) {
      it = open_.emplace(run.record.run_key, Begin(run, now)).first;
      fresh = true;
    }
    Charge(it->second, run, now);
    if (fresh || checkpoint || it->second.record.id == 0) {
      batch.push_back(it->second.record);
      batch_keys.push_back(it->first);
    }
  }
  if (checkpoint) last_checkpoint_ = now;
  if (batch.empty()) return absl::OkStatus();
  absl::Status st = store_->Write(batch);
  if (!st.ok()) {
    // Closed runs are tried again with the next batch; open ones are rewritten from memory.
    for (size_t i = 0; i < batch.size(); ++i)
      if (batch_keys[i].empty()) unwritten_.push_back(std::move(batch[i]));
    return st;
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch_keys[i].empty()) continue;
    if (auto it = open_.find(batch_keys[i]); it != open_.end()) it->second.record.id = batch[i].id;
  }
  return absl::OkStatus();
}

}  // namespace tessera::accounting
