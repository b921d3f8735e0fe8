#include "trace/readers.h"

#include <fstream>

#include "gtest/gtest.h"
#include "model/limits.h"
#include "trace/test_util.h"

namespace tessera::trace {
namespace {

using testing::DataFile;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ReadJobs, GenericFormat) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(DataFile("share_jobs.csv"), BadRows::kFail, t, log).ok());
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].name, "half-1");
  EXPECT_EQ(t.jobs[0].gpus, 0);
  EXPECT_EQ(t.jobs[0].gpu_milli, 500);
  EXPECT_EQ(t.jobs[0].PodGpuMilli(), 500);
  EXPECT_EQ(t.jobs[2].gpus, 1);
  EXPECT_EQ(t.jobs[2].gpu_milli, 0);
  EXPECT_EQ(t.jobs[2].duration, 100);
  EXPECT_EQ(t.jobs[2].line, 5);  // comment and header lines count
  EXPECT_EQ(log.warning_count, 0);
}

TEST(ReadJobs, BrokenRowsAreSkippedWithFileAndLine) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(DataFile("bad_jobs.csv"), BadRows::kSkip, t, log).ok());
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].name, "good-1");
  EXPECT_EQ(t.jobs[1].name, "good-2");
  EXPECT_EQ(log.skipped_rows, 4);
  ASSERT_EQ(log.warnings.size(), 4u);
  const std::string f = DataFile("bad_jobs.csv");
  EXPECT_EQ(log.warnings[0], f + ":3: arrival: \"soon\" is not a number of seconds (row skipped)");
  EXPECT_EQ(log.warnings[1], f + ":4: pods: 0 is out of range [1, 1048576] (row skipped)");
  EXPECT_EQ(log.warnings[2], f + ":5: unterminated quoted field (row skipped)");
  EXPECT_EQ(log.warnings[3], f + ":7: arrival: -3 is negative (row skipped)");
}

TEST(ReadJobs, BrokenRowIsFatalWhenAskedTo) {
  Trace t;
  ReadLog log;
  auto s = ReadJobs(DataFile("bad_jobs.csv"), BadRows::kFail, t, log);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()),
            DataFile("bad_jobs.csv") + ":3: arrival: \"soon\" is not a number of seconds");
}

TEST(ReadJobs, OpenbPodList) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(DataFile("openb_pods.csv"), BadRows::kSkip, t, log).ok());
  // Rows 0004 (a share of two GPUs) and 0005 (unknown qos) are broken.
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_EQ(log.skipped_rows, 2);
  ASSERT_EQ(log.warnings.size(), 2u);
  EXPECT_TRUE(Contains(log.warnings[0], "openb_pods.csv:6: num_gpu 2 with gpu_milli 500"));
  EXPECT_TRUE(Contains(log.warnings[1], "openb_pods.csv:7: qos: \"XX\""));

  const TraceJob& whole = t.jobs[0];
  EXPECT_EQ(whole.gpus, 1);
  EXPECT_EQ(whole.gpu_milli, 0);
  EXPECT_EQ(whole.arrival, 0);
  EXPECT_EQ(whole.duration, 990);                   // deletion - scheduled
  EXPECT_EQ(t.priorities[whole.priority], "1000");  // LS

  const TraceJob& share = t.jobs[1];
  EXPECT_EQ(share.gpus, 0);
  EXPECT_EQ(share.gpu_milli, 460);
  EXPECT_EQ(share.duration, 495);                // no scheduled_time: deletion - creation
  EXPECT_EQ(t.priorities[share.priority], "0");  // BE
  ASSERT_GE(share.gpu_models, 0);
  EXPECT_EQ(t.gpu_model_sets[share.gpu_models], (std::vector<std::string>{"P100", "G2"}));

  EXPECT_EQ(t.jobs[2].gpus, 0);
  EXPECT_EQ(t.priorities[t.jobs[2].priority], "500");  // Burstable
  EXPECT_EQ(t.jobs[3].gpus, 8);
  EXPECT_LT(t.jobs[3].duration, 0);  // never deleted: runs to the end
}

TEST(ReadJobs, OpenbWithoutTimesArrivesOneASecondAndStays) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(DataFile("openb_multigpu.csv"), BadRows::kFail, t, log).ok());
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[2].arrival, 2);
  EXPECT_LT(t.jobs[2].duration, 0);
  EXPECT_EQ(t.jobs[2].gpus, 4);
}

