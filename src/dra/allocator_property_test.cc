// Properties of the DRA allocator (dra/allocator.h) on random nodes and claims, checked against
// a brute-force search: what it allocates is valid (distinct free devices, the counts asked for,
// every matchAttribute held, no counter overdrawn, the shares of a device that allows multiple
// allocations never consuming more than its capacity), and when it finds nothing, nothing
// exists.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dra/allocator.h"
#include "dra/consumable_capacity.h"

namespace tessera::dra {
namespace {

constexpr const char* kRoot = "resource.kubernetes.io/pcieRoot";

struct Case {
  NodeDevices node;
  std::vector<bool> in_use;
  std::vector<DeviceShares> shares;  // of the shared devices: what earlier claims consume
  std::vector<ClaimInput> claims;
  std::vector<int> kind;  // per device: 0 or 1; filter f selects kind f, filter 2 every device
  // The capacity requests the alternatives point to (stable addresses: reserved up front).
  std::vector<std::map<std::string, int64_t>> capacity_requests;
};

// Some devices allow multiple allocations, with a capacity "mem" of 2-8 units and maybe a
// requestPolicy; some of them partly consumed already.
void AddCapacity(NodeDevice& d, DeviceShares& shares) {
  if (*rc::gen::inRange(0, 2) == 0) return;
  d.device.allow_multiple_allocations = true;
  ConsumableCapacity cap;
  cap.value = *rc::gen::inRange(2, 9) * 1000;
  switch (*rc::gen::inRange(0, 3)) {
    case 1:
      cap.policy =
          CapacityRequestPolicy{1000, {}, CapacityRequestPolicy::Range{1000, std::nullopt, 2000}};
      break;
    case 2:
      cap.policy = CapacityRequestPolicy{1000, {1000, 2000, 4000}, std::nullopt};
      break;
    default:
      break;
  }
  d.capacities["mem"] = cap;
  if (*rc::gen::inRange(0, 3) == 0) shares = {1, {{"mem", *rc::gen::inRange(0, 3) * 1000}}};
}

Case Generate() {
  Case c;
  const int n = *rc::gen::inRange(1, 9);
  c.node.counter_sets["p/gpu"] = {"gpu", {{"slices", *rc::gen::inRange(2, 12) * 1000}}};
  for (int i = 0; i < n; ++i) {
    NodeDevice d;
    d.device.name = absl::StrCat("d", i);
    d.device.attributes[kRoot] = absl::StrCat("root-", *rc::gen::inRange(0, 3));
    if (*rc::gen::inRange(0, 3) == 0)
      d.consumes.push_back({"p/gpu", {{"slices", *rc::gen::inRange(1, 5) * 1000}}});
    DeviceShares shares;
    AddCapacity(d, shares);
    c.node.devices.push_back(d);
    c.in_use.push_back(!d.device.allow_multiple_allocations && *rc::gen::inRange(0, 4) == 0);
    c.shares.push_back(shares);
    c.kind.push_back(*rc::gen::inRange(0, 2));
  }
  c.capacity_requests.reserve(16);
  const int claims = *rc::gen::inRange(1, 3);
  for (int k = 0; k < claims; ++k) {
    ClaimInput ci;
    ci.name = absl::StrCat("c", k);
    const int requests = *rc::gen::inRange(1, 3);
    for (int r = 0; r < requests; ++r) {
      RequestInput req;
      req.name = absl::StrCat("r", r);
      const int alts = *rc::gen::inRange(1, 3);
      for (int a = 0; a < alts; ++a) {
        const std::map<std::string, int64_t>* capacity = nullptr;
        if (*rc::gen::inRange(0, 2) == 0) {
          c.capacity_requests.push_back({{"mem", *rc::gen::inRange(0, 6) * 1000}});
          capacity = &c.capacity_requests.back();
        }
        req.alternatives.push_back({absl::StrCat("a", a), *rc::gen::inRange(0, 3), false,
                                    *rc::gen::inRange(1, 4), nullptr, capacity});
      }
      ci.requests.push_back(req);
    }
    if (*rc::gen::inRange(0, 2) == 0) ci.constraints.push_back({{}, kRoot});
    c.claims.push_back(ci);
  }
  return c;
}

Match MatchOf(const Case& c, int32_t filter, int32_t d) {
  return filter == 2 || c.kind[d] == filter ? Match::kYes : Match::kNo;
}

// What a request asking `alt.capacity` consumes of device d's "mem" (upstream's rule, spelled
// out here apart from the allocator's); false when it may not take the device at all.
bool Consumes(const AltInput& alt, const NodeDevice& d, int64_t& amount) {
  auto cap = d.capacities.find("mem");
  if (cap == d.capacities.end()) return alt.capacity == nullptr;  // no capacity: no request
  amount =
      ConsumedAmount(alt.capacity != nullptr ? &alt.capacity->at("mem") : nullptr, cap->second);
  return !ViolatesPolicy(amount, cap->second.policy);
}

// Whether `out` is a valid allocation of every claim. `reported`: the allocator's output, whose
// consumedCapacity must be what the rule says.
bool Valid(const Case& c, const AllocateOutcome& out, std::string& why, bool reported = false) {
  std::vector<bool> used = c.in_use;
  std::map<std::string, int64_t> drawn;
  std::vector<int64_t> consumed(c.node.devices.size(), 0);
  std::vector<bool> shared_drawn(c.node.devices.size(), false);
  for (size_t d = 0; d < c.shares.size(); ++d) {
    shared_drawn[d] = c.shares[d].count > 0;
    if (c.shares[d].count > 0) consumed[d] = c.shares[d].consumed.at("mem");
  }
  for (size_t k = 0; k < c.claims.size(); ++k) {
    std::map<size_t, AttributeValue> value;
    for (size_t r = 0; r < c.claims[k].requests.size(); ++r) {
      const RequestResult& rr = out.claims[k].requests[r];
      const AltInput& alt = c.claims[k].requests[r].alternatives[rr.alternative];
      if (static_cast<int64_t>(rr.devices.size()) != alt.count) return why = "count", false;
      std::vector<bool> in_request(c.node.devices.size(), false);
      for (size_t i = 0; i < rr.devices.size(); ++i) {
        const int32_t d = rr.devices[i];
        const NodeDevice& dev = c.node.devices[d];
        if (in_request[d]) return why = "device twice in one request", false;
        in_request[d] = true;
        int64_t amount = 0;
        if (!Consumes(alt, dev, amount)) return why = "capacity request refused", false;
        bool draws = true;  // a shared device draws its counters with its first share
        if (dev.device.allow_multiple_allocations) {
          consumed[d] += amount;
          if (consumed[d] > dev.capacities.at("mem").value)
            return why = "capacity overdrawn", false;
          if (reported && rr.consumed[i].at("mem") != amount) return why = "consumed", false;
          draws = !shared_drawn[d];
          shared_drawn[d] = true;
        } else {
          if (used[d]) return why = "device used twice", false;
          used[d] = true;
        }
        if (draws)
          for (const CounterUse& u : c.node.devices[d].consumes)
            for (const auto& [name, n] : u.counters) drawn[name] += n;
        if (MatchOf(c, alt.filter, d) != Match::kYes) return why = "not selected", false;
        for (size_t q = 0; q < c.claims[k].constraints.size(); ++q) {
          const AttributeValue& v = c.node.devices[d].device.attributes.at(kRoot);
          auto [it, fresh] = value.emplace(q, v);
          if (!fresh && !(it->second == v)) return why = "matchAttribute", false;
        }
      }
    }
  }
  if (drawn["slices"] > c.node.counter_sets.at("p/gpu").counters.at("slices"))
    return why = "counters", false;
  return true;
}

// Brute force: does any allocation exist? Tries every alternative and every subset.
bool Exists(const Case& c) {
  const size_t n = c.node.devices.size();
  std::vector<std::pair<size_t, size_t>> slots;  // (claim, request)
  for (size_t k = 0; k < c.claims.size(); ++k)
    for (size_t r = 0; r < c.claims[k].requests.size(); ++r) slots.emplace_back(k, r);
  AllocateOutcome cand;
  cand.claims.resize(c.claims.size());
  for (size_t k = 0; k < c.claims.size(); ++k)
    cand.claims[k].requests.resize(c.claims[k].requests.size());
  std::string why;
  std::function<bool(size_t)> go = [&](size_t s) {
    if (s == slots.size()) return Valid(c, cand, why);
    auto [k, r] = slots[s];
    const RequestInput& req = c.claims[k].requests[r];
    for (size_t a = 0; a < req.alternatives.size(); ++a)
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) != req.alternatives[a].count) continue;
        RequestResult& rr = cand.claims[k].requests[r];
        rr.alternative = static_cast<int32_t>(a);
        rr.devices.clear();
        for (size_t d = 0; d < n; ++d)
          if (mask >> d & 1u) rr.devices.push_back(static_cast<int32_t>(d));
        if (go(s + 1)) return true;
      }
    return false;
  };
  return go(0);
}

RC_GTEST_PROP(DraAllocatorProperty, ValidWhenFoundAndNothingMissed, ()) {
  const Case c = Generate();
  NodeView view{&c.node, &c.in_use, nullptr, &c.shares};
  AllocateOutcome out =
      Allocate(c.claims, view, [&](int32_t f, int32_t d) { return MatchOf(c, f, d); });
  if (out.ok) {
    std::string why;
    RC_ASSERT(Valid(c, out, why, /*reported=*/true));
  } else {
    RC_ASSERT(!out.reason.empty());
    RC_ASSERT(!Exists(c));
  }
}

}  // namespace
}  // namespace tessera::dra
