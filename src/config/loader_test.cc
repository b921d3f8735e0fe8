// The loader's driver: documents, kinds, errors with file:line:path, notices, duplicates, files.
#include "config/loader.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using testing::SourceDir;
using Sev = Diagnostic::Severity;

TEST(DiagnosticTest, ToStringFormats) {
  Diagnostic d{Sev::kError, "a.yaml", 12, "spec.count", "bad"};
  EXPECT_EQ(d.ToString(), "a.yaml:12: error: spec.count: bad");
  d.line = 0;
  d.path = "";
  d.severity = Sev::kWarning;
  EXPECT_EQ(d.ToString(), "a.yaml: warning: bad");
  d.severity = Sev::kNotice;
  d.line = 3;
  EXPECT_EQ(d.ToString(), "a.yaml:3: notice: bad");
}

TEST(LoaderTest, LoadsClusterFile) {
  LoadResult r = LoadManifestFiles({SourceDir() + "/tests/manifests/cluster.yaml"});
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.count(Sev::kWarning), 0) << AllDiagnostics(r);
  const Model& m = r.model;
  ASSERT_EQ(m.nodes.size(), 10u);
  EXPECT_EQ(m.nodes[0].name, "cpu-0");
  EXPECT_EQ(m.nodes[0].allocatable[kCpu], 31500);  // allocatable wins over capacity
  EXPECT_EQ(m.nodes[0].allocatable[kMemory], 120LL << 30);
  ASSERT_EQ(m.nodes[0].taints.size(), 1u);
  EXPECT_EQ(m.nodes[0].taints[0].value, "infra");
  EXPECT_EQ(m.nodes[1].gpu_model, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(m.nodes[1].gpu_count(), 8);
  EXPECT_EQ(m.nodes[1].allocatable[kPods], 110);  // kubelet default when not given
  EXPECT_EQ(m.nodes[1].allocatable[ResourceRegistry::Global().Find("rdma/ib")], 4);
  EXPECT_EQ(m.nodes[1].labels.at("kubernetes.io/hostname"), "h100-0");
  EXPECT_NE(m.nodes[1].source.find("cluster.yaml:23"), std::string::npos) << m.nodes[1].source;
  EXPECT_EQ(m.namespace_labels.at("team-a").at("kubernetes.io/metadata.name"), "team-a");
  EXPECT_EQ(m.namespace_labels.at("team-a").at("team"), "a");
  ASSERT_EQ(m.topologies.size(), 1u);
  EXPECT_EQ(m.topologies[0].levels,
            (std::vector<std::string>{"topology.example.com/rack", "kubernetes.io/hostname"}));
  EXPECT_TRUE(m.config.fair_sharing);
  EXPECT_EQ(m.config.placement, PlacementPolicy::kSpread);
  EXPECT_EQ(m.config.fair_sharing_strategies,
            std::vector<FairSharingStrategy>{FairSharingStrategy::kLessThanInitialShare});
  ASSERT_EQ(m.priority_classes.size(), 2u);
  EXPECT_EQ(m.priority_classes[0].value, 1000);
  EXPECT_TRUE(m.priority_classes[0].global_default);
  EXPECT_EQ(m.priority_classes[1].value, -10);
  EXPECT_TRUE(m.priority_classes[1].preemption_never);
  ASSERT_EQ(m.workload_priority_classes.size(), 1u);
  EXPECT_EQ(m.workload_priority_classes[0].value, 10000);
  EXPECT_TRUE(CheckReferences(m).empty());
}

