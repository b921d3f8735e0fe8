// Kueue queue kinds: field values, defaults, and the "Kueue would reject, Tessera instead" rules.
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using testing::SourceDir;
using Sev = Diagnostic::Severity;

TEST(QueuesTest, ClusterQueueFieldsFromFile) {
  LoadResult r = LoadManifestFiles({SourceDir() + "/tests/manifests/cluster.yaml"});
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.cluster_queues.size(), 2u);
  const ClusterQueue& cq = r.model.cluster_queues[0];
  EXPECT_EQ(cq.name, "research");
  EXPECT_EQ(cq.cohort, "org");
  EXPECT_TRUE(cq.namespace_selector.present);
  EXPECT_TRUE(cq.namespace_selector.match_labels.empty());
  EXPECT_EQ(cq.strategy, QueueingStrategy::kStrictFIFO);
  EXPECT_DOUBLE_EQ(cq.fair_weight, 0.5);
  EXPECT_EQ(cq.preemption.within_cluster_queue, WithinClusterQueuePolicy::kLowerPriority);
  EXPECT_EQ(cq.preemption.reclaim_within_cohort, ReclaimPolicy::kAny);
  EXPECT_EQ(cq.preemption.borrow_within_cohort, BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(cq.preemption.max_priority_threshold, 100);
  ASSERT_EQ(cq.resource_groups.size(), 1u);
  const ResourceGroup& g = cq.resource_groups[0];
  EXPECT_EQ(g.covered, (std::vector<ResourceId>{kCpu, kMemory, kGpu}));
  ASSERT_EQ(g.flavors.size(), 2u);
  EXPECT_EQ(g.flavors[0].flavor, "a100");
  const ResourceQuota& gpu = g.flavors[0].resources[2];
  EXPECT_EQ(gpu.resource, kGpu);
  EXPECT_EQ(gpu.nominal, 32);
  EXPECT_EQ(gpu.borrowing_limit, 16);
  EXPECT_EQ(gpu.lending_limit, 8);
  EXPECT_EQ(g.flavors[0].resources[0].nominal, 256000);  // cpu in millicores
  EXPECT_EQ(g.flavors[0].resources[1].nominal, 2LL << 40);
  EXPECT_FALSE(g.flavors[0].resources[0].borrowing_limit.has_value());

  const ClusterQueue& prod = r.model.cluster_queues[1];
  EXPECT_EQ(prod.cohort, "org");  // v1beta2 cohortName
  EXPECT_EQ(prod.strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_DOUBLE_EQ(prod.fair_weight, 2.0);
  EXPECT_EQ(prod.namespace_selector.match_labels.at("team"), "a");
  ASSERT_EQ(prod.namespace_selector.match_expressions.size(), 1u);
  EXPECT_EQ(prod.namespace_selector.match_expressions[0].op, SelectorOp::kNotIn);

  ASSERT_EQ(r.model.cohorts.size(), 1u);
  EXPECT_EQ(r.model.cohorts[0].parent, "company");  // v1beta2 parentName
  EXPECT_EQ(r.model.cohorts[0].resource_groups[0].flavors[0].resources[0].nominal, 8);

  ASSERT_EQ(r.model.local_queues.size(), 2u);
  EXPECT_EQ(r.model.local_queues[0].ns, "team-a");
  EXPECT_EQ(r.model.local_queues[1].ns, "default");
  EXPECT_EQ(r.model.local_queues[1].cluster_queue, "production");

  ASSERT_EQ(r.model.flavors.size(), 2u);
  const ResourceFlavor& f = r.model.flavors[0];
  EXPECT_EQ(f.node_labels.at("accelerator"), "nvidia-a100-80gb");
  ASSERT_EQ(f.node_taints.size(), 1u);
  ASSERT_EQ(f.tolerations.size(), 1u);
  EXPECT_EQ(f.tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(f.topology_name, "default");
}

TEST(QueuesTest, AbsentNamespaceSelectorMatchesNothing) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec: {}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_FALSE(r.model.cluster_queues[0].namespace_selector.present);
  EXPECT_DOUBLE_EQ(r.model.cluster_queues[0].fair_weight, 1.0);
}

TEST(QueuesTest, UnknownEnumListsAllowedValues) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  queueingStrategy: Strict
)");
  EXPECT_TRUE(r.model.cluster_queues.empty());
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:5: error: spec.queueingStrategy: unknown value "
                 "\"Strict\"; allowed: StrictFIFO, BestEffortFIFO"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(QueuesTest, WrongTypesAndQuantities) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: [1]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: b}
