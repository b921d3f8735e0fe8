// KAI's and Volcano's queue markers and Queues: the markers' precedence, the conversion to
// Kueue's kinds (config/foreign_queues.h), the loader's implicit LocalQueues, and the upstream
// examples when /work/shared/manifests/upstream (TESSERA_UPSTREAM_MANIFESTS) is there.
#include "config/foreign_queues.h"

#include <cstdlib>
#include <filesystem>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"
#include "model/queue_markers.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

const Workload* ByName(const Model& m, const std::string& name) {
  for (const auto& w : m.workloads)
    if (w.name == name) return &w;
  return nullptr;
}

const ClusterQueue* Cq(const Model& m, const std::string& name) {
  for (const auto& q : m.cluster_queues)
    if (q.name == name) return &q;
  return nullptr;
}

const Cohort* CohortOf(const Model& m, const std::string& name) {
  for (const auto& c : m.cohorts)
    if (c.name == name) return &c;
  return nullptr;
}

const ResourceQuota* QuotaOf(const std::vector<ResourceGroup>& groups, ResourceId r) {
  for (const auto& g : groups)
    for (const auto& f : g.flavors)
      for (const auto& q : f.resources)
        if (q.resource == r) return &q;
  return nullptr;
}

TEST(QueueMarkers, PrecedenceAndConflicts) {
  Labels labels{{"kai.scheduler/queue", "kai-q"}, {"tessera.dev/queue", "t-q"}};
  Labels annotations{{"scheduling.volcano.sh/queue-name", "v-q"}};
  std::string conflict;
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers(labels, annotations), &conflict), "t-q");
  EXPECT_NE(conflict.find("label tessera.dev/queue=t-q and label kai.scheduler/queue=kai-q"),
            std::string::npos)
      << conflict;
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers({{"kai.scheduler/queue", "a"}},
                                              {{"scheduling.volcano.sh/queue-name", "a"}}),
                             &conflict),
            "a");
  EXPECT_EQ(conflict, "");
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers({}, {{"scheduling.volcano.sh/queue-name", "v"}}),
                             nullptr),
            "v");
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers({{"runai/queue", "old"}}, {}), nullptr), "old");
  // Kueue's label wins over its annotation, which wins over everything else.
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers({{"kueue.x-k8s.io/queue-name", "k"}},
                                              {{"kueue.x-k8s.io/queue-name", "ka"}}),
                             nullptr),
            "k");
  // The KAI key as an annotation is not a marker: KAI reads the label.
  EXPECT_EQ(QueueFromMarkers(FindQueueMarkers({}, {{"kai.scheduler/queue", "x"}}), nullptr), "");
}

TEST(QueueMarkers, LoaderReadsKaiAndVolcanoMarkers) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata:
  name: kai-pod
  labels: {kai.scheduler/queue: team-a}
spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: kai-job}
spec:
  template:
    metadata:
      labels: {kai.scheduler/queue: team-b}
    spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vc}
spec:
  replicas: 1
  template:
    metadata:
      annotations: {scheduling.volcano.sh/queue-name: q1}
    spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: both
  labels: {kueue.x-k8s.io/queue-name: kq, kai.scheduler/queue: other}
spec:
  template:
    spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: job-and-template
  labels: {tessera.dev/queue: mine}
