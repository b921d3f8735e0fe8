// What a waiting pod's PodScheduled=False condition (and its FailedScheduling Event) says, from
// the engine's pending reason: where the engine gives an expected start, it is said in wall-clock
// terms ("expected to start at 14:05:00Z (in 12m) when 3 running workload(s) of team end; held:
// 16 GPU(s) on node-1, node-2"), and whether a new message is worth writing over the last one.
//
// The engine's clock in `tessera serve` is seconds since the controller started
// (Controller::Impl::Now()); `wall_zero` is the wall-clock time of its 0. The engine rewrites
// "in 12m" at every cycle; the message published is compared without it, and with the expected
// start allowed to drift a little (PendingMessage::Same), so that a pod's condition is not
// rewritten every cycle while nothing but the clock moved.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <chrono>
#include <string>

namespace tessera::k8s {

using WallClock = std::chrono::system_clock;

struct PendingMessage {
  std::string text;  // what is written
  // `text` with the part that moves with the clock (the expected start, "in 12m") taken out:
  // a message is new when this changes.
  std::string key;
  double start = -1;  // the expected start (engine clock); -1: none

  // Whether `next` says nothing new beside this one (published at engine time `now` or before):
  // the same words, and the expected start (if any) within Tolerance of this one's.
  bool Same(const PendingMessage& next, double now) const;
  // How far an expected start may move before it is written again: a minute, or a tenth of the
  // wait that is left, whichever is longer.
  static double Tolerance(double start, double now);
};

// The message for the engine's `reason` and `expected_start` (engine clock; < 0: none), at
// engine time `now`. With an expected start, the engine's "expected to start in X (t=Ns)" becomes
// "expected to start at HH:MM:SSZ (in X)" (a date too when it is not today, UTC); a reason
// without that phrase gets "expected to start at ... (in X); " in front.
PendingMessage ComposePendingMessage(const std::string& reason, double expected_start, double now,
                                     WallClock::time_point wall_zero);

// A wall-clock time for messages, UTC, rounded up to the second: "14:05:00Z" on the same UTC
// day as `today`, else "2026-11-24T14:05:00Z".
std::string FormatWallClock(WallClock::time_point t, WallClock::time_point today);

}  // namespace tessera::k8s