spec:
  resourceGroups:
    coveredResources: [cpu]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: c}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: 1.5
      - name: memory
        nominalQuota: -4
)");
  EXPECT_TRUE(r.model.cluster_queues.empty());
  std::string all = AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:11: error: spec.resourceGroups[0].flavors[0].resources[0]"
                 ".nominalQuota: expected a quantity, got a list"),
            nullptr)
      << all;
  EXPECT_NE(
      Find(r, Sev::kError, "t.yaml:18: error: spec.resourceGroups: expected a list, got a map"),
      nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:32: error: spec.resourceGroups[0].flavors[0].resources[1]"
                 ".nominalQuota: quantity must not be negative"),
            nullptr)
      << all;
  EXPECT_EQ(r.count(Sev::kError), 3) << all;
}

TEST(QueuesTest, WebhookRulesBecomeWarnings) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: 4
        borrowingLimit: 2
      - name: nvidia.com/gpu
        nominalQuota: 8
        lendingLimit: 2
      - name: memory
        nominalQuota: 1Gi
    - name: f
      resources:
      - name: cpu
        nominalQuota: 1
  - coveredResources: [nvidia.com/gpu, memory]
    flavors:
    - name: g
      resources:
      - name: memory
        nominalQuota: 1Gi
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  std::string all = AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:13: warning: spec.resourceGroups[0].flavors[0]"
                 ".resources[0].borrowingLimit: borrowingLimit ignored: "
                 "ClusterQueue has no cohort"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning, "lendingLimit ignored: ClusterQueue has no cohort"), nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:17: warning: spec.resourceGroups[0].flavors[0]"
                 ".resources[2].name: resource memory is not in"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:19: warning: spec.resourceGroups[0].flavors[1].name: "
                 "flavor f is already listed at spec.resourceGroups[0]"
                 ".flavors[0]"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 "resource nvidia.com/gpu is already covered by "
                 "spec.resourceGroups[0]"),
            nullptr)
      << all;
  const ClusterQueue& cq = r.model.cluster_queues[0];
  ASSERT_EQ(cq.resource_groups.size(), 2u);
  ASSERT_EQ(cq.resource_groups[0].flavors.size(), 1u);
  const auto& quotas = cq.resource_groups[0].flavors[0].resources;
  ASSERT_EQ(quotas.size(), 2u);
  EXPECT_FALSE(quotas[0].borrowing_limit.has_value());
  EXPECT_FALSE(quotas[1].lending_limit.has_value());
  EXPECT_EQ(cq.resource_groups[1].covered, std::vector<ResourceId>{kMemory});
}

TEST(QueuesTest, LendingLimitAboveNominalIsClamped) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: c
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: 4
        lendingLimit: 6
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.cluster_queues[0].resource_groups[0].flavors[0].resources[0].lending_limit,
            4000);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:13: warning: spec.resourceGroups[0].flavors[0]"
                 ".resources[0].lendingLimit: lendingLimit is larger than "
                 "nominalQuota"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(QueuesTest, TooManyResourceNamesIsAnErrorNamingThePlace) {
  std::string text = R"(apiVersion: v1
kind: Node
metadata: {name: n}
status:
  allocatable:
)";
  for (int i = 0; i < 30; ++i) text += "    example.com/r" + std::to_string(i) + ": 1\n";
  LoadResult r = Load(text);
  EXPECT_TRUE(r.model.nodes.empty());
  const Diagnostic* d = Find(r, Sev::kError, "too many distinct resource names");
  ASSERT_NE(d, nullptr) << AllDiagnostics(r);
  EXPECT_EQ(d->path.rfind("status.allocatable[\"example.com/r", 0), 0u) << d->path;
}

TEST(QueuesTest, PriorityClassesAndConfigErrors) {
  LoadResult r = Load(R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: p}
preemptionPolicy: Sometimes
value: 1
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: q}
---
apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  placement: pack
---
apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: t}
---
apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: u}
)");
  std::string all = AllDiagnostics(r);
  EXPECT_TRUE(r.model.priority_classes.empty());
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:4: error: preemptionPolicy: unknown value \"Sometimes\"; "
                 "allowed: PreemptLowerPriority, Never"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:7: error: value: required field is missing"), nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:15: error: spec.placement: unknown value \"pack\"; "
                 "allowed: binpack, spread"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:21: error: metadata.name: only one SchedulerConfig may "
                 "be given; the first is at t.yaml:17"),
            nullptr)
      << all;
  EXPECT_FALSE(r.model.config.fair_sharing);
  EXPECT_EQ(r.model.config.placement, PlacementPolicy::kBinpack);
}

TEST(QueuesTest, PlacementTesseraPlan) {
  LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec: {placement: TesseraPlan}
)");
  EXPECT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.config.placement, PlacementPolicy::kTesseraPlan);
}

