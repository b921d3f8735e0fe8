// LiveRecorder: tessera serve's accounting records (docs/accounting.md, "tessera serve"). One
// record per run of a workload, kept open in the store while it runs and closed when it ends,
// so that a restart of serve, or a new leader, carries a running workload's record on instead
// of losing it or counting it twice.
//
// The loop calls Observe with every workload running now (at most every status period):
// - one not seen before starts a run: a row in state "running" with its run_key (the group
//   key), written at once;
// - one seen before grows by what it held since the last Observe: GPU-hours, allocated
//   dollars at its current price per hour (its last one while the snapshot has none; the
//   GPU-hours before its first at that: a run's dollars cover all its GPU-hours or none, and a
//   price not in force is said, PriceGap), and, when dcgm-exporter measured it, effective
//   dollars (allocated x utilization) and its GPU-hour-weighted utilization; open rows are
//   rewritten at most every `checkpoint_s` (a crash of serve loses at most that much);
// - one gone ends its run at `now` (charged for what it held when last seen, unmeasured):
//   finished, or preempted or failed when the caller says so; written at once. The caller may
//   say when it ended and what it held then (an Ending with `at` and `run`): a run that began
//   and ended between two Observes is then recorded too, and none is charged past its end.
// Resume (on becoming the leader, and at start) reads the runs left open in the store: the
// first Observe after it carries on those still running (charging the time since their last
// checkpoint, which they held through the restart) and closes the others as finished at their
// last checkpoint (they ended while no leader ran; when exactly is not known).
//
// Thread-safety: not thread-safe (the loop's). The store must outlive it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "accounting/store.h"

namespace tessera::accounting {

// A running workload as observed now. `record` has everything but the run's figures and
// times: source, namespace, name, queues, labels, priority, pods, GPUs, models, flavors,
// submit (seconds since the epoch) and run_key.
struct LiveRun {
  RunRecord record;
  double start = 0;                        // its admission, seconds since the epoch
  std::optional<double> dollars_per_hour;  // allocated price of what it holds; none: unpriced
  std::optional<double> utilization;       // measured now; none: not measured
};

class LiveRecorder {
 public:
  explicit LiveRecorder(AccountingStore* store, double checkpoint_s = 10)
      : store_(store), checkpoint_s_(checkpoint_s) {}

  // Forgets what it holds and reads the runs left open in the store (source "serve").
  absl::Status Resume();
  // How a run ended, where the caller knows better than "finished": preempted (by whom), failed
  // (a pod of it failed, and why); when (seconds since the epoch; < 0: not known, taken as the
  // Observe's `now`); and what it held then (none: as when last observed). By run key.
  struct Ending {
    RunEnd how = RunEnd::kFinished;
    std::string reason;
    double at = -1;
    std::optional<LiveRun> run;
  };
  using Endings = std::map<std::string, Ending>;
  // The workloads running at `now` (seconds since the epoch). A run no longer running ends as
  // `ended` says, else finished. On an error of the store the closed runs are kept and written
  // with the next call; nothing is lost unless serve stops first.
  absl::Status Observe(const std::vector<LiveRun>& running, double now, const Endings& ended = {});

  // The next Observe writes every open run, checkpoint or not (serve stopping while it leads).
  void CheckpointNext() { last_checkpoint_ = -1; }

  // A run charged at a price that was not in force then, said once per run (and again after a
  // Resume): GPU-hours observed without a price (none in the snapshot: spec.pricing removed,
  // or not read yet) in a run that had one, charged at its last price; or GPU-hours from before
  // a run's first price, charged at that. A run never priced keeps no dollars and is not said.
  struct PriceGap {
    std::string run_key;
    double gpu_hours = 0;     // of the charge that was said
    bool backfilled = false;  // charged at its first price (else: at its last)
  };
  // The gaps since the last call.
  std::vector<PriceGap> TakePriceGaps();

  int64_t open() const { return static_cast<int64_t>(open_.size()); }
  int64_t closed() const { return closed_; }

 private:
  struct Open {
    RunRecord record;
    double last = 0;             // seconds since the epoch of the last Observe that saw it
    double measured_hours = 0;   // GPU-hours with a utilization
    double util_weighted = 0;    // utilization x GPU-hours
    LiveRun held;                // what it held when last seen (its end is charged at that)
    std::optional<double> rate;  // its last price, dollars per GPU-hour
    double owed_hours = 0;       // GPU-hours before its first price (and measured x util)
    double owed_util_hours = 0;
    bool gap_said = false;
  };
  void SayGap(Open& o, double gpu_hours, bool backfilled);
  void Charge(Open& o, const LiveRun& now_run, double now);
  Open Begin(const LiveRun& run, double now);
  // Closes the open run of `key` at `now` as `ending` says (null: finished) into `batch`.
  void Close(std::map<std::string, Open>::iterator it, const Ending* ending, double now,
             std::vector<RunRecord>& batch);

  AccountingStore* const store_;
  const double checkpoint_s_;
  std::map<std::string, Open> open_;                   // by run_key
  std::map<std::string, int32_t> runs_, preemptions_;  // by run_key: ended runs, preemptions
  std::vector<RunRecord> unwritten_;                   // closed runs a failed write left
  std::vector<RunRecord> resumed_;  // read by Resume, matched by the next Observe
  std::vector<PriceGap> gaps_;      // not taken yet
  bool resuming_ = false;
  double last_checkpoint_ = -1;
  int64_t closed_ = 0;
};

}  // namespace tessera::accounting
