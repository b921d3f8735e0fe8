#include "trace/plan.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trace/replay.h"
#include "trace/synthetic.h"

namespace tessera::trace {
namespace {

// A small deterministic trace: 300 jobs of 1 to 64 GPUs on 8-GPU nodes, offered at 90% of 8
// nodes. Its nodes are dropped: the plan makes the cluster.
Trace GangTrace(double load = 0.9, int64_t jobs = 300) {
  SyntheticOptions so;
  so.jobs = jobs;
  so.nodes = 8;
  so.seed = 7;
  so.queues = 1;
  so.load = load;
  so.mix = SyntheticMix::kGangs;
  Trace t = GenerateSynthetic(so);
  t.nodes.clear();
  return t;
}

PoolShape A100Pool() {
  // Priced as spot, without interruptions: the price-only pool of the tests before spot
  // interruptions were replayed (Plan.Spot* test those).
  auto p =
      ParsePool("a100:gpus=8,model=A100,cpu=96,memory=768Gi,price=32,spot=0.25,interruptions=0");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

Target MustTarget(const std::string& text) {
  auto t = ParseTarget(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

PlanOptions Options(std::vector<std::string> targets, int threads = 2) {
  PlanOptions o;
  o.pools = {A100Pool()};
  for (const auto& t : targets) o.targets.push_back(MustTarget(t));
  o.threads = threads;
  o.curve_points = 6;
  return o;
}

// The replay of `trace` on `nodes` A100 nodes, built here without the plan's code: what a user
// checking the answer by hand with `tessera sim replay` would run.
ReplayResult ReplayByHand(Trace trace, int nodes) {
  for (int i = 0; i < nodes; ++i) {
    TraceNode n;
    n.name = fmt::format("n{}", i);
    n.cpu_milli = 96000;
    n.memory_mib = 768 * 1024;
    n.gpus = 8;
    n.gpu_model = "A100";
    trace.nodes.push_back(n);
  }
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(trace, {}, model, notes);
  EXPECT_TRUE(conv.ok()) << conv.status();
  auto r = RunReplay(std::move(model), trace, *conv, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(PlanParse, Pools) {
  PoolShape p = A100Pool();
  EXPECT_EQ(p.name, "a100");
  EXPECT_EQ(p.gpus, 8);
  EXPECT_EQ(p.gpu_model, "A100");
  EXPECT_EQ(p.cpu_milli, 96000);
  EXPECT_EQ(p.memory_mib, 768 * 1024);
  EXPECT_DOUBLE_EQ(p.NodeHourPrice(), 24);
  auto zero = ParsePool("cpu:gpus=0,cpu=64,memory=256Gi");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("gpus=0"), std::string::npos) << zero.status();
  auto unknown = ParsePool("a:gpus=8,cpu=96,memory=1Ti,colour=red");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown key \"colour\""), std::string::npos);
  EXPECT_FALSE(ParsePool("a:gpus=8,cpu=96").ok());                // memory missing
  EXPECT_FALSE(ParsePool("A100:gpus=8,cpu=96,memory=1Ti").ok());  // not a name
  EXPECT_FALSE(ParsePool("a:gpus=8,cpu=96,memory=1Ti,spot=1").ok());
  EXPECT_FALSE(ParsePool("a:gpus=8,cpu=-1,memory=1Ti").ok());
  EXPECT_FALSE(ParsePool("a:gpus=2.5,cpu=1,memory=1Ti").ok());
}

TEST(PlanParse, SpotAndFixedPools) {
  auto spot = ParsePool("s:gpus=8,cpu=96,memory=1Ti,price=32,spot=0.6");
  ASSERT_TRUE(spot.ok()) << spot.status();
  EXPECT_TRUE(spot->spot);
  EXPECT_DOUBLE_EQ(spot->interruptions_per_node_hour, PoolShape::kDefaultInterruptionsPerNodeHour);
  EXPECT_GT(spot->interruptions_per_node_hour, 0);  // spot is never free of interruptions
  EXPECT_DOUBLE_EQ(spot->notice_seconds, 120);
  EXPECT_DOUBLE_EQ(spot->replace_seconds, 300);
  EXPECT_EQ(spot->fixed_nodes, 0);
  auto all =
      ParsePool("s:gpus=8,cpu=96,memory=1Ti,interruptions=0.5,notice=30s,replace=10m,nodes=4");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(all->spot);  // interruptions= alone makes it spot, with no discount
  EXPECT_DOUBLE_EQ(all->spot_discount, 0);
  EXPECT_DOUBLE_EQ(all->interruptions_per_node_hour, 0.5);
  EXPECT_DOUBLE_EQ(all->notice_seconds, 30);
  EXPECT_DOUBLE_EQ(all->replace_seconds, 600);
  EXPECT_EQ(all->fixed_nodes, 4);
  auto on_demand = ParsePool("d:gpus=8,cpu=96,memory=1Ti,nodes=2");
  ASSERT_TRUE(on_demand.ok());
  EXPECT_FALSE(on_demand->spot);
  EXPECT_DOUBLE_EQ(on_demand->interruptions_per_node_hour, 0);
  // Errors name the pool, the key and the value.
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"s:gpus=8,cpu=96,memory=1Ti,interruptions=-1", "interruptions \"-1\""},
           {"s:gpus=8,cpu=96,memory=1Ti,interruptions=4000", "interruptions \"4000\""},
           {"s:gpus=8,cpu=96,memory=1Ti,notice=soon", "notice \"soon\""},
           {"s:gpus=8,cpu=96,memory=1Ti,replace=8d", "replace \"8d\""},
           {"s:gpus=8,cpu=96,memory=1Ti,nodes=0", "nodes \"0\""},
           {"s:gpus=8,cpu=96,memory=1Ti,nodes=1.5", "nodes \"1.5\""},
           {"s:gpus=8,cpu=96,memory=1Ti,replace=5m", "replace= is how long an interrupted spot"}}) {
    auto p = ParsePool(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_NE(p.status().message().find("--pool \"" + text + "\""), std::string::npos)
        << p.status();
    EXPECT_NE(p.status().message().find(want), std::string::npos) << p.status();
  }
}

TEST(PlanParse, Targets) {
  EXPECT_DOUBLE_EQ(MustTarget("wait-p95=30m").value, 1800);
  EXPECT_DOUBLE_EQ(MustTarget("wait-p99=2h").value, 7200);
  EXPECT_DOUBLE_EQ(MustTarget("wait-mean=90").value, 90);
  EXPECT_EQ(MustTarget("utilization=0.8").kind, Target::Kind::kUtilization);
  auto unknown = ParseTarget("latency=3m");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("\"latency=3m\""), std::string::npos);
  EXPECT_FALSE(ParseTarget("wait-p95").ok());
  EXPECT_FALSE(ParseTarget("wait-p95=soon").ok());
  EXPECT_FALSE(ParseTarget("wait-p95=-5m").ok());
  EXPECT_FALSE(ParseTarget("utilization=1.5").ok());
  EXPECT_FALSE(ParseTarget("utilization=0").ok());
}

// The check: the replay at the recommended size meets the target, one size smaller
// does not. Replayed here apart from the plan.
TEST(Plan, AnswerMeetsTheTargetAndOneNodeLessDoesNot) {
  const Trace trace = GangTrace();
  auto r = RunPlan(trace, Model{}, Options({"wait-p95=30m"}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->best.has_value()) << PlanTable(*r);
  const PoolPlan& p = r->pools[*r->best];
  ASSERT_TRUE(p.answer.has_value());
  const int n = *p.answer;
  EXPECT_GE(n, 8);  // the 64-GPU gangs need 8 nodes
  ReplayResult at = ReplayByHand(trace, n);
  ReplayResult below = ReplayByHand(trace, n - 1);
  EXPECT_EQ(at.all.rejected + at.all.pending_at_end, 0);
  EXPECT_LE(at.all.wait.p95, 1800) << PlanTable(*r);
  EXPECT_TRUE(below.all.wait.p95 > 1800 || below.all.rejected + below.all.pending_at_end > 0)
      << PlanTable(*r);
  // The plan's own figures are those of the replay.
  const SizePoint* s = p.At(n);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->wait.p95, at.all.wait.p95);
  EXPECT_EQ(s->gpus, 8 * n);
  EXPECT_NEAR(s->utilization, at.mean_allocation_pct / 100, 1e-12);
  EXPECT_NEAR(s->effective_gpus + s->wasted_gpus, s->gpus, 1e-9);
  EXPECT_NEAR(s->gpu_hours_paid, s->gpus * (at.end - at.start) / 3600, 1e-6);
  EXPECT_DOUBLE_EQ(s->cost_per_month, n * 24.0 * 720);
  EXPECT_NE(p.check.find(fmt::format("{} nodes meet the targets", n)), std::string::npos);
  EXPECT_NE(p.check.find(fmt::format("{} nodes do not", n - 1)), std::string::npos) << p.check;
  // Sizes above the answer on the curve meet the target, the largest failing one is n - 1.
  for (const auto& q : p.points) EXPECT_EQ(q.meets, q.nodes >= n) << q.nodes;
}

TEST(Plan, UtilizationTargetIsTheSmallestClusterAtMostThatBusy) {
  const Trace trace = GangTrace();
  auto r = RunPlan(trace, Model{}, Options({"utilization=0.7"}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->best.has_value()) << PlanTable(*r);
  const int n = *r->pools[0].answer;
  EXPECT_LE(ReplayByHand(trace, n).mean_allocation_pct, 70) << PlanTable(*r);
  ReplayResult below = ReplayByHand(trace, n - 1);
  EXPECT_TRUE(below.mean_allocation_pct > 70 || below.all.rejected > 0) << PlanTable(*r);
}

TEST(Plan, SameAnswerWhateverTheThreads) {
  const Trace trace = GangTrace();
  auto one = RunPlan(trace, Model{}, Options({"wait-p99=1h", "utilization=0.9"}, 1));
  auto three = RunPlan(trace, Model{}, Options({"wait-p99=1h", "utilization=0.9"}, 3));
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(PlanJson(*one), PlanJson(*three));
  EXPECT_EQ(one->replays, three->replays);
}

// A machine that has no more threads (std::thread throws EAGAIN): `sim plan -j 200` aborted with
// std::system_error. The replays run on the threads that could be started, with a note.
TEST(Plan, ThreadsThatCannotBeStartedLeaveTheReplaysToTheOthers) {
  const Trace trace = GangTrace();
  PlanOptions o = Options({"wait-p99=1h", "utilization=0.9"}, 8);
  std::atomic<int> started{0};
  o.start_thread = [&](std::function<void()> f) {
    // One thread a round at most: the second of each round fails.
    if (started.fetch_add(1) % 2 == 1)
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "thread");
    return std::thread(std::move(f));
  };
  auto limited = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(limited.ok()) << limited.status();
  auto one = RunPlan(trace, Model{}, Options({"wait-p99=1h", "utilization=0.9"}, 1));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(limited->pools[0].answer, one->pools[0].answer);
  ASSERT_FALSE(limited->notes.empty());
  EXPECT_EQ(limited->notes.back(),
            "a replay thread could not be started (thread: Resource temporarily unavailable); "
            "the replays ran on fewer threads than asked for");
  EXPECT_EQ(std::count(limited->notes.begin(), limited->notes.end(), limited->notes.back()), 1);
}

// Stopping the replays of failing sizes early changes nothing but their figures.
TEST(Plan, EarlyStopGivesTheSameAnswer) {
  const Trace trace = GangTrace();
  for (const char* target : {"wait-p95=30m", "wait-mean=2m", "wait-max=3h"}) {
    PlanOptions full = Options({target});
    full.stop_early = false;
    auto a = RunPlan(trace, Model{}, Options({target}));
    auto b = RunPlan(trace, Model{}, full);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->pools[0].answer, b->pools[0].answer) << target << "\n"
                                                      << PlanTable(*a) << PlanTable(*b);
    int stopped = 0;
    for (const auto& p : a->pools[0].points) {
      stopped += !p.stopped_early.empty();
      EXPECT_TRUE(p.stopped_early.empty() || !p.meets);
      const SizePoint* q = b->pools[0].At(p.nodes);
      ASSERT_NE(q, nullptr);
      EXPECT_EQ(p.meets, q->meets) << target << " " << p.nodes;
    }
    EXPECT_GT(stopped, 0) << target << "\n" << PlanTable(*a);
  }
}

