// The engine tests' engine: built from a model made with engine/test_builders.h.
#pragma once

#include <memory>
#include <utility>

#include "engine/scheduler.h"
#include "engine/test_builders.h"
#include "gtest/gtest.h"

namespace tessera::testing {

// An engine for the model (nothing submitted yet); a failure to create it fails the test.
inline std::unique_ptr<Scheduler> Start(Model m) {
  auto s = Scheduler::Create(std::move(m));
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

// One cycle at `now`, then the engine's own consistency check.
inline void Cycle(Scheduler& s, double now) {
  s.RunCycle(now);
  EXPECT_TRUE(s.Verify().ok()) << s.Verify();
}

}  // namespace tessera::testing
