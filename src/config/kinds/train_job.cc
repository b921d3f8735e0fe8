// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): TrainJob, and the ClusterTrainingRuntime
// or TrainingRuntime it names in spec.runtimeRef (kind defaults to ClusterTrainingRuntime; a
// TrainingRuntime is looked up in the TrainJob's namespace).
//
// The trainer builds a JobSet from the runtime's spec.template; Kueue's trainjob integration
// takes that JobSet's pod sets: one per replicated job (dataset-initializer, model-initializer,
// launcher, node: whatever the runtime lists), named like it, of replicas x parallelism pods. The
// trainer's rules, applied here: the replicated job labelled
// trainer.kubeflow.org/trainjob-ancestor-step: trainer runs once (replicas 1) with
// spec.mlPolicy.numNodes (default 1) pods, or the TrainJob's trainer.numNodes; under an MPI
// mlPolicy trainer.numNodes sizes the replicated job named "node" instead (less one when
// mpi.runLauncherAsNode); every other job has its own parallelism (default 1). Each count is at
// least 1. trainer.resourcesPerNode is merged, key by key, over the requests and limits of the
// container named "node" of the trainer job (and, under runLauncherAsNode, of the "node" job).
// The queue is the TrainJob's Kueue label; the priority the first pod template's
// priorityClassName; one gang of every pod (the podGroupPolicy's gang, and Kueue's).
//
// A runtime may come in another document or file than the TrainJob, before or after it, so both
// are staged (Staged::train_parts) and ResolveTrainJobs builds the workloads once every document
// is read. A TrainJob whose runtime is not in the input becomes, with a warning, a gang of
// trainer.numNodes pods of trainer.resourcesPerNode when it gives both, and is skipped with a
// warning otherwise.
//
// Not honoured, with a notice: a replicated job's dependsOn (its pods start with the others),
// podGroupPolicy's coscheduling.scheduleTimeoutSeconds and volcano.networkTopology, and the
// TrainJob's runtimePatches (and the older podTemplateOverrides, podSpecOverrides). Fields that
// only shape the containers (image, command, env, numProcPerNode, initializer) change no
// placement and are not read.
#include "config/kinds/registry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/gpu_fields.h"
#include "config/loader.h"
#include "config/pod_resources.h"
#include "config/pod_template.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {

namespace {
constexpr std::string_view kGroup = "trainer.kubeflow.org";
constexpr std::string_view kAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
constexpr std::string_view kNode = "node";
}  // namespace

// One replicated job of a runtime's JobSet template, its pod template already read.
struct ReplicatedJob {
  PodSet set;  // count: unset here, the TrainJob decides
  int64_t replicas = 1;
  int64_t parallelism = 1;
  bool trainer = false;  // the trainjob-ancestor-step: trainer job
  YAML::Node pod_spec;   // its pod template's spec, for trainer.resourcesPerNode
  std::string pod_spec_path;
};

// A TrainJob, or a runtime it may name (kinds.h).
struct TrainPart {
  bool runtime = false;
  std::string ns;  // "" for a ClusterTrainingRuntime
  std::string name;
  std::string source;
  std::string file;  // the document's file, for a runtime's template re-read
  // A runtime.
  bool ml_policy = false;
  std::optional<int64_t> ml_num_nodes;
  bool mpi = false;
  bool launcher_as_node = false;
  std::vector<ReplicatedJob> jobs;
  std::string priority_class;  // the first template's priorityClassName
  // A TrainJob: its metadata's fields (no pod sets), the runtime it names and its trainer.
  Workload workload;
  std::string ref_kind, ref_name;
  std::optional<int64_t> num_nodes;
  YAML::Node resources;                        // trainer.resourcesPerNode
  std::optional<Resources> resources_request;  // a pod of resourcesPerNode alone
};

