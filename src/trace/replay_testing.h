// The trace tests' replay of shipped inputs (tests/data/trace/): read, build, replay, verify.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "gtest/gtest.h"
#include "trace/readers.h"
#include "trace/replay.h"
#include "trace/test_util.h"

namespace tessera::trace::testing {

struct Replayed {
  Trace trace;
  ReplayResult result;
};

// Reads nodes and jobs, builds the model (with `manifests` when given) and replays.
inline Replayed Replay(const std::string& nodes, const std::string& jobs, BuildOptions bo = {},
                       const std::string& manifests = "", ReplayOptions ro = {}) {
  Replayed run;
  ReadLog log;
  EXPECT_TRUE(ReadNodes(DataFile(nodes), BadRows::kFail, run.trace, log).ok());
  EXPECT_TRUE(ReadJobs(DataFile(jobs), BadRows::kFail, run.trace, log).ok());
  Model model;
  if (!manifests.empty()) {
    LoadResult lr = LoadManifestFiles({DataFile(manifests)});
    EXPECT_TRUE(lr.ok());
    model = std::move(lr.model);
  }
  std::vector<std::string> notes;
  auto conv = BuildModel(run.trace, bo, model, notes);
  EXPECT_TRUE(conv.ok()) << conv.status();
  ro.verify = true;
  auto r = RunReplay(std::move(model), run.trace, *conv, ro);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) run.result = std::move(*r);
  return run;
}

}  // namespace tessera::trace::testing
