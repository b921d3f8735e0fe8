// Properties of the DRA allocator (dra/allocator.h) on random nodes and claims, checked against
// a brute-force search: what it allocates is valid (distinct free devices, the counts asked for,
// every matchAttribute held, no counter overdrawn), and when it finds nothing, nothing exists.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dra/allocator.h"

namespace tessera::dra {
namespace {

constexpr const char* kRoot = "resource.kubernetes.io/pcieRoot";

struct Case {
  NodeDevices node;
  std::vector<bool> in_use;
  std::vector<ClaimInput> claims;
  std::vector<int> kind;  // per device: 0 or 1; filter f selects kind f, filter 2 every device
};

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
    c.node.devices.push_back(d);
    c.in_use.push_back(*rc::gen::inRange(0, 4) == 0);
    c.kind.push_back(*rc::gen::inRange(0, 2));
  }
  const int claims = *rc::gen::inRange(1, 3);
  for (int k = 0; k < claims; ++k) {
    ClaimInput ci;
    ci.name = absl::StrCat("c", k);
    const int requests = *rc::gen::inRange(1, 3);
    for (int r = 0; r < requests; ++r) {
      RequestInput req;
      req.name = absl::StrCat("r", r);
      const int alts = *rc::gen::inRange(1, 3);
      for (int a = 0; a < alts; ++a)
        req.alternatives.push_back({absl::StrCat("a", a), *rc::gen::inRange(0, 3), false,
                                    *rc::gen::inRange(1, 4), nullptr});
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

// Whether `out` is a valid allocation of every claim.
bool Valid(const Case& c, const AllocateOutcome& out, std::string& why) {
  std::vector<bool> used = c.in_use;
  std::map<std::string, int64_t> drawn;
  for (size_t k = 0; k < c.claims.size(); ++k) {
    std::map<size_t, AttributeValue> value;
    for (size_t r = 0; r < c.claims[k].requests.size(); ++r) {
      const RequestResult& rr = out.claims[k].requests[r];
      const AltInput& alt = c.claims[k].requests[r].alternatives[rr.alternative];
      if (static_cast<int64_t>(rr.devices.size()) != alt.count) return why = "count", false;
      for (int32_t d : rr.devices) {
        if (used[d]) return why = "device used twice", false;
        used[d] = true;
        if (MatchOf(c, alt.filter, d) != Match::kYes) return why = "not selected", false;
        for (const CounterUse& u : c.node.devices[d].consumes)
          for (const auto& [name, amount] : u.counters) drawn[name] += amount;
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
  for (size_t k = 0; k < c.claims.size(); ++k) cand.claims[k].requests.resize(c.claims[k].requests.size());
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
  NodeView view{&c.node, &c.in_use, nullptr};
  AllocateOutcome out =
      Allocate(c.claims, view, [&](int32_t f, int32_t d) { return MatchOf(c, f, d); });
  if (out.ok) {
    std::string why;
    RC_ASSERT(Valid(c, out, why));
  } else {
    RC_ASSERT(!out.reason.empty());
    RC_ASSERT(!Exists(c));
  }
}

}  // namespace
}  // namespace tessera::dra
