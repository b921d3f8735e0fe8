// deploy/grafana/tessera-dashboard.json asks only for metrics that `tessera serve` exports: every
// PromQL expression of every panel is read, the tessera_ metric names are taken out of it (a
// histogram's _bucket, _sum and _count series count as the histogram) and looked up in the
// exporter's list, Metrics::Names().
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "k8s/observe/metrics.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

std::string RepoRoot() {
  if (const char* dir = std::getenv("TESSERA_SOURCE_DIR")) return dir;
  return TESSERA_REPO_DIR;
}

// Every `expr` of the panels' targets, rows' nested panels included.
void Expressions(const json& panels, std::vector<std::string>& out) {
  for (const json& p : panels) {
    for (const json& t : p.value("targets", json::array()))
      if (t.contains("expr")) out.push_back(t["expr"].get<std::string>());
    if (p.contains("panels")) Expressions(p["panels"], out);
  }
}

// The exported metric a series name in a query belongs to; "" when none.
std::string Exported(const std::string& series, const std::set<std::string>& names) {
  if (names.count(series)) return series;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s = suffix;
    if (series.size() > s.size() && series.compare(series.size() - s.size(), s.size(), s) == 0 &&
        names.count(series.substr(0, series.size() - s.size())))
      return series.substr(0, series.size() - s.size());
  }
  return "";
}

TEST(GrafanaDashboard, EveryQueryNamesAMetricServeExports) {
  const std::string path = RepoRoot() + "/deploy/grafana/tessera-dashboard.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const json dashboard = json::parse(in);
  std::vector<std::string> exprs;
  Expressions(dashboard.at("panels"), exprs);
  ASSERT_GE(exprs.size(), 10u);

  const std::vector<std::string> list = Metrics::Names();
  const std::set<std::string> names(list.begin(), list.end());
  const std::regex series("tessera_[a-zA-Z0-9_:]+");
  std::set<std::string> used;
  for (const std::string& e : exprs) {
    int found = 0;
    for (auto it = std::sregex_iterator(e.begin(), e.end(), series); it != std::sregex_iterator();
         ++it, ++found) {
      const std::string name = Exported(it->str(), names);
      EXPECT_FALSE(name.empty()) << it->str() << " in " << e << " is not exported";
      used.insert(name);
    }
    EXPECT_GT(found, 0) << "a query with no tessera_ metric: " << e;
  }
  // The seeds' three success metrics are on it: allocation, queue wait, idle node time.
  for (const char* m : {"tessera_gpu_allocation_ratio", "tessera_admission_wait_time_seconds",
                        "tessera_idle_node_seconds_total", "tessera_cost_dollars_total"})
    EXPECT_TRUE(used.count(m)) << m;
}

}  // namespace
}  // namespace tessera::k8s
