#include "engine/reasons.h"

#include <algorithm>

#include "engine/time/reservations.h"
#include "fmt/format.h"

namespace tessera {

std::string FormatReason(const EngineState& s, WorkloadId id) {
  std::string reason;
  for (const ReasonPart& p : s.recs[id].why) {
    std::string r = p.quota ? FormatQuotaPart(s, id, p) : p.text;
    if (reason.find(r) != std::string::npos) continue;
    reason += (reason.empty() ? "" : "; ") + r;
  }
  if (const std::string& note = s.recs[id].time_note; !note.empty())
    reason += (reason.empty() ? "" : "; ") + note;
  return reason;
}

std::string FormatQuotaPart(const EngineState& s, WorkloadId id, const ReasonPart& part) {
  int32_t cq = s.recs[id].cq;
  const ClusterQueue& q = s.model.cluster_queues[cq];
  {
    const FlavorResource fr = part.fr;
    const int64_t amount = part.amount, avail = part.avail, usage = part.usage,
                  nominal = part.nominal;
    ResourceId r = ResourceOf(fr);
    std::string out =
        fmt::format("needs {} {} in flavor {}; ClusterQueue {} uses {} of nominal {}",
                    FormatQuota(r, amount), ResourceName(r), s.model.flavors[FlavorOf(fr)].name,
                    q.name, FormatQuota(r, usage), FormatQuota(r, nominal));
    if (part.borrowing_limit < kUnlimited)
      out += fmt::format(" (borrowing limit {})", FormatQuota(r, part.borrowing_limit));
    if (!q.cohort.empty()) {
      int64_t own = std::max<int64_t>(0, nominal - usage);
      out += fmt::format(", cohort {} can lend {} more", q.cohort,
                         FormatQuota(r, std::max<int64_t>(0, avail - own)));
      if (avail < own) {
        out += fmt::format("; {} of its unused nominal quota is lent to other queues of the cohort",
                           FormatQuota(r, own - std::max<int64_t>(0, avail)));
      }
    }
    return out;
  }
}

std::vector<std::string> FitHints(const EngineState& s, WorkloadId id,
                                  const Reservation* reservation) {
  std::vector<std::string> hints;
  auto add = [&](std::string h) {
    if (std::find(hints.begin(), hints.end(), h) == hints.end()) hints.push_back(std::move(h));
  };
  const int32_t cq = s.recs[id].cq;
  for (const ReasonPart& p : s.recs[id].why) {
    if (!p.quota || cq < 0) {
      if (!p.text.empty()) add(fmt::format("room on the nodes it may use (now: {})", p.text));
      continue;
    }
    const ResourceId r = ResourceOf(p.fr);
    const int64_t short_by = p.amount - std::max<int64_t>(0, p.avail);
    if (short_by <= 0) continue;
    const ClusterQueue& q = s.model.cluster_queues[cq];
    std::string h =
        fmt::format("{} more {} of flavor {} free to ClusterQueue {}", FormatQuota(r, short_by),
                    ResourceName(r), s.model.flavors[FlavorOf(p.fr)].name, q.name);
    h += q.cohort.empty() ? " (its workloads ending, or a larger nominal quota)"
                          : fmt::format(
                                " (workloads of cohort {} ending, or a larger nominal "
                                "quota or borrowing limit)",
                                q.cohort);
    add(std::move(h));
  }
  if (reservation && reservation->waits_for > 0) {
    std::string queues;
    for (const std::string& n : reservation->waits_for_queues)
      queues += (queues.empty() ? "" : ", ") + n;
    add(fmt::format("{} running workload{} in its way ending{}", reservation->waits_for,
                    reservation->waits_for == 1 ? "" : "s",
                    queues.empty() ? "" : " (ClusterQueue " + queues + ")"));
  }
  return hints;
}

}  // namespace tessera
