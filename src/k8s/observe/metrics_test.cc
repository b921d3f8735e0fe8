#include "k8s/observe/metrics.h"

#include <httplib.h>

#include <atomic>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(Metrics, RendersPrometheusText) {
  Metrics m;
  m.bind_latency.Observe(0.002);
  m.bind_latency.Observe(0.004);
  ++m.binds_ok;
  m.events_dropped = 7;
  m.events_queued = 3;
  m.SetGauges("tessera_pending_workloads",
              {{{"team-a", "active"}, 3}, {{"team-a", "inadmissible"}, 1}});
  m.SetGauges("tessera_gpus_allocated", {{{"a100"}, 8}, {{"(none)"}, 0.5}});
  m.Add("tessera_admitted_workloads_total", {"team-a"});
  m.Add("tessera_admitted_workloads_total", {"team-a"}, 2);
  std::string text = m.Render();
  EXPECT_TRUE(
      Has(text, "tessera_pending_workloads{cluster_queue=\"team-a\",status=\"active\"} 3\n"));
  EXPECT_TRUE(
      Has(text, "tessera_pending_workloads{cluster_queue=\"team-a\",status=\"inadmissible\"} 1\n"));
  EXPECT_TRUE(Has(text, "tessera_gpus_allocated{flavor=\"a100\"} 8\n"));
  EXPECT_TRUE(Has(text, "tessera_gpus_allocated{flavor=\"(none)\"} 0.5\n"));
  EXPECT_TRUE(Has(text, "tessera_admitted_workloads_total{cluster_queue=\"team-a\"} 3\n"));
  EXPECT_TRUE(Has(text, "tessera_bind_latency_seconds_count 2"));
  EXPECT_TRUE(Has(text, "tessera_binds_total{result=\"ok\"} 1"));
  EXPECT_TRUE(Has(text, "# TYPE tessera_admission_wait_time_seconds histogram"));
  EXPECT_TRUE(Has(text, "tessera_events_total{result=\"dropped\"} 7"));
  EXPECT_TRUE(Has(text, "\ntessera_events_queued 3\n"));
  // The issue's complaint: no sample carries an empty label value.
  EXPECT_FALSE(Has(text, "=\"\"")) << text;
}

TEST(Metrics, EveryFamilyHasHelpTypeAndAPrometheusName) {
  Metrics m;
  const std::string text = m.Render();
  const std::regex name_re("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  std::set<std::string> names;
  for (const std::string& name : Metrics::Names()) {
    EXPECT_TRUE(names.insert(name).second) << "twice: " << name;
    EXPECT_TRUE(std::regex_match(name, name_re)) << name;
    EXPECT_EQ(name.rfind("tessera_", 0), 0u) << name;
    EXPECT_TRUE(Has(text, "# HELP " + name + " ")) << name;
    std::smatch type;
    ASSERT_TRUE(std::regex_search(text, type, std::regex("# TYPE " + name + " (\\w+)\n"))) << name;
    // Naming rules: counters end in _total, and nothing else does; durations in seconds.
    const bool total = name.size() > 6 && name.substr(name.size() - 6) == "_total";
    EXPECT_EQ(type[1] == "counter", total) << name;
    EXPECT_EQ(name.find("millis"), std::string::npos) << name;
    EXPECT_EQ(name.find("hours"), std::string::npos) << name;
  }
  // Every TYPE line is for a listed name.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(names.count(line.substr(7, line.find(' ', 7) - 7))) << line;
    }
  }
}

TEST(Metrics, KueueNamesAndLabels) {
  Metrics m;
  m.Add("tessera_preempted_workloads_total", {"team-b", "InCohortReclamation"});
  m.Add("tessera_evicted_workloads_total", {"team-a", "Preempted"});
  m.SetGauges("tessera_cluster_queue_nominal_quota",
              {{{"research", "team-a", "a100", "nvidia.com/gpu"}, 8}});
  m.SetGauges("tessera_cluster_queue_weighted_share", {{{"team-a"}, 1.0 / 0.0}});
  const std::string text = m.Render();
  EXPECT_TRUE(Has(text,
                  "tessera_preempted_workloads_total{preempting_cluster_queue=\"team-b\","
                  "reason=\"InCohortReclamation\"} 1\n"));
  EXPECT_TRUE(Has(
      text, "tessera_evicted_workloads_total{cluster_queue=\"team-a\",reason=\"Preempted\"} 1\n"));
  EXPECT_TRUE(Has(text,
                  "tessera_cluster_queue_nominal_quota{cohort=\"research\",cluster_queue="
                  "\"team-a\",flavor=\"a100\",resource=\"nvidia.com/gpu\"} 8\n"));
  EXPECT_TRUE(Has(text, "tessera_cluster_queue_weighted_share{cluster_queue=\"team-a\"} +Inf\n"));
  EXPECT_EQ(m.Value("tessera_evicted_workloads_total", {"team-a", "Preempted"}), 1);
}

