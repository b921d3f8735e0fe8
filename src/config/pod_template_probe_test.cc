// Skipped objects that look like workloads (config/pod_template_probe.h), files that yield
// nothing, and the diagnostics' JSON (config/diagnostic_output.h).
#include "config/pod_template_probe.h"

#include <fstream>
#include <string>

#include "config/diagnostic_output.h"
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tessera {
namespace {

using config_internal::FindPodTemplate;
using config_internal::SkippedObjectPodTemplate;
using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

std::optional<std::string> Probe(const std::string& yaml) {
  return FindPodTemplate(YAML::Load(yaml));
}

TEST(PodTemplateProbeTest, FindsTheFirstTemplateInDocumentOrder) {
  // A JobSet: the Job template's spec has no containers, its pod template does.
  EXPECT_EQ(Probe(R"(spec:
  replicatedJobs:
  - name: a
    template:
      spec:
        parallelism: 2
        template:
          spec:
            containers: [{name: c, image: x}]
)"),
            "spec.replicatedJobs[0].template.spec.template");
  // A RayCluster: the head group comes first.
  EXPECT_EQ(Probe(R"(spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs: [{template: {spec: {containers: [{name: w}]}}}]
)"),
            "spec.headGroupSpec.template");
  // A Pod-like kind: containers right under spec.
  EXPECT_EQ(Probe("spec: {containers: [{name: c}]}\n"), "spec");
  EXPECT_EQ(Probe("spec: {runner: {spec: {containers: []}}}\n"), "spec.runner.spec");
  // Keys with dots are bracketed as elsewhere in paths.
  EXPECT_EQ(Probe("spec: {a.b: {template: {spec: {containers: []}}}}\n"),
            "spec[\"a.b\"].template");
}

TEST(PodTemplateProbeTest, HarmlessObjectsHaveNone) {
  EXPECT_EQ(Probe("data: {template: 'spec: {containers: []}'}\n"), std::nullopt);
  EXPECT_EQ(Probe("spec: {ports: [{port: 80}], selector: {app: x}}\n"), std::nullopt);
  // containers that is not a list, a template without a spec
  EXPECT_EQ(Probe("spec: {containers: {a: 1}, template: {containers: []}}\n"), std::nullopt);
  // the root's metadata is not searched
  EXPECT_EQ(Probe("metadata: {spec: {containers: []}}\n"), std::nullopt);
  EXPECT_EQ(Probe("just a string\n"), std::nullopt);
  EXPECT_EQ(FindPodTemplate(YAML::Node()), std::nullopt);
  // A template and a ControllerRevision hold pod templates but make no pods.
  YAML::Node t = YAML::Load("template: {spec: {containers: []}}\n");
  EXPECT_EQ(SkippedObjectPodTemplate("", "PodTemplate", t), std::nullopt);
  EXPECT_EQ(SkippedObjectPodTemplate("apps", "ControllerRevision", t), std::nullopt);
  EXPECT_EQ(SkippedObjectPodTemplate("apps", "StatefulSet", t), "template");
}

TEST(PodTemplateProbeTest, DepthAndVisitsAreBounded) {
  // Deeper than the bound: not found, and no deep recursion.
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "{a: ";
  deep += "{template: {spec: {containers: []}}}";
  for (int i = 0; i < 40; ++i) deep += "}";
  EXPECT_EQ(Probe(deep), std::nullopt);
  // Within it: found.
  EXPECT_EQ(Probe("{a: {b: {c: {template: {spec: {containers: []}}}}}}"), "a.b.c.template");
  // Aliases that fan out (each level is ten of the one below: 10^6 leaves within 6 levels): the
  // visit budget stops the walk.
  std::string fan = "l0: &l0 [x, y, z, x, y, z, x, y, z, x]\n";
  for (int i = 1; i < 6; ++i) {
    // fmt, not "l" + std::to_string(i) + ...: GCC 12 at -O3 warns (-Wrestrict, a false
    // positive of its std::string inlining) on that concatenation.
    const std::string below = fmt::format("*l{}", i - 1);
    fan += fmt::format("l{}: &l{} [", i, i);
    for (int k = 0; k < 10; ++k) fan += below + (k < 9 ? ", " : "");
    fan += "]\n";
  }
  fan += "z: {template: {spec: {containers: []}}}\n";
  EXPECT_EQ(Probe(fan), std::nullopt);  // the budget ran out before "z"
  // A long list of scalars: the budget ends the walk too.
  std::string many = "spec: [";
  for (int i = 0; i < 30000; ++i) many += "1,";
  many += "{template: {spec: {containers: []}}}]\n";
  EXPECT_EQ(Probe(many), std::nullopt);
}

TEST(PodTemplateProbeTest, SkippedWorkloadIsAWarningNamingKindObjectAndTemplate) {
  LoadResult r = Load(R"(apiVersion: pipelines.example.com/v1
kind: TrainingPipeline
metadata: {name: trainer}
spec:
  replicatedJobs:
  - name: workers
    template: {spec: {template: {spec: {containers: [{name: c, image: x}]}}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: db}
spec: {template: {spec: {containers: [{name: c}]}}}
---
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: [not, a, string]}
spec: {xgbReplicaSpecs: {Master: {template: {spec: {containers: [{name: h}]}}}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {a: b}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
)");
  const std::string all = AllDiagnostics(r);
  EXPECT_TRUE(r.ok()) << all;
  EXPECT_EQ(r.skipped_objects, 5) << all;
  EXPECT_EQ(r.count(Sev::kWarning), 3) << all;
  EXPECT_EQ(r.count(Sev::kNotice), 2) << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:1: warning: skipped TrainingPipeline trainer (pipelines.example.com/v1): not a job "
                 "kind Tessera reads, but it has pod templates (at "
                 "spec.replicatedJobs[0].template.spec.template): its pods will not be scheduled"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:9: warning: skipped DaemonSet db (apps/v1): not a job kind Tessera "
                 "reads, but it has pod templates (at spec.template)"),
            nullptr)
      << all;
  // A name that is not a string is left out, not an error: the object is skipped anyway.
  EXPECT_NE(Find(r, Sev::kWarning, "skipped XGBoostJob (kubeflow.org/v1): not a job kind"), nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kNotice, "t.yaml:19: notice: skipped ConfigMap cm (v1)"), nullptr) << all;
  EXPECT_NE(Find(r, Sev::kNotice, "skipped NetworkPolicy (networking.k8s.io/v1)"), nullptr)
      << all;
}

TEST(PodTemplateProbeTest, SkippedWorkloadsInAListAreWarnedOneByOne) {
  LoadResult r = Load(R"(apiVersion: v1
kind: List
items:
- {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d},
   spec: {template: {spec: {containers: [{name: c}]}}}}
- {apiVersion: v1, kind: Service, metadata: {name: s}}
)");
  EXPECT_EQ(r.skipped_objects, 2) << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning, "skipped DaemonSet d (apps/v1): not a job kind"), nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kNotice, "skipped Service s (v1)"), nullptr) << AllDiagnostics(r);
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(FileWithNothingReadTest, IsAWarningNamingTheFile) {
  const std::string only_skipped = WriteFile("tessera_only_skipped.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: pipelines.example.com/v1
kind: TrainingPipeline
metadata: {name: b}
spec: {steps: [{template: {spec: {containers: [{name: h}]}}}]}
)");
  const std::string empty = WriteFile("tessera_empty.yaml", "# nothing\n---\n");
  const std::string good = WriteFile("tessera_good.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: 1}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
)");
  const std::string broken = WriteFile("tessera_broken.yaml", "apiVersion: v1\nkind: Node\n");
  LoadResult r = LoadManifestFiles({only_skipped, empty, good, broken});
  const std::string all = AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning,
                 only_skipped +
                     ": warning: no workload and no cluster object in this file (2 objects "
                     "skipped)"),
            nullptr)
      << all;
  EXPECT_NE(Find(r, Sev::kWarning,
                 empty + ": warning: no workload and no cluster object in this file (no objects "
                         "in it)"),
            nullptr)
      << all;
  // A file with a node is fine; a file with errors says so already.
  EXPECT_EQ(Find(r, Sev::kWarning, good + ": warning: no workload"), nullptr) << all;
  EXPECT_EQ(Find(r, Sev::kWarning, broken + ": warning: no workload"), nullptr) << all;
  EXPECT_EQ(r.skipped_objects, 3) << all;
}

TEST(DiagnosticsJsonTest, EveryFieldOfEveryDiagnostic) {
  std::vector<Diagnostic> diags = {{Sev::kNotice, "a.yaml", 3, "", "skipped"},
                                   {Sev::kWarning, "b.yaml", 0, "spec.x", "bad \xff byte"}};
  nlohmann::json j = DiagnosticsJson(diags);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["severity"], "notice");
  EXPECT_EQ(j[0]["file"], "a.yaml");
  EXPECT_EQ(j[0]["line"], 3);
  EXPECT_EQ(j[0]["path"], "");
  EXPECT_EQ(j[1]["severity"], "warning");
  EXPECT_EQ(j[1]["path"], "spec.x");
  // Bytes that are not UTF-8 do not make the document fail.
  std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  EXPECT_NE(text.find("bad \xEF\xBF\xBD byte"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera
