#include "engine/dra_state.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "fmt/format.h"

namespace tessera {
namespace {

int64_t MinDevices(const dra::ClaimInput& in) {
  int64_t n = 0;
  for (const dra::RequestInput& r : in.requests) {
    int64_t least = INT64_MAX;
    for (const dra::AltInput& a : r.alternatives) least = std::min(least, a.all ? 1 : a.count);
    n += least == INT64_MAX ? 0 : least;
  }
  return n;
}

dra::ClaimInput MakeInput(const dra::Claim& c, const std::string& what, dra::FilterBank& bank) {
  dra::ClaimInput in;
  in.name = what + " " + c.ns + "/" + c.name;
  for (const dra::DeviceRequest& r : c.spec.requests) {
    dra::RequestInput req;
    req.name = r.name;
    for (const dra::ExactRequest& e : r.alternatives)
      req.alternatives.push_back({e.name, bank.Register(e.device_class, e.selectors), e.all,
                                  e.count, &e.tolerations,
                                  e.capacity_requests.empty() ? nullptr : &e.capacity_requests});
    in.requests.push_back(std::move(req));
  }
  for (const dra::Constraint& k : c.spec.constraints) {
    dra::ConstraintInput ci;
    ci.match_attribute = k.match_attribute;
    for (const std::string& name : k.requests)
      for (size_t i = 0; i < c.spec.requests.size(); ++i)
        if (c.spec.requests[i].name == name) ci.requests.push_back(static_cast<int32_t>(i));
    in.constraints.push_back(std::move(ci));
  }
  return in;
}

}  // namespace

std::vector<std::pair<NodeId, const dra::Device*>> DraDevices(const Model& model) {
  std::vector<std::pair<NodeId, const dra::Device*>> out;
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    auto it = model.dra.nodes.find(model.nodes[n].name);
    if (it == model.dra.nodes.end()) continue;
    for (const dra::NodeDevice& d : it->second.devices)
      out.emplace_back(static_cast<NodeId>(n), &d.device);
  }
  return out;
}

DraState::DraState(const Model& model, dra::SelectorCompiler compiler) : model_(model) {
  nodes_.resize(model.nodes.size());
  for (size_t n = 0; n < model.nodes.size(); ++n) {
    NodeIndex& ni = nodes_[n];
    ni.first = static_cast<int32_t>(devices_.size());
    auto it = model.dra.nodes.find(model.nodes[n].name);
    if (it == model.dra.nodes.end()) continue;
    ni.devices = &it->second;
    ni.in_use.assign(it->second.devices.size(), false);
    ni.shares.assign(it->second.devices.size(), {});
    ni.free = static_cast<int64_t>(it->second.devices.size());
    for (const dra::NodeDevice& d : it->second.devices) {
      devices_.push_back(&d.device);
      device_node_.push_back(static_cast<NodeId>(n));
      ni.any_shared = ni.any_shared || d.device.allow_multiple_allocations;
    }
  }
  holders_.assign(devices_.size(), 0);
  bank_ = std::make_unique<dra::FilterBank>(model.dra, devices_, std::move(compiler));
  for (const dra::Claim& c : model.dra.claims)
    claim_inputs_.push_back(MakeInput(c, "ResourceClaim", *bank_));
  for (const dra::Claim& c : model.dra.templates)
    template_inputs_.push_back(MakeInput(c, "the claim of ResourceClaimTemplate", *bank_));
  shared_.resize(model.dra.claims.size());
  for (const auto& in : claim_inputs_) claim_min_.push_back(MinDevices(in));
  for (const auto& in : template_inputs_) template_min_.push_back(MinDevices(in));
  PinAllocated();
}