// The screen (PlanOptions::screen_jobs) replays far too small sizes on a prefix only; the answer
// and its neighbour below are still replayed on the whole trace, and the answer is the one of a
// plan that replays every size in full.
TEST(Plan, ScreenOnAPrefixGivesTheSameAnswerAndReplaysTheNeighboursInFull) {
  const Trace trace = GangTrace(1.2, 400);
  for (const char* target : {"wait-p95=30m", "wait-mean=5m"}) {
    PlanOptions screened = Options({target});
    screened.min_nodes = 2;  // the 64-GPU gangs cannot run there: far too small
    screened.curve_points = 8;
    screened.screen_jobs = 100;
    PlanOptions full = screened;
    full.screen_jobs = 0;
    full.stop_early = false;
    auto a = RunPlan(trace, Model{}, screened);
    auto b = RunPlan(trace, Model{}, full);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    const PoolPlan& pa = a->pools[0];
    ASSERT_TRUE(pa.answer.has_value()) << PlanTable(*a);
    EXPECT_EQ(pa.answer, b->pools[0].answer) << target << "\n" << PlanTable(*a) << PlanTable(*b);
    int screened_points = 0;
    for (const auto& p : pa.points) {
      if (p.screened_jobs == 0) continue;
      ++screened_points;
      EXPECT_FALSE(p.meets);
      EXPECT_NE(p.why_not.find("not replayed in full"), std::string::npos) << p.why_not;
      EXPECT_GE(p.screened_jobs, 100);
      EXPECT_LT(p.screened_jobs, 400);
    }
    EXPECT_GT(screened_points, 0) << target << "\n" << PlanTable(*a);
    const SizePoint* at = pa.At(*pa.answer);
    const SizePoint* below = pa.At(*pa.answer - 1);
    ASSERT_NE(below, nullptr);
    EXPECT_EQ(at->screened_jobs, 0);
    EXPECT_EQ(below->screened_jobs, 0) << PlanTable(*a);
    EXPECT_FALSE(below->meets);
    EXPECT_NE(PlanCsv(*a).find(",prefix,"), std::string::npos);
    EXPECT_NE(PlanTable(*a).find("not replayed in full"), std::string::npos);
  }
}

