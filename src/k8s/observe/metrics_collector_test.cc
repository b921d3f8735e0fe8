// The collector's values after a scripted sequence of the controller's events on a real engine:
// an admission that borrows, a reclaiming preemption, a workload left inadmissible, time passing
// with nodes idle and GPUs held at a price. Every figure is computed by hand in the comments.
#include "k8s/observe/metrics_collector.h"

#include "engine/test_builders.h"
#include "gtest/gtest.h"

namespace tessera::k8s {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

class MetricsCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Model m =
        MakeModel({MakeNode("n0", 4), MakeNode("n1", 4)},
                  {CQ("team-a").Cohort("c").Gpus("gpu", 4).Obj(),
                   CQ("team-b").Cohort("c").Gpus("gpu", 4, 2).Reclaim(ReclaimPolicy::kAny).Obj()});
    m.config.pricing.present = true;
    m.config.pricing.gpu_hour.default_price = 3.6;  // $0.001 per GPU-second
    m.config.pricing.rollup_labels = {"team"};
    auto s = Scheduler::Create(std::move(m));
    ASSERT_TRUE(s.ok()) << s.status();
    engine_ = std::move(*s);
  }

  WorkloadId Submit(Workload w, double now) {
    w.ns = "default";
    WorkloadId id = engine_->AddWorkload(std::move(w));
    engine_->Submit(id, now);
    tracked_.push_back({id, false, std::nullopt});
    return id;
  }

  // A cycle as the controller runs it: decisions carried out (victims leave the engine).
  void Cycle(double now) {
    const int64_t attempts = engine_->stats().attempts;
    std::vector<Decision> ds = engine_->RunCycle(now);
    collector_.OnCycle(*engine_, attempts, ds, 0.002);
    for (const Decision& d : ds) {
      if (d.type == Decision::Type::kAdmit)
        collector_.OnAdmit(*engine_, d.workload, now - engine_->status(d.workload).created);
      if (d.type == Decision::Type::kPreempt) {
        collector_.OnPreempt(*engine_, d);
        engine_->Finish(d.workload, now);
      }
    }
  }

  double V(const char* name, const LabelValues& labels) { return metrics_.Value(name, labels); }

  Metrics metrics_;
  MetricsCollector collector_{&metrics_};
  std::unique_ptr<Scheduler> engine_;
  std::vector<MetricsCollector::Tracked> tracked_;
};

