// The fields of time: runtime estimates, deadlines, wait limits, minimum runtimes and checkpoint
// intervals on every workload kind; ClusterQueue defaults; SchedulerConfig backfill and
// runtimeEstimates; precedence and the diagnostics of bad values.
#include <string>

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

const Workload* ByKey(const Model& m, const std::string& key) {
  for (const auto& w : m.workloads)
    if (w.Key() == key) return &w;
  return nullptr;
}

// A batch Job named `name` with `metadata` lines (indented two spaces) and `spec` lines.
std::string Job(const std::string& metadata, const std::string& spec = "") {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n" + metadata + "spec:\n" + spec +
         "  template:\n    spec:\n      containers: [{name: c}]\n";
}

class TimeFieldsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    r_ = LoadManifestFiles({SourceDir() + "/tests/manifests/time.yaml"});
    ASSERT_TRUE(r_.ok()) << AllDiagnostics(r_);
    EXPECT_EQ(r_.count(Sev::kWarning), 0) << AllDiagnostics(r_);
  }
  const Workload& W(const std::string& key) {
    const Workload* w = ByKey(r_.model, key);
    EXPECT_NE(w, nullptr) << key;
    static const Workload kNone;
    return w ? *w : kNone;
  }
  LoadResult r_;
};

TEST_F(TimeFieldsFileTest, BatchJob) {
  const Workload& w = W("time/train");
  EXPECT_EQ(w.runtime_estimate, 5400);    // 1h30m
  EXPECT_EQ(w.max_wait, 600);             // a plain number of seconds
  EXPECT_EQ(w.min_runtime, 600);          // 10m
  EXPECT_EQ(w.checkpoint_interval, 900);  // 15m
  EXPECT_EQ(w.active_deadline, 5400);     // spec's 5400 beats the Kueue label's 7200
}

TEST_F(TimeFieldsFileTest, VolcanoJobSlaWaitingTime) {
  const Workload& w = W("time/mpi");
  EXPECT_EQ(w.max_wait, 3723);  // 1h2m3s
  EXPECT_EQ(w.runtime_estimate, 9000);
  EXPECT_FALSE(w.active_deadline.has_value());
}

TEST_F(TimeFieldsFileTest, PodGroupOwnValuesWinAndPodsFillTheRest) {
  const Workload& w = W("time/gang");
  EXPECT_EQ(w.max_wait, 300);          // tessera.dev/max-wait beats sla-waiting-time and the pods'
  EXPECT_EQ(w.min_runtime, 90);        // the group sets none: its first pod's
  EXPECT_EQ(w.active_deadline, 1800);  // the smallest of its pods'
  EXPECT_FALSE(w.runtime_estimate.has_value());
  EXPECT_EQ(W("time/sigs-gang").max_wait, 45);  // scheduling.sigs.k8s.io PodGroup
}

TEST_F(TimeFieldsFileTest, KubeflowRunPolicyDeadline) {
  const Workload& ptj = W("time/ptj");
  EXPECT_EQ(ptj.active_deadline, 86400);
  EXPECT_EQ(ptj.checkpoint_interval, 300);
  EXPECT_EQ(W("time/tfj").active_deadline, 3000);  // the Kueue label's 3000 beats 4000
}

TEST_F(TimeFieldsFileTest, PodAndDeployment) {
  const Workload& pod = W("time/notebook");
  EXPECT_EQ(pod.active_deadline, 120);
  EXPECT_EQ(pod.runtime_estimate, 0.5);
  for (const char* key : {"time/infer-0", "time/infer-1"}) {
    EXPECT_EQ(W(key).min_runtime, 3600) << key;
    EXPECT_FALSE(W(key).active_deadline.has_value()) << key;
  }
}

TEST_F(TimeFieldsFileTest, ClusterQueueDefaults) {
  ASSERT_EQ(r_.model.cluster_queues.size(), 1u);
  const ClusterQueue& cq = r_.model.cluster_queues[0];
  EXPECT_EQ(cq.max_wait, 7200);
  EXPECT_EQ(cq.min_runtime, 900);
}