// A prefix busier than the rest of the trace: 100 jobs of a whole node for an hour, one a second,
// then
// 300 more one an hour. With wait-p95 <= 30m, the whole trace allows 20 late jobs (of the burst,
// 100 - n are late on n nodes): 80 nodes meet the target. The screen's prefix (the burst) allows
// 5: sizes 80 to 93 fail it. The neighbour below the answer is replayed in full, so the answer
// is still 80, not the smallest size that passes the screen.
TEST(Plan, ScreenThatMisjudgesSizesStillGivesTheFullReplaysAnswer) {
  Trace trace;
  for (int i = 0; i < 400; ++i) {
    TraceJob j;
    j.arrival = i < 100 ? i : 3 * 3600 + (i - 100) * 3600.0;
    j.duration = 3600;
    j.gpus = 8;
    j.cpu_milli = 1000;
    j.memory_mib = 1024;
    trace.jobs.push_back(j);
  }
  PlanOptions screened = Options({"wait-p95=30m"});
  screened.min_nodes = 60;
  screened.max_nodes = 120;
  screened.curve_points = 7;
  screened.screen_jobs = 100;
  PlanOptions full = screened;
  full.screen_jobs = 0;
  auto a = RunPlan(trace, Model{}, screened);
  auto b = RunPlan(trace, Model{}, full);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  const PoolPlan& pa = a->pools[0];
  ASSERT_TRUE(pa.answer.has_value()) << PlanTable(*a);
  EXPECT_EQ(*pa.answer, 80) << PlanTable(*a);
  EXPECT_EQ(pa.answer, b->pools[0].answer) << PlanTable(*a) << PlanTable(*b);
  // The screen did misjudge sizes (they were replayed again, in full), and no size at or above
  // the answer is left judged by the screen alone.
  EXPECT_GT(a->replays, static_cast<int64_t>(pa.points.size())) << PlanTable(*a);
  for (const auto& p : pa.points) {
    if (p.nodes < 80) continue;
    EXPECT_TRUE(p.meets) << p.nodes;
    EXPECT_EQ(p.screened_jobs, 0) << p.nodes;
  }
  const SizePoint* below = pa.At(79);
  ASSERT_NE(below, nullptr);
  EXPECT_EQ(below->screened_jobs, 0) << PlanTable(*a);
  EXPECT_FALSE(below->meets);
  EXPECT_TRUE(pa.At(80)->meets);
  EXPECT_EQ(pa.At(80)->screened_jobs, 0);
}