TEST(LoaderTest, NodePoolExpandsTemplates) {
  LoadResult r = LoadManifestFiles({SourceDir() + "/tests/manifests/cluster.yaml"});
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const Node& n5 = r.model.nodes[2 + 5];
  EXPECT_EQ(n5.name, "a100-5");
  EXPECT_EQ(n5.labels.at("topology.example.com/rack"), "r1");
  EXPECT_EQ(n5.labels.at("topology.example.com/slot"), "s1");
  EXPECT_EQ(n5.labels.at("nvidia.com/gpu.product"), "A100-SXM4-80GB");
  EXPECT_EQ(n5.gpu_model, "A100-SXM4-80GB");
  EXPECT_EQ(n5.gpu_count(), 8);
  EXPECT_EQ(n5.allocatable[kCpu], 64000);
  EXPECT_EQ(n5.allocatable[kMemory], 512LL << 30);
  ASSERT_EQ(n5.taints.size(), 1u);
  EXPECT_EQ(n5.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(r.model.nodes[2 + 3].labels.at("topology.example.com/rack"), "r0");
}

TEST(LoaderTest, NodePoolNamePrefixAndBadPlaceholder) {
  LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: p}
spec:
  count: 2
  namePrefix: gpu-node-
  capacity: {cpu: 1}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: q}
spec:
  count: 2
  labels:
    rack: "r{idx}"
)");
  ASSERT_EQ(r.model.nodes.size(), 2u);
  EXPECT_EQ(r.model.nodes[1].name, "gpu-node-1");
  const Diagnostic* d =
      Find(r, Sev::kError, "t.yaml:15: error: spec.labels.rack: unknown placeholder {idx}");
  EXPECT_NE(d, nullptr) << AllDiagnostics(r);
}

TEST(LoaderTest, LargeNodePoolLoadsFast) {
  auto start = std::chrono::steady_clock::now();
  LoadResult r = Load(R"(apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: big}
spec:
  count: 10000
  labels: {rack: "r{index/4}", zone: "z{index%3}"}
  capacity: {cpu: 64, memory: 512Gi, nvidia.com/gpu: 8}
)");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.nodes.size(), 10000u);
  EXPECT_EQ(r.model.nodes[9999].name, "big-9999");
  EXPECT_EQ(r.model.nodes[9999].labels.at("rack"), "r2499");
  // Generous even under sanitizers; quadratic behaviour would take minutes.
  EXPECT_LT(seconds, 10.0);
}

TEST(LoaderTest, BadDocumentsAreDroppedOthersLoad) {
  LoadResult r = LoadManifestFiles({SourceDir() + "/tests/manifests/bad.yaml"});
  std::string all = AllDiagnostics(r);
  ASSERT_EQ(r.model.flavors.size(), 2u) << all;
  EXPECT_EQ(r.model.flavors[0].name, "good-1");
  EXPECT_EQ(r.model.flavors[1].name, "good-2");
  EXPECT_TRUE(r.model.cluster_queues.empty());
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_EQ(r.count(Sev::kError), 4) << all;
  EXPECT_NE(all.find("bad.yaml:8: error: kind: unknown kind ClusterQeue in kueue.x-k8s.io; did "
                     "you mean ClusterQueue?"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad.yaml:24: error: spec.resourceGroups[0].flavors[0].resources[0]."
                     "nominalQuota: invalid quantity \"12 GB\""),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad.yaml:31: error: spec.parallelism: expected an integer, got \"abc\""),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad.yaml:37: notice: skipped ConfigMap skipped (v1): Tessera does not use "
                     "this kind"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("bad.yaml:44: error: YAML syntax error"), std::string::npos) << all;
}

TEST(LoaderTest, RequiredFields) {
  LoadResult r = Load(R"(kind: Node
metadata: {name: a}
---
apiVersion: v1
metadata: {name: a}
---
apiVersion: v1
kind: Node
metadata:
  labels: {a: b}
---
apiVersion: v1
kind: Node
)");
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:1: error: apiVersion: required field is missing"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:4: error: kind: required field is missing"), nullptr);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:10: error: metadata.name: required field is missing"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:12: error: metadata: required field is missing"), nullptr)
      << AllDiagnostics(r);
  EXPECT_TRUE(r.model.nodes.empty());
}

TEST(LoaderTest, NullDocumentsAndCommentsAreSkipped) {
  LoadResult r = Load(R"(# only a comment
---
---
apiVersion: v1
kind: Namespace
metadata: {name: x}
...
---
# trailing
)");
  EXPECT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.namespace_labels.count("x"), 1u);
}

