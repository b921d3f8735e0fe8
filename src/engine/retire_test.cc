// Scheduler::Retire: a long replay lets go of the workloads that ended; the engine's decisions
// on the rest are those it would make keeping them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/scheduler.h"
#include "engine/test_scheduler.h"
#include "fmt/format.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

// One node of 8 GPUs; jobs that each take all of it, one after the other, with runtime
// estimates (the reservations plan with the runs that end), a wait limit on the queue's
// workloads, and one that can never fit.
Model Jobs(int n) {
  Model m = MakeModel({MakeNode("n1", 8)}, {CQ("cq").Gpus("gpu", 8).Obj()});
  m.cluster_queues[0].max_wait = 5;
  for (int i = 0; i < n; ++i)
    m.workloads.push_back(WL(fmt::format("j{}", i)).Queue("cq").Pods(1, 8).Runtime(10).Obj());
  m.workloads.push_back(WL("too-wide").Queue("cq").Pods(1, 16).Obj());
  return m;
}

// Runs the jobs through; with `retire`, each ended one is retired at once. Returns every
// decision, as text.
std::string RunThrough(bool retire) {
  constexpr int kJobs = 100;  // several pages of ids
  auto s = Start(Jobs(kJobs));
  std::string log;
  auto cycle = [&](double now) {
    for (const Decision& d : s->RunCycle(now)) {
      log += fmt::format("{} {} {} {}\n", now, static_cast<int>(d.type), d.workload, d.reason);
      if (retire && d.type == Decision::Type::kReject) s->Retire(d.workload);
    }
    EXPECT_TRUE(s->Verify().ok()) << s->Verify();
  };
  for (WorkloadId id = 0; id <= kJobs; ++id) s->Submit(id, 0);
  // Rejected but not yet reported by a cycle: it stays.
  s->Retire(kJobs);
  EXPECT_FALSE(s->retired(kJobs));
  cycle(0);
  EXPECT_EQ(retire, s->retired(kJobs));
  for (int i = 0; i < kJobs; ++i) {
    // Not ended: nothing happens.
    s->Retire(i);
    EXPECT_FALSE(s->retired(i));
    EXPECT_EQ(s->status(i).state, WorkloadState::kAdmitted);
    const double now = 10.0 * (i + 1);
    s->Finish(i, now);
    if (retire) {
      s->Retire(i);
      EXPECT_TRUE(s->retired(i));
    }
    cycle(now);
  }
  EXPECT_EQ(s->num_workloads(), kJobs + 1);
  return log;
}

TEST(Retire, DecisionsAreThoseOfAnEngineThatKeepsEverything) {
  const std::string kept = RunThrough(false), retired = RunThrough(true);
  // Every job admitted, the wide one rejected, wait limits run out.
  EXPECT_GE(std::count(kept.begin(), kept.end(), '\n'), 101);
  EXPECT_EQ(kept, retired);
}

}  // namespace
}  // namespace tessera
