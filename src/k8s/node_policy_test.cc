// Serve's rules for nodes autoscalers add and remove (node_policy.h).
#include "k8s/node_policy.h"

#include <gtest/gtest.h>

namespace tessera::k8s {
namespace {

Node WithTaint(const std::string& key, const std::string& value, TaintEffect effect) {
  Node n;
  n.taints.push_back({key, value, effect});
  return n;
}

TEST(NodePolicy, NodesBeingRemovedAreRecognised) {
  EXPECT_FALSE(BeingRemoved(Node{}));
  EXPECT_TRUE(BeingRemoved(
      WithTaint("ToBeDeletedByClusterAutoscaler", "1732400000", TaintEffect::kNoSchedule)));
  EXPECT_TRUE(BeingRemoved(WithTaint("karpenter.sh/disrupted", "", TaintEffect::kNoSchedule)));
  EXPECT_TRUE(
      BeingRemoved(WithTaint("karpenter.sh/disruption", "disrupting", TaintEffect::kNoSchedule)));
  // The Cluster Autoscaler's soft mark is not a removal.
  EXPECT_FALSE(BeingRemoved(
      WithTaint("DeletionCandidateOfClusterAutoscaler", "1", TaintEffect::kPreferNoSchedule)));
  EXPECT_FALSE(
      BeingRemoved(WithTaint("karpenter.sh/disrupted", "", TaintEffect::kPreferNoSchedule)));
}

TEST(NodePolicy, SpotLabels) {
  NodePolicyOptions o;
  Node n;
  EXPECT_FALSE(IsSpot(n, o));
  n.labels["karpenter.sh/capacity-type"] = "on-demand";
  EXPECT_FALSE(IsSpot(n, o));
  n.labels["karpenter.sh/capacity-type"] = "spot";
  EXPECT_TRUE(IsSpot(n, o));
  Node g;
  g.labels["cloud.google.com/gke-spot"] = "true";
  EXPECT_TRUE(IsSpot(g, o));
  Node e;
  e.labels["eks.amazonaws.com/capacityType"] = "SPOT";
  EXPECT_TRUE(IsSpot(e, o));
  Node mine;
  mine.labels["pool"] = "cheap";
  EXPECT_FALSE(IsSpot(mine, o));
  o.spot_labels.push_back({"pool", "cheap"});
  EXPECT_TRUE(IsSpot(mine, o));
}

TEST(NodePolicy, SpotNodesAreForTheInterruptibleAndPreferredByThem) {
  NodePolicyOptions o;
  Node spot, on_demand, other;
  spot.labels = {{"karpenter.sh/capacity-type", "spot"}, {"zone", "a"}};
  on_demand.labels = {{"karpenter.sh/capacity-type", "on-demand"}, {"zone", "a"}};
  other.labels = {{"zone", "b"}};

  Workload w;
  PodSet plain, tolerant, zoned;
  tolerant.annotations[kInterruptibleAnnotation] = "true";
  zoned.affinity.required_terms.push_back({{{"zone", SelectorOp::kIn, {"a"}}}});
  w.pod_sets = {plain, tolerant, zoned};
  ApplySpotPolicy(w, o);
  const PodSet& p = w.pod_sets[0];
  EXPECT_FALSE(Matches(p.affinity, spot.labels));
  EXPECT_TRUE(Matches(p.affinity, on_demand.labels));
  EXPECT_TRUE(Matches(p.affinity, other.labels));  // no label at all: not spot
  const PodSet& t = w.pod_sets[1];
  EXPECT_TRUE(Matches(t.affinity, spot.labels));
  EXPECT_TRUE(Matches(t.affinity, on_demand.labels));
  EXPECT_GT(PreferredAffinityScore(t.affinity, spot.labels),
            PreferredAffinityScore(t.affinity, on_demand.labels));
  // The pod's own rule still holds, and spot is kept out of it.
  const PodSet& z = w.pod_sets[2];
  EXPECT_FALSE(Matches(z.affinity, spot.labels));
  EXPECT_TRUE(Matches(z.affinity, on_demand.labels));
  EXPECT_FALSE(Matches(z.affinity, other.labels));

  // Off: nothing changes.
  Workload off;
  off.pod_sets = {plain};
  o.spot_policy = false;
  ApplySpotPolicy(off, o);
  EXPECT_TRUE(off.pod_sets[0].affinity.required_terms.empty());
}

}  // namespace
}  // namespace tessera::k8s