TEST(Plan, TargetNotMetUpToTheLargestSize) {
  const Trace trace = GangTrace(3.0, 100);  // three times what 8 nodes hold
  PlanOptions o = Options({"wait-p50=0s"});
  o.max_nodes = 9;
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->best.has_value());
  EXPECT_FALSE(r->pools[0].answer.has_value());
  EXPECT_NE(r->pools[0].check.find("not met up to 9 nodes"), std::string::npos)
      << r->pools[0].check;
  EXPECT_NE(PlanTable(*r).find("No pool meets the targets."), std::string::npos);
}

TEST(Plan, PoolThatCannotHoldAJobIsNoAnswerAndSaysWhichJob) {
  const Trace trace = GangTrace();
  PlanOptions o = Options({"wait-p95=30m"});
  o.pools.push_back(*ParsePool("t4:gpus=4,model=T4,cpu=48,memory=192Gi,price=2"));
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->pools.size(), 2u);
  const PoolPlan& t4 = r->pools[1];
  EXPECT_GT(t4.unfit_jobs, 0);
  EXPECT_FALSE(t4.answer.has_value());
  EXPECT_TRUE(t4.points.empty());  // nothing replayed
  EXPECT_NE(t4.check.find("fit on no node of this shape (first: job-"), std::string::npos)
      << t4.check;
  ASSERT_TRUE(r->best.has_value());
  EXPECT_EQ(*r->best, 0u);  // the cheap T4 pool cannot win
}

