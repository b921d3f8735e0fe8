#include "engine/preemption/victim_search.h"

#include <algorithm>
#include <map>

#include "engine/engine.h"

namespace tessera {
namespace {

// Candidates in the Preemptor's order; a required-topology gang's best domain first.
class ClassicVictimSearch : public VictimSearch {
 public:
  explicit ClassicVictimSearch(Engine& e) : e_(e) {}
  std::string_view name() const override { return "classic"; }
  bool Search(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
              std::vector<WorkloadId>& candidates, Evicted& evicted) override {
    OrderForTopology(e_, id, combo, candidates);
    for (WorkloadId v : candidates) {
      if (!StillBorrowing(e_.st, id, v, need)) continue;
      evicted.emplace_back(v, e_.statement.Evict(v));
      if (PreemptorFits(e_, id, combo, need, allow_borrowing)) return true;
    }
    return false;
  }

 private:
  Engine& e_;
};

// Kueue's fair sharing: take from the queue with the highest share first, while the strategy
// holds; each strategy is a pass over what is left.
class FairSharingVictimSearch : public VictimSearch {
 public:
  FairSharingVictimSearch(Engine& e, std::vector<FairSharingStrategy> strategies)
      : e_(e), strategies_(std::move(strategies)) {}
  std::string_view name() const override { return "fair-sharing"; }
  bool Search(WorkloadId id, const Combo& combo, const Need& need, bool allow_borrowing,
              std::vector<WorkloadId>& candidates, Evicted& evicted) override {
    const int32_t my_cq = e_.st.recs[id].cq;
    std::map<int32_t, std::vector<WorkloadId>> by_queue;
    for (WorkloadId v : candidates) by_queue[e_.st.recs[v].cq].push_back(v);
    for (auto& [q, list] : by_queue) std::reverse(list.begin(), list.end());  // pop_back order
    for (FairSharingStrategy strategy : strategies_) {
      // As in Kueue, a candidate the strategy refuses is kept for the next strategy and the
      // queue's next candidate is tried (a higher-priority one may still pass it).
      std::map<int32_t, std::vector<WorkloadId>> refused;
      while (true) {
        const double my_share = e_.flavors.ShareOf(my_cq, need);
        int32_t best_q = -2;
        double best_share = -1;
        for (auto& [q, list] : by_queue) {
          if (list.empty()) continue;
          double s = e_.flavors.ShareOf(q, {});
          if (s > best_share) {
            best_share = s;
            best_q = q;
          }
        }
        if (best_q == -2) break;
        WorkloadId v = by_queue[best_q].back();
        by_queue[best_q].pop_back();
        if (best_q != my_cq) {
          if (!StillBorrowing(e_.st, id, v, need)) continue;
          double after = e_.flavors.ShareOf(best_q, e_.flavors.UsageOf(v, -1));
          bool ok = strategy == FairSharingStrategy::kLessThanOrEqualToFinalShare
                        ? my_share <= after
                        : my_share < best_share;
          if (!ok) {
            refused[best_q].push_back(v);
            continue;
          }
        }
        evicted.emplace_back(v, e_.statement.Evict(v));
        if (PreemptorFits(e_, id, combo, need, allow_borrowing)) return true;
      }
      for (auto& [q, list] : refused)  // back in their order (pop_back takes the first)
        by_queue[q].insert(by_queue[q].end(), list.rbegin(), list.rend());
    }
    return false;
  }

 private:
  Engine& e_;
  const std::vector<FairSharingStrategy> strategies_;
};

}  // namespace

std::unique_ptr<VictimSearch> MakeVictimSearch(const SchedulerConfig& config, Engine& e) {
  if (config.fair_sharing)
    return std::make_unique<FairSharingVictimSearch>(e, config.fair_sharing_strategies);
  return std::make_unique<ClassicVictimSearch>(e);
}

bool PreemptorFits(Engine& e, WorkloadId id, const Combo& combo, const Need& need,
                   bool allow_borrowing) {
  if (!allow_borrowing) {
    const int32_t cq = e.st.recs[id].cq;
    for (const auto& [fr, q] : need)
      if (e.st.quota->usage(cq, fr) + q > e.st.quota->subtree_quota(cq, fr)) return false;
  }
  return e.placer.FitsNow(id, combo);
}

bool StillBorrowing(const EngineState& s, WorkloadId preemptor, WorkloadId victim,
                    const Need& need) {
  if (s.recs[victim].cq == s.recs[preemptor].cq) return true;
  for (const auto& [fr, q] : need)
    if (s.quota->IsBorrowing(s.recs[victim].cq, fr)) return true;
  return false;
}

}  // namespace tessera
