#include "sim/autoscaler.h"

#include <algorithm>
#include <cmath>

#include "cost/pricing.h"
#include "fmt/format.h"
#include "sim/simulator.h"

namespace tessera {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Dollars per node-hour of a pool's node before any spot discount: spec.pricePerNodeHour, else
// what SchedulerConfig spec.pricing charges for its GPUs, cores and memory; none when neither.
std::optional<double> NodePrice(const Model& m, const NodePoolSpec& p,
                                const cost::NodeFlavors& flavors) {
  if (p.price_per_node_hour) return p.price_per_node_hour;
  const PricingConfig& pricing = m.config.pricing;
  if (!pricing.present || p.num_nodes == 0) return std::nullopt;
  const Node& node = m.nodes[p.first_node];
  const std::string& flavor = flavors.of(p.first_node);
  double price = 0;
  bool any = false;
  auto add = [&](const PriceTable& t, double units) {
    if (units <= 0) return;
    if (auto v = cost::LookUpPrice(t, flavor, node.gpu_model)) {
      price += *v * units;
      any = true;
    }
  };
  add(pricing.gpu_hour, static_cast<double>(node.physical_gpus()));
  add(pricing.cpu_hour, static_cast<double>(node.allocatable[kCpu]) / 1000.0);
  add(pricing.memory_gib_hour, static_cast<double>(node.allocatable[kMemory]) / kBytesPerGiB);
  if (!any) return std::nullopt;
  if (!p.spot) price *= cost::SpotFactor(pricing, flavor);
  return price;
}

}  // namespace

Autoscaler::Autoscaler(Scheduler& s, std::optional<ScaleUpMode> mode)
    : s_(s),
      mode_(mode.value_or(s.model().config.autoscaler.scale_up)),
      rng_(s.model().config.autoscaler.seed) {
  const Model& m = s.model();
  nodes_.resize(m.nodes.size());
  pool_of_.assign(m.nodes.size(), -1);
  cost::NodeFlavors flavors(m);
  for (const NodePoolSpec& spec : m.node_pools) {
    Pool p;
    p.spec = &spec;
    if (spec.num_nodes > 0) p.gpus = m.nodes[spec.first_node].physical_gpus();
    p.price = NodePrice(m, spec, flavors);
    if (p.price && spec.spot) *p.price *= 1 - spec.spot->discount;
    elastic_ = elastic_ || spec.autoscaling.has_value();
    const auto pi = static_cast<int32_t>(pools_.size());
    for (NodeId n = spec.first_node; n < spec.first_node + spec.num_nodes; ++n) {
      pool_of_[n] = pi;
      if (!s_.node_online(n)) continue;
      nodes_[n].state = State::kUp;
      nodes_[n].up_since = 0;
      ++p.up;
    }
    p.peak = p.up;
    pools_.push_back(p);
  }
  for (NodeId n = 0; n < static_cast<NodeId>(nodes_.size()); ++n)
    if (pool_of_[n] >= 0 && nodes_[n].state == State::kUp) BecameEmpty(0, n);
  // Spot interruptions of the nodes up at the start, in node order (reproducible).
  for (NodeId n = 0; n < static_cast<NodeId>(nodes_.size()); ++n) {
    if (pool_of_[n] < 0 || nodes_[n].state != State::kUp) continue;
    const double t = DrawInterruption(0, pools_[pool_of_[n]]);
    if (std::isfinite(t)) due_.emplace(t, kNoticeDue, n);
  }
}

std::string Autoscaler::Key(WorkloadId id) const { return s_.model().workloads[id].Key(); }

double Autoscaler::DrawInterruption(double now, const Pool& p) {
  if (!p.spec->spot || p.spec->spot->interruptions_per_node_hour <= 0)
    return std::numeric_limits<double>::infinity();
  // Exponential waiting time, drawn by hand from 53 random bits so that every platform's
  // standard library gives the same run.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
  const double rate = p.spec->spot->interruptions_per_node_hour / kSecondsPerHour;
  // Whole seconds (rounded up), so that timelines read cleanly.
  return std::ceil(now + -std::log1p(-u) / rate);
}

double Autoscaler::Next(bool with_spot) const {
  for (const auto& [t, kind, n] : due_) {
    if (kind == kScaleDown) {
      // Only one that would remove the node (else it would stretch the run for nothing).
      const NodeRec& r = nodes_[n];
      const Pool& p = pools_[pool_of_[n]];
      if (r.state != State::kUp || r.empty_since < 0 || p.up <= p.spec->autoscaling->min_nodes ||
          t < r.empty_since + p.spec->autoscaling->scale_down_after_seconds)
        continue;
      return t;
    }
    if (with_spot || (kind != kNoticeDue && kind != kInterrupt)) return t;
  }
  return std::numeric_limits<double>::infinity();
}

void Autoscaler::Account(double now) {
  const double dt = now - last_;
  if (dt > 0) {
    for (Pool& p : pools_) {
      p.node_seconds += p.up * dt;
      p.idle_seconds += p.idle * dt;
    }
    waiting_gang_gpu_seconds_ += waiting_gpus_ * dt;
  }
  last_ = now;
}