TEST(LoaderTest, NonObjectDocumentIsAnError) {
  LoadResult r = Load("- a\n- b\n---\njust text\n");
  EXPECT_EQ(r.count(Sev::kError), 2) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:1: error: expected a Kubernetes object"), nullptr);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:4: error: expected a Kubernetes object"), nullptr);
}

TEST(LoaderTest, KindsOfOtherGroupsAreSkippedWithNotice) {
  LoadResult r = Load(R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: ac}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
---
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: m}
)");
  EXPECT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.count(Sev::kNotice), 5) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:1: notice: skipped NetworkPolicy (networking.k8s.io/v1)"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:5: notice: skipped DaemonSet ds (apps/v1)"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "skipped XGBoostJob m"), nullptr);
}

TEST(LoaderTest, TypoInGroupIsAWarningWithSuggestion) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
)");
  EXPECT_TRUE(r.ok());
  EXPECT_NE(Find(r, Sev::kWarning, "did you mean kueue.x-k8s.io/v1beta1?"), nullptr)
      << AllDiagnostics(r);
}

TEST(LoaderTest, UnknownKindInCoreGroupSuggests) {
  LoadResult r = Load("apiVersion: v1\nkind: Nod\nmetadata: {name: a}\n");
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:2: error: kind: unknown kind Nod in core v1; did you "
                 "mean Node?"),
            nullptr)
      << AllDiagnostics(r);
  r = Load("apiVersion: batch/v1\nkind: Zzzzzzzz\nmetadata: {name: a}\n");
  const Diagnostic* d = Find(r, Sev::kError, "unknown kind Zzzzzzzz in batch");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->message.find("did you mean"), std::string::npos);
}

TEST(LoaderTest, DuplicateObjectIsAnErrorOnTheSecond) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: a}
spec: {clusterQueue: x}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: b}
spec: {clusterQueue: x}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: a}
spec: {clusterQueue: y}
)");
  ASSERT_EQ(r.model.local_queues.size(), 2u);
  EXPECT_EQ(r.model.local_queues[0].cluster_queue, "x");
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:11: error: metadata.name: LocalQueue a/q is already defined at t.yaml:1"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(LoaderTest, DuplicatesAcrossCallsAndNodePools) {
  LoadResult r;
  LoadManifestText("apiVersion: v1\nkind: Node\nmetadata: {name: p-1}\n", "a.yaml", r);
  LoadManifestText(R"(apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: p}
spec: {count: 3}
---
apiVersion: v1
kind: Node
metadata: {name: p-1}
)",
                   "b.yaml", r);
  EXPECT_EQ(r.model.nodes.size(), 1u);
  EXPECT_NE(Find(r, Sev::kError,
                 "b.yaml:1: error: metadata.name: node p-1 is already defined at "
                 "a.yaml:1"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kError, "b.yaml:6: error: metadata.name: Node p-1 is already defined"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(LoaderTest, ListItemsLoadOneByOne) {
  LoadResult r = Load(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a}
- apiVersion: v1
  kind: Node
  metadata: {name: b}
  spec: {unschedulable: maybe}
- apiVersion: v1
  kind: Node
  metadata: {name: c}
  spec: {unschedulable: true}
)");
  ASSERT_EQ(r.model.nodes.size(), 2u) << AllDiagnostics(r);
  EXPECT_TRUE(r.model.nodes[1].unschedulable);
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:10: error: spec.unschedulable: expected true or false"),
            nullptr)
      << AllDiagnostics(r);
}

TEST(LoaderTest, GenerateNameGivesStableNames) {
  LoadResult r = Load(R"(apiVersion: batch/v1
kind: Job
metadata: {generateName: sweep-}
spec:
  template:
    spec:
      containers: [{name: c}]
)");
  ASSERT_EQ(r.model.workloads.size(), 1u) << AllDiagnostics(r);
  EXPECT_EQ(r.model.workloads[0].name, "sweep-00001");
}

