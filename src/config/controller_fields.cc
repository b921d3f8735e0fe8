#include "config/controller_fields.h"

#include <algorithm>
#include <string>

#include "model/limits.h"

namespace tessera::config_internal {
namespace {

// One notice when `key` is present under `parent`.
void NoticeIfPresent(DocContext& ctx, const YAML::Node& parent, std::string_view key,
                     const std::string& path, const std::string& message) {
  YAML::Node n = Child(parent, key);
  if (IsNullish(n)) return;
  ctx.Notice(n, path, message);
}

// spec.flavorFungibility, with Kueue's old names (Borrow, Preempt) for MayStopSearch.
void ReadFlavorFungibility(DocContext& ctx, const YAML::Node& spec, FlavorFungibility& out) {
  YAML::Node ff = Child(spec, "flavorFungibility");
  const std::string path = "spec.flavorFungibility";
  if (IsNullish(ff) || !ExpectMap(ctx, ff, path)) return;
  using P = FungibilityPolicy;
  if (YAML::Node b = Child(ff, "whenCanBorrow"); !IsNullish(b)) {
    if (auto v = ParseEnum<P>(ctx, b, path + ".whenCanBorrow",
                              {{"MayStopSearch", P::kMayStopSearch},
                               {"TryNextFlavor", P::kTryNextFlavor},
                               {"Borrow", P::kMayStopSearch}}))
      out.when_can_borrow = *v;
  }
  if (YAML::Node p = Child(ff, "whenCanPreempt"); !IsNullish(p)) {
    if (auto v = ParseEnum<P>(ctx, p, path + ".whenCanPreempt",
                              {{"MayStopSearch", P::kMayStopSearch},
                               {"TryNextFlavor", P::kTryNextFlavor},
                               {"Preempt", P::kMayStopSearch}}))
      out.when_can_preempt = *v;
  }
  YAML::Node pref = Child(ff, "preference");
  if (IsNullish(pref)) return;
  auto v = ParseEnum<FungibilityPreference>(
      ctx, pref, path + ".preference",
      {{"BorrowingOverPreemption", FungibilityPreference::kBorrowingOverPreemption},
       {"PreemptionOverBorrowing", FungibilityPreference::kPreemptionOverBorrowing}});
  if (!v) return;
  // Kueue's webhook rejects a preference unless both policies are TryNextFlavor (the search
  // would stop before the preference could choose); Tessera ignores it and says so.
  if (out.when_can_borrow != P::kTryNextFlavor || out.when_can_preempt != P::kTryNextFlavor) {
    ctx.Warning(pref, path + ".preference",
                "ignored: a preference needs whenCanBorrow and whenCanPreempt both "
                "TryNextFlavor (Kueue rejects it otherwise)");
    return;
  }
  out.preference = *v;
}

}  // namespace

void ReadClusterQueueControl(DocContext& ctx, const YAML::Node& spec, ClusterQueue& cq) {
  if (YAML::Node s = Child(spec, "stopPolicy"); !IsNullish(s)) {
    if (auto v = ParseEnum<StopPolicy>(ctx, s, "spec.stopPolicy",
                                       {{"None", StopPolicy::kNone},
                                        {"Hold", StopPolicy::kHold},
                                        {"HoldAndDrain", StopPolicy::kHoldAndDrain}}))
      cq.stop_policy = *v;
  }
  NoticeIfPresent(ctx, spec, "admissionChecks", "spec.admissionChecks",
                  "admission checks are run by their own controllers (ProvisioningRequest, "
                  "MultiKueue, ...); Tessera admits without waiting for them");
  NoticeIfPresent(ctx, spec, "admissionChecksStrategy", "spec.admissionChecksStrategy",
                  "admission checks are run by their own controllers; Tessera admits without "
                  "waiting for them");
  ReadFlavorFungibility(ctx, spec, cq.flavor_fungibility);
}

void NoticeVolcanoJobFields(DocContext& ctx, const YAML::Node& spec) {
  const std::string policies =
      "restarting, aborting or completing a Volcano Job on pod events is its job controller's "
      "work; Tessera does not read it";
  const std::string max_retry =
      "retrying a failed Volcano Job is its job controller's work; Tessera does not read it";
  NoticeIfPresent(ctx, spec, "policies", "spec.policies", policies);
  NoticeIfPresent(ctx, spec, "maxRetry", "spec.maxRetry", max_retry);
  NoticeIfPresent(ctx, spec, "plugins", "spec.plugins",
                  "Volcano's job plugins (env, svc, ssh, ...) set up pods, services and "
                  "secrets in its job controller; Tessera does not read them");
  YAML::Node tasks = Child(spec, "tasks");
  if (!tasks.IsSequence()) return;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string p = IndexPath("spec.tasks", i);
    NoticeIfPresent(ctx, tasks[i], "policies", p + ".policies", policies);
    NoticeIfPresent(ctx, tasks[i], "maxRetry", p + ".maxRetry", max_retry);
  }
}

void ReadElasticPolicy(DocContext& ctx, const YAML::Node& spec, Workload& w) {
  YAML::Node ep = Child(spec, "elasticPolicy");
  const std::string path = "spec.elasticPolicy";
  if (!ExpectMap(ctx, ep, path)) return;
  auto min = GetInt(ctx, ep, "minReplicas", path + ".minReplicas", 1, kMaxPodsPerWorkload);
  auto max = GetInt(ctx, ep, "maxReplicas", path + ".maxReplicas", 1, kMaxPodsPerWorkload);
  NoticeIfPresent(ctx, ep, "maxRestarts", path + ".maxRestarts",
                  "restarting the workers is torchrun's and the training operator's work; "
                  "Tessera does not read it");
  NoticeIfPresent(ctx, ep, "metrics", path + ".metrics",
                  "scaling on metrics is the HorizontalPodAutoscaler's work; Tessera admits the "
                  "Worker replicas the job has, up to maxReplicas");
  if (ctx.failed()) return;
  if (min && max && *min > *max) {
    ctx.Error(Child(ep, "minReplicas"), path + ".minReplicas",
              "minReplicas (" + std::to_string(*min) + ") is larger than maxReplicas (" +
                  std::to_string(*max) + ")");
    return;
  }
  auto worker = std::find_if(w.pod_sets.begin(), w.pod_sets.end(),
                             [](const PodSet& ps) { return ps.name == "worker"; });
  if (worker == w.pod_sets.end()) {
    if (min || max)
      ctx.Warning(ep, path, "the job has no Worker replicas to scale; elasticPolicy is ignored");
    return;
  }
  if (max && worker->count > *max) {
    ctx.Warning(Child(ep, "maxReplicas"), path + ".maxReplicas",
                "the Worker has " + std::to_string(worker->count) +
                    " replicas, more than maxReplicas; Tessera admits at most " +
                    std::to_string(*max));
    worker->count = static_cast<int32_t>(*max);
  }
  if (!min) return;
  if (*min > worker->count) {
    ctx.Warning(Child(ep, "minReplicas"), path + ".minReplicas",
                "larger than the Worker's " + std::to_string(worker->count) +
                    " replicas; Tessera requires all of them");
    return;
  }
  // The other replica types (the Master) are not elastic: all of their pods are in the gang.
  w.min_count = static_cast<int32_t>(w.TotalPods() - worker->count + *min);
}

}  // namespace tessera::config_internal
