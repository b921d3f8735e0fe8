// JobSet (jobset.x-k8s.io/v1alpha2): one workload, as Kueue's jobset integration makes it: one
// pod set per replicatedJob, named like it, of replicas x min(parallelism, completions) pods
// (replicas default 1, parallelism default 1) from the Job template's pod template. The whole
// JobSet is one gang.
//
// Not honoured, each named in a notice: startupPolicy InOrder (JobSet creates the replicated
// jobs one after another; Tessera admits and places them together), a replicatedJob's dependsOn
// (its Jobs start after those it depends on are Ready or Complete; Tessera starts them
// together), and the exclusive-topology annotation (one Job per topology domain). The Job
// template's Kueue topology annotations are read with its pod template.
//
// Kubernetes mode: the pods carry jobset.sigs.k8s.io/jobset-name (and are owned by the JobSet's
// Jobs, which do not size the gang).
#include <algorithm>
#include <string>

#include "config/kinds/registry.h"
#include "config/pod_template.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kExclusiveTopology = "alpha.jobset.sigs.k8s.io/exclusive-topology";

// One replicatedJob into a pod set of `w`; false on an error (said through ctx).
bool ReadReplicatedJob(DocContext& ctx, const YAML::Node& rj, const std::string& p, size_t i,
                       Workload& w, std::string& priority) {
  if (!ExpectMap(ctx, rj, p)) {
    if (!ctx.failed()) ctx.Error(rj, p, "expected a replicated job, got null");
    return false;
  }
  auto name = GetString(ctx, rj, "name", p + ".name");
  auto replicas = GetInt(ctx, rj, "replicas", p + ".replicas", 0, kMaxPods);
  YAML::Node job = Child(rj, "template");
  if (IsNullish(job)) {
    ctx.Error(rj, p + ".template", "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, job, p + ".template")) return false;
  if (YAML::Node md = Child(job, "metadata"); ExpectMap(ctx, md, p + ".template.metadata")) {
    Labels annotations;
    ReadLabels(ctx, Child(md, "annotations"), p + ".template.metadata.annotations", annotations);
    if (annotations.count(std::string(kExclusiveTopology)))
      ctx.Notice(md, p + ".template.metadata.annotations." + std::string(kExclusiveTopology),
                 "exclusive placement (one Job per topology domain) is not honoured; use Kueue's "
                 "kueue.x-k8s.io/podset-required-topology on the pod template instead");
  }
  const std::string jp = p + ".template.spec";
  YAML::Node spec = Child(job, "spec");
  if (IsNullish(spec)) {
    ctx.Error(job, jp, "required field is missing");
    return false;
  }
  if (!ExpectMap(ctx, spec, jp)) return false;
  auto parallelism = GetInt(ctx, spec, "parallelism", jp + ".parallelism", 0, kMaxPods);
  auto completions = GetInt(ctx, spec, "completions", jp + ".completions", 0, kMaxPods);
  if (YAML::Node d = Child(rj, "dependsOn"); !IsNullish(d))
    ctx.Notice(d, p + ".dependsOn",
               "JobSet starts these Jobs after those they depend on; Tessera admits and starts "
               "the whole JobSet together");
  PodInfo pod;
  if (!ReadPodTemplate(ctx, spec, jp + ".template", pod) || ctx.failed()) return false;
  int64_t per_job = parallelism.value_or(1);
  if (completions) per_job = std::min(per_job, *completions);
  const int64_t count = replicas.value_or(1) * per_job;
  if (count > kMaxPods) {
    ctx.Error(rj, p, "replicas x parallelism is " + std::to_string(count) + " pods; at most " +
                         std::to_string(kMaxPods) + " per workload are supported");
    return false;
  }
  pod.set.name = name && !name->empty() ? *name : "rj" + std::to_string(i);
  pod.set.count = static_cast<int32_t>(count);
  if (priority.empty()) priority = pod.priority_class;
  if (w.queue_name.empty())
    QueueFromTemplate(ctx, Child(Child(spec, "template"), "metadata"), jp + ".template.metadata",
                      pod.labels, pod.set.annotations, w);
  w.pod_sets.push_back(std::move(pod.set));
  return true;
}

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "JobSet");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node rjs = Child(spec, "replicatedJobs");
  if (IsNullish(rjs)) {
    ctx.Error(spec, "spec.replicatedJobs", "required field is missing");
    return;
  }
  if (YAML::Node sp = Child(spec, "startupPolicy"); ExpectMap(ctx, sp, "spec.startupPolicy")) {
    auto order =
        GetString(ctx, sp, "startupPolicyOrder", "spec.startupPolicy.startupPolicyOrder");
    if (order == "InOrder")
      ctx.Notice(sp, "spec.startupPolicy.startupPolicyOrder",
                 "JobSet creates the replicated jobs in order, each once the one before is "
                 "ready; Tessera admits and places them together, as one gang");
  }
  std::string priority;
  ForEachSeq(ctx, rjs, "spec.replicatedJobs",
             [&](size_t i, const YAML::Node& rj, const std::string& p) {
               return ReadReplicatedJob(ctx, rj, p, i, w, priority);
             });
  if (ctx.failed()) return;
  if (w.pod_sets.empty()) {
    ctx.Error(rjs, "spec.replicatedJobs", "a JobSet needs at least one replicated job");
    return;
  }
  if (w.priority_class.empty()) w.priority_class = priority;
  int64_t total = 0;  // int64: each set may hold kMaxPods
  for (const PodSet& ps : w.pod_sets) total += ps.count;
  if (total > kMaxPods) {
    ctx.Error(rjs, "spec.replicatedJobs",
              "the JobSet has " + std::to_string(total) + " pods; at most " +
                  std::to_string(kMaxPods) + " per workload are supported");
    return;
  }
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind JobSetKind() {
  JobKind k;
  k.group = "jobset.x-k8s.io";
  k.versions = {"v1alpha2"};
  k.kind = "JobSet";
  k.plural = "jobsets";
  k.read = Read;
  k.pods.name_label = "jobset.sigs.k8s.io/jobset-name";
  return k;
}

}  // namespace tessera::config_internal