void Autoscaler::BecameEmpty(double now, NodeId n) {
  NodeRec& r = nodes_[n];
  Pool& p = pools_[pool_of_[n]];
  ++p.idle;
  if (r.state != State::kUp) return;  // under notice: it goes anyway
  r.empty_since = now;
  if (p.spec->autoscaling)
    due_.emplace(now + p.spec->autoscaling->scale_down_after_seconds, kScaleDown, n);
}

void Autoscaler::BecameBusy(NodeId n) {
  NodeRec& r = nodes_[n];
  --pools_[pool_of_[n]].idle;
  r.empty_since = -1;
  if (r.booked_for >= 0) booked_.erase(n);
  r.booked_for = -1;  // in use: it serves someone
}

void Autoscaler::Placed(WorkloadId id, const std::vector<PodPlacement>& pods, double) {
  std::vector<NodeId>& on = on_[id];
  for (const PodPlacement& p : pods) {
    on.push_back(p.node);
    if (pool_of_[p.node] < 0) continue;
    if (nodes_[p.node].pods++ == 0) BecameBusy(p.node);
  }
}

void Autoscaler::Released(WorkloadId id, double now) {
  auto it = on_.find(id);
  if (it == on_.end()) return;
  for (NodeId n : it->second) {
    if (pool_of_[n] < 0) continue;
    if (--nodes_[n].pods == 0) BecameEmpty(now, n);
  }
  on_.erase(it);
}

void Autoscaler::Request(double now, int32_t pool, NodeId n, WorkloadId for_workload,
                         bool whole_gang) {
  NodeRec& r = nodes_[n];
  r.state = State::kComing;
  r.requested_at = now;
  r.booked_for = for_workload;
  r.booked_key = for_workload >= 0 ? Key(for_workload) : "";
  r.whole_gang = whole_gang;
  if (for_workload >= 0) booked_.insert(n);
  ++pools_[pool].coming;
  due_.emplace(now + pools_[pool].spec->autoscaling->provisioning_seconds, kReady, n);
}

void Autoscaler::BringUp(double now, NodeId n, std::vector<SimEvent>& events) {
  NodeRec& r = nodes_[n];
  Pool& p = pools_[pool_of_[n]];
  r.state = State::kUp;
  r.up_since = now;
  r.empty_since = -1;
  --p.coming;
  ++p.up;
  ++p.added;
  p.peak = std::max(p.peak, p.up);
  s_.SetNodeOnline(n, true);
  BecameEmpty(now, n);
  SimEvent e;
  e.time = now;
  e.type = SimEvent::Type::kNodeAdded;
  e.node = n;
  e.reason = r.booked_for >= 0
                 ? fmt::format("requested at t={:.0f}s for {}{}", r.requested_at, r.booked_key,
                               r.whole_gang ? "" : " (part of its gang)")
                 : fmt::format("requested at t={:.0f}s to keep minNodes {}", r.requested_at,
                               p.spec->autoscaling->min_nodes);
  events.push_back(std::move(e));
  const double t = DrawInterruption(now, p);
  if (std::isfinite(t)) due_.emplace(t, kNoticeDue, n);
}

void Autoscaler::TakeDown(double now, NodeId n, const std::string& reason,
                          std::vector<SimEvent>& events) {
  NodeRec& r = nodes_[n];
  Pool& p = pools_[pool_of_[n]];
  r.up_seconds += now - r.up_since;
  r.state = State::kOff;
  booked_.erase(n);
  r.booked_for = -1;
  r.empty_since = -1;
  --p.idle;  // it goes empty: what ran on it was evicted first
  --p.up;
  ++p.removed;
  s_.SetNodeCordoned(n, false);
  s_.SetNodeOnline(n, false);
  SimEvent e;
  e.time = now;
  e.type = SimEvent::Type::kNodeRemoved;
  e.node = n;
  e.reason = reason;
  events.push_back(std::move(e));
}

void Autoscaler::ReplaceToMin(double now, int32_t pool) {
  Pool& p = pools_[pool];
  if (!p.spec->autoscaling) return;
  for (NodeId n = p.spec->first_node; n < p.spec->first_node + p.spec->num_nodes &&
                                      p.up + p.coming < p.spec->autoscaling->min_nodes;
       ++n)
    if (nodes_[n].state == State::kOff) Request(now, pool, n, -1, true);
}

