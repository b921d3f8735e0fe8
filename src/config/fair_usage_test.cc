// Usage-based admission fair sharing as read from manifests: SchedulerConfig
// spec.admissionFairSharing, ClusterQueue spec.admissionScope, LocalQueue spec.fairSharing.weight.
#include <string>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

std::string Config(const std::string& spec) {
  return "apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfig\nmetadata: {name: s}\nspec:\n" +
         spec;
}

TEST(FairUsageConfigTest, ReadsKueuesFields) {
  LoadResult r = Load(Config(R"(  admissionFairSharing:
    usageHalfLifeTime: 24h
    usageSamplingInterval: 1m
    resourceWeights: {nvidia.com/gpu: 4, cpu: 0.5}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: shared}
spec:
  namespaceSelector: {}
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-a, namespace: a}
spec: {clusterQueue: shared, fairSharing: {weight: "2"}}
)"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const AdmissionFairSharingConfig& c = r.model.config.admission_fair_sharing;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.usage_half_life, 86400);
  EXPECT_EQ(c.sampling_interval, 60);
  ASSERT_EQ(c.resource_weights.size(), 2u);
  EXPECT_EQ(c.resource_weights[0], std::make_pair(kGpu, 4.0));
  EXPECT_EQ(c.resource_weights[1], std::make_pair(kCpu, 0.5));
  ASSERT_EQ(r.model.cluster_queues.size(), 1u);
  EXPECT_TRUE(r.model.cluster_queues[0].usage_based_admission);
  ASSERT_EQ(r.model.local_queues.size(), 1u);
  EXPECT_EQ(r.model.local_queues[0].fair_weight, 2);
}

TEST(FairUsageConfigTest, AbsentMeansOff) {
  LoadResult r = Load(Config("  placement: binpack\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_FALSE(r.model.config.admission_fair_sharing.enabled);
  EXPECT_EQ(r.model.config.admission_fair_sharing.usage_half_life, 7 * 86400);
  EXPECT_EQ(r.model.config.admission_fair_sharing.sampling_interval, 300);
}

TEST(FairUsageConfigTest, HalfLifeZeroIsSaidOutLoud) {
  LoadResult r = Load(Config("  admissionFairSharing: {usageHalfLifeTime: 0}\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.config.admission_fair_sharing.usage_half_life, 0);
  const Diagnostic* d = Find(r, Sev::kWarning, "no memory");
  ASSERT_NE(d, nullptr) << AllDiagnostics(r);
  EXPECT_NE(d->ToString().find("spec.admissionFairSharing.usageHalfLifeTime"), std::string::npos);
}

TEST(FairUsageConfigTest, ErrorsNameTheField) {
  auto error_of = [](const std::string& text) {
    LoadResult r = Load(text);
    EXPECT_FALSE(r.ok()) << text;
    const Diagnostic* d = Find(r, Sev::kError, "");
    return d ? d->ToString() : "";
  };
  EXPECT_NE(error_of(Config("  admissionFairSharing: {usageSamplingInterval: 0}\n"))
                .find("spec.admissionFairSharing.usageSamplingInterval: must be greater than 0"),
            std::string::npos);
  EXPECT_NE(error_of(Config("  admissionFairSharing: {usageHalfLifeTime: soon}\n"))
                .find("spec.admissionFairSharing.usageHalfLifeTime: expected a duration"),
            std::string::npos);
  EXPECT_NE(error_of(Config("  admissionFairSharing: {resourceWeights: {cpu: -1}}\n"))
                .find("expected a weight from 0 to 1000000"),
            std::string::npos);
  EXPECT_NE(error_of(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: shared}
spec: {namespaceSelector: {}, admissionScope: {admissionMode: Fair}}
)")
                .find("spec.admissionScope.admissionMode: expected UsageBasedAdmissionFairSharing "
                      "or NoAdmissionFairSharing, got \"Fair\""),
            std::string::npos);
  EXPECT_NE(error_of(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: shared, fairSharing: {weight: "0"}}
)")
                .find("spec.fairSharing.weight: a LocalQueue's weight must be greater than 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera
