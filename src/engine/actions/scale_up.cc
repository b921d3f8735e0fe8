#include "engine/actions/scale_up.h"

#include "engine/engine.h"

namespace tessera {

ScaleUpAction::ScaleUpAction(Engine& e) : e_(e), s_(e.st) {}

void ScaleUpAction::Execute(double /*now*/, std::vector<Decision>& out) {
  for (auto it = s_.partial.begin(); it != s_.partial.end();) {
    WorkloadId id = *it;
    // A gang below its minimum is completed whole or evicted (stale_gangs.h), not pod by pod.
    if (static_cast<int>(s_.recs[id].placed.size()) < s_.model.workloads[id].MinPods()) {
      ++it;
      continue;
    }
    auto added = e_.placer.PlaceExtra(id);
    for (const auto& p : added) s_.status[id].pods.push_back(p);
    if (!added.empty()) {
      Decision d;
      d.type = Decision::Type::kScaleUp;
      d.workload = id;
      d.pods = std::move(added);
      out.push_back(std::move(d));
    }
    if (static_cast<int>(s_.recs[id].placed.size()) >= s_.model.workloads[id].TotalPods()) {
      it = s_.partial.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tessera
