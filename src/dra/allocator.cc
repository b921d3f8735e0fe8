#include "dra/allocator.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dra/consumable_capacity.h"
#include "dra/device_topology.h"

namespace tessera::dra {

bool DeviceTolerated(const NodeDevice& device, const std::vector<Toleration>* tolerations) {
  for (const DeviceTaintSpec& t : device.taints) {
    if (t.taint.effect == TaintEffect::kPreferNoSchedule) continue;
    bool ok = false;
    if (tolerations != nullptr)
      for (const Toleration& tol : *tolerations) ok = ok || Tolerates(tol, t.taint);
    if (!ok) return false;
  }
  return true;
}

namespace {

// Upstream's AllocationResultsMaxSize: the devices one claim's allocation may list.
constexpr int64_t kMaxDevicesPerClaim = 32;

using Counters = std::map<std::string, std::map<std::string, int64_t>>;

class Search {
 public:
  Search(const std::vector<ClaimInput>& claims, const NodeView& node, const MatchFn& matches)
      : claims_(claims),
        node_(node),
        matches_(matches),
        taken_(node.devices->devices.size(), false) {
    if (node.counters_used != nullptr) counters_ = *node.counters_used;
    if (node.shares != nullptr) shares_ = *node.shares;
    shares_.resize(node.devices->devices.size());
    results_.resize(claims.size());
    for (size_t c = 0; c < claims.size(); ++c) {
      results_[c].requests.resize(claims[c].requests.size());
      values_.emplace_back(claims[c].constraints.size());
    }
  }

  AllocateOutcome Run() {
    AllocateOutcome out;
    out.ok = Request(0, 0);
    if (out.ok) {
      out.claims = std::move(results_);
    } else {
      out.reason = Reason();
    }
    return out;
  }

 private:
  // The value of a constraint's attribute, set by the first device added under it.
  using Value = std::optional<AttributeValue>;

  // Allocates claim c's requests from r on, then the following claims.
  bool Request(size_t c, size_t r) {
    if (c == claims_.size()) return true;
    if (r == claims_[c].requests.size()) return Request(c + 1, 0);
    const RequestInput& req = claims_[c].requests[r];
    for (size_t a = 0; a < req.alternatives.size(); ++a) {
      const AltInput& alt = req.alternatives[a];
      RequestResult& res = results_[c].requests[r];
      res.alternative = static_cast<int32_t>(a);
      res.devices.clear();
      res.consumed.clear();
      if (alt.all) {
        if (AllDevices(c, r, alt)) return true;
      } else if (alt.count > kMaxDevicesPerClaim - ClaimDevices(c)) {
        Note(absl::StrCat("claim ", claims_[c].name, ", request ", Path(req, alt), ": ", alt.count,
                          " devices, more than the ", kMaxDevicesPerClaim, " one claim may hold"));
      } else {
        std::vector<int32_t> candidates;
        if (!EnoughFree(c, req, alt, candidates)) {
          if (error_) return false;
        } else {
          PreferCompact(node_.devices->devices, candidates, alt.count, ClaimDeviceList(c, r));
          if (Pick(c, r, alt, candidates, 0)) return true;
        }
      }
      if (gave_up_ || error_) return false;
    }
    return false;
  }

  // Picks the remaining devices of an ExactCount alternative among `candidates` (in the order
  // device_topology.h prefers), from candidates[from] on.
  bool Pick(size_t c, size_t r, const AltInput& alt, const std::vector<int32_t>& candidates,
            size_t from) {
    std::vector<int32_t>& picked = results_[c].requests[r].devices;
    if (static_cast<int64_t>(picked.size()) == alt.count) return Request(c, r + 1);
    for (size_t i = from; i < candidates.size(); ++i) {
      if (++steps_ > kMaxAllocationSteps) {
        gave_up_ = true;
        return false;
      }
      const int32_t d = candidates[i];
      if (!Usable(c, r, alt, d)) continue;
      if (error_) return false;
      std::vector<std::pair<size_t, Value>> undo;
      if (!Add(c, r, d, undo)) continue;
      if (Pick(c, r, alt, candidates, i + 1)) return true;
      Remove(c, r, d, undo);
      if (gave_up_ || error_) return false;
    }
    return false;
  }

