// GPU shares counted against nvidia.com/gpu quota (ClusterQueue::shares_in_gpu_quota): a share
// of 500 milli uses 0.5 of a GPU, exactly, and only where the queue says so.
#include "engine/scheduler.h"
#include "engine/test_scheduler.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::Cycle;
using testing::MakeModel;
using testing::MakeNode;
using testing::Start;
using testing::WL;

// A queue with 1 GPU of quota on a node of 2; a 0.5 share at 0, a whole GPU after it.
Model ShareModel(bool shares_in_gpu_quota) {
  ClusterQueue cq = CQ("cq").Gpus("gpu", 1).Obj();
  cq.shares_in_gpu_quota = shares_in_gpu_quota;
  Model m = MakeModel({MakeNode("n1", 2)}, {cq});
  Workload share = WL("share").Queue("cq").Pods(1, 0).Obj();
  share.pod_sets[0].requests[kGpuMilli] = 500;
  m.workloads.push_back(share);
  m.workloads.push_back(WL("whole").Queue("cq").Pods(1, 1).Obj());
  return m;
}

TEST(ShareQuotaTest, AHalfShareUsesHalfAGpuOfQuota) {
  auto s = Start(ShareModel(true));
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 1);
  Cycle(*s, 1);
  EXPECT_EQ(s->status(0).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->status(1).state, WorkloadState::kPending);
  EXPECT_NE(s->status(1).reason.find("ClusterQueue cq uses 0.5 of nominal 1"), std::string::npos)
      << s->status(1).reason;
  EXPECT_EQ(s->ClusterQueueUsage(0, 0)[kGpu], 1);  // whole devices, rounded up
}

TEST(ShareQuotaTest, WithoutTheAnnotationSharesLeaveTheGpuQuotaAlone) {
  auto s = Start(ShareModel(false));
  s->Submit(0, 0);
  Cycle(*s, 0);
  s->Submit(1, 1);
  Cycle(*s, 1);
  EXPECT_EQ(s->status(1).state, WorkloadState::kAdmitted);
  EXPECT_EQ(s->ClusterQueueUsage(0, 0)[kGpu], 1);
}

}  // namespace
}  // namespace tessera
