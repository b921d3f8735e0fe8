// Placing the workloads that run at the start in named flavors (sim/start_state.h).
#include "sim/start_state.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera {
namespace {

int32_t FlavorId(const Model& m, const std::string& name) {
  for (size_t f = 0; f < m.flavors.size(); ++f)
    if (m.flavors[f].name == name) return static_cast<int32_t>(f);
  return -1;
}

// The named flavor of pod set `ps` (-2: the pod set is not named; -1: no such flavor).
int32_t NamedFlavor(const Model& m, const Workload& w, size_t ps, std::string* name) {
  for (const auto& [set, flavor] : w.admitted_flavors) {
    if (set.empty() || set == w.pod_sets[ps].name) {
      *name = flavor;
      return FlavorId(m, flavor);
    }
  }
  return -2;
}

}  // namespace

absl::StatusOr<std::vector<PodPlacement>> PlaceInNamedFlavors(const Scheduler& s, WorkloadId id,
                                                              std::vector<Resources>& free) {
  const Model& m = s.model();
  const Workload& w = m.workloads[id];
  const std::string who = fmt::format("{} (tessera.dev/admitted-flavor)", w.Key());
  for (const auto& [set, flavor] : w.admitted_flavors) {
    if (!set.empty() && std::none_of(w.pod_sets.begin(), w.pod_sets.end(),
                                     [&](const PodSet& ps) { return ps.name == set; }))
      return absl::InvalidArgumentError(fmt::format("{}: no pod set {}", who, set));
    if (FlavorId(m, flavor) < 0)
      return absl::InvalidArgumentError(fmt::format("{}: no ResourceFlavor {}", who, flavor));
  }
  std::vector<PodPlacement> pods;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    std::string flavor;
    const int32_t f = NamedFlavor(m, w, ps, &flavor);
    if (f < 0) continue;
    const PodSet& set = w.pod_sets[ps];
    for (int32_t i = 0; i < set.count; ++i) {
      NodeId chosen = -1;
      for (NodeId n = 0; n < static_cast<NodeId>(m.nodes.size()) && chosen < 0; ++n) {
        const Node& node = m.nodes[n];
        if (s.node_online(n) && MatchesNodeSelector(m.flavors[f].node_labels, node.labels) &&
            MatchesNodeSelector(set.node_selector, node.labels) && set.requests.FitsIn(free[n]))
          chosen = n;
      }
      if (chosen < 0)
        return absl::FailedPreconditionError(
            fmt::format("{}: pod {} of pod set {} fits on no node of flavor {} ({} of {} placed)",
                        who, i, set.name, flavor, i, set.count));
      free[chosen] -= set.requests;
      PodPlacement p;
      p.pod_set = static_cast<int32_t>(ps);
      p.index = i;
      p.node = chosen;
      pods.push_back(std::move(p));
    }
  }
  if (pods.empty())
    return absl::InvalidArgumentError(fmt::format("{}: names none of its pod sets", who));
  return pods;
}

absl::Status CheckNamedFlavors(const Scheduler& s, WorkloadId id) {
  const Model& m = s.model();
  const Workload& w = m.workloads[id];
  const std::vector<int32_t>& chosen = s.status(id).flavors;
  const size_t per_set = w.pod_sets.empty() ? 0 : chosen.size() / w.pod_sets.size();
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    std::string flavor;
    const int32_t f = NamedFlavor(m, w, ps, &flavor);
    if (f < 0) continue;
    auto begin = chosen.begin() + static_cast<std::ptrdiff_t>(ps * per_set);
    if (std::find(begin, begin + static_cast<std::ptrdiff_t>(per_set), f) ==
        begin + static_cast<std::ptrdiff_t>(per_set))
      return absl::FailedPreconditionError(fmt::format(
          "{} (tessera.dev/admitted-flavor): pod set {} was charged to another flavor than {}, "
          "whose node labels also hold on its nodes",
          w.Key(), w.pod_sets[ps].name, flavor));
  }
  return absl::OkStatus();
}

}  // namespace tessera
