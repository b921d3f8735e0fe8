// The controller's side of elastic clusters (controller_impl.h says how the pieces fit; what is
// asked of the autoscaler: docs/autoscaling.md, "Kubernetes mode"): ProvisioningRequests for the
// gangs the engine says need capacity, what their pods say meanwhile, and which bound pods are
// kept from consolidation.
#include <algorithm>
#include <string>
#include <vector>

#include "k8s/controller/controller_impl.h"

namespace tessera::k8s {

void Controller::Impl::SyncProvisioning(bool cycled) {
  if (!provisioner || !engine) return;
  const double now = Now();
  if (!cycled && last_provisioning_sync >= 0 &&
      now - last_provisioning_sync < std::min(options.status_period_s, 1.0))
    return;
  last_provisioning_sync = now;
  std::vector<CapacityNeed> needs;
  if (!provisioner->active()) {
    need_capacity_stale = true;  // worked out afresh when requests are made again
  } else {
    if (need_capacity_stale) {
      need_capacity = engine->NeedCapacity(options.provisioning.max_requests);
      need_capacity_stale = false;
      ++metrics->capacity_plans;
    }
    for (WorkloadId id : need_capacity) {
      const Group* g = GroupOf(id);
      if (!g || g->foreign || g->state != Group::State::kInEngine || g->admitted) continue;
      CapacityNeed n{g->key, g->ns, g->kind, g->name, {}, g->interruptible};
      for (const auto& set : g->sets)
        if (!set.empty()) n.pod_sets.emplace_back(set.front(), static_cast<int32_t>(set.size()));
      if (!n.pod_sets.empty()) needs.push_back(std::move(n));
    }
  }
  // A request's state changed (or one was made or deleted): the pods say so now, not at the
  // next cycle.
  if (provisioner->Sync(now, needs)) PublishPendingReasons();
  SyncConsumeAnnotations();
}

void Controller::Impl::SyncConsumeAnnotations() {
  auto value = [](const PodInfo& pod, const char* key) {
    auto it = pod.annotations.find(key);
    return it == pod.annotations.end() ? std::string() : it->second;
  };
  const auto requests = provisioner->Consumed();
  for (const auto& [key, g] : groups) {
    if (g.foreign) continue;
    auto found = requests.find(key);
    const std::pair<std::string, std::string>* consumed =
        found == requests.end() ? nullptr : &found->second;
    for (const std::string& k : g.pods) {
      auto it = pods.find(k);
      if (it == pods.end()) continue;
      const PodInfo& pod = it->second;
      const std::string have = value(pod, kConsumeRequestAnnotation);
      // A pod bound in the moment its gang's next attempt was made gets that one too.
      if (consumed) {
        if (have != consumed->first || value(pod, kRequestClassAnnotation) != consumed->second)
          provisioner->AnnotatePod(k, consumed->first, consumed->second);
      } else if (IsOurRequestName(have) && !BoundNode(k)) {
        // Its request went (the gang fits now, or its quota went to another): the autoscaler
        // would leave the pod out of its scale-ups for a request that no longer exists.
        provisioner->AnnotatePod(k, "", "");
      }
    }
  }
}

std::string Controller::Impl::ProvisioningNote(const Group& g) const {
  return provisioner ? provisioner->Note(g.key, Now()) : "";
}

const char* Controller::Impl::PendingConditionReason(const Group& g) const {
  if (!provisioner || !provisioner->active()) return "Unschedulable";
  return provisioner->Note(g.key, Now()).empty() ? kNotAdmittedReason
                                                 : kWaitingForProvisioningReason;
}

void Controller::Impl::SayMarkProblems() {
  // Taken either way: a replica that does not lead leaves them to the leader, whose cache says
  // them too.
  auto problems = cache.TakeMarkProblems();
  if (!active || !status_writer) return;
  for (const auto& [ref, problem] : problems)
    status_writer->Event(ref, "Warning", "InvalidAnnotation", problem);
}

bool Controller::Impl::ProtectFromDisruption(const Group& g) const {
  const int min = options.node_policy.protect_min_pods;
  return min > 0 && static_cast<int>(g.pods.size()) >= min;
}

}  // namespace tessera::k8s