TEST(Metrics, HistogramsHaveKueuesBucketsPerLabel) {
  Metrics m;
  m.Observe("tessera_admission_wait_time_seconds", {"team-a"}, 3);
  m.Observe("tessera_admission_wait_time_seconds", {"team-a"}, 0.5);
  m.Observe("tessera_admission_attempt_duration_seconds", {"success"}, 0.02);
  const std::string text = m.Render();
  // Kueue's generateExponentialBuckets(14): 1, then 2.5 doubling 13 times (to 10240).
  EXPECT_TRUE(Has(
      text, "tessera_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"1\"} 1\n"));
  EXPECT_TRUE(Has(
      text, "tessera_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"2.5\"} 1\n"));
  EXPECT_TRUE(Has(
      text, "tessera_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"5\"} 2\n"));
  EXPECT_TRUE(
      Has(text,
          "tessera_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"10240\"} 2\n"));
  EXPECT_TRUE(
      Has(text,
          "tessera_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"+Inf\"} 2\n"));
  EXPECT_TRUE(Has(text, "tessera_admission_wait_time_seconds_sum{cluster_queue=\"team-a\"} 3.5\n"));
  EXPECT_TRUE(Has(text, "tessera_admission_wait_time_seconds_count{cluster_queue=\"team-a\"} 2\n"));
  // client_golang's default buckets for the attempt duration.
  EXPECT_TRUE(Has(
      text,
      "tessera_admission_attempt_duration_seconds_bucket{result=\"success\",le=\"0.025\"} 1\n"));
  EXPECT_TRUE(
      Has(text,
          "tessera_admission_attempt_duration_seconds_bucket{result=\"success\",le=\"0.01\"} 0\n"));
}

TEST(Metrics, RollupLabelsReplaceACostFamilysLabels) {
  Metrics m;
  m.SetLabelNames("tessera_cost_dollars_total", {"cluster_queue", "namespace", "label_team"});
  m.Add("tessera_cost_dollars_total", {"team-a", "ns-a", "alpha"}, 1.5);
  EXPECT_TRUE(Has(m.Render(),
                  "tessera_cost_dollars_total{cluster_queue=\"team-a\",namespace="
                  "\"ns-a\",label_team=\"alpha\"} 1.5\n"));
}

// GPU-seconds and their dollars grow in one step: a scrape taken while they grow always sees
// dollars = GPU-seconds x price (two Add calls let a scrape fall between them; the integration
// test K8sMetrics compares the two families from one scrape).
TEST(Metrics, CountersAddedTogetherAreSeenTogetherByAScrape) {
  Metrics m;
  const LabelValues labels = {"team-a", "ns-a"};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 3000; ++i)
      m.AddAll(
          {{"tessera_gpu_seconds_total", labels, 4}, {"tessera_cost_dollars_total", labels, 2}});
    done = true;
  });
  auto value = [](const std::string& text, const std::string& name) {
    std::smatch match;
    const std::regex re("\n" + name + R"(\{[^}]*\} ([0-9.e+]+)\n)");
    return std::regex_search(text, match, re) ? std::stod(match[1]) : 0.0;
  };
  int scrapes = 0, torn = 0;
  while (!done || scrapes == 0) {
    const std::string text = m.Render();
    const double gpu = value(text, "tessera_gpu_seconds_total");
    const double dollars = value(text, "tessera_cost_dollars_total");
    torn += gpu != 2 * dollars;
    ++scrapes;
  }
  writer.join();
  EXPECT_EQ(torn, 0) << "of " << scrapes << " scrapes";
  EXPECT_EQ(m.Value("tessera_gpu_seconds_total", labels), 12000);
}

TEST(Histogram, QuantileIsABucketBound) {
  Histogram h({1, 2, 4, 8});
  for (int i = 0; i < 9; ++i) h.Observe(1.5);
  h.Observe(7);
  EXPECT_EQ(h.Quantile(0.5), 2);
  EXPECT_EQ(h.Quantile(1.0), 8);
  EXPECT_EQ(h.count(), 10);
}

TEST(BearerToken, MatchesOnlyTheExactBearerHeader) {
  EXPECT_TRUE(BearerTokenMatches("Bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cre", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer s3cretX", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("bearer s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Basic s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("s3cret", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("", "s3cret"));
  EXPECT_FALSE(BearerTokenMatches("Bearer ", ""));  // an empty token authorizes nothing
}

// Added routes are served beside /metrics; with a token, the guarded prefixes answer 401 without
// it and the probes and /metrics stay open.
TEST(MetricsServer, AddedRoutesAndTheTokenGuard) {
  Metrics metrics;
  MetricsServer server(
      &metrics, [] { return true; }, [] { return true; });
  server.AddRoutes([](httplib::Server& s) {
    s.Get("/api/v1/ping", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"pong": true})", "application/json");
    });
    s.Get("/ui/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html></html>", "text/html");
    });
  });
  server.RequireToken("s3cret", {"/api/"});
  int port = server.Start("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  httplib::Client client("127.0.0.1", port);
  auto no_token = client.Get("/api/v1/ping");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 401);
  EXPECT_NE(no_token->body.find("\"error\""), std::string::npos);
  auto wrong = client.Get("/api/v1/ping", {{"Authorization", "Bearer nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto ok = client.Get("/api/v1/ping", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, R"({"pong": true})");
  for (const char* open : {"/metrics", "/healthz", "/readyz", "/ui/"}) {
    auto r = client.Get(open);
    ASSERT_TRUE(r) << open;
    EXPECT_EQ(r->status, 200) << open;
  }
  server.Stop();
}

}  // namespace
}  // namespace tessera::k8s
