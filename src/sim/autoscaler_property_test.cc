// Property tests of elastic clusters (docs/autoscaling.md) over random scenarios: one or two
// elastic NodePools (some spot, some provisioned at once or never scaled down), one ClusterQueue
// and up to 20 gangs arriving over time, in both scale-up modes. On the simulator's events:
//   - no pool ever has more than maxNodes nodes up; a pool without spot never fewer than
//     minNodes (a spot pool may, until the replacement for an interrupted node comes);
//   - gang-aware: no node is ever added for part of a gang;
//   - idle node-hours never exceed node-hours;
//   - a run is reproducible: the same scenario gives the same JSON document twice;
// and the simulator checks the engine's invariants (offline nodes hold and offer nothing,
// included) after every cycle.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/test_builders.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

using testing::CQ;
using testing::MakeModel;
using testing::MakeNode;
using testing::WL;

struct PoolGen {
  int gpus = 8;
  int min = 0, max = 1, start = 0;
  int provisioning = 0, scale_down = 0;
  bool spot = false;
  double rate = 0;
};

Model RandomModel() {
  const int npools = *rc::gen::inRange(1, 3);
  std::vector<Node> nodes;
  std::vector<NodePoolSpec> pools;
  for (int p = 0; p < npools; ++p) {
    PoolGen g;
    g.gpus = *rc::gen::element(4, 8);
    g.min = *rc::gen::inRange(0, 3);
    g.max = g.min + *rc::gen::inRange(1, 6);
    g.start = *rc::gen::inRange(g.min, g.max + 1);
    g.provisioning = *rc::gen::element(0, 60, 300);
    g.scale_down = *rc::gen::element(0, 300, 900);
    g.spot = *rc::gen::inRange(0, 3) == 0;
    g.rate = g.spot ? *rc::gen::element(0.5, 2.0) : 0;
    NodePoolSpec spec;
    spec.name = fmt::format("p{}", p);
    spec.first_node = static_cast<NodeId>(nodes.size());
    spec.num_nodes = g.max;
    spec.autoscaling = NodePoolAutoscaling{g.min, g.max, static_cast<double>(g.provisioning),
                                           static_cast<double>(g.scale_down)};
    spec.price_per_node_hour = 10.0 * (p + 1);
    if (g.spot) spec.spot = NodePoolSpot{0.6, g.rate, 120};
    for (int i = 0; i < g.max; ++i) {
      Node n = MakeNode(fmt::format("p{}-{}", p, i), g.gpus);
      n.pool = p;
      n.provisioned = i < g.start;
      nodes.push_back(std::move(n));
    }
    pools.push_back(std::move(spec));
  }
  Model m = MakeModel(std::move(nodes), {CQ("cq").Gpus("gpu", *rc::gen::inRange(8, 97)).Obj()});
  m.node_pools = std::move(pools);
  m.config.autoscaler.scale_up = *rc::gen::element(ScaleUpMode::kGangAware, ScaleUpMode::kPodByPod);
  m.config.autoscaler.seed = *rc::gen::inRange<uint64_t>(0, 1000);
  const int jobs = *rc::gen::inRange(1, 21);
  for (int j = 0; j < jobs; ++j) {
    WL wl(fmt::format("j{}", j));
    wl.Queue("cq").Pods(*rc::gen::inRange(1, 6), *rc::gen::element(1, 2, 4, 8));
    wl.Arrive(*rc::gen::inRange(0, 5000)).Runtime(*rc::gen::inRange(100, 4000));
    Workload w = wl.Obj();
    if (*rc::gen::inRange(0, 2) == 0) w.checkpoint_interval = 600;
    m.workloads.push_back(std::move(w));
  }
  return m;
}

RC_GTEST_PROP(AutoscalerProperty, NodeCountsStayInBoundsAndGangsAreNeverScaledPartly, ()) {
  const Model m = RandomModel();
  SimOptions opt;
  opt.verify = true;
  auto sim = Simulator::Create(m, opt);
  RC_ASSERT(sim.ok());
  const absl::Status st = (*sim)->Run();
  RC_ASSERT(st.ok());
  std::vector<int> up(m.node_pools.size(), 0);
  for (size_t p = 0; p < m.node_pools.size(); ++p) {
    const NodePoolSpec& spec = m.node_pools[p];
    for (NodeId n = spec.first_node; n < spec.first_node + spec.num_nodes; ++n)
      up[p] += m.nodes[n].provisioned;
  }
  const bool gang_aware = m.config.autoscaler.scale_up == ScaleUpMode::kGangAware;
  for (const SimEvent& e : (*sim)->events()) {
    if (e.node < 0) continue;
    const int p = m.nodes[e.node].pool;
    const NodePoolSpec& spec = m.node_pools[p];
    if (e.type == SimEvent::Type::kNodeAdded) {
      ++up[p];
      if (gang_aware) RC_ASSERT(e.reason.find("part of its gang") == std::string::npos);
    }
    if (e.type == SimEvent::Type::kNodeRemoved) --up[p];
    RC_ASSERT(up[p] <= spec.autoscaling->max_nodes);
    if (!spec.spot) RC_ASSERT(up[p] >= spec.autoscaling->min_nodes);
  }
  for (const PoolUsage& u : (*sim)->summary().node_pools) {
    RC_ASSERT(u.node_hours >= 0);
    RC_ASSERT(u.idle_node_hours <= u.node_hours + 1e-9);
    RC_ASSERT(u.peak_nodes <=
              m.node_pools[&u - (*sim)->summary().node_pools.data()].autoscaling->max_nodes);
  }
  auto again = Simulator::Create(m, opt);
  RC_ASSERT(again.ok());
  RC_ASSERT((*again)->Run().ok());
  RC_ASSERT((*again)->ToJson() == (*sim)->ToJson());
}

}  // namespace
}  // namespace tessera
