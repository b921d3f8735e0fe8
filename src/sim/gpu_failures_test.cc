// GPUs that fail in the simulator (sim/gpu_failures.h): a failure under a running gang evicts it
// whole, and it restarts from its last checkpoint (the finish comes exactly when the work its
// checkpoints did not save is done again); the report's figures follow from the events; a seed
// gives one run, always.
#include "sim/gpu_failures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/test_builders.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

constexpr double kHour = 3600;

// 3 nodes of 4 GPUs; one gang of 2 x 4 GPUs that runs 100 hours, a checkpoint every hour.
Model GangModel(std::optional<double> checkpoint = kHour) {
  std::vector<Node> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(MakeNode(fmt::format("n{}", i), 4));
  Model m = MakeModel(std::move(nodes), {CQ("cq").Gpus("gpu", 100).Obj()});
  Workload w = WL("train").Queue("cq").Pods(2, 4).Runtime(100 * kHour).Obj();
  w.checkpoint_interval = checkpoint;
  m.workloads.push_back(w);
  return m;
}

std::unique_ptr<Simulator> Simulate(Model m, uint64_t seed, double mtbf = 200 * kHour) {
  SimOptions o;
  o.gpu_failures = {mtbf, 10 * kHour, seed};
  auto sim = Simulator::Create(std::move(m), o);
  EXPECT_TRUE(sim.ok()) << sim.status();
  absl::Status st = (*sim)->Run();
  EXPECT_TRUE(st.ok()) << st;
  return std::move(*sim);
}

std::string Timeline(const Simulator& sim) {
  std::string out;
  for (const SimEvent& e : sim.events())
    out += fmt::format("{} {} {} {}\n", e.time, SimEventTypeName(e.type), e.pods.size(), e.reason);
  return out;
}

TEST(GpuFailuresTest, AFailureEvictsTheGangWholeAndItResumesFromItsLastCheckpoint) {
  auto sim = Simulate(GangModel(), 7);
  const auto& events = sim->events();
  ASSERT_TRUE(sim->summary().gpu_failures.has_value());
  const GpuFailureStats& st = *sim->summary().gpu_failures;
  ASSERT_GT(st.interruptions, 0) << Timeline(*sim);
  // Replayed by hand: each admission places the whole gang; each failure cuts the run, which
  // keeps whole hours; the finish comes when the 100 hours are done.
  double progress = 0, started = -1, lost = 0, lost_without = 0;
  int interrupted = 0;
  for (const SimEvent& e : events) {
    if (e.type == SimEvent::Type::kAdmitted) {
      EXPECT_EQ(e.pods.size(), 2u) << "a gang starts whole";
      started = e.time;
    } else if (e.type == SimEvent::Type::kPreempted) {
      EXPECT_NE(e.reason.find("failed"), std::string::npos) << e.reason;
      const double ran = e.time - started;
      const double saved = std::floor(ran / kHour) * kHour;
      lost += (ran - saved) * 8 / kHour;
      lost_without += (ran + progress) * 8 / kHour;
      progress += saved;
      ++interrupted;
    } else if (e.type == SimEvent::Type::kFinished) {
      EXPECT_DOUBLE_EQ(e.time, started + 100 * kHour - progress) << Timeline(*sim);
    }
  }
  EXPECT_EQ(sim->scheduler().status(0).state, WorkloadState::kFinished) << Timeline(*sim);
  EXPECT_EQ(st.interruptions, interrupted);
  EXPECT_GE(st.failures, st.interruptions);
  EXPECT_NEAR(st.gpu_hours_lost, lost, 1e-9);
  EXPECT_NEAR(st.gpu_hours_lost_without_checkpoints, lost_without, 1e-9);
  EXPECT_GT(st.gpu_hours_lost_without_checkpoints, st.gpu_hours_lost);
  EXPECT_NEAR(sim->summary().gpu_hours_lost, lost, 1e-9);  // the preemptions' figure agrees
  EXPECT_GT(st.failed_gpu_hours, 0);
  EXPECT_LE(st.failed_gpu_hours, st.failures * 10.0);
}

TEST(GpuFailuresTest, WithoutCheckpointsTheGangRunsItsWholeTimeAfterTheLastFailure) {
  auto sim = Simulate(GangModel(std::nullopt), 7);
  double started = -1;
  for (const SimEvent& e : sim->events()) {
    if (e.type == SimEvent::Type::kAdmitted) started = e.time;
    if (e.type == SimEvent::Type::kFinished) {
      EXPECT_DOUBLE_EQ(e.time, started + 100 * kHour);
    }
  }
  const GpuFailureStats& st = *sim->summary().gpu_failures;
  EXPECT_NEAR(st.gpu_hours_lost, st.gpu_hours_lost_without_checkpoints, 1e-9);
}

TEST(GpuFailuresTest, AGangThatWaitsForTheRepairedGpuStartsThenAndFinishes) {
  // One node of 2 GPUs and a 2-GPU job: after a failure nothing else is due, and the job waits
  // for the repair (an hour), which keeps the run going; it is admitted again no sooner.
  Model m = MakeModel({MakeNode("n0", 2)}, {CQ("cq").Gpus("gpu", 2).Obj()});
  m.workloads.push_back(WL("train").Queue("cq").Pods(1, 2).Runtime(10 * kHour).Obj());
  m.workloads[0].checkpoint_interval = kHour;
  SimOptions o;
  o.gpu_failures = {10 * kHour, kHour, 5};  // 2 GPUs: a failure every 5 hours
  auto sim = Simulator::Create(std::move(m), o);
  ASSERT_TRUE(sim.ok());
  ASSERT_TRUE((*sim)->Run().ok());
  EXPECT_EQ((*sim)->scheduler().status(0).state, WorkloadState::kFinished) << Timeline(**sim);
  EXPECT_GT((*sim)->summary().gpu_failures->interruptions, 0) << Timeline(**sim);
  double preempted = -1;
  for (const SimEvent& e : (*sim)->events()) {
    if (e.type == SimEvent::Type::kPreempted) preempted = e.time;
    if (e.type == SimEvent::Type::kAdmitted && preempted >= 0) {
      EXPECT_GE(e.time, preempted + kHour) << Timeline(**sim);
    }
  }
}

TEST(GpuFailuresTest, OneSeedOneRun) {
  const std::string a = Timeline(*Simulate(GangModel(), 11));
  EXPECT_EQ(a, Timeline(*Simulate(GangModel(), 11)));
  EXPECT_NE(a, Timeline(*Simulate(GangModel(), 12)));
}

TEST(GpuFailuresTest, NoFailuresWithoutAnMtbf) {
  SimOptions o;
  auto sim = Simulator::Create(GangModel(), o);
  ASSERT_TRUE(sim.ok());
  ASSERT_TRUE((*sim)->Run().ok());
  EXPECT_FALSE((*sim)->summary().gpu_failures.has_value());
  EXPECT_EQ((*sim)->summary().end_time, 100 * kHour);
}

}  // namespace
}  // namespace tessera
