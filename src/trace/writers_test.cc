#include "trace/writers.h"

#include <filesystem>
#include <fstream>
#include <functional>

#include "gtest/gtest.h"
#include "trace/estimates.h"
#include "trace/model_builder.h"
#include "trace/readers.h"
#include "trace/replay.h"
#include "trace/report.h"
#include "trace/synthetic.h"

namespace tessera::trace {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "writers_test_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

Trace ReadBack(const std::string& dir) {
  Trace t;
  ReadLog log;
  EXPECT_TRUE(ReadNodes(dir + "/nodes.csv", BadRows::kFail, t, log).ok());
  EXPECT_TRUE(ReadJobs(dir + "/jobs.csv", BadRows::kFail, t, log).ok());
  EXPECT_EQ(log.warning_count, 0) << (log.warnings.empty() ? "" : log.warnings[0]);
  return t;
}

std::string Models(const Trace& t, int32_t set) {
  std::string out;
  if (set >= 0)
    for (const auto& m : t.gpu_model_sets.at(static_cast<size_t>(set))) out += m + "|";
  return out;
}

// Every field the readers fill, compared by value (interned strings by their text).
void ExpectSameTrace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const TraceNode &x = a.nodes[i], &y = b.nodes[i];
    SCOPED_TRACE("node " + x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.cpu_milli, y.cpu_milli);
    EXPECT_EQ(x.memory_mib, y.memory_mib);
    EXPECT_EQ(x.gpus, y.gpus);
    EXPECT_EQ(x.max_pods, y.max_pods);
    EXPECT_EQ(x.gpu_model, y.gpu_model);
    EXPECT_EQ(x.labels, y.labels);
    ASSERT_EQ(x.autoscaling.has_value(), y.autoscaling.has_value());
    if (x.autoscaling) {
      EXPECT_EQ(x.autoscaling->min_nodes, y.autoscaling->min_nodes);
      EXPECT_EQ(x.autoscaling->max_nodes, y.autoscaling->max_nodes);
      EXPECT_EQ(x.autoscaling->provisioning_seconds, y.autoscaling->provisioning_seconds);
      EXPECT_EQ(x.autoscaling->scale_down_after_seconds, y.autoscaling->scale_down_after_seconds);
    }
    EXPECT_EQ(x.price_per_node_hour, y.price_per_node_hour);
    ASSERT_EQ(x.spot.has_value(), y.spot.has_value());
    if (x.spot) {
      EXPECT_EQ(x.spot->discount, y.spot->discount);
      EXPECT_EQ(x.spot->interruptions_per_node_hour, y.spot->interruptions_per_node_hour);
      EXPECT_EQ(x.spot->notice_seconds, y.spot->notice_seconds);
    }
  }
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const TraceJob &x = a.jobs[i], &y = b.jobs[i];
    SCOPED_TRACE("job " + std::to_string(i) + " " + x.name);
    EXPECT_EQ(x.arrival, y.arrival);  // exact: the shortest text that reads back the same
    EXPECT_EQ(x.duration, y.duration);
    EXPECT_EQ(x.pods, y.pods);
    EXPECT_EQ(x.gpus, y.gpus);
    EXPECT_EQ(x.gpu_milli, y.gpu_milli);
    EXPECT_EQ(x.cpu_milli, y.cpu_milli);
    EXPECT_EQ(x.memory_mib, y.memory_mib);
    EXPECT_EQ(a.queues.at(x.queue), b.queues.at(y.queue));
    EXPECT_EQ(a.priorities.at(x.priority), b.priorities.at(y.priority));
    EXPECT_EQ(a.namespaces.at(x.ns), b.namespaces.at(y.ns));
    EXPECT_EQ(Models(a, x.gpu_models), Models(b, y.gpu_models));
    EXPECT_EQ(x.max_wait, y.max_wait);
    EXPECT_EQ(x.name, y.name);
    if (::testing::Test::HasFailure()) return;  // one job's differences, not thousands
  }
}

SyntheticOptions Options(SyntheticMix mix) {
  SyntheticOptions o;
  o.jobs = 3000;
  o.nodes = 24;
  o.queues = 3;
  o.seed = 7;
  o.mix = mix;
  return o;
}

// Both synthetic mixes: CPU-only pods, GPU shares, GPU models, priorities, queues, gangs.
TEST(WriteTrace, SyntheticTracesReadBackTheSame) {
  for (SyntheticMix mix : {SyntheticMix::kMixed, SyntheticMix::kGangs}) {
    const Trace t = GenerateSynthetic(Options(mix));
    const std::string dir = FreshDir(mix == SyntheticMix::kMixed ? "mixed" : "gangs");
    ASSERT_TRUE(WriteTrace(t, dir).ok());
    ExpectSameTrace(t, ReadBack(dir));
  }
}