bool Autoscaler::Advance(double now, std::vector<SimEvent>& events,
                         std::vector<Decision>& evicted) {
  bool changed = false;
  while (!due_.empty() && std::get<0>(*due_.begin()) <= now) {
    auto [t, kind, n] = *due_.begin();
    due_.erase(due_.begin());
    NodeRec& r = nodes_[n];
    Pool& p = pools_[pool_of_[n]];
    switch (kind) {
      case kReady:
        if (r.state == State::kComing) BringUp(now, n, events);
        break;
      case kNoticeDue: {
        if (r.state != State::kUp) break;
        r.state = State::kNotice;
        ++p.interrupted;
        s_.SetNodeCordoned(n, true);
        const double at = now + p.spec->spot->notice_seconds;
        SimEvent e;
        e.time = now;
        e.type = SimEvent::Type::kNodeInterrupted;
        e.node = n;
        e.reason = fmt::format("spot interruption notice: the node goes at t={:.0f}s", at);
        events.push_back(std::move(e));
        due_.emplace(at, kInterrupt, n);
        break;
      }
      case kInterrupt: {
        if (r.state != State::kNotice) break;
        for (WorkloadId id : s_.WorkloadsOnNode(n)) {
          evicted.push_back(s_.EvictForNode(
              id, fmt::format("spot node {} was interrupted", s_.model().nodes[n].name)));
          Released(id, now);
        }
        TakeDown(now, n, "spot interruption", events);
        ReplaceToMin(now, pool_of_[n]);
        changed = true;
        break;
      }
      case kScaleDown: {
        // `t`, not `now`: an entry of an earlier empty spell (the node was busy since) is
        // due before this spell's end and removes nothing.
        if (r.state != State::kUp || r.empty_since < 0 ||
            t < r.empty_since + p.spec->autoscaling->scale_down_after_seconds || r.pods > 0 ||
            !s_.node_empty(n) || p.up <= p.spec->autoscaling->min_nodes)
          break;
        TakeDown(now, n,
                 fmt::format("empty for {:.0f}s (scaleDownAfterSeconds)", now - r.empty_since),
                 events);
        break;
      }
    }
  }
  return changed;
}

void Autoscaler::AfterCycles(double now, bool plan) {
  // Nodes added for a workload that still waits, up and empty: paid GPUs a gang does not use.
  waiting_gpus_ = 0;
  for (auto it = booked_.begin(); it != booked_.end();) {
    NodeRec& r = nodes_[*it];
    if (r.booked_for < 0 || s_.retired(r.booked_for) ||
        s_.status(r.booked_for).state != WorkloadState::kPending) {
      r.booked_for = -1;
      it = booked_.erase(it);
      continue;
    }
    if ((r.state == State::kUp || r.state == State::kNotice) && r.pods == 0)
      waiting_gpus_ += pools_[pool_of_[*it]].gpus;
    ++it;
  }
  if (!plan || !elastic_) return;
  std::vector<NodeGroupOffer> offers;
  std::vector<int32_t> offer_pool;
  std::vector<NodeId> coming;
  for (size_t pi = 0; pi < pools_.size(); ++pi) {
    const Pool& p = pools_[pi];
    const NodePoolSpec& spec = *p.spec;
    for (NodeId n = spec.first_node; n < spec.first_node + spec.num_nodes; ++n)
      if (nodes_[n].state == State::kComing) coming.push_back(n);
    if (!spec.autoscaling) continue;
    NodeGroupOffer o;
    o.node_price = p.price.value_or(0);
    const int64_t room = spec.autoscaling->max_nodes - p.up - p.coming;
    for (NodeId n = spec.first_node;
         n < spec.first_node + spec.num_nodes && static_cast<int64_t>(o.addable.size()) < room; ++n)
      if (nodes_[n].state == State::kOff) o.addable.push_back(n);
    if (o.addable.empty()) continue;
    offers.push_back(std::move(o));
    offer_pool.push_back(static_cast<int32_t>(pi));
  }
  if (offers.empty()) return;
  const auto requests =
      s_.PlanScaleUp(offers, coming, mode_, s_.model().config.autoscaler.max_workloads_per_plan);
  for (const NodeRequest& req : requests)
    for (NodeId n : req.nodes) Request(now, offer_pool[req.group], n, req.workload, req.whole_gang);
}

std::vector<PoolUsage> Autoscaler::Usage() const {
  std::vector<PoolUsage> out;
  for (const Pool& p : pools_) {
    PoolUsage u;
    u.pool = p.spec->name;
    u.elastic = p.spec->autoscaling.has_value();
    u.spot = p.spec->spot.has_value();
    u.peak_nodes = p.peak;
    u.nodes_at_end = p.up;
    u.node_hours = p.node_seconds / kSecondsPerHour;
    u.idle_node_hours = p.idle_seconds / kSecondsPerHour;
    u.gpu_hours = u.node_hours * p.gpus;
    u.added = p.added;
    u.removed = p.removed;
    u.interrupted = p.interrupted;
    u.price_per_node_hour = p.price;
    if (p.price) {
      u.cost = u.node_hours * *p.price;
      u.idle_cost = u.idle_node_hours * *p.price;
    }
    out.push_back(std::move(u));
  }
  return out;
}

std::vector<double> Autoscaler::NodeUptime(double end) const {
  std::vector<double> out(nodes_.size(), 0);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const NodeRec& r = nodes_[n];
    if (pool_of_[n] < 0) {
      out[n] = s_.node_online(static_cast<NodeId>(n)) ? end : 0;  // a Node object: always up
      continue;
    }
    out[n] = r.up_seconds;
    if (r.state == State::kUp || r.state == State::kNotice) out[n] += end - r.up_since;
  }
  return out;
}

}  // namespace tessera