TEST(LoaderTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: " + std::string(10000, '[') + "\n";
  LoadResult r = Load(deep + "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n");
  EXPECT_NE(Find(r, Sev::kError, "t.yaml:4: error: YAML nested deeper than 100 levels"), nullptr)
      << AllDiagnostics(r);
  EXPECT_EQ(r.model.namespace_labels.count("ok"), 1u);
  std::string dashes;
  for (int i = 0; i < 3000; ++i) dashes += "- ";
  r = Load("a:\n" + dashes + "x\n");
  EXPECT_FALSE(r.ok());
}

TEST(LoaderTest, AliasesCannotExplode) {
  // 100 resource groups x 100 flavors x 100 quotas through aliases: a million entries if
  // walked blindly. The loader must finish quickly with a bounded number of diagnostics.
  auto aliases = [](const std::string& name) {
    std::string out = "[";
    for (int k = 0; k < 100; ++k) out += (k ? ", *" : "*") + name;
    return out + "]";
  };
  std::string text = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: bomb}
spec:
  cohort: c
  x0: &r {name: cpu, nominalQuota: 1}
)";
  text += "  x1: &rs " + aliases("r") + "\n";
  text += "  x2: &f {name: f, resources: *rs}\n";
  text += "  x3: &fs " + aliases("f") + "\n";
  text += "  x4: &g {coveredResources: [cpu], flavors: *fs}\n";
  text += "  resourceGroups: " + aliases("g") + "\n";
  LoadResult r = Load(text);
  EXPECT_LE(r.diagnostics.size(), 51u);
  r = Load("apiVersion: v1\nkind: Node\nmetadata: &m {name: a, labels: *m}\n");
  EXPECT_FALSE(r.ok());  // a label value that is a map
}

TEST(LoaderTest, UnreadableFileIsAnError) {
  LoadResult r = LoadManifestFiles({"/nonexistent/x.yaml"});
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].ToString().rfind("/nonexistent/x.yaml: error: cannot read file", 0),
            0u)
      << r.diagnostics[0].ToString();
}

TEST(LoaderTest, DirectoryLoadsYamlFilesInOrder) {
  LoadResult r = LoadManifestFiles({SourceDir() + "/tests/manifests"});
  EXPECT_GE(r.model.nodes.size(), 10u);
  EXPECT_FALSE(r.model.workloads.empty());
}

// Real-world manifests users already have must load: notices and warnings are fine, errors not.
TEST(LoaderTest, FieldManifestsLoadWithoutErrors) {
  std::filesystem::path dir =
      std::filesystem::path(SourceDir()) / ".." / "shared" / "manifests" / "field";
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << "no field manifests at " << dir.string()
                 << " (set TESSERA_SOURCE_DIR to a checkout beside shared/)";
  }
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    LoadResult r = LoadManifestFiles({entry.path().string()});
    EXPECT_TRUE(r.ok()) << entry.path() << "\n" << AllDiagnostics(r);
  }
  EXPECT_GT(files, 0);
}

TEST(CheckReferencesTest, WarnsAboutMissingObjects) {
  LoadResult r = Load(R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq}
spec: {clusterQueue: nope}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: implicit-cohort
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: missing-flavor
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels:
    kueue.x-k8s.io/queue-name: nolq
    kueue.x-k8s.io/priority-class: nowpc
spec:
  priorityClassName: nopc
  containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  LoadResult refs;
  refs.diagnostics = CheckReferences(r.model);
  std::string all = AllDiagnostics(refs);
  EXPECT_EQ(refs.diagnostics.size(), 6u) << all;
  EXPECT_NE(Find(refs, Sev::kWarning,
                 "t.yaml:1: warning: spec.clusterQueue: LocalQueue default/lq "
                 "names ClusterQueue nope"),
            nullptr)
      << all;
  EXPECT_NE(Find(refs, Sev::kWarning,
                 "t.yaml:6: warning: spec.resourceGroups[0].flavors[0].name: "
                 "ClusterQueue cq names ResourceFlavor missing-flavor"),
            nullptr)
      << all;
  EXPECT_NE(Find(refs, Sev::kWarning,
                 "t.yaml:6: warning: spec.namespaceSelector: ClusterQueue cq matches no "
                 "namespace, as in Kueue; add namespaceSelector: {} to accept all"),
            nullptr)
      << all;
  EXPECT_NE(Find(refs, Sev::kWarning, "names LocalQueue nolq"), nullptr) << all;
  EXPECT_NE(Find(refs, Sev::kWarning, "names PriorityClass nopc"), nullptr) << all;
  EXPECT_NE(Find(refs, Sev::kWarning, "names WorkloadPriorityClass nowpc"), nullptr) << all;
  EXPECT_EQ(all.find("implicit-cohort"), std::string::npos) << all;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Load;

TEST(LoaderGpuTest, GpuLayoutGfdLabelsTopologyAndAntiAffinity) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {nvidia.com/gpu.memory: "81559", nvidia.com/gpu.count: "4"}
  annotations: {tessera.dev/gpu-layout: "nvlink=0,0,1,1;numa=0,0,0,1"}
status:
  allocatable: {nvidia.com/gpu: "4"}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: p}
