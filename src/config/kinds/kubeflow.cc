// Kubeflow's training-operator v1 jobs (kubeflow.org/v1): PyTorchJob and TFJob, one pod set per
// replica type, in the order the operator starts them.
#include "config/kinds/kubeflow.h"
#include "config/kinds/registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "config/controller_fields.h"
#include "config/time_fields.h"
#include "config/pod_template.h"
#include "config/workload_meta.h"

namespace tessera::config_internal {
namespace {

// The labels Kubeflow's training-operator puts on the pods it creates (kubeflow/common's
// constants): the job's name, and the controller's ("pytorchjob-controller", "tfjob-controller").
constexpr std::string_view kJobNameLabel = "training.kubeflow.org/job-name";
constexpr std::string_view kOperatorNameLabel = "training.kubeflow.org/operator-name";

// Kubeflow's training jobs: one pod set per replica type, in the order the operators start them.
void ReadKubeflowJob(DocContext& ctx, const ObjectMeta& meta, Staged& out,
                     std::string_view specs_key, std::vector<std::string_view> order) {
  Workload w = NewWorkload(ctx, meta, meta.kind);
  YAML::Node spec = RequireSpec(ctx, meta);
  if (ctx.failed()) return;
  const std::string specs_path = "spec." + std::string(specs_key);
  YAML::Node specs = Child(spec, specs_key);
  if (IsNullish(specs)) {
    ctx.Error(spec, specs_path, "required field is missing");
    return;
  }
  struct Replica {
    std::string type;
    YAML::Node node;
    std::string path;
  };
  std::vector<Replica> replicas;
  ForEachMap(ctx, specs, specs_path,
             [&](const std::string& type, const YAML::Node& node, const std::string& path) {
               replicas.push_back({type, node, path});
               return true;
             });
  auto rank = [&](const std::string& type) {
    auto it = std::find(order.begin(), order.end(), type);
    return static_cast<size_t>(it - order.begin());
  };
  // Sort indices, not the Replicas: assigning a YAML::Node rebinds the node it refers to, so
  // moving Nodes around in a vector would rewrite the document.
  std::vector<size_t> order_idx(replicas.size());
  for (size_t i = 0; i < order_idx.size(); ++i) order_idx[i] = i;
  std::stable_sort(order_idx.begin(), order_idx.end(), [&](size_t a, size_t b) {
    return rank(replicas[a].type) < rank(replicas[b].type);
  });
  std::string template_priority;
  PodInfo first_template;  // its queue markers count when the job names no queue
  std::string first_template_path;
  for (size_t idx : order_idx) {
    const Replica& r = replicas[idx];
    if (!ExpectMap(ctx, r.node, r.path)) {
      if (!ctx.failed()) ctx.Error(r.node, r.path, "expected a replica spec, got null");
      return;
    }
    auto count = GetInt(ctx, r.node, "replicas", r.path + ".replicas", 0, kMaxPods);
    PodInfo pod;
    if (!ReadPodTemplate(ctx, r.node, r.path + ".template", pod)) return;
    pod.set.name = Lower(r.type);
    pod.set.count = static_cast<int32_t>(count.value_or(1));
    if (template_priority.empty()) template_priority = pod.priority_class;
    if (first_template_path.empty()) {
      first_template_path = r.path + ".template.metadata";
      first_template.labels = pod.labels;
      first_template.set.annotations = pod.set.annotations;
    }
    w.pod_sets.push_back(std::move(pod.set));
  }
  if (specs_key == "pytorchReplicaSpecs") ReadElasticPolicy(ctx, spec, w);
  w.priority_class = ReadRunPolicy(ctx, spec, w);
  if (w.priority_class.empty()) w.priority_class = template_priority;
  if (!first_template_path.empty()) {
    QueueFromTemplate(ctx, spec, first_template_path, first_template.labels,
                      first_template.set.annotations, w);
  }
  if (ctx.failed()) return;
  out.model.workloads.push_back(std::move(w));
}

void ReadPyTorch(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ReadKubeflowJob(ctx, meta, out, "pytorchReplicaSpecs", {"Master", "Worker"});
}

void ReadTF(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  ReadKubeflowJob(ctx, meta, out, "tfReplicaSpecs",
                  {"Chief", "Master", "PS", "Worker", "Evaluator"});
}

}  // namespace

// schedulingPolicy and activeDeadlineSeconds of spec.runPolicy into `w`; returns the priority
// class schedulingPolicy names ("" when none).
std::string ReadRunPolicy(DocContext& ctx, const YAML::Node& spec, Workload& w) {
  YAML::Node run = Child(spec, "runPolicy");
  if (!ExpectMap(ctx, run, "spec.runPolicy")) return "";
  ReadActiveDeadline(ctx, run, "spec.runPolicy", w);
  YAML::Node policy = Child(run, "schedulingPolicy");
  const std::string ppath = "spec.runPolicy.schedulingPolicy";
  if (!ExpectMap(ctx, policy, ppath)) return "";
  if (auto min = GetInt(ctx, policy, "minAvailable", ppath + ".minAvailable", 0, kMaxPods);
      min && *min > 0) {
    w.min_count = static_cast<int32_t>(*min);
  }
  if (w.queue_name.empty())
    w.queue_name = GetString(ctx, policy, "queue", ppath + ".queue").value_or("");
  if (!IsNullish(Child(policy, "scheduleTimeoutSeconds"))) {
    ctx.Notice(Child(policy, "scheduleTimeoutSeconds"), ppath + ".scheduleTimeoutSeconds",
               "not honoured: Tessera holds the gang until all of it fits, without a timeout");
  }
  return GetString(ctx, policy, "priorityClass", ppath + ".priorityClass").value_or("");
}

JobKind PyTorchJobKind() {
  JobKind k;
  k.group = "kubeflow.org";
  k.versions = {"v1"};
  k.kind = "PyTorchJob";
  k.plural = "pytorchjobs";
  k.read = ReadPyTorch;
  k.pods = {kJobNameLabel, "", kOperatorNameLabel, "pytorchjob-controller"};
  return k;
}

JobKind TFJobKind() {
  JobKind k;
  k.group = "kubeflow.org";
  k.versions = {"v1"};
  k.kind = "TFJob";
  k.plural = "tfjobs";
  k.read = ReadTF;
  k.pods = {kJobNameLabel, "", kOperatorNameLabel, "tfjob-controller"};
  return k;
}

}  // namespace tessera::config_internal