TEST(ReadJobs, UnknownHeaderIsRejectedAtLineOne) {
  Trace t;
  ReadLog log;
  auto s = ReadJobs(DataFile("openb_nodes.csv"), BadRows::kSkip, t, log);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(std::string(s.message()), "openb_nodes.csv:1: not a job list"));
}

TEST(ReadNodes, OpenbAndGenericColumns) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(DataFile("openb_nodes.csv"), BadRows::kFail, t, log).ok());
  ASSERT_TRUE(ReadNodes(DataFile("tiny_nodes.csv"), BadRows::kFail, t, log).ok());
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.nodes[0].name, "openb-node-0000");
  EXPECT_EQ(t.nodes[0].gpus, 2);
  EXPECT_EQ(t.nodes[0].gpu_model, "P100");
  EXPECT_EQ(t.nodes[2].gpus, 0);
  EXPECT_EQ(t.nodes[3].name, "node-a");
  EXPECT_EQ(t.nodes[3].memory_mib, 16384);
  EXPECT_EQ(t.nodes[3].source, DataFile("tiny_nodes.csv") + ":3");
  // The same file again: every node is a duplicate.
  auto s = ReadNodes(DataFile("tiny_nodes.csv"), BadRows::kFail, t, log);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(std::string(s.message()), "tiny_nodes.csv:3: node node-a is listed twice"));
}

// An elastic group (docs/trace-replay.md, "Elastic node groups") is one row with max_nodes; a
// row with the group's columns empty is a node as before.
TEST(ReadNodes, ElasticGroupColumns) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadNodes(DataFile("elastic_nodes.csv"), BadRows::kFail, t, log).ok());
  EXPECT_EQ(log.warning_count, 0);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_FALSE(t.nodes[0].autoscaling.has_value());
  EXPECT_FALSE(t.nodes[0].price_per_node_hour.has_value());
  const TraceNode& g = t.nodes[1];
  ASSERT_TRUE(g.autoscaling.has_value());
  EXPECT_EQ(g.autoscaling->min_nodes, 0);
  EXPECT_EQ(g.autoscaling->max_nodes, 4);
  EXPECT_EQ(g.autoscaling->provisioning_seconds, 300);
  EXPECT_EQ(g.autoscaling->scale_down_after_seconds, 600);
  EXPECT_EQ(g.price_per_node_hour, 32);
  EXPECT_FALSE(g.spot.has_value());
  EXPECT_EQ(g.labels.at("pool"), "a100");
}

TEST(ReadNodes, BrokenElasticGroupsNameFileLineAndColumn) {
  Trace t;
  ReadLog log;
  const std::string f = DataFile("bad_elastic_nodes.csv");
  ASSERT_TRUE(ReadNodes(f, BadRows::kSkip, t, log).ok());
  ASSERT_EQ(log.warnings.size(), 5u);
  EXPECT_EQ(log.warnings[0], f + ":2: max_nodes: 0 is out of range [1, 500000] (row skipped)");
  EXPECT_EQ(log.warnings[1], f + ":3: min_nodes: 5 is more than max_nodes 3 (row skipped)");
  EXPECT_EQ(log.warnings[2], f + ":4: spot_discount: 1 is out of range [0, 1) (row skipped)");
  EXPECT_EQ(log.warnings[3],
            f + ":5: provisioning_seconds: \"soon\" is not a number (seconds) (row skipped)");
  EXPECT_EQ(log.warnings[4], f + ":6: price_per_node_hour: only an elastic group has it; give "
                                 "max_nodes too (row skipped)");
  ASSERT_EQ(t.nodes.size(), 1u);
  const TraceNode& spot = t.nodes[0];
  ASSERT_TRUE(spot.autoscaling && spot.spot);
  EXPECT_EQ(spot.autoscaling->min_nodes, 1);
  EXPECT_EQ(spot.autoscaling->scale_down_after_seconds, 600);  // the default
  EXPECT_EQ(spot.spot->discount, 0.7);
  EXPECT_EQ(spot.spot->interruptions_per_node_hour, 0.5);
  EXPECT_EQ(spot.spot->notice_seconds, 30);
  // With --bad-rows fail the first broken row stops the read.
  Trace t2;
  absl::Status s = ReadNodes(f, BadRows::kFail, t2, log);
  EXPECT_EQ(s.message(), f + ":2: max_nodes: 0 is out of range [1, 500000]");
}

