// A serve that runs for long holds the workloads in flight, not every one it has seen (issue 33,
// "a million jobs in bounded memory"), against a real kube-apiserver and etcd. Rounds of gangs
// and single pods bind and leave; a gang that loses a pod while running goes on under a new
// engine id (a resubmission). After each round the engine holds nothing (every id that ended
// was retired at the end of its turn of the loop), and the next round is decided as the first.
// Skipped, with the reason printed, when the API server is not built.
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/controller.h"
#include "k8s/integration/queue_cluster_test.h"
#include "k8s/observe/metrics.h"
#include "tests/k8s/test_cluster.h"

namespace tessera::k8s {
namespace {

using testing::json;
using testing::TestCluster;

constexpr double kTimeout = 90;  // generous: ASan builds on a loaded 2-core machine

class K8sLongRun : public testing_queues::QueueClusterTest {};

TEST_F(K8sLongRun, EndedWorkloadsAreLetGoAndTheNextRoundIsDecidedAsTheFirst) {
  cluster_->CreateNodes(2, 4, "gpu");
  CreateFlavor();
  cluster_->Create(testing_queues::ClusterQueueObject("main", 8));
  CreateLocalQueue("default", "lq", "main");
  Controller* tessera = StartTessera();
  Metrics& metrics = *metrics_list_.back();

  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    const std::string gang = fmt::format("gang{}", round);
    const std::string solo = fmt::format("solo{}-", round);
    // A gang of four one-GPU pods and four single pods: the cluster's eight GPUs.
    CreateGang("default", gang, 4, json::object());
    for (int i = 0; i < 4; ++i)
      cluster_->Create(cluster_->PodSpec("default", solo + std::to_string(i), 1, "tessera",
                                         {{"kueue.x-k8s.io/queue-name", "lq"}}));
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] { return Bound("default", gang + "-") == 4 && Bound("default", solo) == 4; },
        kTimeout));
    ExpectNoDoubleBooking({"default"}, 4);
    EXPECT_EQ(tessera->snapshot().engine_workloads, 5);
    // One of the gang's pods leaves: the rest goes on under a new id, the old one ends.
    const int64_t resubmits = metrics.resubmits.load();
    const int64_t rebuilds = tessera->snapshot().rebuilds;  // a new engine would hold nothing too
    cluster_->DeletePod("default", gang + "-0");
    ASSERT_TRUE(
        TestCluster::WaitFor([&] { return metrics.resubmits.load() > resubmits; }, kTimeout));
    // Everything leaves: the engine lets go of all of it.
    for (int i = 1; i < 4; ++i) cluster_->DeletePod("default", fmt::format("{}-{}", gang, i));
    for (int i = 0; i < 4; ++i) cluster_->DeletePod("default", solo + std::to_string(i));
    ASSERT_TRUE(TestCluster::WaitFor(
        [&] {
          return CountWithPrefix("default", "") == 0 && tessera->snapshot().engine_workloads == 0;
        },
        kTimeout))
        << "the engine still holds " << tessera->snapshot().engine_workloads << " workloads";
    EXPECT_EQ(tessera->snapshot().rebuilds, rebuilds) << "let go by a rebuild, not retired";
  }
}

}  // namespace
}  // namespace tessera::k8s
