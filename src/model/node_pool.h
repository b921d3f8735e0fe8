// A NodePool as declared (tessera.dev/v1alpha1 NodePool, docs/manifests.md): the nodes it
// expanded to, and, for an elastic pool (spec.autoscaling, docs/autoscaling.md), how many of them
// may exist, how fast they come and go, what a node-hour costs and how often a spot node is taken
// back. An elastic pool's nodes are all in Model::nodes (maxNodes of them, ids
// [first_node, first_node + num_nodes)); those not provisioned yet have Node::provisioned false.
//
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/node.h"

namespace tessera {

struct NodePoolAutoscaling {
  int64_t min_nodes = 0;                  // spec.autoscaling.minNodes
  int64_t max_nodes = 0;                  // spec.autoscaling.maxNodes (>= minNodes, >= 1)
  double provisioning_seconds = 0;        // spec.autoscaling.provisioningSeconds
  double scale_down_after_seconds = 600;  // spec.autoscaling.scaleDownAfterSeconds
};

struct NodePoolSpot {
  double discount = 0;                     // spec.spot.discount: fraction off the price, [0, 1)
  double interruptions_per_node_hour = 0;  // spec.spot.interruptionsPerNodeHour
  double notice_seconds = 120;             // spec.spot.noticeSeconds (AWS's two minutes)
};

struct NodePoolSpec {
  std::string name;
  NodeId first_node = 0;  // index in Model::nodes of node 0 of the pool
  int32_t num_nodes = 0;  // nodes expanded: spec.count, or maxNodes when elastic
  std::optional<NodePoolAutoscaling> autoscaling;
  // spec.pricePerNodeHour: dollars per node-hour before the spot discount; absent: from
  // SchedulerConfig spec.pricing (docs/cost.md) when given.
  std::optional<double> price_per_node_hour;
  std::optional<NodePoolSpot> spot;
  std::string source;  // "file:line"
};

}  // namespace tessera