  // allocationMode All: every device of the node that the alternative selects, all of them free
  // and tolerated. As upstream, a selected device whose taint the request does not tolerate is
  // one of "all", and it fails the request (it is not left out).
  bool AllDevices(size_t c, size_t r, const AltInput& alt) {
    std::vector<int32_t> all;
    bool untolerated = false;
    for (size_t d = 0; d < node_.devices->devices.size(); ++d) {
      Match m = matches_(alt.filter, static_cast<int32_t>(d));
      if (m == Match::kError) return Fail(alt.filter, static_cast<int32_t>(d));
      if (m != Match::kYes) continue;
      // As upstream, a device without the capacity the request asks for (or too little of it
      // left by the claims allocated before this search: upstream decides "all" before it
      // allocates any of the pod's claims) is not one of "all".
      if (!CapacityFits(alt, static_cast<int32_t>(d), nullptr, /*before_search=*/true)) continue;
      all.push_back(static_cast<int32_t>(d));
      untolerated = untolerated || !DeviceTolerated(node_.devices->devices[d], alt.tolerations);
    }
    if (untolerated) {
      Note(absl::StrCat("claim ", claims_[c].name, ", request ", Path(claims_[c].requests[r], alt),
                        ": allocationMode All, and a matching device has a taint the request "
                        "does not tolerate"));
      return false;
    }
    const RequestInput& req = claims_[c].requests[r];
    if (all.empty()) {
      Note(absl::StrCat("claim ", claims_[c].name, ", request ", Path(req, alt),
                        ": allocationMode All, and no device of the node matches"));
      return false;
    }
    std::vector<std::pair<size_t, Value>> undo;
    std::vector<int32_t> added;
    bool ok = static_cast<int64_t>(all.size()) <= kMaxDevicesPerClaim - ClaimDevices(c);
    for (int32_t d : all) {
      if (!ok) break;
      ok = !Busy(d) && Add(c, r, d, undo);
      if (ok) added.push_back(d);
    }
    if (ok && Request(c, r + 1)) return true;
    for (auto it = added.rbegin(); it != added.rend(); ++it) Remove(c, r, *it, undo);
    results_[c].requests[r].devices.clear();
    results_[c].requests[r].consumed.clear();
    if (!ok)
      Note(absl::StrCat("claim ", claims_[c].name, ", request ", Path(req, alt),
                        ": allocationMode All needs every matching device (", all.size(),
                        "), and not all of them are free"));
    return false;
  }

  // Whether the node has `alt.count` devices the alternative selects that are free (collected in
  // `candidates`, in slice order); if not, says how many it selects and how many are free.
  bool EnoughFree(size_t c, const RequestInput& req, const AltInput& alt,
                  std::vector<int32_t>& candidates) {
    int64_t selected = 0, free = 0, short_of_capacity = 0;
    for (size_t d = 0; d < node_.devices->devices.size(); ++d) {
      Match m = matches_(alt.filter, static_cast<int32_t>(d));
      if (m == Match::kError) return Fail(alt.filter, static_cast<int32_t>(d));
      if (m != Match::kYes || !DeviceTolerated(node_.devices->devices[d], alt.tolerations))
        continue;
      ++selected;
      if (Busy(static_cast<int32_t>(d))) continue;
      if (!CapacityFits(alt, static_cast<int32_t>(d))) {
        ++short_of_capacity;
        continue;
      }
      ++free;
      candidates.push_back(static_cast<int32_t>(d));
    }
    selected_ += selected;
    if (free >= alt.count) return true;
    std::string detail;
    if (selected > 0)
      detail = short_of_capacity == 0
                   ? absl::StrCat(" (", free, " of them free)")
                   : absl::StrCat(" (", free, " of them free with the capacity it asks for; ",
                                  short_of_capacity, " without: ", CapacityWhy(), ")");
    Note(absl::StrCat(claims_[c].name, ", request ", Path(req, alt), ": asks for ", alt.count,
                      " device(s); the node has ", selected,
                      " that its device class and selectors select", detail));
    return false;
  }

  // An exclusive device held by a claim; a device that allows multiple allocations is never
  // busy, only short of capacity.
  bool Busy(int32_t d) const {
    if (node_.devices->devices[d].device.allow_multiple_allocations) return false;
    return taken_[d] || (node_.in_use != nullptr && (*node_.in_use)[d]);
  }