void DraState::PinAllocated() {
  std::map<std::string, NodeId> by_name;
  for (size_t n = 0; n < model_.nodes.size(); ++n)
    by_name.emplace(model_.nodes[n].name, static_cast<NodeId>(n));
  for (size_t c = 0; c < model_.dra.claims.size(); ++c) {
    const auto& alloc = model_.dra.claims[c].allocation;
    if (!alloc) continue;
    SharedClaim& sc = shared_[c];
    sc.pinned = true;
    auto it = by_name.find(alloc->node);
    if (it == by_name.end() || nodes_[it->second].devices == nullptr) continue;
    const NodeIndex& ni = nodes_[it->second];
    const auto& devs = ni.devices->devices;
    DraAllocation a;
    // What the claim's shares add to each shared device's consumption, to check they fit.
    std::map<int32_t, std::map<std::string, int64_t>> adds;
    for (const dra::AllocatedDevice& want : alloc->devices) {
      int32_t found = -1;
      for (size_t d = 0; d < devs.size() && found < 0; ++d)
        if (devs[d].device.name == want.device && devs[d].device.pool == want.pool &&
            devs[d].device.driver == want.driver &&
            (devs[d].device.allow_multiple_allocations || !ni.in_use[d]))
          found = static_cast<int32_t>(d);
      if (found < 0) break;
      if (devs[found].device.allow_multiple_allocations)
        for (const auto& [name, amount] : want.consumed) adds[found][name] += amount;
      a.devices.push_back(ni.first + found);
      a.requests.push_back(want.request);
      a.consumed.push_back(want.consumed);
    }
    bool fits = true;
    for (const auto& [d, add] : adds)
      for (const auto& [name, amount] : add) {
        auto cap = devs[d].capacities.find(name);
        const auto& used = ni.shares[d].consumed;
        auto u = used.find(name);
        fits = fits && cap != devs[d].capacities.end() &&
               amount <= cap->second.value - (u == used.end() ? 0 : u->second);
      }
    // Every device seen, and free (or with room for the shares): taken here. Otherwise the
    // claim holds devices this engine cannot see (a slice gone) or that another claim holds
    // too: its pods wait.
    if (a.devices.size() != alloc->devices.size() || !fits) continue;
    sc.node = it->second;
    sc.devices = a;
    Mark(sc.node, a, true);
  }
}

int64_t DraState::Demand(const Workload& w, int ps) const {
  int64_t n = 0;
  for (const dra::PodClaim& pc : w.pod_sets[ps].claims) {
    if (pc.template_ >= 0) n += template_min_[pc.template_];
    if (pc.claim >= 0 && !shared_[pc.claim].allocated()) n += claim_min_[pc.claim];
  }
  return n;
}

bool DraState::Inputs(const Workload& w, int ps, NodeId n, std::vector<dra::ClaimInput>& in,
                      std::vector<int32_t>& which, std::string* why) const {
  const auto& claims = w.pod_sets[ps].claims;
  for (size_t i = 0; i < claims.size(); ++i) {
    const dra::PodClaim& pc = claims[i];
    if (!pc.unsupported.empty()) {
      if (why != nullptr) *why = pc.unsupported;
      return false;
    }
    if (pc.template_ >= 0) {
      in.push_back(template_inputs_[pc.template_]);
    } else if (pc.claim >= 0) {
      const SharedClaim& sc = shared_[pc.claim];
      if (sc.allocated()) {
        if (sc.node == n) continue;  // allocated on this node already
        if (why == nullptr) return false;
        if (sc.node < 0)
          *why = fmt::format(
              "ResourceClaim {}/{} is allocated to devices no node of this "
              "cluster publishes now (status.allocation)",
              w.ns, pc.claim_name);
        else if (sc.pinned && sc.pods == 0)
          *why = fmt::format("ResourceClaim {}/{} is allocated on node {} (status.allocation)",
                             w.ns, pc.claim_name, model_.nodes[sc.node].name);
        else
          *why = fmt::format(
              "ResourceClaim {}/{} is allocated on node {}, which its other pods "
              "use",
              w.ns, pc.claim_name, model_.nodes[sc.node].name);
        return false;
      }
      in.push_back(claim_inputs_[pc.claim]);
    } else {
      if (why != nullptr)
        *why = fmt::format("{} {}/{} does not exist",
                           pc.claim_name.empty() ? "ResourceClaimTemplate" : "ResourceClaim", w.ns,
                           pc.claim_name.empty() ? pc.template_name : pc.claim_name);
      return false;
    }
    which.push_back(static_cast<int32_t>(i));
  }
  return true;
}