spec:
  count: 2
  gpuLayout: "nvlink=0,0,0,0,1,1,1,1"
  capacity: {nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata:
  name: bad
  annotations: {tessera.dev/gpu-layout: "nvlink=0,0,1"}
status:
  allocatable: {nvidia.com/gpu: "4"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2
  template:
    metadata:
      labels: {app: j}
      annotations: {kueue.x-k8s.io/podset-preferred-topology: rack, gpu-fraction: "0.25"}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: j}}, topologyKey: kubernetes.io/hostname}
      containers: [{name: c, image: x}]
)");
  const Model& m = r.model;
  ASSERT_EQ(m.nodes.size(), 3u) << AllDiagnostics(r);  // "bad" dropped
  EXPECT_EQ(m.nodes[0].gpu_memory_mib, 81559);
  ASSERT_EQ(m.nodes[0].gpus.size(), 4u);
  EXPECT_EQ(m.nodes[0].gpus[2].nvlink, 1);
  EXPECT_EQ(m.nodes[0].gpus[3].numa, 1);
  EXPECT_EQ(m.nodes[2].gpus[7].nvlink, 1);
  EXPECT_NE(AllDiagnostics(r).find("nvlink lists 3 devices but the node has 4 GPUs"),
            std::string::npos)
      << AllDiagnostics(r);
  ASSERT_EQ(m.workloads.size(), 1u);
  const PodSet& ps = m.workloads[0].pod_sets[0];
  EXPECT_EQ(ps.topology.level, "rack");
  EXPECT_FALSE(ps.topology.required);
  EXPECT_EQ(ps.anti_affinity, HostnameAntiAffinity::kRequired);
  EXPECT_EQ(ps.requests[kGpuMilli], 250);
}

TEST(LoaderGpuTest, TimeSlicedGpusAreReplicaSlotsOfPhysicalGpus) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata:
  name: ts
  labels: {nvidia.com/gpu.replicas: "4", nvidia.com/gpu.count: "2"}
  annotations: {tessera.dev/gpu-layout: "nvlink=0,1"}
