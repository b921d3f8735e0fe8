// Admission::TryAdmitMorePods: Kueue's partial admission with preemption. A workload whose
// minCount is below its pod count is first tried whole, preemption included; when that fails,
// the largest count that fits or can preempt its way in (a binary search, as Kueue's
// PodSetReducer) is admitted. Tessera's own rule stays for what fits without preemption: the
// minCount pods are admitted and the rest join as room allows (scale-up).
#include "engine/admission/admission.h"
#include "engine/engine.h"

namespace tessera {

bool Admission::CountWorks(WorkloadId id, int32_t count, double now, PreemptionLook& look,
                           bool& by_preemption) {
  WorkloadRec& rec = s_.recs[id];
  rec.target_pods = count;
  by_preemption = false;
  bool works = false;
  for (const Combo& combo : rec.combos) {
    if (e_.placer.FitsNow(id, combo)) {
      works = true;
      break;
    }
  }
  for (size_t i = 0; !works && i < rec.combos.size(); ++i) {
    if (FindPreemption(id, rec.combos[i], now, look)) works = by_preemption = true;
    if (look.held_back) break;
  }
  rec.target_pods = -1;
  return works && !look.held_back;
}

bool Admission::TryAdmitMorePods(WorkloadId id, double now, std::vector<ReasonPart>& why,
                                 PreemptionLook& look, std::vector<Decision>& out) {
  WorkloadRec& rec = s_.recs[id];
  const Workload& w = s_.model.workloads[id];
  const int32_t total = w.TotalPods();
  const int32_t min = w.MinPods();
  bool by_preemption = false;
  int32_t chosen = -1;
  if (CountWorks(id, total, now, look, by_preemption)) {
    // All of them fit now: the usual way admits them (minCount, then the rest as room allows).
    if (!by_preemption) return false;
    chosen = total;
  } else {
    // The largest count in (minCount, total) that fits or can preempt its way in.
    int32_t lo = min, hi = total - 1;
    while (lo < hi && !look.held_back) {
      const int32_t mid = lo + (hi - lo + 1) / 2;
      bool pre = false;
      if (CountWorks(id, mid, now, look, pre)) {
        lo = mid;
        by_preemption = pre;
        chosen = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (chosen < 0 || !by_preemption) return false;
  }
  if (look.held_back) return false;
  rec.target_pods = chosen;
  const bool admitted = ChooseAndAdmit(id, now, why, look, out);
  rec.target_pods = -1;
  if (!admitted) why.clear();  // the usual attempt follows and says why
  return admitted;
}

}  // namespace tessera