ReplayResult ReplayOf(const Trace& t) {
  BuildOptions bo;
  bo.backfill = true;
  bo.estimates = *ParseEstimates("exact");
  Model model;
  std::vector<std::string> notes;
  auto conv = BuildModel(t, bo, model, notes);
  EXPECT_TRUE(conv.ok()) << conv.status();
  auto r = RunReplay(std::move(model), t, *conv, ReplayOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : ReplayResult{};
}

// The reader makes the queues in the order of first use; the synthetic generator's team-0,
// team-1, ... are in name order, which the jobs of several queues do not follow.
TEST(WriteTrace, QueueOrderKeptSaysWhetherTheFirstUseOrderIsTheTracesOrder) {
  SyntheticOptions o = Options(SyntheticMix::kGangs);
  EXPECT_FALSE(QueueOrderKept(GenerateSynthetic(o)));
  o.queues = 1;
  EXPECT_TRUE(QueueOrderKept(GenerateSynthetic(o)));
  Trace t;
  t.queues = {"", "a", "b"};
  t.jobs.resize(3);
  t.jobs[0].queue = 1;
  t.jobs[1].queue = 2;
  t.jobs[2].queue = 1;
  EXPECT_TRUE(QueueOrderKept(t));
  t.jobs[0].queue = 2;
  t.jobs[1].queue = 1;
  EXPECT_FALSE(QueueOrderKept(t));
  t.jobs = {};
  EXPECT_TRUE(QueueOrderKept(t));
  const std::string dir = FreshDir("order");
  ASSERT_TRUE(WriteTrace(GenerateSynthetic(Options(SyntheticMix::kGangs)), dir).ok());
  EXPECT_TRUE(QueueOrderKept(ReadBack(dir)));  // read back: first-use order by construction
}

// What the files are for: replaying them gives what replaying the synthetic trace gives.
TEST(WriteTrace, TheWrittenGangsTraceReplaysAsTheSyntheticOne) {
  SyntheticOptions o = Options(SyntheticMix::kGangs);
  o.jobs = 1500;
  o.queues = 1;
  const Trace t = GenerateSynthetic(o);
  const std::string dir = FreshDir("replay");
  ASSERT_TRUE(WriteTrace(t, dir).ok());
  const std::string direct = SummaryTable(ReplayOf(t));
  EXPECT_EQ(SummaryTable(ReplayOf(ReadBack(dir))), direct);
  EXPECT_NE(direct.find("1500"), std::string::npos) << direct;
}

// Text that needs quoting, labels, elastic groups with and without spot, wait limits, durations
// that never end.
TEST(WriteTrace, QuotedTextLabelsGroupsAndLimitsReadBackTheSame) {
  Trace t;
  TraceNode plain;
  plain.name = "#first,\"odd\" node";
  plain.cpu_milli = 64000;
  plain.memory_mib = 1024;
  plain.gpus = 8;
  plain.gpu_model = "H100, SXM";
  plain.max_pods = 30;
  plain.labels = {{"zone", "a b"}, {"rack", ""}, {"x/y", "1,2"}};
  TraceNode group = plain;
  group.name = "pool";
  group.labels.clear();
  group.autoscaling = NodePoolAutoscaling{1, 12, 90.5, 300};
  group.price_per_node_hour = 32.77;
  TraceNode spot = group;
  spot.name = "spot-pool";
  spot.price_per_node_hour.reset();
  spot.spot = NodePoolSpot{0.6, 0.05, 30};
  TraceNode hash = plain;
  hash.name = "#2";  // first in its row: unquoted, the row would be a comment
  hash.labels.clear();
  t.nodes = {plain, hash, group, spot};
  t.queues = {"", "team a", "q,\"b\""};
  t.priorities = {"", "1000"};
  t.namespaces = {"default", "ns-1"};
  t.gpu_model_sets = {{"A100", "H100"}};
  TraceJob a;
  a.arrival = 0.1 + 0.2;  // not a short decimal
  a.duration = -1;
  a.pods = 4;
  a.gpus = 8;
  a.queue = 2;
  a.priority = 1;
  a.ns = 1;
  a.gpu_models = 0;
  a.max_wait = 0;
  a.name = "#1, \"big\"";
  TraceJob b;
  b.arrival = 1e9 + 1.0 / 3;
  b.duration = 12.5;
  b.gpu_milli = 250;
  b.cpu_milli = 500;
  b.memory_mib = 64;
  b.queue = 1;
  b.max_wait = 3600;
  t.jobs = {a, b};
  const std::string dir = FreshDir("quoted");
  ASSERT_TRUE(WriteTrace(t, dir).ok());
  const Trace back = ReadBack(dir);
  ExpectSameTrace(t, back);
  EXPECT_EQ(back.jobs[1].name, "");  // no name: the replay calls it job-<index> either way
}

// Text the reader cannot give back is an error that names the job or node; nothing is written.
TEST(WriteTrace, TextTheReaderCannotGiveBackIsAnErrorAndNothingIsWritten) {
  const Trace good = GenerateSynthetic(Options(SyntheticMix::kGangs));
  struct Case {
    std::function<void(Trace&)> spoil;
    std::string message;
  };
  const Case cases[] = {
      {[](Trace& t) { t.jobs[5].name = "two\nlines"; },
       "job two\nlines: its name \"two\nlines\" has a line break"},
      {[](Trace& t) { t.jobs[2].name = " padded"; }, "has a blank at either end"},
      {[](Trace& t) { t.nodes[3].labels["a;b"] = "c"; },
       "node node-00003: its label key \"a;b\" has ';'"},
      {[](Trace& t) { t.nodes[0].labels["k"] = "v;w"; }, "its label value \"v;w\" has ';'"},
      {[](Trace& t) { t.nodes[0].labels["k=1"] = "v"; }, "its label key \"k=1\" has '='"},
      {[](Trace& t) {
         t.gpu_model_sets = {{"A|B"}};
         t.jobs[9].gpu_models = 0;
       },
       "job #9: its gpu_model \"A|B\" has '|'"},
  };
  for (const auto& c : cases) {
    Trace t = good;
    c.spoil(t);
    const std::string dir = FreshDir("bad");
    const absl::Status s = WriteTrace(t, dir);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos) << s.message();
    EXPECT_NE(std::string(s.message()).find("nothing was written"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir)) << c.message;
  }
}

TEST(WriteTrace, ADirectoryThatCannotBeMadeIsAnError) {
  const std::string file = ::testing::TempDir() + "writers_test_a_file";
  std::ofstream(file) << "x";
  const absl::Status s = WriteTrace(GenerateSynthetic(Options(SyntheticMix::kGangs)), file + "/d");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find(file + "/d: cannot be created"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tessera::trace