TEST(OpenbQos, Mapping) {
  std::string_view p;
  ASSERT_TRUE(OpenbQosPriority("LS", p));
  EXPECT_EQ(p, "1000");
  ASSERT_TRUE(OpenbQosPriority("Guaranteed", p));
  EXPECT_EQ(p, "1000");
  ASSERT_TRUE(OpenbQosPriority("Burstable", p));
  EXPECT_EQ(p, "500");
  ASSERT_TRUE(OpenbQosPriority("BE", p));
  EXPECT_EQ(p, "0");
  ASSERT_TRUE(OpenbQosPriority("", p));
  EXPECT_EQ(p, "");
  EXPECT_FALSE(OpenbQosPriority("gold", p));
}

TEST(ReadJobs, MaxWaitColumn) {
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(DataFile("max_wait_jobs.csv"), BadRows::kFail, t, log).ok());
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_LT(t.jobs[0].max_wait, 0);  // empty: no limit
  EXPECT_EQ(t.jobs[2].max_wait, 30);
  EXPECT_EQ(t.jobs[3].max_wait, 500);
  EXPECT_EQ(log.warning_count, 0);  // the column is read, not warned about

  const std::string path = ::testing::TempDir() + "bad_max_wait_jobs.csv";
  std::ofstream(path) << "arrival,duration,max_wait\n0,10,1h\n0,10,-5\n";
  Trace b;
  ReadLog blog;
  ASSERT_TRUE(ReadJobs(path, BadRows::kSkip, b, blog).ok());
  EXPECT_TRUE(b.jobs.empty());
  ASSERT_EQ(blog.warnings.size(), 2u);
  EXPECT_EQ(blog.warnings[0],
            path + ":2: max_wait: \"1h\" is not a number of seconds (row skipped)");
  EXPECT_EQ(blog.warnings[1], path + ":3: max_wait: -5 is negative (row skipped)");
}

// Numbers that are not numbers, or whose sums are not: NaN and inf are not numbers of seconds,
// and 1e308-second arrivals and durations (finite, and inf once added) are beyond the bound. A
// replay of them "ended" with a mean GPU allocation of inf%.
TEST(ReadJobs, TimesThatAreNotFiniteOrOverflowAreRefusedAtTheirField) {
  const std::string path = ::testing::TempDir() + "huge_times_jobs.csv";
  std::ofstream(path) << "arrival,duration,gpus\n1e308,10,1\n0,1e308,1\n0,nan,1\n-inf,1,1\n"
                         "1e12,1e12,1\n";
  Trace t;
  ReadLog log;
  ASSERT_TRUE(ReadJobs(path, BadRows::kSkip, t, log).ok());
  ASSERT_EQ(t.jobs.size(), 1u);  // the last: at the bound
  ASSERT_EQ(log.warnings.size(), 4u);
  EXPECT_EQ(log.warnings[0], path + ":2: arrival: 1e+308 is more than 1e+12 seconds, the limit for "
                                    "a time of a trace (row skipped)");
  EXPECT_EQ(log.warnings[1], path + ":3: duration: 1e+308 is more than 1e+12 seconds, the limit "
                                    "for a time of a trace (row skipped)");
  EXPECT_EQ(log.warnings[2], path + ":4: duration: \"nan\" is not a number of seconds (row skipped)");
  EXPECT_EQ(log.warnings[3], path + ":5: arrival: \"-inf\" is not a number of seconds (row skipped)");
  const std::string openb = ::testing::TempDir() + "huge_times_openb.csv";
  std::ofstream(openb) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
                          "p,1000,1024,1,1000,0,1e300\n";
  Trace o;
  absl::Status s = ReadJobs(openb, BadRows::kFail, o, log);
  EXPECT_EQ(s.message(), openb + ":2: deletion_time: 1e+300 is more than 1e+12 seconds, the "
                                 "limit for a time of a trace");
}

// An overlong row stops the read even where broken rows are skipped: what follows it on its line
// may never end, so skipping it would drop the rest of the file without a word.
TEST(ReadJobs, ARowBeyondTheLineLimitIsFatalEvenWhenSkipping) {
  const std::string path = ::testing::TempDir() + "long_jobs.csv";
  std::ofstream(path, std::ios::binary)
      << "arrival,duration\n0,10\n0," << std::string(kMaxCsvLineBytes, '1') << "\n1,10\n";
  Trace t;
  ReadLog log;
  absl::Status s = ReadJobs(path, BadRows::kSkip, t, log);
  EXPECT_EQ(s.message(), path + ":3: row longer than 1048576 bytes");
  Trace n;
  s = ReadNodes("/dev/zero", BadRows::kSkip, n, log);
  EXPECT_EQ(s.message(), "/dev/zero:1: row longer than 1048576 bytes");
}

}  // namespace
}  // namespace tessera::trace
