// The streamed trace (trace/job_source.h) against the materialized one: the same jobs, and a
// replay of the stream gives the same results, to the byte of every report, as a replay of the
// trace held whole. And ValueList (trace/metrics.h) against Summarize.
#include "trace/job_source.h"

#include <cstdint>
#include <string>
#include <vector>

#include "fgd/fragmentation.h"
#include "gtest/gtest.h"
#include "trace/metrics.h"
#include "trace/model_builder.h"
#include "trace/replay.h"
#include "trace/report.h"
#include "trace/typical_pods.h"

namespace tessera::trace {
namespace {

SyntheticOptions Small(SyntheticMix mix, double load) {
  SyntheticOptions o;
  o.jobs = 400;
  o.nodes = 6;
  o.seed = 7;
  o.queues = 3;
  o.load = load;
  o.mix = mix;
  return o;
}

void ExpectSameJob(const TraceJob& a, const TraceJob& b, int64_t i) {
  EXPECT_EQ(a.arrival, b.arrival) << i;
  EXPECT_EQ(a.duration, b.duration) << i;
  EXPECT_EQ(a.pods, b.pods) << i;
  EXPECT_EQ(a.gpus, b.gpus) << i;
  EXPECT_EQ(a.gpu_milli, b.gpu_milli) << i;
  EXPECT_EQ(a.cpu_milli, b.cpu_milli) << i;
  EXPECT_EQ(a.memory_mib, b.memory_mib) << i;
  EXPECT_EQ(a.queue, b.queue) << i;
  EXPECT_EQ(a.priority, b.priority) << i;
  EXPECT_EQ(a.gpu_models, b.gpu_models) << i;
}

TEST(SyntheticJobs, MakesTheJobsOfGenerateSynthetic) {
  for (SyntheticMix mix : {SyntheticMix::kMixed, SyntheticMix::kGangs}) {
    const SyntheticOptions o = Small(mix, 0.9);
    const Trace whole = GenerateSynthetic(o);
    Trace cluster;
    SyntheticGenerator gen(o, cluster);
    EXPECT_TRUE(cluster.jobs.empty());
    EXPECT_EQ(cluster.nodes.size(), whole.nodes.size());
    EXPECT_EQ(cluster.queues, whole.queues);
    EXPECT_EQ(cluster.priorities, whole.priorities);

    const SyntheticJobs jobs(o, /*limit=*/-1, /*ignore_times=*/false);
    ASSERT_EQ(jobs.size(), o.jobs);
    EXPECT_EQ(jobs.last_arrival(), whole.jobs.back().arrival);
    auto cursor = jobs.Cursor();
    TraceJob j;
    int64_t index = -1, n = 0;
    while (cursor->Next(j, index)) {
      ASSERT_EQ(index, n);
      ExpectSameJob(j, whole.jobs[static_cast<size_t>(index)], index);
      ++n;
    }
    EXPECT_EQ(n, o.jobs);
    n = 0;
    jobs.ForEach([&](const TraceJob& job, int64_t i) {
      EXPECT_EQ(i, n++);
      ExpectSameJob(job, whole.jobs[static_cast<size_t>(i)], i);
    });
  }
}

TEST(SyntheticJobs, LimitAndIgnoreTimes) {
  const SyntheticOptions o = Small(SyntheticMix::kMixed, 0.9);
  const SyntheticJobs jobs(o, /*limit=*/10, /*ignore_times=*/true);
  EXPECT_EQ(jobs.size(), 10);
  EXPECT_EQ(jobs.last_arrival(), 9);
  int64_t n = 0;
  jobs.ForEach([&](const TraceJob& j, int64_t i) {
    EXPECT_EQ(j.arrival, static_cast<double>(i));
    EXPECT_LT(j.duration, 0);
    ++n;
  });
  EXPECT_EQ(n, 10);
  EXPECT_EQ(SyntheticJobs(o, 0, false).size(), 0);
  EXPECT_EQ(SyntheticJobs(o, 1 << 20, false).size(), o.jobs);
}

// The typical pods tally equal shapes: the same list as one shape per job gives.
TEST(StreamedReplay, TypicalPodsOfTalliedShapes) {
  for (SyntheticMix mix : {SyntheticMix::kMixed, SyntheticMix::kGangs}) {
    const Trace whole = GenerateSynthetic(Small(mix, 0.9));
    std::vector<fgd::PodShape> one_per_job;
    fgd::GpuModelTable models;
    for (const TraceJob& j : whole.jobs) {
      fgd::PodShape s;
      s.cpu_milli = j.cpu_milli;
      s.mem_mib = j.memory_mib;
      s.num_gpu = j.gpu_milli > 0 ? 1 : j.gpus;
      s.gpu_milli = j.gpu_milli > 0 ? j.gpu_milli : (j.gpus > 0 ? 1000 : 0);
      if (j.gpu_models >= 0) {
        s.model_spec = whole.gpu_model_sets[static_cast<size_t>(j.gpu_models)][0];
        s.models = *models.MaskOfSpec(s.model_spec);
      }
      s.count = j.pods;
      one_per_job.push_back(s);
    }
    const auto want = fgd::BuildTypicalPods(one_per_job);
    auto got = TypicalPods(whole, TraceJobs(whole), Model{}, kGpuMilli, models);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want.size());
    ASSERT_GT(want.size(), 3u);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ((*got)[i].cpu_milli, want[i].cpu_milli) << i;
      EXPECT_EQ((*got)[i].mem_mib, want[i].mem_mib) << i;
      EXPECT_EQ((*got)[i].num_gpu, want[i].num_gpu) << i;
      EXPECT_EQ((*got)[i].gpu_milli, want[i].gpu_milli) << i;
      EXPECT_EQ((*got)[i].models, want[i].models) << i;
      EXPECT_EQ((*got)[i].model_spec, want[i].model_spec) << i;
      EXPECT_EQ((*got)[i].weight, want[i].weight) << i;
    }
  }
}