TEST(TimeFieldsTest, AbsentFieldsStayAbsent) {
  LoadResult r = Load(Job("") + R"(---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec: {namespaceSelector: {}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& w = r.model.workloads[0];
  EXPECT_FALSE(w.runtime_estimate || w.active_deadline || w.max_wait || w.min_runtime ||
               w.checkpoint_interval);
  EXPECT_FALSE(r.model.cluster_queues.at(0).max_wait || r.model.cluster_queues.at(0).min_runtime);
}

// terminationGracePeriodSeconds: Kubernetes' default 30 where a template says nothing; the
// workload's is its longest pod set's (docs/time.md, "Grace period before the kill").
TEST(TimeFieldsTest, TerminationGracePeriodDefaultsToKubernetes30) {
  auto job = [](const std::string& grace) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n" +
           grace + "      containers: [{name: c}]\n";
  };
  LoadResult r = Load(job(""));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].GraceSeconds(), 30);
  r = Load(job("      terminationGracePeriodSeconds: 0\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].GraceSeconds(), 0);
  r = Load(job("      terminationGracePeriodSeconds: 600\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].GraceSeconds(), 600);
  r = Load(job("      terminationGracePeriodSeconds: -1\n"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(AllDiagnostics(r).find("spec.template.spec.terminationGracePeriodSeconds"),
            std::string::npos)
      << AllDiagnostics(r);
  r = Load(job("      terminationGracePeriodSeconds: soon\n"));
  EXPECT_FALSE(r.ok());
  // A PyTorchJob: the longest of its replica types' grace periods.
  r = Load(R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {terminationGracePeriodSeconds: 5, containers: [{name: c}]}}}
    Worker: {replicas: 2, template: {spec: {terminationGracePeriodSeconds: 90, containers: [{name: c}]}}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].GraceSeconds(), 90);
}

TEST(TimeFieldsTest, KueueMaxExecTimeAloneIsTheDeadline) {
  LoadResult r = Load(Job("  labels: {kueue.x-k8s.io/max-exec-time-seconds: \"600\"}\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].active_deadline, 600);
  EXPECT_FALSE(r.model.workloads[0].runtime_estimate.has_value());
}

TEST(TimeFieldsTest, SlaWaitingTimeOnlyOnVolcanoJobsAndPodGroups) {
  LoadResult r = Load(Job("  annotations: {sla-waiting-time: 1h}\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_FALSE(r.model.workloads[0].max_wait.has_value());
}

TEST(TimeFieldsTest, TesseraMaxWaitWinsOverSlaWaitingTimeOnAVolcanoJob) {
  LoadResult r = Load(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: v
  annotations: {sla-waiting-time: 1h, tessera.dev/max-wait: "0"}
spec:
  tasks: [{template: {spec: {containers: [{name: c}]}}}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].max_wait, 0);  // zero is a valid wait limit
}

TEST(TimeFieldsTest, KueuePlainPodGroupTakesItsPodsValues) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata:
  name: a
  labels: {kueue.x-k8s.io/pod-group-name: g}
  annotations:
    kueue.x-k8s.io/pod-group-total-count: "2"
    tessera.dev/max-wait: 2m
spec:
  activeDeadlineSeconds: 900
  containers: [{name: c}]
---
apiVersion: v1
kind: Pod
metadata:
  name: b
  labels: {kueue.x-k8s.io/pod-group-name: g}
  annotations:
    kueue.x-k8s.io/pod-group-total-count: "2"
    tessera.dev/max-wait: 9m
    tessera.dev/checkpoint-interval: 1m
spec:
  activeDeadlineSeconds: 600
  containers: [{name: c}]
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  const Workload& g = r.model.workloads[0];
  EXPECT_EQ(g.max_wait, 120);            // the first pod's
  EXPECT_EQ(g.checkpoint_interval, 60);  // the first pod that has one
  EXPECT_EQ(g.active_deadline, 600);     // the smallest
}

TEST(TimeFieldsTest, HugeKubernetesDeadlineIsIgnoredWithAWarning) {
  LoadResult r = Load(Job("", "  activeDeadlineSeconds: 2147483647\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_FALSE(r.model.workloads[0].active_deadline.has_value());
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:6: warning: spec.activeDeadlineSeconds: 2147483647 seconds is longer "
                 "than 10 years (315360000 seconds), the longest duration Tessera accepts; "
                 "Tessera treats the workload as having no deadline"),
            nullptr)
      << AllDiagnostics(r);
}

// The one error a document with `metadata` and `spec` lines gives, or "" when it loads.
std::string ErrorOfJob(const std::string& metadata, const std::string& spec = "") {
  LoadResult r = Load(Job(metadata, spec));
  if (r.ok()) return "";
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_EQ(r.count(Sev::kError), 1) << AllDiagnostics(r);
  return Find(r, Sev::kError, "")->ToString();
}

TEST(TimeFieldsTest, BadAnnotationsNameTheField) {
  auto annotation = [](const std::string& key, const std::string& value) {
    return ErrorOfJob("  annotations:\n    " + key + ": \"" + value + "\"\n");
  };
  EXPECT_EQ(annotation("tessera.dev/runtime-estimate", "0"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/runtime-estimate\"]: must be "
            "greater than 0, got \"0\"");
  EXPECT_EQ(annotation("tessera.dev/max-wait", "soon"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/max-wait\"]: expected a "
            "duration: seconds (90, 1.5) or Go's form (90s, 30m, 1h30m, 1.5h, 500ms), got "
            "\"soon\"");
  EXPECT_EQ(annotation("tessera.dev/min-runtime", "-5m"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/min-runtime\"]: expected a "
            "non-negative duration, got \"-5m\"");
  EXPECT_EQ(annotation("tessera.dev/checkpoint-interval", "0s"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/checkpoint-interval\"]: must be "
            "greater than 0, got \"0s\"");
  EXPECT_EQ(annotation("tessera.dev/runtime-estimate", "100000h"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/runtime-estimate\"]: duration "
            "\"100000h\" is longer than 10 years (315360000 seconds), the longest Tessera "
            "accepts");
  EXPECT_EQ(annotation("tessera.dev/max-wait", "nan"),
            "t.yaml:6: error: metadata.annotations[\"tessera.dev/max-wait\"]: expected a "
            "duration: seconds (90, 1.5) or Go's form (90s, 30m, 1h30m, 1.5h, 500ms), got "
            "\"nan\"");
  EXPECT_EQ(annotation("tessera.dev/min-runtime", "0"), "");  // zero min runtime: fine
}

TEST(TimeFieldsTest, BadDeadlinesNameTheField) {
  const std::string want = "t.yaml:6: error: spec.activeDeadlineSeconds: ";
  EXPECT_EQ(ErrorOfJob("", "  activeDeadlineSeconds: 0\n"),
            want + "must be greater than 0, got \"0\"");
  EXPECT_EQ(ErrorOfJob("", "  activeDeadlineSeconds: -3\n"),
            want + "expected a positive integer number of seconds, got \"-3\"");
  EXPECT_EQ(ErrorOfJob("", "  activeDeadlineSeconds: 1.5\n"),
            want + "expected a positive integer number of seconds, got \"1.5\"");
  EXPECT_EQ(ErrorOfJob("", "  activeDeadlineSeconds: 1h\n"),
            want + "expected a positive integer number of seconds, got \"1h\"");
  EXPECT_EQ(ErrorOfJob("", "  activeDeadlineSeconds: [1]\n"),
            want + "expected a positive integer number of seconds, got a list");
  EXPECT_EQ(ErrorOfJob("  labels: {kueue.x-k8s.io/max-exec-time-seconds: \"0\"}\n"),
            "t.yaml:5: error: metadata.labels[\"kueue.x-k8s.io/max-exec-time-seconds\"]: must "
            "be greater than 0, got \"0\"");
  EXPECT_EQ(ErrorOfJob("  labels: {kueue.x-k8s.io/max-exec-time-seconds: 1h}\n"),
            "t.yaml:5: error: metadata.labels[\"kueue.x-k8s.io/max-exec-time-seconds\"]: "
            "expected a positive integer number of seconds, got \"1h\"");
}

TEST(TimeFieldsTest, BadValuesOnOtherKinds) {
  LoadResult r = Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  activeDeadlineSeconds: soon
  containers: [{name: c}]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj}
spec:
  runPolicy: {activeDeadlineSeconds: 0}
  pytorchReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: c}]}}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: v
  annotations: {sla-waiting-time: 1d, tessera.dev/max-wait: 1h}
spec:
  tasks: [{template: {spec: {containers: [{name: c}]}}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: g
  annotations: {sla-waiting-time: "-1s"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: q
  annotations: {tessera.dev/max-wait: forever}
spec: {namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: q2
  annotations: {tessera.dev/min-runtime: "-1"}
spec: {namespaceSelector: {}}
)");
  std::string all = AllDiagnostics(r);
  EXPECT_TRUE(r.model.workloads.empty()) << all;
  EXPECT_TRUE(r.model.cluster_queues.empty()) << all;
  EXPECT_EQ(r.count(Sev::kError), 6) << all;
  for (const char* want :
       {"t.yaml:5: error: spec.activeDeadlineSeconds: expected a positive integer number of "
        "seconds, got \"soon\"",
        "t.yaml:12: error: spec.runPolicy.activeDeadlineSeconds: must be greater than 0, got "
        "\"0\"",
        // an invalid sla-waiting-time is an error even where tessera.dev/max-wait wins
        "t.yaml:20: error: metadata.annotations.sla-waiting-time: expected a duration: "
        "seconds (90, 1.5) or Go's form (90s, 30m, 1h30m, 1.5h, 500ms), got \"1d\": unknown "
        "unit \"d\"; allowed: ns, us, ms, s, m, h",
        "t.yaml:28: error: metadata.annotations.sla-waiting-time: expected a "
        "non-negative duration, got \"-1s\"",
        "t.yaml:34: error: metadata.annotations[\"tessera.dev/max-wait\"]: expected a "
        "duration",
        "t.yaml:41: error: metadata.annotations[\"tessera.dev/min-runtime\"]: expected a "
        "non-negative duration, got \"-1\""}) {
    EXPECT_NE(Find(r, Sev::kError, want), nullptr) << want << "\n" << all;
  }
}

std::string Config(const std::string& spec) {
  return "apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfig\nmetadata: {name: s}\nspec:\n" +
         spec;
}

TEST(TimeFieldsTest, SchedulerConfigBackfillAndRuntimeEstimates) {
  LoadResult r = Load(Config(R"(  backfill:
    enable: false
    reservationsPerQueue: 0
    window: 12h
    resolution: 30        # plain seconds
    maxJobTest: 500
    bogus: 1              # unknown keys are ignored, as everywhere
  runtimeEstimates:
    quantile: 0.5
    history: 10000
    minSamples: 1
    default: 1h
)"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
  const BackfillConfig& b = r.model.config.backfill;
  EXPECT_FALSE(b.enable);
  EXPECT_EQ(b.reservations_per_queue, 0);
  EXPECT_EQ(b.window, 43200);
  EXPECT_EQ(b.resolution, 30);
  EXPECT_EQ(b.max_job_test, 500);
  const EstimatorConfig& e = r.model.config.estimates;
  EXPECT_EQ(e.quantile, 0.5);
  EXPECT_EQ(e.history, 10000);
  EXPECT_EQ(e.min_samples, 1);
  EXPECT_EQ(e.default_estimate, 3600);
}

TEST(TimeFieldsTest, SchedulerConfigDefaults) {
  LoadResult r = Load(Config("  placement: spread\n  backfill: {}\n"));
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  const BackfillConfig defaults;
  const BackfillConfig& b = r.model.config.backfill;
  EXPECT_EQ(b.enable, defaults.enable);
  EXPECT_EQ(b.reservations_per_queue, defaults.reservations_per_queue);
  EXPECT_EQ(b.window, defaults.window);
  EXPECT_EQ(b.resolution, defaults.resolution);
  EXPECT_EQ(b.max_job_test, defaults.max_job_test);
  const EstimatorConfig estimates;
  EXPECT_EQ(r.model.config.estimates.quantile, estimates.quantile);
  EXPECT_EQ(r.model.config.estimates.history, estimates.history);
  EXPECT_EQ(r.model.config.estimates.min_samples, estimates.min_samples);
  EXPECT_FALSE(r.model.config.estimates.default_estimate.has_value());
}

TEST(TimeFieldsTest, SchedulerConfigErrorsNameTheField) {
  auto error_of = [](const std::string& spec) {
    LoadResult r = Load(Config(spec));
    EXPECT_FALSE(r.ok()) << spec;
    EXPECT_EQ(r.count(Sev::kError), 1) << AllDiagnostics(r);
    const Diagnostic* d = Find(r, Sev::kError, "");
    return d ? d->ToString() : "";
  };
  const std::string at = "t.yaml:5: error: ";
  EXPECT_EQ(error_of("  backfill: [1]\n"), at + "spec.backfill: expected a map, got a list");
  EXPECT_EQ(error_of("  backfill: {reservationsPerQueue: -1}\n"),
            at + "spec.backfill.reservationsPerQueue: value -1 out of range [0, 2147483647]");
  EXPECT_EQ(error_of("  backfill: {window: 0}\n"),
            at + "spec.backfill.window: must be greater than 0, got \"0\"");
  EXPECT_EQ(error_of("  backfill: {window: {h: 1}}\n"),
            at + "spec.backfill.window: expected a duration, got a map");
  EXPECT_EQ(error_of("  backfill: {resolution: fast}\n"),
            at + "spec.backfill.resolution: expected a duration: seconds (90, 1.5) or Go's form "
                 "(90s, 30m, 1h30m, 1.5h, 500ms), got \"fast\"");
  EXPECT_EQ(error_of("  backfill: {maxJobTest: 0}\n"),
            at + "spec.backfill.maxJobTest: value 0 out of range [1, 2147483647]");
  EXPECT_EQ(error_of("  backfill: {enable: maybe}\n"),
            at + "spec.backfill.enable: expected true or false, got \"maybe\"");
  for (const char* q : {"0", "1.5", "-0.5", "nan", ".inf"}) {
    EXPECT_EQ(
        error_of(std::string("  runtimeEstimates: {quantile: ") + q + "}\n"),
        at + "spec.runtimeEstimates.quantile: expected a number in (0, 1], got \"" + q + "\"");
  }
  EXPECT_EQ(error_of("  runtimeEstimates: {quantile: [1]}\n"),
            at + "spec.runtimeEstimates.quantile: expected a number in (0, 1], got a list");
  EXPECT_EQ(error_of("  runtimeEstimates: {history: 10001}\n"),
            at + "spec.runtimeEstimates.history: value 10001 out of range [1, 10000]");
  EXPECT_EQ(error_of("  runtimeEstimates: {minSamples: 0}\n"),
            at + "spec.runtimeEstimates.minSamples: value 0 out of range [1, 10000]");
  EXPECT_EQ(error_of("  runtimeEstimates: {default: 0s}\n"),
            at + "spec.runtimeEstimates.default: must be greater than 0, got \"0s\"");
  EXPECT_EQ(error_of("  runtimeEstimates: {default: 11y}\n"),
            at + "spec.runtimeEstimates.default: expected a duration: seconds (90, 1.5) or Go's "
                 "form (90s, 30m, 1h30m, 1.5h, 500ms), got \"11y\": unknown unit \"y\"; allowed: "
                 "ns, us, ms, s, m, h");
}

TEST(TimeFieldsTest, MinSamplesAboveHistoryWarns) {
  LoadResult r = Load(Config("  runtimeEstimates: {history: 2}\n"));  // minSamples defaults to 3
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  EXPECT_EQ(r.model.config.estimates.history, 2);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:5: warning: spec.runtimeEstimates.minSamples: minSamples 3 is more than "
                 "history 2: no runtime estimate is ever learned"),
            nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
