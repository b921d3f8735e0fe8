// The labels and annotations by which a workload names its queue, in the order Tessera reads
// them: Kueue's label and annotation (kueue.x-k8s.io/queue-name), Tessera's label
// (tessera.dev/queue), KAI Scheduler's label (kai.scheduler/queue; the older runai/queue), and
// Volcano's annotation (scheduling.volcano.sh/queue-name; KubeRay's Volcano integration uses the
// label volcano.sh/queue-name). Each names the LocalQueue of that name
// in the workload's namespace (docs/manifests.md, "Queue markers"). Shared by the manifest loader
// and Kubernetes mode.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/labels.h"

namespace tessera {

struct QueueMarker {
  std::string key;  // e.g. "kai.scheduler/queue"
  bool annotation = false;
  std::string queue;
};

// The markers present with a non-empty value, first the one that wins.
std::vector<QueueMarker> FindQueueMarkers(const Labels& labels, const Labels& annotations);

// The queue the markers name ("" when none), and in `conflict` (when not null) a warning naming
// the two markers when a later one names a different queue; "" when they agree.
std::string QueueFromMarkers(const std::vector<QueueMarker>& markers, std::string* conflict);

// "label kai.scheduler/queue=team-a" or "annotation scheduling.volcano.sh/queue-name=q".
std::string DescribeMarker(const QueueMarker& m);

}  // namespace tessera