dra::AllocateOutcome DraState::Run(const std::vector<dra::ClaimInput>& in, NodeId n,
                                   bool empty_node) {
  const NodeIndex& ni = nodes_[n];
  if (in.empty()) {
    dra::AllocateOutcome ok;
    ok.ok = true;
    return ok;
  }
  std::vector<bool> none;
  if (empty_node) none.assign(ni.in_use.size(), false);
  dra::NodeView view{ni.devices, empty_node ? &none : &ni.in_use,
                     empty_node ? nullptr : &ni.counters,
                     empty_node || !ni.any_shared ? nullptr : &ni.shares};
  const int32_t first = ni.first;
  return dra::Allocate(
      in, view, [&](int32_t filter, int32_t d) { return bank_->Matches(filter, first + d); });
}

bool DraState::Feasible(const Workload& w, int ps, NodeId n, bool empty_node) {
  if (w.pod_sets[ps].claims.empty()) return true;
  const NodeIndex& ni = nodes_[n];
  // A shared device may serve several requests of the pod: no bound by count then.
  const int64_t have = ni.any_shared ? INT64_MAX
                       : empty_node  ? static_cast<int64_t>(ni.in_use.size())
                                     : ni.free;
  if (Demand(w, ps) > have) return false;
  std::vector<dra::ClaimInput> in;
  std::vector<int32_t> which;
  if (!Inputs(w, ps, n, in, which, nullptr)) return false;
  return Run(in, n, empty_node).ok;
}

std::string DraState::Reason(const Workload& w, int ps, NodeId n, bool empty_node) {
  std::vector<dra::ClaimInput> in;
  std::vector<int32_t> which;
  std::string why;
  if (!Inputs(w, ps, n, in, which, &why)) return why;
  for (const dra::ClaimInput& c : in)
    for (const dra::RequestInput& r : c.requests)
      for (const dra::AltInput& a : r.alternatives)
        if (!bank_->error(a.filter).empty()) return c.name + ": " + bank_->error(a.filter);
  dra::AllocateOutcome out = Run(in, n, empty_node);
  return out.ok ? "" : out.reason;
}

std::vector<DraAllocation> DraState::Allocate(const Workload& w, int ps, NodeId n) {
  const auto& claims = w.pod_sets[ps].claims;
  if (claims.empty()) return {};
  std::vector<dra::ClaimInput> in;
  std::vector<int32_t> which;
  if (!Inputs(w, ps, n, in, which, nullptr)) return {};
  dra::AllocateOutcome out = Run(in, n, false);
  if (!out.ok) return {};
  std::vector<DraAllocation> result(claims.size());
  for (size_t k = 0; k < which.size(); ++k) {
    DraAllocation& a = result[which[k]];
    for (size_t r = 0; r < out.claims[k].requests.size(); ++r) {
      const dra::RequestResult& rr = out.claims[k].requests[r];
      const dra::RequestInput& req = in[k].requests[r];
      std::string name = req.name;
      if (req.alternatives.size() > 1 || req.alternatives[0].name != req.name)
        name += "/" + req.alternatives[rr.alternative].name;
      for (size_t i = 0; i < rr.devices.size(); ++i) {
        a.devices.push_back(nodes_[n].first + rr.devices[i]);
        a.requests.push_back(name);
        a.consumed.push_back(rr.consumed[i]);
      }
    }
  }
  // Shared claims allocated before: the pod lists their devices too.
  for (size_t i = 0; i < claims.size(); ++i)
    if (claims[i].claim >= 0 && shared_[claims[i].claim].allocated())
      result[i] = shared_[claims[i].claim].devices;
  Take(w, ps, n, result);
  return result;
}