TEST(Plan, CheapestPoolWins) {
  const Trace trace = GangTrace();
  PlanOptions o = Options({"wait-p95=30m"});
  o.pools = {*ParsePool("dear:gpus=8,model=A100,cpu=96,memory=768Gi,price=40"),
             *ParsePool("cheap:gpus=8,model=A100,cpu=96,memory=768Gi,price=10")};
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->best.has_value());
  EXPECT_EQ(r->pools[*r->best].pool.name, "cheap");
  // Same shape, same answer: the price only ranks.
  EXPECT_EQ(*r->pools[0].answer, *r->pools[1].answer);
}

// A spot pool whose nodes are interrupted (their jobs rerun from the start, the node replaced
// 5 minutes later) needs more nodes than the same shape on demand; the plan says how much work
// the interruptions cost, and is the same on every run.
TEST(Plan, SpotInterruptionsNeedMoreNodesThanOnDemand) {
  const Trace trace = GangTrace();
  PlanOptions o = Options({"wait-p95=30m"});
  o.pools = {*ParsePool("demand:gpus=8,model=A100,cpu=96,memory=768Gi,price=32"),
             *ParsePool("spot:gpus=8,model=A100,cpu=96,memory=768Gi,price=32,spot=0.7,"
                        "interruptions=0.05")};
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const PoolPlan& demand = r->pools[0];
  const PoolPlan& spot = r->pools[1];
  ASSERT_TRUE(demand.answer && spot.answer) << PlanTable(*r);
  EXPECT_GT(*spot.answer, *demand.answer) << PlanTable(*r);
  int64_t interrupted = 0;
  double lost = 0;
  for (const auto& p : spot.points) {
    interrupted += p.interruptions;
    lost += p.gpu_hours_lost_to_interruptions;
    EXPECT_LE(p.gpu_hours_lost_to_interruptions, p.preemptions > 0 ? 1e12 : 0);
  }
  EXPECT_GT(interrupted, 0);
  EXPECT_GT(lost, 0);
  for (const auto& p : demand.points) {
    EXPECT_EQ(p.interruptions, 0);
    EXPECT_EQ(p.gpu_hours_lost_to_interruptions, 0);
  }
  // The size below the spot answer misses the target in its own replay.
  ASSERT_NE(spot.At(*spot.answer - 1), nullptr);
  EXPECT_FALSE(spot.At(*spot.answer - 1)->meets);
  EXPECT_NE(PlanTable(*r).find("lost GPUh"), std::string::npos);
  EXPECT_NE(PlanCsv(*r).find(",interruptions,gpu_hours_lost_to_interruptions\n"),
            std::string::npos);
  auto j = nlohmann::json::parse(PlanJson(*r));
  EXPECT_DOUBLE_EQ(j["pools"][1]["spot"]["interruptionsPerNodeHour"].get<double>(), 0.05);
  EXPECT_TRUE(j["pools"][0]["spot"].is_null());
  // Deterministic: the interruptions come from the seed (spec.autoscaler.seed), and another seed
  // draws others.
  auto again = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(PlanJson(*r), PlanJson(*again));
  Model seeded;
  seeded.config.autoscaler.seed = 99;
  auto other = RunPlan(trace, seeded, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(PlanJson(*r), PlanJson(*other));
}

// Interruptions so frequent that long gangs never finish: the replays stop once the lost work
// passes the bound instead of replaying for ever, and the pool is no answer.
TEST(Plan, SpotThatNeverLetsJobsFinishIsNoAnswer) {
  Trace trace;
  for (int i = 0; i < 5; ++i) {
    TraceJob j;
    j.arrival = i * 60.0;
    j.duration = 5 * 3600;  // five hours on 4 nodes, each interrupted twice an hour
    j.pods = 4;
    j.gpus = 8;
    j.cpu_milli = 1000;
    j.memory_mib = 1024;
    trace.jobs.push_back(j);
  }
  PlanOptions o = Options({"wait-p95=1h"});
  o.pools = {*ParsePool("spot:gpus=8,model=A100,cpu=96,memory=768Gi,interruptions=2")};
  o.min_nodes = 20;  // room for every job at once: only the interruptions stop them
  o.max_nodes = 22;
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->best.has_value()) << PlanTable(*r);
  EXPECT_NE(r->pools[0].check.find("not run to the end: interruptions lost over 10 times"),
            std::string::npos)
      << PlanTable(*r);
}

