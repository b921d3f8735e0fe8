// LocalQueue status.fairSharing: what serve writes reads back as the same usage, at the same
// instant of the engine's clock; what cannot be read is ignored, not guessed.
#include "k8s/controller/fair_sharing_status.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;
using Wall = std::chrono::system_clock;

TEST(FairSharingStatus, WrittenUsageReadsBackInTheEngineClock) {
  const Wall::time_point start = Wall::from_time_t(1'800'000'000);
  LocalQueueUsage u;
  u.at = 600;  // ten minutes after the engine's 0
  u.consumed = {{"nvidia.com/gpu", 3.5}, {"cpu", 12.25}, {"memory", 64.0 * (1 << 30)}};
  const json fs = FairSharingStatus(u, start);
  const json& afs = fs["admissionFairSharingStatus"];
  EXPECT_EQ(afs["consumedResources"]["nvidia.com/gpu"], "3.5");
  EXPECT_EQ(afs["consumedResources"]["cpu"], "12.25");
  EXPECT_EQ(afs["consumedResources"]["memory"], "68719476736");
  EXPECT_EQ(afs["lastUpdate"], "2027-01-15T08:10:00Z");

  // Read back by a serve that started an hour later: the sample was 50 minutes before its 0.
  auto back = ParseFairSharingStatus(json{{"fairSharing", fs}}, start + std::chrono::hours(1));
  ASSERT_TRUE(back.has_value());
  EXPECT_DOUBLE_EQ(back->at, 600 - 3600);
  ASSERT_EQ(back->consumed.size(), 3u);
  std::map<std::string, double> got(back->consumed.begin(), back->consumed.end());
  EXPECT_DOUBLE_EQ(got["nvidia.com/gpu"], 3.5);
  EXPECT_DOUBLE_EQ(got["cpu"], 12.25);
  EXPECT_DOUBLE_EQ(got["memory"], 64.0 * (1 << 30));
}

TEST(FairSharingStatus, NeverSampledWritesNothingAndBadStatusReadsAsNone) {
  EXPECT_TRUE(FairSharingStatus(LocalQueueUsage{}, Wall::now()).is_null());
  const Wall::time_point start = Wall::now();
  EXPECT_FALSE(ParseFairSharingStatus(json(), start).has_value());
  EXPECT_FALSE(ParseFairSharingStatus(json{{"pendingWorkloads", 3}}, start).has_value());
  auto status = [](json consumed, json last) {
    return json{{"fairSharing",
                 {{"admissionFairSharingStatus",
                   {{"consumedResources", consumed}, {"lastUpdate", last}}}}}};
  };
  EXPECT_FALSE(
      ParseFairSharingStatus(status({{"nvidia.com/gpu", "x"}}, "2026-01-01T00:00:00Z"), start)
          .has_value());
  EXPECT_FALSE(
      ParseFairSharingStatus(status({{"nvidia.com/gpu", "-2"}}, "2026-01-01T00:00:00Z"), start)
          .has_value());
  EXPECT_FALSE(
      ParseFairSharingStatus(status({{"nvidia.com/gpu", "2"}}, "yesterday"), start).has_value());
  EXPECT_FALSE(ParseFairSharingStatus(status({{"nvidia.com/gpu", "2"}}, 17), start).has_value());
  // Kueue's own quantities read too.
  auto kueue = ParseFairSharingStatus(
      status({{"cpu", "1500m"}, {"memory", "2Gi"}}, "2026-01-01T00:00:00Z"), start);
  ASSERT_TRUE(kueue.has_value());
  EXPECT_DOUBLE_EQ(kueue->consumed[0].second, 1.5);
  EXPECT_DOUBLE_EQ(kueue->consumed[1].second, 2.0 * (1 << 30));
}

}  // namespace
}  // namespace tessera::k8s