  // Whether the alternative's capacity requests fit device d now (or, `before_search`, beside
  // the shares the node had before this search); counted when not.
  bool CapacityFits(const AltInput& alt, int32_t d, std::map<std::string, int64_t>* use = nullptr,
                    bool before_search = false) {
    const NodeDevice& dev = node_.devices->devices[d];
    const std::map<std::string, int64_t>* in_use = nullptr;
    if (dev.device.allow_multiple_allocations) {
      if (!before_search)
        in_use = &shares_[d].consumed;
      else if (node_.shares != nullptr)
        in_use = &(*node_.shares)[d].consumed;
    }
    const CapacityFit fit = FitCapacity(alt.capacity, dev, in_use, use);
    if (fit == CapacityFit::kFits) return true;
    ++capacity_misses_[static_cast<int>(fit)];
    return false;
  }

  int64_t CapacityMisses() const {
    int64_t n = 0;
    for (int64_t m : capacity_misses_) n += m;  // kFits is never counted
    return n;
  }

  std::string CapacityWhy() const {
    if (capacity_misses_[static_cast<int>(CapacityFit::kTooLittleLeft)] > 0)
      return "too little of it left";
    if (capacity_misses_[static_cast<int>(CapacityFit::kMoreThanItHas)] > 0)
      return "less of it than the request asks for";
    if (capacity_misses_[static_cast<int>(CapacityFit::kPolicy)] > 0)
      return "an amount their requestPolicy refuses";
    return "a capacity the request names is not theirs";
  }

  // Free, selected by the alternative's filter and tolerated; a CEL error sets error_.
  bool Usable(size_t, size_t, const AltInput& alt, int32_t d) {
    if (Busy(d)) return false;
    Match m = matches_(alt.filter, d);
    if (m == Match::kError) return Fail(alt.filter, d);
    if (m == Match::kNo) return false;
    ++selected_;
    return DeviceTolerated(node_.devices->devices[d], alt.tolerations);
  }

  bool Fail(int32_t filter, int32_t d) {
    error_ = true;
    error_filter_ = filter;
    error_device_ = d;
    return false;
  }

  // Adds device d to request r of claim c if the constraints, its capacity and the counters
  // allow it. A device that allows multiple allocations gets one more share, and draws its
  // counters with the first.
  bool Add(size_t c, size_t r, int32_t d, std::vector<std::pair<size_t, Value>>& undo) {
    const NodeDevice& dev = node_.devices->devices[d];
    const RequestInput& req = claims_[c].requests[r];
    const AltInput& alt = req.alternatives[results_[c].requests[r].alternative];
    const bool shared = dev.device.allow_multiple_allocations;
    const size_t undo_from = undo.size();
    const auto& constraints = claims_[c].constraints;
    for (size_t k = 0; k < constraints.size(); ++k) {
      if (!Covers(constraints[k], r)) continue;
      auto it = dev.device.attributes.find(constraints[k].match_attribute);
      bool ok = it != dev.device.attributes.end() &&
                (!values_[c][k].has_value() || *values_[c][k] == it->second);
      if (!ok) {
        ++constraint_misses_;
        RestoreValues(c, undo, undo_from);
        return false;
      }
      if (!values_[c][k].has_value()) {
        undo.emplace_back(k, std::nullopt);
        values_[c][k] = it->second;
      }
    }
    std::map<std::string, int64_t> use;
    if (!CapacityFits(alt, d, &use)) {
      RestoreValues(c, undo, undo_from);
      return false;
    }
    const bool draws = !shared || shares_[d].count == 0;
    if (draws && !DrawCounters(dev, +1)) {
      ++counter_misses_;
      RestoreValues(c, undo, undo_from);
      return false;
    }
    RequestResult& res = results_[c].requests[r];
    if (shared) {
      ++shares_[d].count;
      for (const auto& [name, amount] : use) shares_[d].consumed[name] += amount;
      res.consumed.push_back(std::move(use));
    } else {
      taken_[d] = true;
      res.consumed.emplace_back();
    }
    res.devices.push_back(d);
    undo_marks_.push_back(undo_from);
    return true;
  }

  void Remove(size_t c, size_t r, int32_t d, std::vector<std::pair<size_t, Value>>& undo) {
    const size_t from = undo_marks_.back();
    undo_marks_.pop_back();
    RestoreValues(c, undo, from);
    const NodeDevice& dev = node_.devices->devices[d];
    RequestResult& res = results_[c].requests[r];
    if (dev.device.allow_multiple_allocations) {
      DeviceShares& s = shares_[d];
      for (const auto& [name, amount] : res.consumed.back()) s.consumed[name] -= amount;
      if (--s.count == 0) DrawCounters(dev, -1);
    } else {
      DrawCounters(dev, -1);
      taken_[d] = false;
    }
    res.consumed.pop_back();
    res.devices.pop_back();
  }

