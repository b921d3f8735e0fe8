// Controller::Impl::MaybePublishView: the loop's state as a ClusterView for the JSON API
// (cluster_view.h, api_routes.h).
#include <chrono>

#include "k8s/controller/controller_impl.h"

namespace tessera::k8s {

std::string Controller::Impl::OwnerOf(const Group& g) const {
  const auto& owners = cache.gang_sources().owner_gangs;
  if (auto o = owners.find(g.key); o != owners.end())
    return o->second.kind + "/" + o->second.object_name;
  if (g.kind == "Job") return "Job/" + g.name;
  if (g.kind == "Pod" || g.foreign) return "";
  return "PodGroup/" + g.name;  // of either API, Volcano's, or Kueue's plain-pod group
}

void Controller::Impl::MaybePublishView() {
  if (!synced) return;
  const auto now = Clock::now();
  if (view_holder.Get() &&
      std::chrono::duration<double>(now - last_view).count() < options.status_period_s)
    return;
  last_view = now;
  ViewInput in;
  in.engine = active ? engine.get() : nullptr;
  in.engine_now = Now();
  in.wall_zero = std::chrono::duration<double>(wall_start.time_since_epoch()).count();
  in.leader = active;
  in.synced = synced;
  in.scheduler_name = options.scheduler_name;
  for (const auto& [key, g] : groups) {
    if (g.state == Group::State::kInEngine && g.id >= 0 && in.engine) {
      in.workloads.push_back({g.id, g.foreign, g.sets, OwnerOf(g)});
    } else if (g.state == Group::State::kWaiting && !g.foreign) {
      ViewInput::Waiting w;
      w.ns = g.ns;
      w.name = g.name;
      w.reason = g.reason.text;
      w.created = g.submitted;
      w.pods.assign(g.pods.begin(), g.pods.end());
      w.owner = OwnerOf(g);
      in.waiting.push_back(std::move(w));
    }
  }
  // DCGM's readings (serve --dcgm-url), copied once for the whole view.
  const auto gpus = utilization.gpus();
  const auto usage = utilization.workloads();
  if (!gpus.empty()) {
    in.gpu_reading = [&](const std::string& node,
                         int32_t index) -> std::optional<ViewInput::GpuReading> {
      auto it = gpus.find({node, index});
      if (it == gpus.end()) return std::nullopt;
      ViewInput::GpuReading r;
      r.utilization = it->second.utilization;
      auto w = usage.find(it->second.workload);
      r.underused = w != usage.end() && w->second.underused;
      return r;
    };
  }
  view_holder.Set(view_builder.Build(in));
}

}  // namespace tessera::k8s
