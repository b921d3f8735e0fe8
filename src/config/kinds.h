// The readers of the cluster and queue kinds the loader understands (the job kinds are plugins,
// config/kinds/registry.h), and what every reader shares.
//
// A reader gets the object's parsed metadata and its root node, reports problems through the
// DocContext, and appends what it built to a Staged bundle. The loader commits the bundle into
// the model only when the document had no error, so that a bad document is dropped whole.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/yaml_util.h"
#include "model/model.h"

namespace tessera::config_internal {

struct ObjectMeta {
  std::string group;  // "" for core v1
  std::string version;
  std::string kind;
  std::string name;
  std::string ns;  // "default" for namespaced kinds without metadata.namespace; "" otherwise
  Labels labels;
  Labels annotations;
  YAML::Node root;
  YAML::Node metadata;
  std::string source;  // "file:line" of the object's first line
};

// A v1 Pod labelled as a member of a pod group, waiting for the group to be resolved.
struct GroupPod {
  std::string ns;
  std::string group;
  Workload pod;  // kind "Pod", one pod set: the pod
  std::string source;
  bool kueue = false;  // kueue.x-k8s.io/pod-group-name: no PodGroup object is expected
};

// A TrainJob, or a (Cluster)TrainingRuntime it may name (kinds/train_job.cc).
struct TrainPart;

// What one document produces.
struct Staged {
  Model model;
  bool has_config = false;              // model.config was set by a SchedulerConfig
  std::vector<GroupPod> group_pods;     // resolved after every document is read
  std::vector<std::string> node_names;  // nodes' names, checked for duplicates across documents
  std::vector<ForeignQueue> foreign_queues;  // converted after every document is read
  std::vector<std::shared_ptr<const TrainPart>> train_parts;  // resolved after every document
};

// nodes.cc
void ReadNode(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadNamespace(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadNodePool(DocContext& ctx, const ObjectMeta& meta, Staged& out);

// queues.cc
void ReadResourceFlavor(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadClusterQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadCohort(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadLocalQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadWorkloadPriorityClass(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadTopology(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadPriorityClass(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadSchedulerConfig(DocContext& ctx, const ObjectMeta& meta, Staged& out);

// foreign_queue_readers.cc: KAI's Queue (scheduling.run.ai/v2) and Volcano's Queue
// (scheduling.volcano.sh/v1beta1), converted by config/foreign_queues.h.
void ReadKaiQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out);
void ReadVolcanoQueue(DocContext& ctx, const ObjectMeta& meta, Staged& out);

// The job kinds are plugins: config/kinds/registry.h. kinds/pod_group.cc:
// Attaches pending pods to their PodGroup workloads in `model` (defined in this load or an
// earlier one); pods whose group is never defined form a gang of their own, with a warning.
void ResolvePodGroups(std::vector<GroupPod> pods, Model& model, std::vector<Diagnostic>& out);

// kinds/train_job.cc: builds the TrainJobs' workloads from the runtimes they name, wherever in the
// input those came; a TrainJob without its runtime gets a warning.
void ResolveTrainJobs(std::vector<std::shared_ptr<const TrainPart>> parts, Model& model,
                      std::vector<Diagnostic>& out);

// Splits "file:line" back into its parts (for diagnostics about model objects).
void ParseSource(const std::string& source, std::string& file, int& line);

}  // namespace tessera::config_internal