  void RestoreValues(size_t c, std::vector<std::pair<size_t, Value>>& undo, size_t from) {
    while (undo.size() > from) {
      values_[c][undo.back().first] = std::move(undo.back().second);
      undo.pop_back();
    }
  }

  static bool Covers(const ConstraintInput& k, size_t r) {
    if (k.requests.empty()) return true;
    for (int32_t x : k.requests)
      if (static_cast<size_t>(x) == r) return true;
    return false;
  }

  // Draws (sign +1) or gives back (-1) what device `dev` consumes of its counter sets; false
  // (nothing drawn) when some counter would go over its capacity.
  bool DrawCounters(const NodeDevice& dev, int sign) {
    if (dev.consumes.empty()) return true;
    const auto& sets = node_.devices->counter_sets;
    if (sign > 0) {
      for (const CounterUse& u : dev.consumes) {
        auto set = sets.find(u.counter_set);
        if (set == sets.end()) return false;
        for (const auto& [name, amount] : u.counters) {
          auto cap = set->second.counters.find(name);
          if (cap == set->second.counters.end()) return false;
          if (counters_[u.counter_set][name] + amount > cap->second) return false;
        }
      }
    }
    for (const CounterUse& u : dev.consumes)
      for (const auto& [name, amount] : u.counters) counters_[u.counter_set][name] += sign * amount;
    return true;
  }

  // The devices claim c holds through its requests before request r.
  std::vector<int32_t> ClaimDeviceList(size_t c, size_t r) const {
    std::vector<int32_t> out;
    for (size_t i = 0; i < r; ++i) {
      const auto& held = results_[c].requests[i].devices;
      out.insert(out.end(), held.begin(), held.end());
    }
    return out;
  }

  int64_t ClaimDevices(size_t c) const {
    int64_t n = 0;
    for (const auto& r : results_[c].requests) n += static_cast<int64_t>(r.devices.size());
    return n;
  }

  static std::string Path(const RequestInput& req, const AltInput& alt) {
    return req.alternatives.size() > 1 || alt.name != req.name ? req.name + "/" + alt.name
                                                               : req.name;
  }

  void Note(std::string s) {
    if (note_.empty()) note_ = std::move(s);
  }

  std::string Reason() const {
    const auto& devices = node_.devices->devices;
    if (error_)
      return absl::StrCat("CEL runtime error on device ", devices[error_device_].device.name,
                          " (filter ", error_filter_, ")");
    if (gave_up_)
      return absl::StrCat("the device search gave up after ", kMaxAllocationSteps, " tries");
    if (!note_.empty()) return note_;
    std::string why = absl::StrCat(devices.size(), " device(s) on the node");
    if (selected_ == 0) return why + ", none selected by the request and its device class";
    if (constraint_misses_ > 0) return why + ", none that meet the claim's matchAttribute";
    if (CapacityMisses() > 0)
      return why + ", none with the capacity the request asks for: " + CapacityWhy();
    if (counter_misses_ > 0) return why + ", not enough left of their shared counters";
    return why + ", not enough of the selected ones free or tolerated";
  }

  const std::vector<ClaimInput>& claims_;
  const NodeView& node_;
  const MatchFn& matches_;
  std::vector<bool> taken_;
  std::vector<DeviceShares> shares_;  // per device of the node: its shares, those here included
  Counters counters_;
  std::vector<ClaimResult> results_;
  std::vector<std::vector<Value>> values_;  // per claim, per constraint
  std::vector<size_t> undo_marks_;
  int64_t steps_ = 0, selected_ = 0, constraint_misses_ = 0, counter_misses_ = 0;
  int64_t capacity_misses_[5] = {};  // by CapacityFit
  bool gave_up_ = false, error_ = false;
  int32_t error_filter_ = -1, error_device_ = -1;
  std::string note_;
};

}  // namespace

AllocateOutcome Allocate(const std::vector<ClaimInput>& claims, const NodeView& node,
                         const MatchFn& matches) {
  if (node.devices == nullptr) {
    AllocateOutcome out;
    out.ok = claims.empty();
    if (!out.ok) out.reason = "the node publishes no devices";
    return out;
  }
  return Search(claims, node, matches).Run();
}

}  // namespace tessera::dra
