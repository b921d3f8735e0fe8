// Volcano Job tasks[].dependsOn: read, checked, and named in a notice (not honoured).
#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::AllDiagnostics;
using testing::Find;
using testing::Load;
using Sev = Diagnostic::Severity;

TEST(VolcanoJobTest, DependsOnIsNoticedAndTheGangStaysWhole) {
  LoadResult r = Load(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  minAvailable: 3
  tasks:
    - name: master
      replicas: 1
      dependsOn:
        name: [worker]
      template: {spec: {containers: [{name: m, image: x}]}}
    - name: worker
      replicas: 2
      dependsOn: {name: [ghost], iteration: all}
      template: {spec: {containers: [{name: w, image: x}]}}
)");
  ASSERT_TRUE(r.ok()) << AllDiagnostics(r);
  ASSERT_EQ(r.model.workloads.size(), 1u);
  EXPECT_EQ(r.model.workloads[0].TotalPods(), 3);
  EXPECT_EQ(r.model.workloads[0].MinPods(), 3);
  EXPECT_NE(Find(r, Sev::kNotice,
                 "t.yaml:10: notice: spec.tasks[0].dependsOn: not honoured: the task's pods are "
                 "admitted and started together with the tasks it depends on (Volcano creates "
                 "them only once worker run)"),
            nullptr)
      << AllDiagnostics(r);
  EXPECT_NE(Find(r, Sev::kWarning,
                 "t.yaml:14: warning: spec.tasks[1].dependsOn.name: no task is named \"ghost\""),
            nullptr)
      << AllDiagnostics(r);
}

TEST(VolcanoJobTest, DependsOnWithABadIterationIsAnError) {
  LoadResult r = Load(R"(apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  tasks:
    - name: a
      dependsOn: {name: [b], iteration: some}
      template: {spec: {containers: [{name: m, image: x}]}}
    - name: b
      dependsOn: [b]
      template: {spec: {containers: [{name: m, image: x}]}}
)");
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(Find(r, Sev::kError,
                 "t.yaml:7: error: spec.tasks[0].dependsOn.iteration: unknown value \"some\"; "
                 "allowed: any, all"),
            nullptr)
      << AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera
