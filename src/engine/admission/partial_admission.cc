// Admission::TryAdmitMorePods: Kueue's partial admission. A workload whose minimums are below
// its pod counts is first tried whole, preemption included; when that fails, the largest counts
// that fit or can preempt their way in (a binary search, as Kueue's PodSetReducer) are
// admitted. With per-pod-set minimums (Kueue's minCount per pod set) every pod set gives up the
// same share of its pods above its minimum, as in Kueue, with or without preemption. With one
// minimum for the workload the counts are filled pod set by pod set in order, and Tessera's own
// rule stays for what fits without preemption: the minimum pods are admitted and the rest join
// as room allows (scale-up), which in one pod set comes to the same count.
#include "engine/admission/admission.h"
#include "engine/engine.h"

namespace tessera {
namespace {

// The pods per pod set after giving up `i` of the `total` pods above the minimums.
std::vector<int32_t> CountsFor(const Workload& w, int32_t i, int32_t total) {
  std::vector<int32_t> out(w.pod_sets.size(), 0);
  if (w.PerSetMinimums()) {
    for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
      const int64_t delta = w.pod_sets[ps].count - w.MinOfSet(ps);
      out[ps] = static_cast<int32_t>(w.pod_sets[ps].count - delta * i / std::max(total, 1));
    }
    return out;
  }
  int32_t left = w.TotalPods() - i;
  for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
    out[ps] = std::max(0, std::min(w.pod_sets[ps].count, left));
    left -= w.pod_sets[ps].count;
  }
  return out;
}

}  // namespace

bool Admission::CountWorks(WorkloadId id, const std::vector<int32_t>& counts, bool may_preempt,
                           double now, PreemptionLook& look, bool& by_preemption) {
  WorkloadRec& rec = s_.recs[id];
  rec.target_per_set = counts;
  by_preemption = false;
  bool works = false;
  for (const Combo& combo : rec.combos) {
    // A non-preemptible workload never borrows (admission.cc, BeyondNominal).
    if (e_.placer.FitsNow(id, combo) &&
        (!rec.non_preemptible ||
         e_.flavors.FitsNominal(rec.cq, e_.flavors.MinQuotaNeed(id, combo)))) {
      works = true;
      break;
    }
  }
  for (size_t i = 0; may_preempt && !works && i < rec.combos.size(); ++i) {
    if (FindPreemption(id, rec.combos[i], now, look)) works = by_preemption = true;
    if (look.held_back || look.awaits_release) break;
  }
  rec.target_per_set.clear();
  return works && !look.held_back && !look.awaits_release;
}

bool Admission::TryAdmitMorePods(WorkloadId id, bool may_preempt, double now,
                                 std::vector<ReasonPart>& why, PreemptionLook& look,
                                 std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  const Workload& w = s_.model.workloads[id];
  // Pods above the minimums: giving up all of them is the usual attempt.
  const int32_t above = w.TotalPods() - w.MinPods();
  bool by_preemption = false;
  int32_t chosen = -1;
  // Reduced counts that fit without preemption are admitted here only with per-pod-set
  // minimums (the usual way would fill the pod sets in order).
  const bool per_set = w.PerSetMinimums();
  if (CountWorks(id, CountsFor(w, 0, above), may_preempt, now, look, by_preemption)) {
    // All of them fit now: the usual way admits them (the minimums, then the rest as room
    // allows).
    if (!by_preemption) return false;
    chosen = 0;
  } else {
    // The fewest given up in (0, above) that fits or can preempt its way in.
    int32_t lo = 1, hi = above;
    while (lo < hi && !look.held_back && !look.awaits_release) {
      const int32_t mid = lo + (hi - lo) / 2;
      bool pre = false;
      if (CountWorks(id, CountsFor(w, mid, above), may_preempt, now, look, pre)) {
        hi = mid;
        by_preemption = pre;
        chosen = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (chosen < 0 || (!by_preemption && !per_set)) return false;
  }
  if (look.held_back || look.awaits_release) return false;
  rec.target_per_set = CountsFor(w, chosen, above);
  const bool admitted = ChooseAndAdmit(id, now, why, look, out);
  rec.target_per_set.clear();
  if (!admitted) why.clear();  // the usual attempt follows and says why
  return admitted;
}

}  // namespace tessera
