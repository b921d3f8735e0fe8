// Queue markers (model/queue_markers.h).
#include "model/queue_markers.h"

#include <string_view>

namespace tessera {
namespace {

struct MarkerKey {
  std::string_view key;
  bool annotation;
};

// In order of precedence.
constexpr MarkerKey kMarkerKeys[] = {
    {"kueue.x-k8s.io/queue-name", false},
    {"kueue.x-k8s.io/queue-name", true},
    {"tessera.dev/queue", false},
    {"kai.scheduler/queue", false},
    {"runai/queue", false},  // KAI's (Run:ai's) older key
    {"scheduling.volcano.sh/queue-name", true},
    // KubeRay's Volcano integration labels a RayCluster's pods with the queue so.
    {"volcano.sh/queue-name", false},
};

}  // namespace

std::vector<QueueMarker> FindQueueMarkers(const Labels& labels, const Labels& annotations) {
  std::vector<QueueMarker> out;
  for (const MarkerKey& k : kMarkerKeys) {
    const Labels& from = k.annotation ? annotations : labels;
    auto it = from.find(std::string(k.key));
    if (it == from.end() || it->second.empty()) continue;
    out.push_back({std::string(k.key), k.annotation, it->second});
  }
  return out;
}

std::string DescribeMarker(const QueueMarker& m) {
  return std::string(m.annotation ? "annotation " : "label ") + m.key + "=" + m.queue;
}

std::string QueueFromMarkers(const std::vector<QueueMarker>& markers, std::string* conflict) {
  if (conflict) conflict->clear();
  if (markers.empty()) return "";
  for (size_t i = 1; i < markers.size(); ++i) {
    if (markers[i].queue != markers[0].queue) {
      if (conflict) {
        *conflict = DescribeMarker(markers[0]) + " and " + DescribeMarker(markers[i]) +
                    " name different queues; Tessera uses " + markers[0].queue +
                    " (precedence: Kueue's label, Kueue's annotation, tessera.dev/queue, "
                    "kai.scheduler/queue, scheduling.volcano.sh/queue-name, volcano.sh/queue-name)";
      }
      break;
    }
  }
  return markers[0].queue;
}

}  // namespace tessera