// Issue 18: Kueue's quotaCheckStrategy; IgnoreUndeclared (Tessera's default) unless set.
TEST(QueuesTest, QuotaCheckStrategy) {
  LoadResult ignore = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec: {quotaCheckStrategy: BlockUndeclared}
)");
  EXPECT_TRUE(ignore.ok()) << AllDiagnostics(ignore);
  EXPECT_TRUE(ignore.model.config.block_undeclared);
  LoadResult unset = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec: {}
)");
  EXPECT_FALSE(unset.model.config.block_undeclared);
}

TEST(QueuesTest, ActionsAsAListOrAVolcanoString) {
  LoadResult list = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  actions: [admit, scale-up]
)");
  EXPECT_EQ(list.model.config.actions, (std::vector<std::string>{"admit", "scale-up"}))
      << AllDiagnostics(list);
  LoadResult text = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  actions: "admit, preempt"
)");
  EXPECT_EQ(text.model.config.actions, (std::vector<std::string>{"admit", "preempt"}))
      << AllDiagnostics(text);
  LoadResult none = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
)");
  EXPECT_EQ(none.model.config.actions, (std::vector<std::string>{"admit", "preempt", "scale-up"}));
}

TEST(QueuesTest, ActionsErrors) {
  auto error_of = [](const std::string& actions) {
    LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  actions: )" + actions +
                        "\n");
    return AllDiagnostics(r);
  };
  EXPECT_NE(error_of("[admit, allocate]")
                .find("spec.actions: unknown action \"allocate\"; allowed: admit, preempt, "
                      "consolidate, scale-up"),
            std::string::npos);
  EXPECT_NE(error_of("\"admit,admit\"").find("action \"admit\" listed twice"), std::string::npos);
  EXPECT_NE(error_of("[preempt]").find("must list \"admit\""), std::string::npos);
}

TEST(QueuesTest, ConsolidationFieldsAndTheirErrors) {
  LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  actions: [admit, consolidate]
  consolidation: {maxLostWork: 5m, maxMovesPerCycle: 4, maxNodesPerHead: 2, maxHeadsPerCycle: 3}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q, annotations: {tessera.dev/consolidation: "false"}}
spec: {namespaceSelector: {}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.config.actions, (std::vector<std::string>{"admit", "consolidate"}));
  const ConsolidationConfig& c = r.model.config.consolidation;
  EXPECT_DOUBLE_EQ(c.max_lost_work_seconds, 300);
  EXPECT_EQ(c.max_moves_per_cycle, 4);
  EXPECT_EQ(c.max_nodes_per_head, 2);
  EXPECT_EQ(c.max_heads_per_cycle, 3);
  ASSERT_EQ(r.model.cluster_queues.size(), 1u);
  EXPECT_EQ(r.model.cluster_queues[0].consolidation, false);
  auto error_of = [](const std::string& spec) {
    return AllDiagnostics(Load(R"(apiVersion: tessera.dev/v1alpha1
kind: SchedulerConfig
metadata: {name: s}
spec:
  )" + spec + "\n"));
  };
  EXPECT_NE(
      error_of("consolidation: {maxMovesPerCycle: 0}").find("spec.consolidation.maxMovesPerCycle"),
      std::string::npos);
  EXPECT_NE(error_of("consolidation: {maxLostWork: -1}").find("spec.consolidation.maxLostWork"),
            std::string::npos);
  EXPECT_NE(
      error_of("consolidation: {maxMoves: 1}").find("spec.consolidation.maxMoves: unknown field"),
      std::string::npos);
  EXPECT_NE(error_of("consolidation: [1]").find("spec.consolidation"), std::string::npos);
  LoadResult bad = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q, annotations: {tessera.dev/consolidation: "yes"}}
spec: {namespaceSelector: {}}
)");
  EXPECT_NE(AllDiagnostics(bad).find("tessera.dev/consolidation"), std::string::npos);
}

TEST(ReferencesTest, CohortCycleIsAnErrorThatNamesTheCohorts) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: a}
spec: {parent: b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: b}
spec: {parent: c}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: c}
spec: {parent: a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: root}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  std::vector<Diagnostic> refs = CheckReferences(r.model);
  int errors = 0;
  for (const Diagnostic& d : refs) {
    if (d.severity != Sev::kError) continue;
    ++errors;
    EXPECT_NE(d.ToString().find("cohorts form a cycle (a -> b -> c -> a)"), std::string::npos)
        << d.ToString();
  }
  EXPECT_EQ(errors, 1);  // said once, not once per cohort of the cycle
}

TEST(ReferencesTest, TwoGlobalDefaultPriorityClassesAreAnError) {
  LoadResult r = Load(R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: one}
value: 10
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: two}
value: 20
globalDefault: true
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  std::vector<Diagnostic> refs = CheckReferences(r.model);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].severity, Sev::kError);
  EXPECT_NE(refs[0].ToString().find(
                "PriorityClasses one and two are both globalDefault; Kubernetes admits only one"),
            std::string::npos)
      << refs[0].ToString();
}

