// Kubeflow's MPIJob: kubeflow.org/v2beta1 (mpi-operator v2) and kubeflow.org/v1 (the training
// operator's), which share spec.mpiReplicaSpecs and spec.runPolicy.
//
// Pod sets, as Kueue's mpijob integration builds them: "launcher" (Launcher.replicas, default 1;
// the operator allows exactly 1) then "worker" (Worker.replicas; the operators' defaulting makes
// a missing count 0, so Tessera does too), one gang of all of them. runLauncherAsWorker only puts
// the launcher into the hostfile: the launcher is still one pod with the Launcher template and
// the workers keep their count, so it changes nothing here (nor in Kueue). slotsPerWorker only
// writes the hostfile. runPolicy.schedulingPolicy: minAvailable (the gang's minimum; the
// operator's default, every pod, is Tessera's too), queue (when no Kueue queue label is set) and
// priorityClass (before the Launcher's, then the Worker's, template priorityClassName, Kueue's
// order); runPolicy.activeDeadlineSeconds.
//
// Not honoured, with a notice: launcherCreationPolicy WaitForWorkersReady (the launcher pod is
// admitted and started with the workers) and schedulingPolicy.scheduleTimeoutSeconds.
#include "config/kinds/registry.h"

#include <string>

#include "config/kinds/kubeflow.h"
#include "config/pod_template.h"
#include "config/time_fields.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

void Read(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Workload w = NewWorkload(ctx, meta, "MPIJob");
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  YAML::Node specs = Child(spec, "mpiReplicaSpecs");
  if (IsNullish(specs)) {
    ctx.Error(spec, "spec.mpiReplicaSpecs", "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, specs, "spec.mpiReplicaSpecs")) return;
  // The map's order is the author's; the launcher comes first whatever it is.
  ForEachMap(ctx, specs, "spec.mpiReplicaSpecs",
             [&](const std::string& type, const YAML::Node& node, const std::string& path) {
               if (type != "Launcher" && type != "Worker") {
                 ctx.Error(node, path,
                           "unknown replica type \"" + type + "\"; allowed: Launcher, Worker");
               }
               return !ctx.failed();
             });
  if (ctx.failed()) return;
  YAML::Node launcher = Child(specs, "Launcher");
  if (IsNullish(launcher)) {
    ctx.Error(specs, "spec.mpiReplicaSpecs.Launcher", "required field is missing");
    return;
  }
  std::string launcher_priority, worker_priority;
  for (std::string_view type : {"Launcher", "Worker"}) {
    YAML::Node node = Child(specs, type);
    const std::string path = "spec.mpiReplicaSpecs." + std::string(type);
    if (IsNullish(node)) continue;
    if (!ExpectMap(ctx, node, path)) return;
    const bool is_launcher = type == "Launcher";
    auto count = GetInt(ctx, node, "replicas", path + ".replicas", 0, kMaxPods);
    if (is_launcher && count && *count != 1) {
      ctx.Error(Child(node, "replicas"), path + ".replicas",
                "an MPIJob has exactly one launcher, got " + std::to_string(*count));
      return;
    }
    PodInfo pod;
    if (!ReadPodTemplate(ctx, node, path + ".template", pod)) return;
    pod.set.name = is_launcher ? "launcher" : "worker";
    pod.set.count = static_cast<int32_t>(count.value_or(is_launcher ? 1 : 0));
    (is_launcher ? launcher_priority : worker_priority) = pod.priority_class;
    w.pod_sets.push_back(std::move(pod.set));
  }
  std::string policy_priority = ReadRunPolicy(ctx, spec, w);
  w.priority_class = !policy_priority.empty()     ? policy_priority
                     : !launcher_priority.empty() ? launcher_priority
                                                  : worker_priority;
  if (auto lcp = GetString(ctx, spec, "launcherCreationPolicy", "spec.launcherCreationPolicy");
      lcp && *lcp == "WaitForWorkersReady") {
    ctx.Notice(Child(spec, "launcherCreationPolicy"), "spec.launcherCreationPolicy",
               "WaitForWorkersReady is not honoured: the launcher pod is admitted and started "
               "together with the workers (the operator creates it once every worker is ready)");
  }
  if (ctx.failed()) return;
  if (w.min_count > w.TotalPods()) {
    ctx.Warning(Child(Child(Child(spec, "runPolicy"), "schedulingPolicy"), "minAvailable"),
                "spec.runPolicy.schedulingPolicy.minAvailable",
                "minAvailable is larger than the job's " + std::to_string(w.TotalPods()) +
                    " pods; Tessera requires all of them");
    w.min_count = -1;
  }
  out.model.workloads.push_back(std::move(w));
}

}  // namespace

JobKind MPIJobKind() {
  JobKind k;
  k.group = "kubeflow.org";
  k.versions = {"v2beta1", "v1"};
  k.kind = "MPIJob";
  k.plural = "mpijobs";
  k.read = Read;
  // mpi-operator v2 labels the launcher and worker pods with the job's name
  // (training.kubeflow.org/job-name, pkg/controller/mpi_job_controller.go, defaultLabels) and
  // with operator-name mpi-operator; training-operator v1 puts the same name label on its
  // PyTorchJob and TFJob pods, so the operator's name tells them apart.
  k.pods = {"training.kubeflow.org/job-name", "", "training.kubeflow.org/operator-name",
            "mpi-operator"};
  return k;
}

}  // namespace tessera::config_internal