// The same trace with checkpoints every minute: each interruption loses at most a minute of each
// job's work, so the jobs finish and the replay runs to its end.
TEST(Plan, CheckpointsLetSpotJobsFinish) {
  Trace trace;
  for (int i = 0; i < 5; ++i) {
    TraceJob j;
    j.arrival = i * 60.0;
    j.duration = 5 * 3600;
    j.pods = 4;
    j.gpus = 8;
    j.cpu_milli = 1000;
    j.memory_mib = 1024;
    trace.jobs.push_back(j);
  }
  const PoolShape spot = *ParsePool("spot:gpus=8,model=A100,cpu=96,memory=768Gi,interruptions=2");
  const std::vector<Target> targets = {MustTarget("wait-p95=1h")};
  ReplayOptions ro;
  ro.max_interruption_loss_gpu_hours = 10 * 5 * 32 * 5;  // as RunPlan sets it
  auto without = ReplayAtSize(trace, Model{}, spot, 20, targets, {}, ro, nullptr);
  BuildOptions bo;
  bo.checkpoint_interval = 60;
  auto with = ReplayAtSize(trace, Model{}, spot, 20, targets, bo, ro, nullptr);
  ASSERT_TRUE(without.ok() && with.ok()) << without.status() << with.status();
  EXPECT_NE(without->why_not.find("not run to the end"), std::string::npos) << without->why_not;
  EXPECT_TRUE(with->stopped_early.empty()) << with->stopped_early;
  EXPECT_EQ(with->unserved, 0);
  EXPECT_GT(with->interruptions, 0);
  // At most a minute of 32 GPUs per interruption is lost (plus nothing for idle nodes).
  EXPECT_LE(with->gpu_hours_lost_to_interruptions, with->interruptions * 32.0 / 60);
  EXPECT_GT(with->gpu_hours_lost_to_interruptions, 0);
}