TEST_F(MetricsCollectorTest, ValuesAfterBorrowReclaimAndAWaitingWorkload) {
  // t=0: team-a's a1 (2 pods x 4 GPUs) borrows team-b's idle quota: both nodes full.
  Workload a1 = WL("a1").Queue("team-a").Pods(2, 4).Obj();
  a1.labels["team"] = "alpha";
  Submit(a1, 0);
  Cycle(0);
  collector_.Collect(*engine_, tracked_, 0);
  EXPECT_EQ(V("tessera_admitted_workloads_total", {"team-a"}), 1);
  EXPECT_EQ(V("tessera_admission_wait_time_seconds", {"team-a"}), 1);  // one observation
  EXPECT_EQ(V("tessera_admission_attempts_total", {"success"}), 1);
  EXPECT_EQ(V("tessera_admitted_active_workloads", {"team-a"}), 1);
  EXPECT_EQ(V("tessera_admitted_active_workloads", {"team-b"}), 0);
  EXPECT_EQ(V("tessera_cluster_queue_resource_usage", {"c", "team-a", "gpu", "nvidia.com/gpu"}), 8);
  EXPECT_EQ(V("tessera_cluster_queue_nominal_quota", {"c", "team-b", "gpu", "nvidia.com/gpu"}), 4);
  EXPECT_EQ(V("tessera_cluster_queue_borrowing_limit", {"c", "team-b", "gpu", "nvidia.com/gpu"}),
            2);
  // team-a borrows 4 of the 8 GPUs its cohort can lend: 4 / 8 x 1000.
  EXPECT_EQ(V("tessera_cluster_queue_weighted_share", {"team-a"}), 500);
  EXPECT_EQ(V("tessera_cluster_queue_weighted_share", {"team-b"}), 0);
  EXPECT_EQ(V("tessera_gpus", {"gpu"}), 8);
  EXPECT_EQ(V("tessera_gpus_allocated", {"gpu"}), 8);
  EXPECT_EQ(V("tessera_gpu_allocation_ratio", {"gpu"}), 1);
  EXPECT_EQ(V("tessera_idle_nodes", {"gpu"}), 0);

  // t=10: 8 GPUs held for 10 s by team-a's a1 (label team=alpha), at $0.001 a GPU-second.
  collector_.Collect(*engine_, tracked_, 10);
  EXPECT_EQ(V("tessera_gpu_seconds_total", {"team-a", "default", "alpha"}), 80);
  EXPECT_NEAR(V("tessera_cost_dollars_total", {"team-a", "default", "alpha"}), 0.08, 1e-9);
  EXPECT_EQ(V("tessera_idle_node_seconds_total", {"gpu"}), 0);

  // team-b's b1 (1 pod x 4 GPUs) reclaims its quota: a1 is preempted whole.
  Workload b1 = WL("b1").Queue("team-b").Pods(1, 4).Obj();
  b1.runtime_estimate = 100;
  Submit(b1, 10);
  Cycle(10);
  Cycle(10);
  EXPECT_EQ(V("tessera_preempted_workloads_total", {"team-b", "InCohortReclamation"}), 1);
  EXPECT_EQ(V("tessera_evicted_workloads_total", {"team-a", "Preempted"}), 1);
  EXPECT_EQ(V("tessera_admitted_workloads_total", {"team-b"}), 1);

  // t=15: team-a's a2 (2 pods x 4 GPUs) cannot have 8 GPUs while b1 holds 4: it waits.
  Submit(WL("a2").Queue("team-a").Pods(2, 4).Obj(), 15);
  Cycle(15);
  EXPECT_GE(V("tessera_admission_attempts_total", {"inadmissible"}), 1);
  collector_.Collect(*engine_, tracked_, 20);
  const double pending_a = V("tessera_pending_workloads", {"team-a", "active"}) +
                           V("tessera_pending_workloads", {"team-a", "inadmissible"});
  EXPECT_EQ(pending_a, 1);
  EXPECT_EQ(V("tessera_pending_workloads", {"team-b", "active"}), 0);
  // One node idle (b1 holds the other) for the 10 s since the last collection.
  EXPECT_EQ(V("tessera_idle_nodes", {"gpu"}), 1);
  EXPECT_EQ(V("tessera_idle_node_seconds_total", {"gpu"}), 10);
  EXPECT_EQ(V("tessera_gpu_allocation_ratio", {"gpu"}), 0.5);
  // b1 held 4 GPUs for 10 s; it has no team label.
  EXPECT_EQ(V("tessera_gpu_seconds_total", {"team-b", "default", "(none)"}), 40);
  // a2's reservation and its expected wait, as the engine says.
  const ClusterQueueStats st = engine_->cluster_queue_stats(0);
  EXPECT_EQ(V("tessera_reservations", {"team-a"}), static_cast<double>(st.reservations));
  const WorkloadStatus& a2 = engine_->status(tracked_.back().id);
  if (a2.expected_start >= 0) {
    EXPECT_EQ(V("tessera_expected_wait_seconds", {"team-a", "1"}), a2.expected_start - 20);
  }
}

// Effective cost (allocated x measured utilization): a1 (8 GPUs, $0.001 a GPU-second) measured
// at 25 % for 10 s, then not measured for 10 s, then at 50 % for 20 s. By hand: GPU-seconds
// 8 x 40 = 320, allocated $0.32; effective GPU-seconds 8 x (10 x 0.25 + 20 x 0.5) = 100,
// effective $0.10.
TEST_F(MetricsCollectorTest, EffectiveCostIsAllocatedTimesMeasuredUtilization) {
  Workload a1 = WL("a1").Queue("team-a").Pods(2, 4).Obj();
  a1.labels["team"] = "alpha";
  Submit(a1, 0);
  Cycle(0);
  collector_.Collect(*engine_, tracked_, 0);
  const LabelValues team = {"team-a", "default", "alpha"};
  tracked_[0].utilization = 0.25;
  collector_.Collect(*engine_, tracked_, 10);
  tracked_[0].utilization.reset();
  collector_.Collect(*engine_, tracked_, 20);
  tracked_[0].utilization = 0.5;
  collector_.Collect(*engine_, tracked_, 40);
  EXPECT_EQ(V("tessera_gpu_seconds_total", team), 320);
  EXPECT_NEAR(V("tessera_cost_dollars_total", team), 0.32, 1e-9);
  EXPECT_NEAR(V("tessera_effective_gpu_seconds_total", team), 100, 1e-9);
  EXPECT_NEAR(V("tessera_effective_cost_dollars_total", team), 0.10, 1e-9);
}

TEST(PrometheusLabelName, KubernetesKeysBecomeLabelNames) {
  EXPECT_EQ(PrometheusLabelName("team"), "label_team");
  EXPECT_EQ(PrometheusLabelName("app.kubernetes.io/part-of"), "label_app_kubernetes_io_part_of");
}

}  // namespace
}  // namespace tessera::k8s