namespace {

std::string RuntimeKey(std::string_view kind, std::string_view ns, std::string_view name) {
  return std::string(kind) + "/" + std::string(kind == "TrainingRuntime" ? ns : "") + "/" +
         std::string(name);
}

void ReadReplicatedJob(DocContext& ctx, const YAML::Node& rj, const std::string& p,
                       TrainPart& part) {
  ReplicatedJob job;
  auto name = GetString(ctx, rj, "name", p + ".name");
  if (ctx.failed()) return;
  if (!name || name->empty()) {
    ctx.Error(rj, p + ".name", "required field is missing");
    return;
  }
  job.replicas = GetInt(ctx, rj, "replicas", p + ".replicas", 0, kMaxPods).value_or(1);
  YAML::Node tmpl = Child(rj, "template");
  if (IsNullish(tmpl)) {
    ctx.Error(rj, p + ".template", "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, tmpl, p + ".template")) return;
  Labels labels;
  YAML::Node md = Child(tmpl, "metadata");
  if (ExpectMap(ctx, md, p + ".template.metadata"))
    ReadLabels(ctx, Child(md, "labels"), p + ".template.metadata.labels", labels);
  job.trainer = Lookup(labels, kAncestorLabel) == "trainer";
  YAML::Node job_spec = Child(tmpl, "spec");
  if (IsNullish(job_spec)) {
    ctx.Error(tmpl, p + ".template.spec", "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, job_spec, p + ".template.spec")) return;
  job.parallelism =
      GetInt(ctx, job_spec, "parallelism", p + ".template.spec.parallelism", 0, kMaxPods)
          .value_or(1);
  PodInfo pod;
  if (!ReadPodTemplate(ctx, job_spec, p + ".template.spec.template", pod)) return;
  job.set = std::move(pod.set);
  job.set.name = *name;
  job.pod_spec = Child(Child(job_spec, "template"), "spec");
  job.pod_spec_path = p + ".template.spec.template.spec";
  if (part.priority_class.empty()) part.priority_class = pod.priority_class;
  if (YAML::Node dep = Child(rj, "dependsOn"); !IsNullish(dep)) {
    ctx.Notice(dep, p + ".dependsOn",
               "not honoured: the pods of " + *name +
                   " are admitted and started together with the replicated jobs it depends on "
                   "(JobSet creates them once those are ready or complete)");
  }
  part.jobs.push_back(std::move(job));
}

// ClusterTrainingRuntime and TrainingRuntime: the same spec.
void ReadRuntime(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  auto part = std::make_shared<TrainPart>();
  part->runtime = true;
  part->ns = meta.ns;
  part->name = meta.name;
  part->source = meta.source;
  part->file = ctx.file();
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node ml = Child(spec, "mlPolicy");
  if (ExpectMap(ctx, ml, "spec.mlPolicy")) {
    part->ml_policy = true;
    part->ml_num_nodes = GetInt(ctx, ml, "numNodes", "spec.mlPolicy.numNodes", 1, kMaxPods);
    YAML::Node mpi = Child(ml, "mpi");
    if (ExpectMap(ctx, mpi, "spec.mlPolicy.mpi")) {
      part->mpi = true;
      part->launcher_as_node =
          GetBool(ctx, mpi, "runLauncherAsNode", "spec.mlPolicy.mpi.runLauncherAsNode")
              .value_or(false);
    }
  }
  YAML::Node pgp = Child(spec, "podGroupPolicy");
  if (ExpectMap(ctx, pgp, "spec.podGroupPolicy")) {
    YAML::Node co = Child(pgp, "coscheduling");
    if (ExpectMap(ctx, co, "spec.podGroupPolicy.coscheduling") &&
        !IsNullish(Child(co, "scheduleTimeoutSeconds"))) {
      ctx.Notice(Child(co, "scheduleTimeoutSeconds"),
                 "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
                 "not honoured: Tessera holds the gang until all of it fits, without a timeout");
    }
    YAML::Node vc = Child(pgp, "volcano");
    if (ExpectMap(ctx, vc, "spec.podGroupPolicy.volcano") &&
        !IsNullish(Child(vc, "networkTopology"))) {
      ctx.Notice(Child(vc, "networkTopology"), "spec.podGroupPolicy.volcano.networkTopology",
                 "not honoured: Tessera places the TrainJob's pods without a topology domain");
    }
  }
  YAML::Node tmpl_spec = Child(Child(spec, "template"), "spec");
  YAML::Node rjobs = Child(tmpl_spec, "replicatedJobs");
  if (IsNullish(rjobs)) {
    ctx.Error(spec, "spec.template.spec.replicatedJobs", "required field is missing");
    return;
  }
  ForEachSeq(ctx, rjobs, "spec.template.spec.replicatedJobs",
             [&](size_t, const YAML::Node& rj, const std::string& p) {
               if (!ExpectMap(ctx, rj, p)) {
                 if (!ctx.failed()) ctx.Error(rj, p, "expected a replicated job, got null");
                 return false;
               }
               ReadReplicatedJob(ctx, rj, p, *part);
               return !ctx.failed();
             });
  if (ctx.failed()) return;
  out.train_parts.push_back(std::move(part));
}

// trainer.resourcesPerNode as the request of a pod of one container with those resources;
// nullopt (with an error on `ctx`) when a quantity does not parse.
std::optional<Resources> ReadResourcesPerNode(DocContext& ctx, const YAML::Node& rpn,
                                              const std::string& path) {
  YAML::Node container(YAML::NodeType::Map);
  container["name"] = std::string(kNode);
  container["resources"] = YAML::Clone(rpn);
  YAML::Node pod(YAML::NodeType::Map);
  pod["containers"].push_back(container);
  std::vector<Diagnostic> problems;
  DocContext scratch(ctx.file(), ctx.line_offset(), &problems, ctx.last_line());
  Resources r = ReadPodRequests(scratch, pod, path);
  for (const Diagnostic& d : problems) {
    if (d.severity != Diagnostic::Severity::kError) continue;
    ctx.Error(rpn, path, d.message);
    return std::nullopt;
  }
  return r;
}

void ReadTrainJob(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  auto part = std::make_shared<TrainPart>();
  part->ns = meta.ns;
  part->name = meta.name;
  part->source = meta.source;
  part->file = ctx.file();
  part->workload = NewWorkload(ctx, meta, "TrainJob");
  Workload& w = part->workload;
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node ref = Child(spec, "runtimeRef");
  if (IsNullish(ref)) {
    ctx.Error(spec, "spec.runtimeRef", "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, ref, "spec.runtimeRef")) return;
  part->ref_name = GetString(ctx, ref, "name", "spec.runtimeRef.name").value_or("");
  part->ref_kind =
      GetString(ctx, ref, "kind", "spec.runtimeRef.kind").value_or("ClusterTrainingRuntime");
  auto group = GetString(ctx, ref, "apiGroup", "spec.runtimeRef.apiGroup");
  if (ctx.failed()) return;
  if (part->ref_name.empty()) {
    ctx.Error(ref, "spec.runtimeRef.name", "required field is missing");
    return;
  }
  if (part->ref_kind != "ClusterTrainingRuntime" && part->ref_kind != "TrainingRuntime") {
    ctx.Error(Child(ref, "kind"), "spec.runtimeRef.kind",
              "unknown runtime kind \"" + part->ref_kind +
                  "\"; allowed: ClusterTrainingRuntime, TrainingRuntime");
    return;
  }
  if (group && *group != kGroup) {
    ctx.Error(Child(ref, "apiGroup"), "spec.runtimeRef.apiGroup",
              "unknown runtime API group \"" + *group + "\"; allowed: " + std::string(kGroup));
    return;
  }
  YAML::Node trainer = Child(spec, "trainer");
  if (ExpectMap(ctx, trainer, "spec.trainer")) {
    part->num_nodes = GetInt(ctx, trainer, "numNodes", "spec.trainer.numNodes", 1, kMaxPods);
    YAML::Node rpn = Child(trainer, "resourcesPerNode");
    if (ExpectMap(ctx, rpn, "spec.trainer.resourcesPerNode")) {
      part->resources = rpn;
      part->resources_request = ReadResourcesPerNode(ctx, rpn, "spec.trainer.resourcesPerNode");
    }
  }
  for (std::string_view key : {"runtimePatches", "podTemplateOverrides", "podSpecOverrides"}) {
    if (YAML::Node n = Child(spec, key); !IsNullish(n)) {
      ctx.Notice(n, "spec." + std::string(key),
                 "not applied: Tessera reads the runtime's pod templates as they are (their "
                 "selectors, tolerations and resources)");
    }
  }
  ReadActiveDeadline(ctx, spec, "spec", w);
  if (ctx.failed()) return;
  out.train_parts.push_back(std::move(part));
}

// The job's pod request with `rpn` merged over the requests and limits of its "node" container;
// nullopt when it has none.
std::optional<Resources> MergeInto(const ReplicatedJob& job, const YAML::Node& rpn,
                                   const std::string& file) {
  YAML::Node spec = YAML::Clone(job.pod_spec);
  YAML::Node containers = spec["containers"];
  if (!containers.IsSequence()) return std::nullopt;
  for (size_t i = 0; i < containers.size(); ++i) {
    YAML::Node c = containers[i];
    if (!c.IsMap() || !c["name"].IsScalar() || c["name"].Scalar() != kNode) continue;
    if (!c["resources"].IsMap()) c["resources"] = YAML::Node(YAML::NodeType::Map);
    YAML::Node res = c["resources"];
    for (const char* section : {"requests", "limits"}) {
      YAML::Node from = Child(rpn, section);
      if (!from.IsMap()) continue;
      if (!res[section].IsMap()) res[section] = YAML::Node(YAML::NodeType::Map);
      YAML::Node to = res[section];
      for (auto it = from.begin(); it != from.end(); ++it)
        to[it->first.Scalar()] = YAML::Clone(it->second);
    }
    std::vector<Diagnostic> ignored;  // the runtime's and the TrainJob's quantities parsed
    DocContext scratch(file, 0, &ignored);
    Resources r = ReadPodRequests(scratch, spec, job.pod_spec_path);
    ApplyGpuShareAnnotations(job.set.annotations, r);
    return r;
  }
  return std::nullopt;
}

// The template was read clean, so yaml-cpp should not throw here; if it does, the job keeps its
// requests (with the caller's warning) rather than losing the whole load's resolution.
std::optional<Resources> MergedRequest(const ReplicatedJob& job, const YAML::Node& rpn,
                                       const std::string& file) {
  try {
    return MergeInto(job, rpn, file);
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

Diagnostic At(const TrainPart& job, Diagnostic::Severity s, std::string message) {
  Diagnostic d;
  d.severity = s;
  ParseSource(job.source, d.file, d.line);
  d.message = std::move(message);
  return d;
}

// The pod sets of `job` from `rt`; false (with an error) when they are too many pods.
bool BuildFromRuntime(const TrainPart& job, const TrainPart& rt, Workload& w,
                      std::vector<Diagnostic>& out) {
  int64_t total = 0;
  for (const ReplicatedJob& rj : rt.jobs) {
    int64_t count = rj.parallelism;
    if (rj.trainer && rt.ml_policy) count = rt.ml_num_nodes.value_or(1);
    if (job.num_nodes) {
      if (rt.mpi && rj.set.name == kNode) {
        count = rt.launcher_as_node ? std::max<int64_t>(*job.num_nodes - 1, 1) : *job.num_nodes;
      } else if (!rt.mpi && rj.trainer) {
        count = *job.num_nodes;
      }
    }
    count = std::max<int64_t>(count, 1) * (rj.trainer ? 1 : rj.replicas);
    total += count;
    if (total > kMaxPods) {
      out.push_back(At(job, Diagnostic::Severity::kError,
                       "TrainJob " + job.ns + "/" + job.name + " has more than " +
                           std::to_string(kMaxPods) + " pods with runtime " + rt.name +
                           "; at most that many pods per workload are supported"));
      return false;
    }
    PodSet ps = rj.set;
    ps.count = static_cast<int32_t>(count);
    const bool override_resources =
        (rj.trainer && rt.ml_policy) || (rt.mpi && rt.launcher_as_node && rj.set.name == kNode);
    if (job.resources_request && override_resources) {
      if (auto merged = MergedRequest(rj, job.resources, rt.file)) {
        ps.requests = *merged;
      } else {
        out.push_back(At(job, Diagnostic::Severity::kWarning,
                         "TrainJob " + job.ns + "/" + job.name + ": replicated job " + ps.name +
                             " of runtime " + rt.name +
                             " has no container named node; trainer.resourcesPerNode is not "
                             "applied to it"));
      }
    }
    w.pod_sets.push_back(std::move(ps));
  }
  if (w.priority_class.empty()) w.priority_class = rt.priority_class;
  return true;
}

}  // namespace

void ResolveTrainJobs(std::vector<std::shared_ptr<const TrainPart>> parts, Model& model,
                      std::vector<Diagnostic>& out) {
  std::map<std::string, const TrainPart*> runtimes;
  for (const auto& p : parts) {
    if (p->runtime)
      runtimes.emplace(RuntimeKey(p->ns.empty() ? "ClusterTrainingRuntime" : "TrainingRuntime",
                                  p->ns, p->name),
                       p.get());
  }
  for (const auto& p : parts) {
    if (p->runtime) continue;
    const TrainPart& job = *p;
    Workload w = job.workload;
    const std::string what = "TrainJob " + job.ns + "/" + job.name + ": its " + job.ref_kind +
                             " " + job.ref_name + " is not in the input";
    auto it = runtimes.find(RuntimeKey(job.ref_kind, job.ns, job.ref_name));
    if (it != runtimes.end()) {
      if (!BuildFromRuntime(job, *it->second, w, out)) continue;
    } else if (job.num_nodes && job.resources_request) {
      out.push_back(At(job, Diagnostic::Severity::kWarning,
                       what + "; Tessera schedules the trainer's " +
                           std::to_string(*job.num_nodes) +
                           " nodes of trainer.resourcesPerNode alone, without the runtime's "
                           "other replicated jobs, selectors and tolerations"));
      PodSet ps;
      ps.name = std::string(kNode);
      ps.count = static_cast<int32_t>(*job.num_nodes);
      ps.requests = *job.resources_request;
      ps.termination_grace = 30;  // Kubernetes' default, as the templates get
      w.pod_sets.push_back(std::move(ps));
    } else {
      out.push_back(At(job, Diagnostic::Severity::kWarning,
                       what + "; skipped (without it, trainer.numNodes and "
                              "trainer.resourcesPerNode are needed to size the job)"));
      continue;
    }
    model.workloads.push_back(std::move(w));
  }
}

JobKind TrainJobKind() {
  JobKind k;
  k.group = kGroup;
  k.versions = {"v1alpha1"};
  k.kind = "TrainJob";
  k.plural = "trainjobs";
  k.read = ReadTrainJob;
  // No PodLink: the trainer creates a JobSet of the TrainJob's name, whose pods carry
  // jobset.sigs.k8s.io/jobset-name; Kubernetes mode links them through the JobSet kind.
  return k;
}

JobKind TrainingRuntimeKind() {
  JobKind k;
  k.group = kGroup;
  k.versions = {"v1alpha1"};
  k.kind = "TrainingRuntime";
  k.read = ReadRuntime;
  return k;
}

JobKind ClusterTrainingRuntimeKind() {
  JobKind k;
  k.group = kGroup;
  k.versions = {"v1alpha1"};
  k.kind = "ClusterTrainingRuntime";
  k.namespaced = false;
  k.read = ReadRuntime;
  return k;
}

}  // namespace tessera::config_internal