// Issue 15: stopPolicy, admissionChecks and flavorFungibility were dropped without a word
// (flavorFungibility is read since issue 18).
TEST(QueuesTest, StopPolicyIsReadAndOtherComponentsFieldsAreNoticed) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  stopPolicy: HoldAndDrain
  admissionChecks: [prov-req]
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: held}
spec:
  stopPolicy: Hold
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: bad}
spec:
  stopPolicy: Drain
)");
  ASSERT_EQ(r.model.cluster_queues.size(), 2u) << AllDiagnostics(r);
  EXPECT_EQ(r.model.cluster_queues[0].stop_policy, StopPolicy::kHoldAndDrain);
  EXPECT_EQ(r.model.cluster_queues[1].stop_policy, StopPolicy::kHold);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:7: notice: spec.admissionChecks: admission checks are run by their own "
                 "controllers"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_EQ(r.model.cluster_queues[0].flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(r.model.cluster_queues[0].flavor_fungibility.when_can_preempt,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(r.model.cluster_queues[1].flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kMayStopSearch);
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:21: error: spec.stopPolicy: unknown value \"Drain\"; allowed: None, "
                 "Hold, HoldAndDrain"),
            nullptr)
      << AllDiagnostics(r);
}

// Issue 18: flavorFungibility with Kueue's old names, a preference, and a preference Kueue
// rejects (the policies are not both TryNextFlavor).
TEST(QueuesTest, FlavorFungibilityIsRead) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: old-names}
spec:
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: pob}
spec:
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    whenCanPreempt: TryNextFlavor
    preference: PreemptionOverBorrowing
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: ignored}
spec:
  flavorFungibility: {whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}
)");
  ASSERT_EQ(r.model.cluster_queues.size(), 3u) << AllDiagnostics(r);
  const FlavorFungibility& old_names = r.model.cluster_queues[0].flavor_fungibility;
  EXPECT_EQ(old_names.when_can_borrow, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(old_names.when_can_preempt, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(r.model.cluster_queues[1].flavor_fungibility.preference,
            FungibilityPreference::kPreemptionOverBorrowing);
  EXPECT_EQ(r.model.cluster_queues[2].flavor_fungibility.preference,
            FungibilityPreference::kBorrowingOverPreemption);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:20: warning: spec.flavorFungibility.preference: ignored: a preference "
                 "needs whenCanBorrow and whenCanPreempt both TryNextFlavor"),
            nullptr)
      << AllDiagnostics(r);
}

// Issue 15: ResourceQuota and LimitRange are the API server's admission, and the notice says so.
TEST(QueuesTest, ResourceQuotaAndLimitRangeSayWhoEnforcesThem) {
  LoadResult r = Load(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: rq, namespace: team-a}
spec: {hard: {requests.nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec: {limits: [{type: Container, default: {cpu: "1"}}]}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  for (const char* want : {"t.yaml:1: notice: skipped ResourceQuota rq (v1): Tessera does not use "
                           "this kind; the API server's admission enforces it",
                           "t.yaml:6: notice: skipped LimitRange lr (v1): Tessera does not use "
                           "this kind; the API server's admission enforces it"})
    EXPECT_NE(Find(r, Sev::kNotice, want), nullptr) << want << "\n" << AllDiagnostics(r);
}

// Issue 18: Kueue keeps a workload asking for a resource its ClusterQueue does not cover
// pending (BlockUndeclared); Tessera's default does not, and says so once per queue and resource.
TEST(CheckReferencesTest, NoticesResourcesAClusterQueueDoesNotCover) {
  const std::string text = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata: {name: a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}}}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: b, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}
)";
  LoadResult r = Load(text);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  LoadResult refs;
  refs.diagnostics = CheckReferences(r.model);
  std::string all = AllDiagnostics(refs);
  ASSERT_EQ(refs.diagnostics.size(), 1u) << all;  // once for cq and cpu, not per workload
  EXPECT_NE(Find(refs, Sev::kNotice,
                 "t.yaml:19: notice: Job default/a asks for cpu, which ClusterQueue cq does not "
                 "cover: Kueue keeps such a workload pending"),
            nullptr)
      << all;
  // With Kueue's strategy the engine keeps them pending, and there is nothing to point out.
  LoadResult blocked = Load(text +
                            "---\napiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfig\n"
                            "metadata: {name: s}\nspec: {quotaCheckStrategy: BlockUndeclared}\n");
  ASSERT_TRUE(blocked.ok()) << AllDiagnostics(blocked);
  EXPECT_TRUE(CheckReferences(blocked.model).empty());
}

}  // namespace
}  // namespace tessera
