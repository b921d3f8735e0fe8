// The metadata every workload kind shares: metadata.creationTimestamp against tessera.dev/created.
#include "config/workload_meta.h"

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;

const Workload* ByName(const Model& m, const std::string& name) {
  for (const auto& w : m.workloads)
    if (w.name == name) return &w;
  return nullptr;
}

std::string Job(const std::string& name, const std::string& metadata_extra) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n" + metadata_extra +
         "spec:\n  template:\n    spec:\n      containers: [{name: c}]\n---\n";
}

TEST(Rfc3339, ParsesWhatKubernetesWrites) {
  using config_internal::ParseRfc3339;
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(ParseRfc3339("2024-01-02T03:04:05Z"), 1704164645.0);
  EXPECT_EQ(ParseRfc3339("2024-02-29T00:00:00Z"), 1709164800.0);  // a leap day
  EXPECT_EQ(ParseRfc3339("2024-01-02T04:04:05+01:00"), 1704164645.0);
  EXPECT_EQ(ParseRfc3339("2024-01-02T02:04:05-01:00"), 1704164645.0);
  EXPECT_EQ(ParseRfc3339("2024-01-02T03:04:05.5Z"), 1704164645.5);
  for (const char* bad :
       {"", "2024-01-02", "2024-01-02T03:04:05", "2024-13-02T03:04:05Z", "2023-02-29T00:00:00Z",
        "2024-01-02 03:04:05Z", "2024-01-02T03:04:05Zx", "2024-01-02T03:04:05.Z",
        "2024-01-02T24:00:00Z", "2024-01-02T03:04:05+1:00", "yesterday"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

TEST(WorkloadMeta, CreationTimestampCountsFromTheEarliest) {
  LoadResult r = Load(Job("late", "  creationTimestamp: \"2024-01-02T03:05:35Z\"\n") +
                      Job("first", "  creationTimestamp: 2024-01-02T03:04:05Z\n") +
                      Job("both",
                          "  creationTimestamp: \"2024-01-02T03:04:15Z\"\n  annotations: "
                          "{tessera.dev/created: \"7\"}\n") +
                      Job("none", ""));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(ByName(r.model, "first")->created, 0.0);
  EXPECT_EQ(ByName(r.model, "late")->created, 90.0);
  EXPECT_EQ(ByName(r.model, "both")->created, 7.0);            // tessera.dev/created wins
  EXPECT_FALSE(ByName(r.model, "none")->created.has_value());  // the arrival
  EXPECT_EQ(ByName(r.model, "late")->arrival, 0.0);            // the arrival is not the creation
}

TEST(WorkloadMeta, MalformedCreationTimestampIsAnErrorNamingTheField) {
  LoadResult r = Load(Job("j", "  creationTimestamp: \"2024-01-02 03:04:05\"\n"));
  EXPECT_FALSE(r.ok());
  const Diagnostic* d = Find(r, Diagnostic::Severity::kError, "metadata.creationTimestamp");
  ASSERT_NE(d, nullptr) << AllDiagnostics(r);
  EXPECT_NE(d->message.find("RFC 3339"), std::string::npos) << d->message;
  EXPECT_EQ(d->line, 5);
}

TEST(WorkloadMeta, AdmittedFlavorForEveryOrEachPodSet) {
  LoadResult r = Load(
      Job("all", "  annotations: {tessera.dev/admitted-flavor: spot}\n") +
      Job("each", "  annotations: {tessera.dev/admitted-flavor: \"main=spot,workers=gpu\"}\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const Workload* all = ByName(r.model, "all");
  EXPECT_TRUE(all->admitted_at_start);
  ASSERT_EQ(all->admitted_flavors.size(), 1u);
  EXPECT_EQ(all->admitted_flavors[0], std::make_pair(std::string(), std::string("spot")));
  const Workload* each = ByName(r.model, "each");
  ASSERT_EQ(each->admitted_flavors.size(), 2u);
  EXPECT_EQ(each->admitted_flavors[1], std::make_pair(std::string("workers"), std::string("gpu")));
}

TEST(WorkloadMeta, MalformedAdmittedFlavorIsAnErrorNamingTheField) {
  for (const char* bad :
       {"\"\"", "\"a,b\"", "\"main=\"", "\"=spot\"", "\"main=a,main=b\"", "\"main=a,\""}) {
    LoadResult r =
        Load(Job("j", std::string("  annotations: {tessera.dev/admitted-flavor: ") + bad + "}\n"));
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(Find(r, Diagnostic::Severity::kError,
                   "metadata.annotations[\"tessera.dev/admitted-flavor\"]"),
              nullptr)
        << bad << ": " << AllDiagnostics(r);
  }
  LoadResult r = Load(
      Job("j",
          "  annotations: {tessera.dev/admitted-flavor: spot, tessera.dev/admitted: \"false\"}\n"));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace tessera