// "N on-demand nodes plus how many spot?": a pool with nodes= is in every replay, the other is
// sized beside it. Four fixed nodes of the same shape make the cluster of size k the single
// pool's cluster of size k + 4, so the answer is 4 less, with the same figures.
TEST(Plan, FixedPoolBesideTheSizedOne) {
  const Trace trace = GangTrace();
  auto alone = RunPlan(trace, Model{}, Options({"wait-p95=30m"}));
  ASSERT_TRUE(alone.ok() && alone->best) << PlanTable(*alone);
  const int n = *alone->pools[0].answer;
  ASSERT_GT(n, 5);
  PlanOptions o = Options({"wait-p95=30m"});
  o.pools.insert(o.pools.begin(),
                 *ParsePool("base:gpus=8,model=A100,cpu=96,memory=768Gi,price=40,nodes=4"));
  auto r = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->fixed.size(), 1u);
  ASSERT_EQ(r->pools.size(), 1u);  // only the sized pool is planned
  const PoolPlan& p = r->pools[0];
  ASSERT_TRUE(p.answer.has_value()) << PlanTable(*r);
  EXPECT_EQ(*p.answer, n - 4) << PlanTable(*r) << PlanTable(*alone);
  const SizePoint* at = p.At(n - 4);
  const SizePoint* single = alone->pools[0].At(n);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ(at->gpus, 8 * n);  // the whole cluster's GPUs
  EXPECT_DOUBLE_EQ(at->wait.p95, single->wait.p95);
  // The cost is the whole cluster's: 4 fixed nodes at $40 and n - 4 at $24.
  EXPECT_DOUBLE_EQ(at->cost_per_month, (4 * 40.0 + (n - 4) * 24.0) * 720);
  EXPECT_FALSE(p.At(n - 5)->meets);
  EXPECT_NE(PlanTable(*r).find("every size beside 4 fixed nodes of pool base"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(PlanJson(*r))["fixedPools"][0]["nodes"], 4);
  // Fixed nodes enough on their own: no node of the sized pool is needed, and the check says so.
  o.pools[0].fixed_nodes = n;
  auto enough = RunPlan(trace, Model{}, o);
  ASSERT_TRUE(enough.ok()) << enough.status();
  EXPECT_EQ(enough->pools[0].answer, 0) << PlanTable(*enough);
  EXPECT_NE(enough->pools[0].check.find("the fixed pools alone meet the targets"),
            std::string::npos);
  // Every pool fixed: nothing to size, said with the flag.
  o.pools[1].fixed_nodes = 2;
  auto none = RunPlan(trace, Model{}, o);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("--pool"), std::string::npos);
}

TEST(Plan, ReportsEscapeTextAndListEverySize) {
  const Trace trace = GangTrace();
  auto r = RunPlan(trace, Model{}, Options({"wait-p95=30m"}));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string html = PlanHtml(*r, "<script>alert(1)</script>");
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  auto j = nlohmann::json::parse(PlanJson(*r));
  EXPECT_EQ(j["recommended"]["nodes"], *r->pools[0].answer);
  EXPECT_EQ(j["pools"][0]["curve"].size(), r->pools[0].points.size());
  const std::string csv = PlanCsv(*r);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')),
            r->pools[0].points.size() + 1);
}

}  // namespace
}  // namespace tessera::trace