spec:
  template:
    metadata:
      labels: {kai.scheduler/queue: theirs}
    spec: {containers: [{name: c}]}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(ByName(r.model, "kai-pod")->queue_name, "team-a");
  EXPECT_EQ(ByName(r.model, "kai-job")->queue_name, "team-b");
  EXPECT_EQ(ByName(r.model, "vc-0")->queue_name, "q1");
  EXPECT_EQ(ByName(r.model, "both")->queue_name, "kq");
  EXPECT_EQ(ByName(r.model, "job-and-template")->queue_name, "mine");
  EXPECT_NE(Find(r, Sev::kWarning,
                 "label kueue.x-k8s.io/queue-name=kq and label kai.scheduler/queue=other"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning, "the pod template names queue theirs and the Job names queue "
                                   "mine; Tessera uses mine"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(QueueMarkers, KubeflowTemplatesAfterSchedulingPolicy) {
  LoadResult r = Load(R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata:
          labels: {kai.scheduler/queue: team-a}
        spec: {containers: [{name: pytorch}]}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt2}
spec:
  runPolicy:
    schedulingPolicy: {queue: vq}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata:
          labels: {kai.scheduler/queue: team-a}
        spec: {containers: [{name: pytorch}]}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(ByName(r.model, "pt")->queue_name, "team-a");
  EXPECT_EQ(ByName(r.model, "pt2")->queue_name, "vq");
  EXPECT_NE(Find(r, Sev::kWarning, "the pod template names queue team-a and the PyTorchJob names "
                                   "queue vq"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(QueueMarkers, VolcanoJobSpecQueueWinsOverTemplates) {
  LoadResult r = Load(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  queue: research
  tasks:
  - name: w
    replicas: 1
    template:
      metadata:
        annotations: {scheduling.volcano.sh/queue-name: research}
      spec: {containers: [{name: c}]}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(ByName(r.model, "vj")->queue_name, "research");
  EXPECT_EQ(r.count(Sev::kWarning), 0) << AllDiagnostics(r);
}

constexpr const char* kKaiQueues = R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: org}
spec:
  resources:
    gpu: {quota: 8, limit: 12, overQuotaWeight: 2}
    cpu: {quota: -1, limit: -1}
    memory: {quota: 64000, limit: -1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  parentQueue: org
  priority: 100
  resources:
    gpu: {quota: 2, limit: 4, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  parentQueue: org
  resources:
    gpu: {quota: 4, limit: -1, lendingLimit: 1}
)";

TEST(ForeignQueues, KaiHierarchyBecomesCohortsAndClusterQueues) {
  LoadResult r = Load(kKaiQueues);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.foreign_queues.size(), 3u);
  const Cohort* root = CohortOf(r.model, "kai-root");
  const Cohort* org = CohortOf(r.model, "org");
  ASSERT_NE(root, nullptr) << AllDiagnostics(r);
  ASSERT_NE(org, nullptr);
  EXPECT_EQ(org->parent, "kai-root");
  EXPECT_EQ(org->fair_weight, 2.0);
  // org deserves 8 GPUs, its children hold 6: the Cohort adds 2; its limit 12 lets the whole
  // subtree borrow 4 beyond 8.
  const ResourceQuota* og = QuotaOf(org->resource_groups, kGpu);
  ASSERT_NE(og, nullptr);
  EXPECT_EQ(og->nominal, 2);
  EXPECT_EQ(og->borrowing_limit, 4);
  EXPECT_EQ(QuotaOf(org->resource_groups, kMemory)->nominal, 64000LL * 1000000);
  EXPECT_EQ(QuotaOf(org->resource_groups, kCpu)->nominal, 0);
  const ClusterQueue* a = Cq(r.model, "team-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->cohort, "org");
  EXPECT_EQ(QuotaOf(a->resource_groups, kGpu)->nominal, 2);
  EXPECT_EQ(QuotaOf(a->resource_groups, kGpu)->borrowing_limit, 2);
  EXPECT_EQ(a->source, "t.yaml:10");  // its document, as the loader counts it
  const ClusterQueue* b = Cq(r.model, "team-b");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(QuotaOf(b->resource_groups, kGpu)->borrowing_limit.has_value());
  EXPECT_EQ(QuotaOf(b->resource_groups, kGpu)->lending_limit, 1);
  EXPECT_NE(Find(r, Sev::kNotice, "KAI Queue team-a: spec.priority: over-quota priority"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "KAI Queue org: spec.resources.cpu.quota: -1"), nullptr);
  EXPECT_NE(Find(r, Sev::kNotice, "KAI Queue team-a: converted to ClusterQueue team-a (cohort "
                                  "org), nominalQuota nvidia.com/gpu 2 (borrowingLimit 2)"),
            nullptr)
      << AllDiagnostics(r);
  // The converted objects hold together: no dangling names.
  for (const Diagnostic& d : CheckReferences(r.model))
    EXPECT_NE(d.severity, Sev::kError) << d.ToString();
}

TEST(ForeignQueues, VolcanoQueues) {
  LoadResult r = Load(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 3
  deserved: {cpu: "8", nvidia.com/gpu: 4}
  capability: {cpu: "16", nvidia.com/gpu: 6}
  guarantee:
    resource: {nvidia.com/gpu: 1}
  reclaimable: true
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: dev}
spec:
  parent: root
  capability: {nvidia.com/gpu: 2}
  priority: 5
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: root}
spec:
  weight: 1
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const ClusterQueue* q = Cq(r.model, "research");
  ASSERT_NE(q, nullptr) << AllDiagnostics(r);
  EXPECT_EQ(q->cohort, "root");
  EXPECT_EQ(q->fair_weight, 3.0);
  const ResourceQuota* g = QuotaOf(q->resource_groups, kGpu);
  EXPECT_EQ(g->nominal, 4);
  EXPECT_EQ(g->borrowing_limit, 2);
  EXPECT_EQ(g->lending_limit, 3);
  EXPECT_EQ(QuotaOf(q->resource_groups, kCpu)->nominal, 8000);
  const ClusterQueue* dev = Cq(r.model, "dev");
  ASSERT_NE(dev, nullptr);
  EXPECT_EQ(QuotaOf(dev->resource_groups, kGpu)->nominal, 0);
  EXPECT_EQ(QuotaOf(dev->resource_groups, kGpu)->borrowing_limit, 2);
  EXPECT_EQ(Cq(r.model, "root"), nullptr);
  EXPECT_NE(CohortOf(r.model, "root"), nullptr);
  EXPECT_NE(Find(r, Sev::kNotice, "Volcano Queue dev: spec.priority: no Kueue equivalent"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "Volcano Queue root is the cluster"), nullptr);
}

TEST(ForeignQueues, ImplicitLocalQueueForAMarkedWorkload) {
  std::string text = std::string(kKaiQueues) + R"(---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels: {kai.scheduler/queue: team-a}
spec:
  template:
    spec: {containers: [{name: c}]}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: to-parent
  labels: {kai.scheduler/queue: org}
spec:
  template:
    spec: {containers: [{name: c}]}
)";
  LoadResult r = Load(text);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.local_queues.size(), 1u) << AllDiagnostics(r);
  EXPECT_EQ(r.model.local_queues[0].ns, "ml");
  EXPECT_EQ(r.model.local_queues[0].cluster_queue, "team-a");
  EXPECT_NE(Find(r, Sev::kNotice, "LocalQueue ml/team-a created for KAI Queue team-a"), nullptr)
      << AllDiagnostics(r);
  // A parent queue holds no jobs, in KAI as in Kueue: the reference check says so.
  bool said = false;
  for (const Diagnostic& d : CheckReferences(r.model))
    said = said || d.ToString().find("names LocalQueue org") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(ForeignQueues, ConvertPrintsLocalQueuesPerNamespaceAndLoadsBack) {
  LoadResult r = Load(kKaiQueues);
  ConvertOptions options;
  options.flavor = "gpus";
  options.namespaces = {"a", "b"};
  ConvertedQueues out = ConvertForeignQueues(r.foreign_queues, options);
  EXPECT_EQ(out.leaf_queues, (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_EQ(out.parents, (std::vector<std::string>{"org"}));
  LoadResult back = Load(out.yaml, "converted.yaml");
  ASSERT_TRUE(back.ok()) << AllDiagnostics(back);
  EXPECT_EQ(back.count(Sev::kWarning), 0) << AllDiagnostics(back);
  EXPECT_EQ(back.model.local_queues.size(), 4u);
  EXPECT_EQ(back.model.cluster_queues.size(), 2u);
  EXPECT_EQ(back.model.cohorts.size(), 2u);
  ASSERT_EQ(back.model.flavors.size(), 1u);
  EXPECT_EQ(back.model.flavors[0].name, "gpus");
  EXPECT_TRUE(CheckReferences(back.model).empty());
}

TEST(ForeignQueues, CyclesAndDeepChainsGoUnderTheRoot) {
  std::string text = R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: a}
spec: {parent: b}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: b}
spec: {parent: a}
)";
  for (int i = 0; i < 200; ++i) {
    text += "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q" +
            std::to_string(i) + "}\n" +
            (i ? "spec: {parentQueue: q" + std::to_string(i - 1) + "}\n" : "");
  }
  LoadResult r = Load(text);
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "Volcano Queue a: spec.parent: the parent chain comes back"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "KAI Queue q199: spec.parentQueue: the parent chain is deeper "
                                  "than 64 levels"),
            nullptr);
  for (const Diagnostic& d : CheckReferences(r.model))
    EXPECT_NE(d.severity, Sev::kError) << d.ToString();
}

TEST(ForeignQueues, BadKaiAmountIsAnError) {
  LoadResult r = Load(R"(apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: q}
spec:
  resources:
    gpu: {quota: -2}
)");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Find(r, Sev::kError, "spec.resources.gpu.quota: expected a non-negative number, or -1"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(ForeignQueues, AParentThatIsNoNameIsAnError) {
  LoadResult r = Load(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec: {parent: "a\"\nkind: Evil"}
)");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Find(r, Sev::kError, "spec.parent: \"a"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "is not a queue name"), nullptr);
  EXPECT_TRUE(r.foreign_queues.empty());
}

// The upstream examples (tests/manifests/upstream README): each queue file converts and loads.
TEST(ForeignQueues, UpstreamQueueFilesWhenPresent) {
  const char* env = std::getenv("TESSERA_UPSTREAM_MANIFESTS");
  const std::string dir = env ? env : "/work/shared/manifests/upstream";
  const std::vector<std::string> files = {
      dir + "/KAI-Scheduler/docs/quickstart/default-queues.yaml",
      dir + "/KAI-Scheduler/docs/priority/example/limited-queue.yaml",
      dir + "/volcano/example/hierarchical-jobs/queues.yaml",
      dir + "/volcano/example/deployment/queue.yaml",
  };
  for (const std::string& f : files) {
    if (!std::filesystem::exists(f)) GTEST_SKIP() << f << " is not here";
    LoadResult r = LoadManifestFiles({f});
    ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
    EXPECT_FALSE(r.foreign_queues.empty()) << f;
    EXPECT_FALSE(r.model.cluster_queues.empty()) << f;
    EXPECT_EQ(r.count(Sev::kWarning), 0) << AllDiagnostics(r);
  }
}

}  // namespace
}  // namespace tessera
