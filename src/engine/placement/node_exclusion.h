// Why no node can take a pod of a pod set, rule by rule: each node is counted under the first
// rule it fails, in the order a user checks them (nodeSelector, required node affinity, taints,
// size), and the rule is named ("nvidia.com/gpu.count Gt 8", "dedicated=infer:NoSchedule"). The
// issue "Hard to break" saw a node affinity that excluded every node explained as a size that no
// node could hold.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <string>
#include <vector>

#include "model/labels.h"
#include "model/model.h"

namespace tessera {

// "of 12 nodes, 8 fail its node affinity (nvidia.com/gpu.count Gt 8), 4 have a taint it does
// not tolerate (dedicated=infer:NoSchedule)"; "" when every node of `nodes` passes the label
// and taint rules (what keeps the pods off them is size, or state such as anti-affinity).
// `flavor_tolerations` join the pod set's own, as a flavor's do. Nodes too small are counted
// too, as "N are too small for cpu=8, nvidia.com/gpu=2 per pod".
std::string ExplainNodeExclusions(const Model& m, const PodSet& set,
                                  const std::vector<NodeId>& nodes,
                                  const std::vector<Toleration>& flavor_tolerations);

// "nvidia.com/gpu.count Gt 8", "zone In [a, b]", "gpu Exists".
std::string DescribeRequirement(const SelectorRequirement& r);

}  // namespace tessera
