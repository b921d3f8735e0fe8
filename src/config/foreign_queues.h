// KAI Scheduler's and Volcano's queues as Kueue's: KAI Queue (scheduling.run.ai/v2) and Volcano
// Queue (scheduling.volcano.sh/v1beta1) become ClusterQueues (leaf queues), Cohorts (queues with
// children, and one root Cohort per scheduler standing for the cluster), and LocalQueues.
// `tessera convert` prints the result as YAML; the manifest loader loads that same YAML into the
// model when the input holds such queues. docs/manifests.md has the mapping table.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/foreign_queue.h"
#include "config/loader.h"

namespace tessera {

struct ConvertOptions {
  std::string flavor = "default-flavor";
  std::vector<std::string> namespaces;  // one LocalQueue per leaf queue in each
  bool emit_flavor = true;              // print the ResourceFlavor too
};

struct ConvertedQueues {
  std::string yaml;                      // Kueue objects, "---"-separated; "" when no queues
  std::vector<std::string> leaf_queues;  // the ClusterQueues' names (= the queues' names)
  std::vector<std::string> parents;      // the foreign queues that became Cohorts
  // "KIND NAME: spec.x: why" for what does not map, and one per queue saying what it became.
  std::vector<Diagnostic> notices;
};

// The root Cohorts standing for the cluster: KAI's top-level queues share "kai-root",
// Volcano's (those without spec.parent, or with parent "root") share "root".
inline constexpr std::string_view kKaiRootCohort = "kai-root";
inline constexpr std::string_view kVolcanoRootCohort = "root";
// The file name diagnostics of the converted YAML carry when the loader reads it.
inline constexpr std::string_view kConvertedSource = "<converted KAI/Volcano queues>";

ConvertedQueues ConvertForeignQueues(const std::vector<ForeignQueue>& queues,
                                     const ConvertOptions& options);

}  // namespace tessera

namespace tessera {

// The loader's step after every document: converts `queues` (notices into `into`), loads the
// Kueue objects into `into.model` (their source: the queue's manifest), and gives each workload
// that names a converted leaf queue, and has no LocalQueue of that name in its namespace, that
// LocalQueue, with a notice.
void LoadForeignQueues(const std::vector<ForeignQueue>& queues, LoadResult& into);

}  // namespace tessera
