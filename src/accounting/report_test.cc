// `tessera report cost`'s arithmetic against figures worked out by hand: sums per group, the
// top five ordering (dollars, then GPU-hours, then name), grouping by a label, and the edges of
// the period ([from, to)).
#include <string>
#include <vector>

#include "accounting/cost_report.h"
#include "accounting/report_format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera::accounting {
namespace {

const double kJan = 1767225600;  // 2026-01-01T00:00:00Z
const double kFeb = 1769904000;  // 2026-02-01T00:00:00Z

RunRecord MakeRun(const std::string& ns, const std::string& name, std::optional<double> dollars,
                  double gpu_hours, const std::string& team, double end = kJan + 86400) {
  RunRecord r;
  r.ns = ns;
  r.name = name;
  r.allocated_dollars = dollars;
  r.gpu_hours = gpu_hours;
  r.labels = team.empty() ? R"({"app":"x"})" : nlohmann::json{{"team", team}}.dump();
  r.cluster_queue = ns == "web" ? "" : "cq-" + ns;
  r.end = end;
  return r;
}

// ml: seven jobs, j1 in two runs ($10 + $15); j5 and j6 tie on dollars, j6 has more GPU-hours.
// web: a priced job with utilization 0.5 over 1 GPU-h, an unpriced one at 0.2 over 3 GPU-h.
// edge: runs at the period's edges; two are in, two are out.
std::vector<RunRecord> Records() {
  std::vector<RunRecord> r = {
      MakeRun("ml", "j1", 10, 2, "alpha"),
      MakeRun("ml", "j2", 20, 4, "alpha"),
      MakeRun("ml", "j3", 30, 6, "alpha"),
      MakeRun("ml", "j4", 40, 8, "alpha"),
      MakeRun("ml", "j5", 50, 10, "alpha"),
      MakeRun("ml", "j6", 50, 12, "alpha"),
      MakeRun("ml", "j7", 5, 1, "gamma"),
      MakeRun("ml", "j1", 15, 3, "alpha"),
      MakeRun("web", "a", 100, 1, "beta"),
      MakeRun("web", "b", std::nullopt, 3, ""),
      MakeRun("edge", "at-from", 1, 1, "", kJan),
      MakeRun("edge", "before-to", 2, 1, "", kFeb - 0.5),
      MakeRun("edge", "at-to", 4, 1, "", kFeb),
      MakeRun("edge", "before-from", 8, 1, "", kJan - 1),
  };
  r[8].utilization = 0.5;
  r[9].utilization = 0.2;
  return r;
}

ReportQuery January(const std::string& by) {
  ReportQuery q;
  q.from = kJan;
  q.to = kFeb;
  EXPECT_TRUE(ParseGroupBy(by, q).ok());
  return q;
}

TEST(CostReportTest, SumsPerNamespaceWithTheTopFiveCostliestJobs) {
  const CostSummary rep = BuildCostReport(Records(), January("namespace"));
  ASSERT_EQ(rep.groups.size(), 3u);
  const GroupCost& ml = rep.groups[0];  // costliest first: ml $220, web $100, edge $3
  EXPECT_EQ(ml.group, "ml");
  EXPECT_DOUBLE_EQ(*ml.dollars, 220);
  EXPECT_DOUBLE_EQ(ml.gpu_hours, 46);
  EXPECT_EQ(ml.jobs, 7);
  EXPECT_EQ(ml.runs, 8);
  EXPECT_FALSE(ml.utilization.has_value());  // nothing measured: null, not 0
  std::vector<std::string> top;
  for (const JobCost& j : ml.top_jobs) top.push_back(j.job);
  EXPECT_EQ(top, (std::vector<std::string>{"ml/j6", "ml/j5", "ml/j4", "ml/j3", "ml/j1"}));
  EXPECT_DOUBLE_EQ(*ml.top_jobs[4].dollars, 25);  // both runs of j1
  EXPECT_DOUBLE_EQ(ml.top_jobs[4].gpu_hours, 5);
  EXPECT_EQ(ml.top_jobs[4].runs, 2);

  const GroupCost& web = rep.groups[1];
  EXPECT_EQ(web.group, "web");
  EXPECT_DOUBLE_EQ(*web.dollars, 100);  // the unpriced run adds GPU-hours, not dollars
  EXPECT_DOUBLE_EQ(web.gpu_hours, 4);
  EXPECT_DOUBLE_EQ(*web.utilization, (0.5 * 1 + 0.2 * 3) / 4);  // weighted by GPU-hours
  EXPECT_EQ(web.top_jobs[1].job, "web/b");
  EXPECT_FALSE(web.top_jobs[1].dollars.has_value());

  const GroupCost& edge = rep.groups[2];  // at `from`: in; at `to`: out
  EXPECT_DOUBLE_EQ(*edge.dollars, 1 + 2);
  EXPECT_EQ(edge.jobs, 2);
  EXPECT_DOUBLE_EQ(*rep.total.dollars, 220 + 100 + 3);
  EXPECT_DOUBLE_EQ(rep.total.gpu_hours, 46 + 4 + 2);
  EXPECT_EQ(rep.total.jobs, 11);
  EXPECT_EQ(rep.total.runs, 12);
  EXPECT_EQ(rep.total.top_jobs[0].job, "web/a");
}

TEST(CostReportTest, GroupsByALabelWithRunsWithoutItAsNone) {
  const CostSummary rep = BuildCostReport(Records(), January("label:team"));
  ASSERT_EQ(rep.groups.size(), 4u);
  EXPECT_EQ(rep.groups[0].group, "alpha");
  EXPECT_DOUBLE_EQ(*rep.groups[0].dollars, 215);
  EXPECT_DOUBLE_EQ(rep.groups[0].gpu_hours, 45);
  EXPECT_EQ(rep.groups[0].jobs, 6);
  EXPECT_EQ(rep.groups[1].group, "beta");
  EXPECT_EQ(rep.groups[2].group, "gamma");
  EXPECT_DOUBLE_EQ(*rep.groups[2].dollars, 5);
  EXPECT_EQ(rep.groups[3].group, "(none)");  // web/b (unpriced) and the two edge runs: $3
  EXPECT_DOUBLE_EQ(*rep.groups[3].dollars, 3);
  EXPECT_DOUBLE_EQ(rep.groups[3].gpu_hours, 3 + 2);
  EXPECT_EQ(rep.groups[3].jobs, 3);
}

TEST(CostReportTest, GroupsByClusterQueueAndLocalQueue) {
  CostSummary rep = BuildCostReport(Records(), January("cluster-queue"));
  ASSERT_EQ(rep.groups.size(), 3u);
  EXPECT_EQ(rep.groups[0].group, "cq-ml");
  EXPECT_EQ(rep.groups[1].group, "(none)");  // web has no ClusterQueue
  rep = BuildCostReport(Records(), January("local-queue"));
  ASSERT_EQ(rep.groups.size(), 1u);  // no record names a LocalQueue
  EXPECT_EQ(rep.groups[0].group, "(none)");
}

TEST(CostReportTest, FormatsAsJsonCsvAndTable) {
  std::vector<RunRecord> records = {MakeRun("ml", "j1", 10.5, 2, "alpha"),
                                    MakeRun("web", "b, c", std::nullopt, 3, "")};
  const CostSummary rep = BuildCostReport(records, January("namespace"));
  nlohmann::json doc = nlohmann::json::parse(CostReportJson(rep));
  EXPECT_EQ(doc["from"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(doc["to"], "2026-02-01T00:00:00Z");
  EXPECT_EQ(doc["by"], "namespace");
  EXPECT_EQ(doc["groups"][0]["group"], "ml");
  EXPECT_EQ(doc["groups"][0]["dollars"], 10.5);
  EXPECT_EQ(doc["groups"][0]["topJobs"][0]["job"], "ml/j1");
  EXPECT_TRUE(doc["groups"][1]["dollars"].is_null());
  EXPECT_TRUE(doc["groups"][1]["utilization"].is_null());
  EXPECT_EQ(doc["total"]["gpuHours"], 5);
  EXPECT_EQ(CostReportCsv(rep),
            "group,jobs,runs,gpu_hours,dollars,utilization,top_jobs\n"
            "ml,1,1,2,10.5,,ml/j1=10.5\n"
            "web,1,1,3,,,\"web/b, c=\"\n"
            "total,2,2,5,10.5,,\"ml/j1=10.5;web/b, c=\"\n");
  const std::string table = CostReportTable(rep);
  EXPECT_NE(table.find("cost by namespace, runs that ended from 2026-01-01T00:00:00Z to "
                       "2026-02-01T00:00:00Z (excluded)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("10.50"), std::string::npos) << table;
}

TEST(CostReportTest, ParsesDatesAndGroupings) {
  EXPECT_EQ(*ParseDate("2026-01-01"), kJan);
  EXPECT_EQ(*ParseDate("2026-02-01T00:00:00Z"), kFeb);
  EXPECT_EQ(*ParseDate("2026-01-31 23:59:59"), kFeb - 1);
  EXPECT_EQ(*ParseDate("1970-01-01T01:00:00Z"), 3600);
  for (const char* bad : {"2026-02-30", "2026-1-1", "yesterday", "2026-01-01T25:00:00Z",
                          "2026-01-01T00:00:00+02:00", ""}) {
    auto t = ParseDate(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find(std::string("\"") + bad + "\""), std::string::npos);
  }
  EXPECT_EQ(FormatDate(kJan + 3661), "2026-01-01T01:01:01Z");
  ReportQuery q;
  EXPECT_FALSE(ParseGroupBy("team", q).ok());
  EXPECT_FALSE(ParseGroupBy("label:", q).ok());
  ASSERT_TRUE(ParseGroupBy("label:team", q).ok());
  EXPECT_EQ(GroupByName(q), "label:team");
}

}  // namespace
}  // namespace tessera::accounting
