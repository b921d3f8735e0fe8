// Replay metrics per job size class: a job's class is its total GPUs (pods x GPUs per pod, a GPU
// share counting as its fraction), so that the waits of big gangs are not lost among the many
// small jobs (issue 14: reservations and backfill). Classes: "0" (no GPU), "1" (up to one GPU,
// shares included), "2-7" (more than 1, less than 8), "8-15", "16+".
//
// SizeClassMetrics is fed by the replay loop as jobs arrive, are admitted, finish and are
// preempted; it keeps the waits, completion times and bounded slowdowns of the jobs for exact
// nearest-rank quantiles, equal values counted once (ValueList, trace/metrics.h), and nothing
// else per job.
//
// Thread-safety: value types.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/metrics.h"

namespace tessera::trace {

inline constexpr int kSizeClasses = 5;

// Runs shorter than this count as this long in the bounded slowdown (Feitelson's threshold).
inline constexpr double kSlowdownThreshold = 10;

// The class of a job holding `gpu_milli` thousandths of a GPU in all (0 .. kSizeClasses - 1).
int SizeClassOf(int64_t gpu_milli);
// "0", "1", "2-7", "8-15", "16+".
const char* SizeClassName(int size_class);

// Feitelson's bounded slowdown: max(1, response / max(run, kSlowdownThreshold)), where response
// is arrival to finish (waits and preempted runs included) and run the job's duration.
double BoundedSlowdown(double response, double run);

struct SizeClassResult {
  std::string name;
  int64_t jobs = 0;      // arrived
  int64_t admitted = 0;  // admitted at least once
  int64_t finished = 0;
  int64_t rejected = 0;
  int64_t pending_at_end = 0;
  int64_t running_at_end = 0;
  int64_t preempted = 0;  // preemptions suffered
  // Longest wait so far of the jobs still pending at the end (end - arrival); 0 when none.
  // wait.max leaves these out: a starved gang shows here.
  double pending_max_wait = 0;
  double gpu_hours = 0;   // GPU time held by the class's running jobs
  double mean_gpus = 0;   // gpu_hours over the replay's span
  Distribution wait;      // arrival to first admission, admitted jobs
  Distribution slowdown;  // bounded slowdown, finished jobs
  Distribution jct;       // arrival to finish, finished jobs
};

class SizeClassMetrics {
 public:
  void Arrived(int c) { ++at(c).jobs; }
  void FirstAdmitted(int c, double wait);
  void Finished(int c, double response, double run);
  void Rejected(int c) { ++at(c).rejected; }
  void Preempted(int c) { ++at(c).preempted; }
  // GPU milli held by the class's running jobs changes by `delta`.
  void Hold(int c, int64_t delta) { milli_[static_cast<size_t>(c)] += delta; }
  // Integrates the GPUs held over `dt` seconds.
  void Advance(double dt);
  // At the end: a job still pending since `arrival`, or still running.
  void PendingAtEnd(int c, double wait);
  void RunningAtEnd(int c) { ++at(c).running_at_end; }

  // The results, quantiles computed (the value lists are released); `span` is the replay's.
  std::vector<SizeClassResult> Results(double span);

 private:
  SizeClassResult& at(int c) { return res_[static_cast<size_t>(c)]; }

  std::array<SizeClassResult, kSizeClasses> res_{};
  std::array<int64_t, kSizeClasses> milli_{};
  std::array<ValueList, kSizeClasses> waits_, slowdowns_, jcts_;
};

}  // namespace tessera::trace
