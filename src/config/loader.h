// Kubernetes-shaped manifests in, Model out.
//
// Reads multi-document YAML of the kinds users already write (v1 Node, Kueue's queue kinds,
// PriorityClass, batch Job, Volcano Job, PodGroup + Pods, PyTorchJob, TFJob, Pod, Deployment,
// Tessera's NodePool and SchedulerConfig; docs/manifests.md lists every field). Objects of
// groups Tessera does not read are skipped with a notice (a warning when they hold pod templates:
// config/pod_template_probe.h). Every error names file, line and field
// path; a document with an error is dropped whole, the rest of the input still loads.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/foreign_queue.h"
#include "model/model.h"

namespace tessera {

struct Diagnostic {
  enum class Severity { kNotice, kWarning, kError };
  Severity severity = Severity::kError;
  std::string file;
  int line = 0;      // 1-based; 0 when unknown
  std::string path;  // field path, e.g. "spec.resourceGroups[0].flavors[1].name"
  std::string message;

  // "file:line: error: spec.x: message"; ":line" is left out when 0, "path: " when empty.
  std::string ToString() const;
};

struct LoadResult {
  Model model;
  std::vector<Diagnostic> diagnostics;

  // Objects skipped because Tessera does not read their kind (each said with a notice, or with a
  // warning when it has pod templates); `tessera validate --strict` fails on any.
  int skipped_objects = 0;

  bool ok() const;  // no kError diagnostics
  int count(Diagnostic::Severity s) const;

  // Loader bookkeeping, so that several LoadManifestText calls into one result still find
  // duplicates: "group/Kind/namespace/name" (and "node:<name>") -> "file:line" of the first.
  std::map<std::string, std::string> object_sources;

  // The KAI and Volcano Queues read (config/foreign_queues.h). Their ClusterQueues and Cohorts
  // are in `model` already; `tessera convert` prints them.
  std::vector<ForeignQueue> foreign_queues;
};

// Loads every file in order into one model. A file that cannot be read is an error. A directory
// loads its *.yaml and *.yml files (not recursively) in name order. A file that yields no object
// Tessera reads (empty, or only skipped kinds) and has no error gets a warning naming the file.
LoadResult LoadManifestFiles(const std::vector<std::string>& paths);
// Loads YAML text; `filename` is used in diagnostics only. Appends to `into`. Pods of a pod group
// are matched to their PodGroup within one call, or to a PodGroup loaded by an earlier call.
void LoadManifestText(std::string_view text, std::string_view filename, LoadResult& into);
// Loads several texts, each (text, filename), as one input: what is resolved across documents
// (pod groups, DRA claims) is resolved once, at the end.
void LoadManifestTexts(const std::vector<std::pair<std::string, std::string>>& texts,
                       LoadResult& into);

// Warnings for references to undefined objects (LocalQueue -> ClusterQueue, ClusterQueue ->
// flavor/cohort, workload -> LocalQueue/PriorityClass/WorkloadPriorityClass).
std::vector<Diagnostic> CheckReferences(const Model& model);

}  // namespace tessera