status:
  allocatable: {nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata:
  name: by-annotation
  annotations: {tessera.dev/gpu-replicas: "2"}
status:
  allocatable: {nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata:
  name: uneven
  labels: {nvidia.com/gpu.replicas: "3"}
status:
  allocatable: {nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata:
  name: junk
  annotations: {tessera.dev/gpu-replicas: "many"}
status:
  allocatable: {nvidia.com/gpu: "8"}
---
apiVersion: tessera.dev/v1alpha1
kind: NodePool
metadata: {name: p}
spec:
  count: 2
  gpuReplicas: 2
  gpuLayout: "nvlink=0,0,1,1"
  capacity: {nvidia.com/gpu: "8"}
)");
  const Model& m = r.model;
  const std::string diags = AllDiagnostics(r);
  ASSERT_EQ(m.nodes.size(), 4u) << diags;  // "uneven" and "junk" dropped
  EXPECT_EQ(m.nodes[0].gpu_replicas, 4);
  EXPECT_EQ(m.nodes[0].physical_gpus(), 2);
  EXPECT_EQ(m.nodes[0].gpu_count(), 8);
  // The layout of the 2 physical GPUs, one entry per slot: slot s is GPU s % 2.
  ASSERT_EQ(m.nodes[0].gpus.size(), 8u);
  EXPECT_EQ(m.nodes[0].gpus[6].nvlink, 0);
  EXPECT_EQ(m.nodes[0].gpus[7].nvlink, 1);
  EXPECT_EQ(m.nodes[1].gpu_replicas, 2);
  EXPECT_EQ(diags.find("nvidia.com/gpu.count"), std::string::npos) << diags;  // 2 GPUs: agrees
  EXPECT_NE(diags.find("not a whole number of GPUs of 3 replicas"), std::string::npos) << diags;
  EXPECT_NE(diags.find("\"many\" is not a number of replicas per GPU"), std::string::npos) << diags;
  for (int i : {2, 3}) {
    EXPECT_EQ(m.nodes[i].gpu_replicas, 2);
    ASSERT_EQ(m.nodes[i].gpus.size(), 8u);
    EXPECT_EQ(m.nodes[i].gpus[5].nvlink, 0);  // GPU 1
    EXPECT_EQ(m.nodes[i].gpus[6].nvlink, 1);  // GPU 2
  }
}

TEST(LoaderGpuTest, DynamicMigNeedsAMigFamily) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Node
metadata:
  name: a100
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}
  annotations: {tessera.dev/mig: dynamic}
status:
  allocatable: {nvidia.com/gpu: "4"}
---
apiVersion: v1
kind: Node
metadata:
  name: a10
  labels: {nvidia.com/gpu.product: NVIDIA-A10, nvidia.com/gpu.memory: "24576"}
  annotations: {tessera.dev/mig: dynamic}
status:
  allocatable: {nvidia.com/gpu: "4"}
---
apiVersion: v1
kind: Node
metadata:
  name: typo
  annotations: {tessera.dev/mig: dynamo}
status:
  allocatable: {nvidia.com/gpu: "4"}
)");
  ASSERT_EQ(r.model.nodes.size(), 1u) << AllDiagnostics(r);
  EXPECT_TRUE(r.model.nodes[0].mig_dynamic);
  const std::string all = AllDiagnostics(r);
  EXPECT_NE(all.find("dynamic MIG needs GPUs of a MIG family"), std::string::npos) << all;
  EXPECT_NE(all.find("\"dynamo\" is not a MIG mode"), std::string::npos) << all;
}

TEST(LoaderGpuTest, SharesByMemoryFromRequestsAndKaiAnnotation) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: kai, annotations: {gpu-memory: "10240"}}
spec:
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bytes}
spec:
  containers: [{name: c, image: x, resources: {requests: {tessera.dev/gpu-memory: 10Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: mib}
spec:
  containers: [{name: c, image: x, resources: {requests: {tessera.dev/gpu-memory: "5000"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: both, annotations: {gpu-memory: "100", gpu-fraction: "0.5"}}
spec:
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: garbage, annotations: {gpu-memory: "ten gigs"}}
spec:
  containers: [{name: c, image: x}]
)");
  const Model& m = r.model;
  ASSERT_EQ(m.workloads.size(), 3u) << AllDiagnostics(r);
  EXPECT_EQ(m.workloads[0].pod_sets[0].requests[kGpuMemory], 10240);
  EXPECT_EQ(m.workloads[0].pod_sets[0].requests[kGpu], 0);            // the annotation replaces it
  EXPECT_EQ(m.workloads[1].pod_sets[0].requests[kGpuMemory], 10240);  // 10Gi in MiB
  EXPECT_EQ(m.workloads[2].pod_sets[0].requests[kGpuMemory], 5000);
  const std::string all = AllDiagnostics(r);
  EXPECT_NE(all.find("by gpu-fraction or by gpu-memory, not both"), std::string::npos) << all;
  EXPECT_NE(all.find("\"ten gigs\" is not a positive amount of GPU memory in MiB"),
            std::string::npos)
      << all;
}

}  // namespace
}  // namespace tessera
