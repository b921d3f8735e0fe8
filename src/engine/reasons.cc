#include "engine/reasons.h"

#include <algorithm>

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
                    FormatQuantity(r, amount), ResourceName(r), s.model.flavors[FlavorOf(fr)].name,
                    q.name, FormatQuantity(r, usage), FormatQuantity(r, nominal));
    if (part.borrowing_limit < kUnlimited)
      out += fmt::format(" (borrowing limit {})", FormatQuantity(r, part.borrowing_limit));
    if (!q.cohort.empty()) {
      int64_t own = std::max<int64_t>(0, nominal - usage);
      out += fmt::format(", cohort {} can lend {} more", q.cohort,
                         FormatQuantity(r, std::max<int64_t>(0, avail - own)));
      if (avail < own) {
        out += fmt::format("; {} of its unused nominal quota is lent to other queues of the cohort",
                           FormatQuantity(r, own - std::max<int64_t>(0, avail)));
      }
    }
    return out;
  }
}
}  // namespace tessera