// Every output of a replay: the summary, report.json and the CSV files.
std::string Outputs(const ReplayResult& r, const std::vector<std::string>& notes) {
  std::string out = SummaryTable(r) + ReportJson(r);
  for (const auto& [name, text] : ReportCsv(r)) out += name + "\n" + text;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

TEST(StreamedReplay, SameResultsAsTheWholeTrace) {
  // Load 1.6 on 6 nodes: jobs wait, priorities preempt, and every metric has values.
  for (SyntheticMix mix : {SyntheticMix::kMixed, SyntheticMix::kGangs}) {
    const SyntheticOptions o = Small(mix, 1.6);
    ReplayOptions ro;

    const Trace whole = GenerateSynthetic(o);
    Model m1;
    std::vector<std::string> notes1;
    auto conv1 = BuildModel(whole, BuildOptions{}, m1, notes1);
    ASSERT_TRUE(conv1.ok()) << conv1.status();
    auto r1 = RunReplay(std::move(m1), whole, *conv1, ro);
    ASSERT_TRUE(r1.ok()) << r1.status();

    Trace cluster;
    SyntheticGenerator gen(o, cluster);
    const SyntheticJobs jobs(o, -1, false);
    Model m2;
    std::vector<std::string> notes2;
    auto conv2 = BuildModel(cluster, jobs, BuildOptions{}, m2, notes2);
    ASSERT_TRUE(conv2.ok()) << conv2.status();
    auto r2 = RunReplay(std::move(m2), cluster, jobs, *conv2, ro);
    ASSERT_TRUE(r2.ok()) << r2.status();

    EXPECT_GT(r1->all.wait.max, 0) << "the case should make jobs wait";
    if (mix == SyntheticMix::kMixed) {
      EXPECT_GT(r1->preemptions, 0);
    }
    EXPECT_EQ(Outputs(*r1, notes1), Outputs(*r2, notes2));
  }
}

// Summarize's figures, bit for bit, from a ValueList of the same values.
void ExpectSameSummary(std::vector<double> values) {
  ValueList list;
  for (double v : values) list.Add(v);
  const Distribution a = list.Summary();
  const Distribution b = Summarize(values);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.p50, b.p50);
  EXPECT_EQ(a.p95, b.p95);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.max, b.max);
}

TEST(ValueList, SummaryIsSummarize) {
  ExpectSameSummary({});
  ExpectSameSummary({3.5});
  uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 11;
  };
  for (int n : {10, 4095, 4096, 4097, 20000, 100000}) {
    std::vector<double> zeros(static_cast<size_t>(n), 0.0), few, distinct, mixed;
    for (int i = 0; i < n; ++i) {
      few.push_back(static_cast<double>(next() % 300));
      distinct.push_back(static_cast<double>(next()) * 1e-7);
      mixed.push_back(i % 3 == 0 ? static_cast<double>(next()) * 0.001 : 60.0 * (next() % 50));
    }
    ExpectSameSummary(zeros);
    ExpectSameSummary(few);
    ExpectSameSummary(distinct);
    ExpectSameSummary(mixed);
  }
}

TEST(ValueList, EqualValuesAreKeptOnce) {
  // A million waits of whole minutes up to a day: at most the 1441 values and one buffer.
  ValueList list;
  for (int64_t i = 0; i < 1'000'000; ++i) list.Add(60.0 * static_cast<double>((i * 7919) % 1441));
  EXPECT_EQ(list.size(), 1'000'000);
  EXPECT_LE(list.entries(), 1441 + 4096);
  ValueList all;
  all.Append(list);
  all.Append(list);
  EXPECT_EQ(all.size(), 2'000'000);
  EXPECT_LE(all.entries(), 1441 + 2 * 4096);
  EXPECT_EQ(all.Summary().max, 60.0 * 1440);
}

}  // namespace
}  // namespace tessera::trace