void DraState::Mark(NodeId n, const DraAllocation& a, bool take) {
  NodeIndex& ni = nodes_[n];
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const int32_t id = a.devices[i];
    const int32_t local = id - ni.first;
    const dra::NodeDevice& dev = ni.devices->devices[local];
    if (dev.device.allow_multiple_allocations) {
      // A share: its consumption, and the device's counters with its first share (upstream
      // skips the counter check for a device whose capacity is already in use).
      dra::DeviceShares& s = ni.shares[local];
      if (i < a.consumed.size())
        for (const auto& [name, amount] : a.consumed[i])
          s.consumed[name] += take ? amount : -amount;
      s.count += take ? 1 : -1;
      if (s.count != (take ? 1 : 0)) continue;
    } else {
      ni.in_use[local] = take;
      ni.free += take ? -1 : 1;
      holders_[id] += take ? 1 : -1;
    }
    for (const dra::CounterUse& u : dev.consumes)
      for (const auto& [name, amount] : u.counters)
        ni.counters[u.counter_set][name] += take ? amount : -amount;
  }
}

void DraState::Take(const Workload& w, int ps, NodeId n, const std::vector<DraAllocation>& a) {
  const auto& claims = w.pod_sets[ps].claims;
  for (size_t i = 0; i < claims.size() && i < a.size(); ++i) {
    if (claims[i].claim >= 0) {
      SharedClaim& sc = shared_[claims[i].claim];
      if (sc.pods++ > 0 || sc.pinned) continue;
      sc.node = n;
      sc.devices = a[i];
    }
    Mark(n, a[i], true);
  }
}

void DraState::Release(const Workload& w, int ps, const std::vector<DraAllocation>& a) {
  const auto& claims = w.pod_sets[ps].claims;
  for (size_t i = 0; i < claims.size() && i < a.size(); ++i) {
    if (a[i].devices.empty()) continue;
    const NodeId n = device_node_[a[i].devices.front()];
    if (claims[i].claim >= 0) {
      SharedClaim& sc = shared_[claims[i].claim];
      // Its last pod is gone: freed, pinned or not (the ResourceClaim controller clears the
      // allocation of a claim no pod uses).
      if (--sc.pods > 0) continue;
      sc = SharedClaim{};
    }
    Mark(n, a[i], false);
  }
}

std::string DraState::Check() const {
  for (size_t d = 0; d < holders_.size(); ++d) {
    if (holders_[d] > 1)
      return fmt::format("device {} of node {} is allocated to {} claims", devices_[d]->name,
                         model_.nodes[device_node_[d]].name, holders_[d]);
    if (holders_[d] < 0)
      return fmt::format("device {} of node {} was freed more often than allocated",
                         devices_[d]->name, model_.nodes[device_node_[d]].name);
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const NodeIndex& ni = nodes_[n];
    if (!ni.any_shared) continue;
    for (size_t d = 0; d < ni.shares.size(); ++d) {
      const dra::DeviceShares& s = ni.shares[d];
      const dra::NodeDevice& dev = ni.devices->devices[d];
      if (s.count < 0)
        return fmt::format("device {} of node {} lost more shares than it was given",
                           dev.device.name, model_.nodes[n].name);
      for (const auto& [name, amount] : s.consumed) {
        auto cap = dev.capacities.find(name);
        const int64_t value = cap == dev.capacities.end() ? 0 : cap->second.value;
        if (amount < 0 || amount > value || (s.count == 0 && amount != 0))
          return fmt::format(
              "device {} of node {}: its {} share(s) consume {} thousandths of "
              "capacity {}, which has {}",
              dev.device.name, model_.nodes[n].name, s.count, amount, name, value);
      }
    }
  }
  return "";
}

}  // namespace tessera
